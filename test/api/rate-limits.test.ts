import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig, type AppConfig } from '../../src/config.js';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { insertContact } from '../helpers/fixtures.js';
import { TEST_SECRET } from '../helpers/secret.js';

/**
 * Issue 29, item 14: /v1 is rate-limited per API key and console session (429 rate_limited with Retry-After and the
 * RateLimit headers), and POST /v1/events/track has a per-workspace budget of events and bytes a minute, so that one
 * key cannot grow the database by 300 MB in 20 s. Each test builds an app with its limits lowered through the
 * configuration, on the harness's database.
 */

afterEach(() => {
  vi.useRealTimers();
});

/**
 * Starts a test 1 s into a fresh clock minute, the clock then running on: the event quota's window is the clock minute
 * (outbox/events/events.quota.ts), and a test crossing into the next one saw its count start over (202 for a 429).
 */
function freshMinute(): void {
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
  vi.setSystemTime((Math.floor(Date.now() / 60_000) + 1) * 60_000 + 1_000);
}

/** Moves this process's clock `ms` ahead (the limits' windows read it); timers keep running. */
function advanceClock(ms: number): void {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() + ms);
}

describe("the limits' settings", () => {
  it('have the documented defaults, are read from the environment, 0 turns one off, and nonsense is refused', () => {
    expect(loadConfig({})).toMatchObject({
      apiRateLimit: 1200,
      trackQuota: { eventsPerMinute: 600, bytesPerMinute: 1_048_576 },
      tracking: { repeatWindowSeconds: 60, maxHitsPerDelivery: 50, perIpPerMinute: 600 },
    });
    expect(
      loadConfig({
        RATE_LIMIT_PER_KEY: '0',
        TRACK_EVENTS_PER_MINUTE: '10',
        TRACK_BYTES_PER_MINUTE: '0',
        TRACKING_REPEAT_WINDOW_SECONDS: '0',
        TRACKING_MAX_HITS_PER_DELIVERY: '5',
        TRACKING_RATE_LIMIT_PER_IP: '7',
      }),
    ).toMatchObject({
      apiRateLimit: 0,
      trackQuota: { eventsPerMinute: 10, bytesPerMinute: 0 },
      tracking: { repeatWindowSeconds: 0, maxHitsPerDelivery: 5, perIpPerMinute: 7 },
    });
    for (const name of [
      'RATE_LIMIT_PER_KEY',
      'TRACK_EVENTS_PER_MINUTE',
      'TRACK_BYTES_PER_MINUTE',
      'TRACKING_REPEAT_WINDOW_SECONDS',
      'TRACKING_MAX_HITS_PER_DELIVERY',
      'TRACKING_RATE_LIMIT_PER_IP',
    ]) {
      expect(() => loadConfig({ [name]: '-1' }), name).toThrow(new RegExp(name));
      expect(() => loadConfig({ [name]: 'lots' }), name).toThrow(new RegExp(name));
    }
  });
});

describeApi('rate limits', (h) => {
  const apps: FastifyInstance[] = [];
  let limited: FastifyInstance;
  let quota: FastifyInstance;

  async function app(config: Partial<AppConfig>): Promise<FastifyInstance> {
    const a = await buildApp({
      db: h.db,
      logger: false,
      config: { logLevel: 'silent', publicUrl: 'http://localhost:3000', secret: TEST_SECRET, ...config },
    });
    apps.push(a);
    return a;
  }
  beforeAll(async () => {
    limited = await app({ apiRateLimit: 5 });
    quota = await app({ trackQuota: { eventsPerMinute: 3, bytesPerMinute: 40_000 } });
  });
  afterAll(async () => {
    for (const a of apps) await a.close();
  });

  const call = (
    a: FastifyInstance,
    key: string | null,
    method: InjectOptions['method'],
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) =>
    a.inject({
      method,
      url,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });

  function expectRateLimited(res: Awaited<ReturnType<typeof call>>) {
    expect(res.statusCode, res.body).toBe(429);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(res.json().requestId).toBeTruthy();
    const retry = Number(res.headers['retry-after']);
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(60);
    expect(res.headers['ratelimit-remaining']).toBe('0');
    expect(Number(res.headers['ratelimit-reset'])).toBe(retry);
  }

  it('/v1: at most RATE_LIMIT_PER_KEY requests a minute per key (RateLimit headers on every answer), then 429 rate_limited with Retry-After; another key and a later minute are not limited', async () => {
    const ws = await h.workspace();
    for (let i = 0; i < 5; i++) {
      const res = await call(limited, ws.key, 'GET', '/v1/workspace');
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('5');
      expect(res.headers['ratelimit-remaining']).toBe(String(4 - i));
    }
    // Over the limit: reads, writes and invalid bodies alike, and nothing is changed.
    expectRateLimited(await call(limited, ws.key, 'GET', '/v1/workspace'));
    expectRateLimited(await call(limited, ws.key, 'POST', '/v1/contacts', { email: 'late@example.com' }));
    expectRateLimited(await call(limited, ws.key, 'POST', '/v1/contacts', { nonsense: true }));
    expect(
      await h.db.kysely.selectFrom('contacts').select('id').where('workspace_id', '=', ws.id).execute(),
    ).toHaveLength(0);
    // Per key: another key of the same workspace has its own budget.
    const other = await h.key(ws, ['read:contacts', 'write:contacts']);
    expect((await call(limited, other, 'POST', '/v1/contacts', { email: 'other@example.com' })).statusCode).toBe(201);
    // The next minute.
    advanceClock(61_000);
    expect((await call(limited, ws.key, 'GET', '/v1/workspace')).statusCode).toBe(200);
  });

  it('/v1: a console session is limited like a key', async () => {
    const ws = await h.workspace();
    const email = `owner-${Date.now()}-${h.dbName}@example.com`;
    await limited.services.users.create(ws.id, { email, role: 'owner', password: 'correct horse battery' });
    const login = await limited.inject({
      method: 'POST',
      url: '/app/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ email, password: 'correct horse battery' }).toString(),
    });
    expect(login.statusCode, login.body).toBe(303);
    const setCookie = login.headers['set-cookie'];
    const cookie = /^([^=;]+=[^;]*)/.exec(String(Array.isArray(setCookie) ? setCookie[0] : setCookie))![1]!;
    for (let i = 0; i < 5; i++)
      expect((await limited.inject({ method: 'GET', url: '/v1/session', headers: { cookie } })).statusCode).toBe(200);
    expectRateLimited(await limited.inject({ method: 'GET', url: '/v1/session', headers: { cookie } }));
    // The workspace's API key is another caller.
    expect((await call(limited, ws.key, 'GET', '/v1/session')).statusCode).toBe(200);
  });

  async function contactOf(ws: TestWorkspace, email: string) {
    return insertContact(h, ws, { email });
  }

  it('POST /v1/events/track: at most TRACK_EVENTS_PER_MINUTE events a workspace a minute, counted in the database (every process); then 429 rate_limited and nothing written', async () => {
    freshMinute();
    const ws = await h.workspace();
    await contactOf(ws, 'ada@example.com');
    const track = (a: FastifyInstance, w: TestWorkspace, i: number) =>
      call(a, w.key, 'POST', '/v1/events/track', { email: 'ada@example.com', name: 'page.viewed', properties: { i } });
    for (let i = 0; i < 3; i++) expect((await track(quota, ws, i)).statusCode).toBe(202);
    const refused = await track(quota, ws, 3);
    expectRateLimited(refused);
    expect(refused.headers['ratelimit-limit']).toBe('3');
    // Another process with the same budget: the count is the database's.
    const second = await app({ trackQuota: { eventsPerMinute: 3, bytesPerMinute: 40_000 } });
    expectRateLimited(await track(second, ws, 4));
    const tracked = () =>
      h.db.kysely
        .selectFrom('events')
        .select('id')
        .where('workspace_id', '=', ws.id)
        .where('type', '=', 'event.tracked')
        .execute();
    expect(await tracked()).toHaveLength(3);
    // Another workspace has its own budget.
    const other = await h.workspace();
    await contactOf(other, 'ada@example.com');
    expect((await track(quota, other, 0)).statusCode).toBe(202);
    // A refusal is not kept as an Idempotency-Key's answer: the retry after Retry-After is run.
    const keyed = () =>
      call(
        quota,
        ws.key,
        'POST',
        '/v1/events/track',
        { email: 'ada@example.com', name: 'page.viewed', properties: { i: 5 } },
        { 'idempotency-key': 'retry-me' },
      );
    expectRateLimited(await keyed());
    // The next minute.
    advanceClock(61_000);
    const retried = await keyed();
    expect(retried.statusCode, retried.body).toBe(202);
    expect(await tracked()).toHaveLength(4);
  });

  it('POST /v1/events/track: at most TRACK_BYTES_PER_MINUTE bytes of event data a workspace a minute', async () => {
    freshMinute();
    const ws = await h.workspace();
    await contactOf(ws, 'bob@example.com');
    const big = { blob: 'x'.repeat(15_000) };
    const track = () =>
      call(quota, ws.key, 'POST', '/v1/events/track', { email: 'bob@example.com', name: 'upload', properties: big });
    expect((await track()).statusCode).toBe(202);
    expect((await track()).statusCode).toBe(202);
    const refused = await track(); // 45 KB > 40,000 bytes
    expectRateLimited(refused);
    expect(refused.json().detail).toContain('bytes');
    expect(
      await h.db.kysely
        .selectFrom('events')
        .select('id')
        .where('workspace_id', '=', ws.id)
        .where('type', '=', 'event.tracked')
        .execute(),
    ).toHaveLength(2);
  });
});
