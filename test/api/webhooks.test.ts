import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { sql, type Transaction } from 'kysely';
import { afterEach, expect, it, onTestFinished, vi } from 'vitest';
import { recordEvents } from '../../src/outbox/events/events.repository.js';
import type { NewEvent } from '../../src/outbox/events/events.types.js';
import { toIso } from '../../src/lib/time.js';
import { isInternalScope } from '../../src/http/scopes.js';
import { WebhookDispatcher, type DispatcherOptions } from '../../src/integrations/webhooks/webhooks.dispatcher.js';
import type { Resolver } from '../../src/integrations/webhooks/webhooks.guard.js';
import { WebhooksService } from '../../src/integrations/webhooks/webhooks.service.js';
import { ROLE_SCOPES } from '../../src/access/users/roles.js';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { TEST_SECRET } from '../helpers/secret.js';
import type { Database } from '../../src/db/schema.js';
import { LISTENERS_LOCK_CLASS } from '../../src/db/listeners-lock.js';
import { waitFor } from '../helpers/workers.js';

/** An endpoint as GET, list and PUT show it (no secret); creation and rotation add `secret`. */
const WEBHOOK_KEYS = ['createdAt', 'description', 'disabledReason', 'enabled', 'eventTypes', 'id', 'updatedAt', 'url'];
const withoutSecret = ({ secret: _secret, ...rest }: Record<string, unknown>) => rest;
const DELIVERY_KEYS = [
  'attemptLog',
  'attempts',
  'createdAt',
  'deliveredAt',
  'eventId',
  'eventType',
  'id',
  'lastDurationMs',
  'lastError',
  'lastStatusCode',
  'nextAttemptAt',
  'status',
];
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
/** A public address as an IP literal: the guard needs no DNS for it (nothing is ever sent there by these tests). */
const PUBLIC_URL = 'https://93.184.215.14/hooks/formcast';
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

// ---- a receiver on loopback ---------------------------------------------------------------------------

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  url: string;
  /** The test clock when it arrived (what the receiver's clock would say in the simulated world). */
  at: number;
}

interface Receiver {
  url: string;
  port: number;
  requests: Received[];
  close(): Promise<void>;
}

const receivers: Receiver[] = [];

/** A receiver that answers each request with `answer(n)` (n from 1), or 200. */
async function startReceiver(
  clock: () => Date,
  answer: (
    n: number,
    req: http.IncomingMessage,
  ) => number | { status: number; headers?: Record<string, string>; delayMs?: number } = () => 200,
): Promise<Receiver> {
  const requests: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        url: req.url ?? '',
        at: clock().getTime(),
      });
      const a = answer(requests.length, req);
      const { status, headers = {}, delayMs = 0 } = typeof a === 'number' ? { status: a } : a;
      setTimeout(() => res.writeHead(status, headers).end('ok'), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const r: Receiver = {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  receivers.push(r);
  return r;
}

/** A receiver that reads each request and never answers (a hung endpoint); counts what arrived, and the most open at once. */
async function startHangingReceiver(): Promise<Receiver & { maxOpen: () => number }> {
  const requests: Received[] = [];
  let open = 0;
  let maxOpen = 0;
  const server = http.createServer((req, res) => {
    maxOpen = Math.max(maxOpen, ++open);
    res.on('close', () => open--);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () =>
      requests.push({
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        url: req.url ?? '',
        at: Date.now(),
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const r: Receiver & { maxOpen: () => number } = {
    url: `http://127.0.0.1:${port}/hang`,
    port,
    requests,
    maxOpen: () => maxOpen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  receivers.push(r);
  return r;
}

/** Verifies with the standardwebhooks package (not our code), its clock set to when the request arrived. */
function verify(secret: string, r: Received): unknown {
  vi.useFakeTimers({ toFake: ['Date'] });
  try {
    vi.setSystemTime(r.at);
    return new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
  } finally {
    vi.useRealTimers();
  }
}

function testClock(start = Date.now()) {
  let t = start;
  return {
    now: () => new Date(t),
    advance: (ms: number) => void (t += ms),
    set: (ms: number) => void (t = ms),
    get ms() {
      return t;
    },
  };
}

describeApi('webhooks', (h) => {
  /** Endpoints the delivery tests made: deleted afterwards, so no later dispatcher sends their leftovers. */
  const made: { ws: string; id: string }[] = [];
  const dispatchers: WebhookDispatcher[] = [];

  afterEach(async () => {
    for (const d of dispatchers.splice(0)) await d.close();
    for (const r of receivers.splice(0)) await r.close();
    for (const m of made.splice(0)) await h.db.kysely.deleteFrom('webhook_endpoints').where('id', '=', m.id).execute();
  });

  function service(opts: { resolve?: Resolver; allowPrivate?: boolean } = {}) {
    return new WebhooksService(h.db, {
      secret: TEST_SECRET,
      allowHttp: true,
      allowPrivate: opts.allowPrivate ?? true,
      resolve: opts.resolve,
    });
  }

  function dispatcher(clock: () => Date, opts: Partial<DispatcherOptions> = {}) {
    const d = new WebhookDispatcher(h.db, {
      workerId: `test-${dispatchers.length}`,
      secret: TEST_SECRET,
      allowHttp: true,
      allowPrivate: true,
      clock,
      ...opts,
    });
    dispatchers.push(d);
    return d;
  }

  async function endpoint(ws: TestWorkspace, url: string, eventTypes: string[] = ['contact.created'], svc = service()) {
    const webhook = await svc.create(ws.id, { url, eventTypes: eventTypes as never });
    made.push({ ws: ws.id, id: webhook.id });
    return webhook;
  }

  async function events(ws: TestWorkspace, list: NewEvent[], at: Date) {
    await h.db.kysely.transaction().execute((trx) => recordEvents(trx, ws.id, list, at.toISOString()));
  }

  async function create(ws: TestWorkspace, body: Record<string, unknown> = {}) {
    const res = await h.call(ws.key, 'POST', '/v1/webhooks', {
      url: PUBLIC_URL,
      eventTypes: ['contact.created'],
      ...body,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json();
  }

  async function deliveries(ws: TestWorkspace, webhookId: string, query = '') {
    const res = await h.call(ws.key, 'GET', `/v1/webhooks/${webhookId}/deliveries${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  }

  /** Dispatches until nothing is due at the clock's time and nothing is held; returns how many outcomes were recorded. */
  async function drain(d: WebhookDispatcher) {
    const before = d.recorded;
    while ((await d.dispatch()) > 0);
    return d.recorded - before;
  }

  // ---- the API ----------------------------------------------------------------------------------------

  it('POST registers an endpoint (201, Location) with a whsec_ secret, stored sealed; GET returns it without the secret', async () => {
    const ws = await h.workspace();
    const res = await h.call(ws.key, 'POST', '/v1/webhooks', {
      url: PUBLIC_URL,
      eventTypes: ['contact.created', 'email.bounced'],
      description: 'CRM sync',
    });
    expect(res.statusCode, res.body).toBe(201);
    const webhook = res.json();
    expect(Object.keys(webhook).sort()).toEqual([...WEBHOOK_KEYS, 'secret'].sort());
    expect(webhook).toMatchObject({
      url: PUBLIC_URL,
      eventTypes: ['contact.created', 'email.bounced'],
      description: 'CRM sync',
      enabled: true,
      disabledReason: null,
    });
    expect(webhook.id).toMatch(/^wh_/);
    expect(webhook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(webhook.secret.slice(6), 'base64')).toHaveLength(24);
    expect(webhook.createdAt).toMatch(ISO);
    expect(res.headers.location).toBe(`/v1/webhooks/${webhook.id}`);
    expect((await h.call(ws.key, 'GET', `/v1/webhooks/${webhook.id}`)).json()).toEqual(withoutSecret(webhook));
    const row = await h.db.kysely
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', webhook.id)
      .executeTakeFirstOrThrow();
    expect(row.workspace_id).toBe(ws.id);
    expect(row.secret).not.toContain(webhook.secret.slice(6));
    expect(row.secret).toMatch(/^v1\./);
    expect(JSON.parse(row.event_types)).toEqual(['contact.created', 'email.bounced']);
  });

  it('no webhook secret is kept in the Idempotency-Key replay store (create and rotate answer it once)', async () => {
    const ws = await h.workspace();
    const first = await h.call(
      ws.key,
      'POST',
      '/v1/webhooks',
      { url: PUBLIC_URL, eventTypes: ['contact.created'] },
      { 'idempotency-key': 'wh-create-1' },
    );
    expect(first.statusCode).toBe(201);
    const secret = first.json().secret as string;
    const replay = await h.call(
      ws.key,
      'POST',
      '/v1/webhooks',
      { url: PUBLIC_URL, eventTypes: ['contact.created'] },
      { 'idempotency-key': 'wh-create-1' },
    );
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json().secret).toBeNull();
    const rotated = await h.call(ws.key, 'POST', `/v1/webhooks/${first.json().id}/rotate-secret`, undefined, {
      'idempotency-key': 'wh-rotate-1',
    });
    const stored = await h.db.kysely
      .selectFrom('idempotency_keys')
      .select('response_body')
      .where('workspace_id', '=', ws.id)
      .execute();
    expect(stored).toHaveLength(2);
    for (const row of stored) {
      expect(row.response_body).not.toContain(secret);
      expect(row.response_body).not.toContain(rotated.json().secret);
      expect(row.response_body).not.toContain('whsec_');
    }
  });

  it('a signing secret is shown only at creation and rotation, to write:webhooks: GET, list and PUT carry none, for a viewer, an editor or an admin (issue 29)', async () => {
    const ws = await h.workspace();
    // A key with the scopes of each console role (roles are sets of scopes: src/access/users/roles.ts), the console's
    // own scopes (keys, people, the audit log) aside: a key cannot hold them.
    const roleKey = (role: 'viewer' | 'editor' | 'admin') =>
      h.key(ws, ROLE_SCOPES[role].filter((s) => !isInternalScope(s)) as never);
    const admin = await roleKey('admin');
    const created = await h.call(admin, 'POST', '/v1/webhooks', { url: PUBLIC_URL, eventTypes: ['contact.created'] });
    expect(created.statusCode, created.body).toBe(201);
    const secret = created.json().secret as string;
    expect(secret).toMatch(/^whsec_/);
    const rotated = await h.call(admin, 'POST', `/v1/webhooks/${created.json().id}/rotate-secret`);
    expect(rotated.statusCode, rotated.body).toBe(200);
    const newSecret = rotated.json().secret as string;
    expect(newSecret).toMatch(/^whsec_/);
    const id = created.json().id as string;
    for (const role of ['viewer', 'editor', 'admin'] as const) {
      const key = await roleKey(role);
      for (const url of [`/v1/webhooks/${id}`, '/v1/webhooks', '/v1/webhooks?limit=1']) {
        const res = await h.call(key, 'GET', url);
        expect(res.statusCode, `${role} GET ${url}`).toBe(200);
        expect(res.body).not.toContain('whsec_');
        expect(res.body).not.toContain(secret.slice(6));
        expect(res.body).not.toContain(newSecret.slice(6));
      }
      if (role !== 'admin') {
        expect((await h.call(key, 'POST', `/v1/webhooks/${id}/rotate-secret`)).statusCode, role).toBe(403);
        expect(
          (await h.call(key, 'POST', '/v1/webhooks', { url: PUBLIC_URL, eventTypes: ['contact.created'] })).statusCode,
          role,
        ).toBe(403);
      }
    }
    const put = await h.call(admin, 'PUT', `/v1/webhooks/${id}`, { description: 'x' });
    expect(put.statusCode).toBe(200);
    expect(put.body).not.toContain('whsec_');
    expect(Object.keys((await h.call(admin, 'GET', `/v1/webhooks/${id}`)).json()).sort()).toEqual(WEBHOOK_KEYS);
    // The schema says so too: only creation and rotation answer with a secret.
    const spec = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const props = (
      op: { responses: Record<string, { content: { 'application/json': { schema: unknown } } }> },
      code: string,
    ) => {
      let schema = op.responses[code]!.content['application/json'].schema as {
        $ref?: string;
        properties?: Record<string, unknown>;
      };
      if (schema.$ref) schema = spec.components.schemas[schema.$ref.split('/').pop()!];
      return Object.keys(schema.properties ?? {});
    };
    expect(props(spec.paths['/v1/webhooks'].post, '201')).toContain('secret');
    expect(props(spec.paths['/v1/webhooks/{webhookId}/rotate-secret'].post, '200')).toContain('secret');
    expect(props(spec.paths['/v1/webhooks/{webhookId}'].get, '200')).not.toContain('secret');
    expect(props(spec.paths['/v1/webhooks/{webhookId}'].put, '200')).not.toContain('secret');
  });

  it('lists newest first with cursor pagination', async () => {
    const ws = await h.workspace();
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await create(ws, { description: `w${i}` }));
    const first = (await h.call(ws.key, 'GET', '/v1/webhooks?limit=2')).json();
    expect(first.data.map((w: { description: string }) => w.description)).toEqual(['w2', 'w1']);
    const second = (await h.call(ws.key, 'GET', `/v1/webhooks?limit=2&cursor=${first.nextCursor}`)).json();
    expect(second).toEqual({ data: [withoutSecret(made[0])], nextCursor: null });
  });

  it.each([
    ['http:// without WEBHOOKS_ALLOW_HTTP', { url: 'http://93.184.215.14/x' }, ['/url'], /https/],
    ['a loopback address', { url: 'https://127.0.0.1/x' }, ['/url'], /loopback/],
    ['a private address', { url: 'https://10.0.0.1/x' }, ['/url'], /private/],
    ['the metadata address (link-local)', { url: 'https://169.254.169.254/latest' }, ['/url'], /link-local/],
    ['an IPv4-mapped loopback', { url: 'https://[::ffff:127.0.0.1]/x' }, ['/url'], /loopback/],
    ['IPv6 loopback', { url: 'https://[::1]/x' }, ['/url'], /loopback/],
    ['not a URL', { url: 'hooks.example.com' }, ['/url'], /absolute/],
    ['an unknown event type', { eventTypes: ['contact.exploded'] }, ['/eventTypes/0'], null],
    ['no event types', { eventTypes: [] }, ['/eventTypes'], null],
    ['a repeated event type', { eventTypes: ['contact.created', 'contact.created'] }, ['/eventTypes'], null],
    ['an unknown field', { secret: 'whsec_mine' }, ['/secret'], null],
    ['a description over 500 characters', { description: 'x'.repeat(501) }, ['/description'], null],
  ])('POST refuses %s (422, nothing created)', async (_label, body, paths, message) => {
    const ws = await h.workspace();
    const res = await h.call(ws.key, 'POST', '/v1/webhooks', {
      url: PUBLIC_URL,
      eventTypes: ['contact.created'],
      ...body,
    });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().code).toBe('validation_failed');
    expect(res.json().errors.map((e: { path: string }) => e.path)).toEqual(paths);
    if (message) expect(res.json().errors[0].message).toMatch(message);
    expect(
      await h.db.kysely.selectFrom('webhook_endpoints').select('id').where('workspace_id', '=', ws.id).execute(),
    ).toEqual([]);
  });

  it('POST without url or eventTypes is a 422 naming both', async () => {
    const ws = await h.workspace();
    const res = await h.call(ws.key, 'POST', '/v1/webhooks', {});
    expect(res.statusCode).toBe(422);
    expect(
      res
        .json()
        .errors.map((e: { path: string }) => e.path)
        .sort(),
    ).toEqual(['/eventTypes', '/url']);
  });

  it('scopes: read:webhooks reads (no secret), write:webhooks writes, others get 403; no key is 401', async () => {
    const ws = await h.workspace();
    const webhook = await create(ws);
    const reader = await h.key(ws, ['read:webhooks']);
    const writer = await h.key(ws, ['write:webhooks']);
    const other = await h.key(ws, ['read:contacts', 'write:contacts']);
    expect((await h.call(reader, 'GET', `/v1/webhooks/${webhook.id}`)).json()).toEqual(withoutSecret(webhook));
    expect((await h.call(reader, 'GET', '/v1/webhooks')).statusCode).toBe(200);
    expect((await h.call(reader, 'GET', `/v1/webhooks/${webhook.id}/deliveries`)).statusCode).toBe(200);
    for (const [method, url, body] of [
      ['POST', '/v1/webhooks', { url: PUBLIC_URL, eventTypes: ['contact.created'] }],
      ['PUT', `/v1/webhooks/${webhook.id}`, { description: 'x' }],
      ['DELETE', `/v1/webhooks/${webhook.id}`, undefined],
      ['POST', `/v1/webhooks/${webhook.id}/rotate-secret`, undefined],
      ['POST', `/v1/webhooks/${webhook.id}/test`, undefined],
      ['POST', `/v1/webhooks/${webhook.id}/deliveries/whd_x/retry`, undefined],
    ] as const) {
      const res = await h.call(reader, method, url, body);
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.json().detail).toMatch(/write:webhooks/);
    }
    expect((await h.call(other, 'GET', `/v1/webhooks/${webhook.id}`)).statusCode).toBe(403);
    expect((await h.call(null, 'GET', '/v1/webhooks')).statusCode).toBe(401);
    expect(
      (await h.call(writer, 'PUT', `/v1/webhooks/${webhook.id}`, { description: 'by writer' })).json().description,
    ).toBe('by writer');
  });

  it("another workspace's endpoint and deliveries are 404 on every route", async () => {
    const ws = await h.workspace();
    const intruder = await h.workspace('Other');
    const webhook = await create(ws);
    const test = await h.call(ws.key, 'POST', `/v1/webhooks/${webhook.id}/test`);
    expect(test.statusCode).toBe(202);
    const deliveryId = test.json().id;
    await h.db.kysely
      .updateTable('webhook_deliveries')
      .set({ status: 'FAILED' })
      .where('id', '=', deliveryId)
      .execute();
    for (const [method, url, body] of [
      ['GET', `/v1/webhooks/${webhook.id}`, undefined],
      ['PUT', `/v1/webhooks/${webhook.id}`, { description: 'x' }],
      ['DELETE', `/v1/webhooks/${webhook.id}`, undefined],
      ['POST', `/v1/webhooks/${webhook.id}/rotate-secret`, undefined],
      ['POST', `/v1/webhooks/${webhook.id}/test`, undefined],
      ['GET', `/v1/webhooks/${webhook.id}/deliveries`, undefined],
      ['GET', `/v1/webhooks/${webhook.id}/deliveries/${deliveryId}`, undefined],
      ['POST', `/v1/webhooks/${webhook.id}/deliveries/${deliveryId}/retry`, undefined],
    ] as const) {
      const res = await h.call(intruder.key, method, url, body);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().code).toBe('not_found');
    }
    expect((await h.call(intruder.key, 'GET', '/v1/webhooks')).json().data).toEqual([]);
    const row = await h.db.kysely
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', webhook.id)
      .executeTakeFirstOrThrow();
    expect(row.description).toBeNull();
    expect(
      await h.db.kysely
        .selectFrom('webhook_deliveries')
        .select('status')
        .where('id', '=', deliveryId)
        .executeTakeFirstOrThrow(),
    ).toEqual({ status: 'FAILED' });
    expect((await h.call(ws.key, 'DELETE', `/v1/webhooks/${webhook.id}`)).statusCode).toBe(204);
  });

  it('PUT is partial: eventTypes, description (null clears), url through the guard; id must match', async () => {
    const ws = await h.workspace();
    const webhook = await create(ws, { description: 'first' });
    const put = (body: unknown) => h.call(ws.key, 'PUT', `/v1/webhooks/${webhook.id}`, body);
    const changed = await put({ eventTypes: ['email.opened', 'email.clicked'] });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toMatchObject({
      eventTypes: ['email.opened', 'email.clicked'],
      description: 'first',
      url: PUBLIC_URL,
    });
    expect(Object.keys(changed.json()).sort()).toEqual(WEBHOOK_KEYS);
    expect((await put({ description: null })).json().description).toBeNull();
    const refused = await put({ url: 'https://192.168.0.10/x' });
    expect(refused.statusCode).toBe(422);
    expect(refused.json().errors[0].path).toBe('/url');
    expect((await put({ url: 'https://93.184.215.15/new' })).json().url).toBe('https://93.184.215.15/new');
    expect((await put({ id: 'wh_other' })).statusCode).toBe(422);
    expect((await put({ status: 'x' })).statusCode).toBe(422);
    const row = await h.db.kysely
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', webhook.id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ url: 'https://93.184.215.15/new', description: null });
    expect(JSON.parse(row.event_types)).toEqual(['email.opened', 'email.clicked']);
  });

  it('PUT enabled:false disables (what waits is FAILED); enabled:true clears disabledReason and failing_since', async () => {
    const ws = await h.workspace();
    const webhook = await create(ws);
    const queued = (await h.call(ws.key, 'POST', `/v1/webhooks/${webhook.id}/test`)).json();
    expect(queued.status).toBe('PENDING');
    const off = await h.call(ws.key, 'PUT', `/v1/webhooks/${webhook.id}`, { enabled: false });
    expect(off.json()).toMatchObject({ enabled: false, disabledReason: 'disabled through the API' });
    const d = await h.db.kysely
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('id', '=', queued.id)
      .executeTakeFirstOrThrow();
    expect(d).toMatchObject({ status: 'FAILED', last_error: 'disabled through the API', next_attempt_at: null });
    expect((await h.call(ws.key, 'POST', `/v1/webhooks/${webhook.id}/test`)).statusCode).toBe(409);
    const retry = await h.call(ws.key, 'POST', `/v1/webhooks/${webhook.id}/deliveries/${queued.id}/retry`);
    expect(retry.statusCode).toBe(409);
    expect(retry.json().code).toBe('invalid_state');
    await h.db.kysely
      .updateTable('webhook_endpoints')
      .set({ failing_since: new Date().toISOString() })
      .where('id', '=', webhook.id)
      .execute();
    const on = await h.call(ws.key, 'PUT', `/v1/webhooks/${webhook.id}`, { enabled: true });
    expect(on.json()).toMatchObject({ enabled: true, disabledReason: null });
    const row = await h.db.kysely
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', webhook.id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ enabled: 1, disabled_reason: null, failing_since: null });
    await h.call(ws.key, 'DELETE', `/v1/webhooks/${webhook.id}`);
  });

  it('rotate-secret: a new secret; the previous one is kept, sealed, for 24 hours', async () => {
    const ws = await h.workspace();
    const webhook = await create(ws);
    const before = Date.now();
    const res = await h.call(ws.key, 'POST', `/v1/webhooks/${webhook.id}/rotate-secret`);
    expect(res.statusCode, res.body).toBe(200);
    const rotated = res.json();
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(webhook.secret);
    expect((await h.call(ws.key, 'GET', `/v1/webhooks/${webhook.id}`)).json()).not.toHaveProperty('secret');
    const row = await h.db.kysely
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', webhook.id)
      .executeTakeFirstOrThrow();
    expect(row.previous_secret).toMatch(/^v1\./);
    const until = Date.parse(toIso(row.previous_secret_until!));
    expect(until - before).toBeGreaterThanOrEqual(DAY - 1000);
    expect(until - Date.now()).toBeLessThanOrEqual(DAY);
  });

  it('POST …/test queues a webhook.test delivery (202), listed in the delivery log; DELETE removes the endpoint and its log', async () => {
    const ws = await h.workspace();
    const webhook = await create(ws);
    const res = await h.call(ws.key, 'POST', `/v1/webhooks/${webhook.id}/test`);
    expect(res.statusCode, res.body).toBe(202);
    const d = res.json();
    expect(Object.keys(d).sort()).toEqual(DELIVERY_KEYS);
    expect(d).toMatchObject({
      eventId: null,
      eventType: 'webhook.test',
      status: 'PENDING',
      attempts: 0,
      attemptLog: [],
      lastStatusCode: null,
      deliveredAt: null,
    });
    expect(d.id).toMatch(/^whd_/);
    expect(d.nextAttemptAt).toMatch(ISO);
    expect(await deliveries(ws, webhook.id)).toEqual([d]);
    expect(await deliveries(ws, webhook.id, '?status=FAILED')).toEqual([]);
    expect((await h.call(ws.key, 'GET', `/v1/webhooks/${webhook.id}/deliveries?status=NOPE`)).statusCode).toBe(422);
    const row = await h.db.kysely
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('id', '=', d.id)
      .executeTakeFirstOrThrow();
    expect(JSON.parse(row.payload)).toMatchObject({
      type: 'webhook.test',
      data: { type: 'webhook.test', data: { webhookId: webhook.id } },
    });
    const retry = await h.call(ws.key, 'POST', `/v1/webhooks/${webhook.id}/deliveries/${d.id}/retry`);
    expect(retry.statusCode).toBe(409);
    expect(retry.json().code).toBe('invalid_state');
    expect(
      (await h.call(ws.key, 'POST', `/v1/webhooks/${webhook.id}/deliveries/whd_01JD0000000000000000000000/retry`))
        .statusCode,
    ).toBe(404);
    expect((await h.call(ws.key, 'DELETE', `/v1/webhooks/${webhook.id}`)).statusCode).toBe(204);
    expect((await h.call(ws.key, 'GET', `/v1/webhooks/${webhook.id}`)).statusCode).toBe(404);
    expect((await h.call(ws.key, 'DELETE', `/v1/webhooks/${webhook.id}`)).statusCode).toBe(404);
    expect(
      await h.db.kysely.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', webhook.id).execute(),
    ).toEqual([]);
  });

  // ---- fan-out and delivery ---------------------------------------------------------------------------

  it("fan-out: one delivery per subscribed, enabled endpoint of the event's workspace, body { type, timestamp, data } exactly; events marked dispatched", async () => {
    const clock = testClock();
    const ws = await h.workspace();
    const other = await h.workspace('Other');
    const a = await endpoint(ws, 'http://127.0.0.1:9/a', ['contact.created', 'contact.deleted']);
    const b = await endpoint(ws, 'http://127.0.0.1:9/b', ['email.opened']);
    const off = await endpoint(ws, 'http://127.0.0.1:9/off', ['contact.created']);
    await service().update(ws.id, off.id, { enabled: false });
    const foreign = await endpoint(other, 'http://127.0.0.1:9/other', ['contact.created']);
    await events(
      ws,
      [
        { type: 'contact.created', contactId: 'ct_1', data: { email: 'ada@example.com' } },
        { type: 'form.submitted', data: {} },
      ],
      clock.now(),
    );
    const d = dispatcher(clock.now);
    expect(await d.fanOut()).toBeGreaterThanOrEqual(2);
    const evt = await h.db.kysely
      .selectFrom('events')
      .selectAll()
      .where('workspace_id', '=', ws.id)
      .where('type', '=', 'contact.created')
      .executeTakeFirstOrThrow();
    expect(evt.dispatched).toBe(1);
    const rows = await h.db.kysely
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('workspace_id', 'in', [ws.id, other.id])
      .execute();
    expect(rows.map((r) => r.endpoint_id)).toEqual([a.id]);
    expect(rows[0]).toMatchObject({ status: 'PENDING', attempts: 0, event_id: evt.id, event_type: 'contact.created' });
    expect(rows[0]!.payload).toBe(
      JSON.stringify({
        type: 'contact.created',
        timestamp: clock.now().toISOString(),
        data: {
          id: evt.id,
          type: 'contact.created',
          occurredAt: clock.now().toISOString(),
          contactId: 'ct_1',
          broadcastId: null,
          deliveryId: null,
          data: { email: 'ada@example.com' },
        },
      }),
    );
    expect(await d.fanOut()).toBe(0);
    expect(rows.some((r) => [b.id, off.id, foreign.id].includes(r.endpoint_id))).toBe(false);
  });

  it('a workspace with no enabled endpoint: its events are not for the fan-out (written dispatched); an endpoint created or enabled later gets the events after it, not those before', async () => {
    const clock = testClock();
    const ws = await h.workspace();
    const d = dispatcher(clock.now);
    await d.fanOut();
    const off = await endpoint(ws, 'http://127.0.0.1:9/off', ['contact.created']);
    await service().update(ws.id, off.id, { enabled: false });
    await events(ws, [{ type: 'contact.created', contactId: 'ct_before', data: {} }], clock.now());
    const before = await h.db.kysely
      .selectFrom('events')
      .select(['id', 'dispatched'])
      .where('workspace_id', '=', ws.id)
      .executeTakeFirstOrThrow();
    expect(Number(before.dispatched)).toBe(1);
    // Outside a transaction the endpoints' read and the insert are two statements: always for the fan-out.
    await recordEvents(
      h.db.kysely,
      ws.id,
      [{ type: 'contact.created', contactId: 'ct_no_trx', data: {} }],
      clock.now().toISOString(),
    );
    const loose = await h.db.kysely
      .selectFrom('events')
      .select(['id', 'dispatched'])
      .where('workspace_id', '=', ws.id)
      .where('contact_id', '=', 'ct_no_trx')
      .executeTakeFirstOrThrow();
    expect(Number(loose.dispatched)).toBe(0);
    await d.fanOut();
    await h.db.kysely.deleteFrom('events').where('id', '=', loose.id).execute();
    const late = await endpoint(ws, 'http://127.0.0.1:9/late', ['contact.created']);
    await service().update(ws.id, off.id, { enabled: true });
    await events(ws, [{ type: 'contact.created', contactId: 'ct_after', data: {} }], clock.now());
    const after = await h.db.kysely
      .selectFrom('events')
      .select(['id', 'dispatched'])
      .where('workspace_id', '=', ws.id)
      .where('id', '!=', before.id)
      .executeTakeFirstOrThrow();
    expect(Number(after.dispatched)).toBe(0);
    expect(await d.fanOut()).toBeGreaterThanOrEqual(1);
    const rows = await h.db.kysely
      .selectFrom('webhook_deliveries')
      .select(['endpoint_id', 'event_id'])
      .where('workspace_id', '=', ws.id)
      .orderBy('endpoint_id')
      .execute();
    expect(rows).toEqual(
      [
        { endpoint_id: off.id, event_id: after.id },
        { endpoint_id: late.id, event_id: after.id },
      ].sort((x, y) => (x.endpoint_id < y.endpoint_id ? -1 : 1)),
    );
  });

  it.runIf(h.dbName === 'postgres')(
    "PostgreSQL: an endpoint created while an event's transaction is open waits for its commit (the event is before it); an event written while an endpoint's creation is open waits and is for the fan-out",
    async () => {
      const now = new Date().toISOString();
      /** A transaction that does `work`, then stays open until released. */
      const heldOpen = async (work: (trx: Transaction<Database>) => Promise<void>) => {
        let release!: () => void;
        const released = new Promise<void>((resolve) => (release = resolve));
        let worked!: () => void;
        const done = new Promise<void>((resolve) => (worked = resolve));
        const tx = h.db.kysely.transaction().execute(async (trx) => {
          await work(trx);
          worked();
          await released;
        });
        await done;
        const commit = async () => (release(), await tx);
        // A step that fails must not leave the transaction open (its connection and its lock).
        onTestFinished(() => commit().catch(() => undefined));
        return { commit };
      };
      /** `p` waits on the listeners lock of workspace `ws` (db/listeners-lock.ts: advisory, the two-key form). */
      const waitsOnLock = async (ws: TestWorkspace, p: Promise<unknown>) => {
        let settled = false;
        void p.then(
          () => (settled = true),
          () => (settled = true),
        );
        await waitFor('a transaction waiting on the listeners lock', 10_000, async () => {
          const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_locks
            where locktype = 'advisory' and objsubid = 2 and not granted
              and classid = ${LISTENERS_LOCK_CLASS}::oid and objid = hashtext(${`webhooks:${ws.id}`})::oid
              and database = (select oid from pg_database where datname = current_database())`.execute(h.db.kysely);
          return rows[0]!.n > 0 ? true : undefined;
        });
        expect(settled).toBe(false);
      };
      const dispatchedOf = async (contactId: string) =>
        Number(
          (
            await h.db.kysely
              .selectFrom('events')
              .select('dispatched')
              .where('contact_id', '=', contactId)
              .executeTakeFirstOrThrow()
          ).dispatched,
        );

      // 1. The event's transaction has read "no endpoint" and written its event as dispatched; an endpoint is created.
      const ws = await h.workspace();
      const writing = await heldOpen((trx) =>
        recordEvents(trx, ws.id, [{ type: 'contact.created', contactId: 'ct_race_first', data: {} }], now),
      );
      const creating = endpoint(ws, 'http://127.0.0.1:9/race');
      await waitsOnLock(ws, creating);
      await writing.commit();
      await creating;
      expect(await dispatchedOf('ct_race_first')).toBe(1);

      // 2. An endpoint's creation is open (not committed); an event is written meanwhile.
      const ws2 = await h.workspace();
      const creation = await heldOpen(async (trx) => {
        made.push({ ws: ws2.id, id: await service().stepEndpoint(trx, ws2.id, 'http://127.0.0.1:9/step', 'race') });
      });
      const recording = events(ws2, [{ type: 'contact.created', contactId: 'ct_race_second', data: {} }], new Date());
      await waitsOnLock(ws2, recording);
      await creation.commit();
      await recording;
      expect(await dispatchedOf('ct_race_second')).toBe(0);
    },
  );

  it('a receiver that fails the first 2 attempts: retried after 5 s and 5 min, same webhook-id and body, each signature valid (standardwebhooks)', async () => {
    const clock = testClock();
    const ws = await h.workspace();
    const receiver = await startReceiver(clock.now, (n) => (n <= 2 ? 500 : 204));
    const webhook = await endpoint(ws, receiver.url);
    await events(
      ws,
      [{ type: 'contact.created', contactId: 'ct_42', data: { email: 'grace@example.com' } }],
      clock.now(),
    );
    const d = dispatcher(clock.now);
    await d.fanOut();
    const t0 = clock.ms;

    expect(await drain(d)).toBe(1);
    expect(receiver.requests).toHaveLength(1);
    let [log] = await deliveries(ws, webhook.id);
    expect(log).toMatchObject({
      status: 'PENDING',
      attempts: 1,
      lastStatusCode: 500,
      lastError: 'HTTP 500',
      nextAttemptAt: new Date(t0 + 5 * SECOND).toISOString(),
    });
    const failing = await h.db.kysely
      .selectFrom('webhook_endpoints')
      .select('failing_since')
      .where('id', '=', webhook.id)
      .executeTakeFirstOrThrow();
    expect(failing.failing_since).not.toBeNull();

    clock.advance(4 * SECOND);
    expect(await d.dispatch()).toBe(0); // not yet due
    clock.advance(SECOND);
    expect(await drain(d)).toBe(1);
    [log] = await deliveries(ws, webhook.id);
    expect(log).toMatchObject({
      status: 'PENDING',
      attempts: 2,
      nextAttemptAt: new Date(clock.ms + 5 * MINUTE).toISOString(),
    });

    clock.advance(5 * MINUTE);
    expect(await drain(d)).toBe(1);
    [log] = await deliveries(ws, webhook.id);
    expect(log).toMatchObject({
      status: 'SUCCEEDED',
      attempts: 3,
      lastStatusCode: 204,
      lastError: null,
      nextAttemptAt: null,
      deliveredAt: clock.now().toISOString(),
    });
    expect(log.attemptLog.map((a: { statusCode: number }) => a.statusCode)).toEqual([500, 500, 204]);
    expect(log.attemptLog.map((a: { attemptedAt: string }) => Date.parse(a.attemptedAt) - t0)).toEqual([
      0,
      5 * SECOND,
      5 * SECOND + 5 * MINUTE,
    ]);
    expect(
      log.attemptLog.every((a: { durationMs: number }) => Number.isInteger(a.durationMs) && a.durationMs >= 0),
    ).toBe(true);

    expect(receiver.requests).toHaveLength(3);
    const ids = new Set(receiver.requests.map((r) => r.headers['webhook-id']));
    expect([...ids]).toEqual([log.id]);
    expect(new Set(receiver.requests.map((r) => r.body)).size).toBe(1);
    for (const r of receiver.requests) {
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['user-agent']).toBe('Formcast-Webhooks/1');
      expect(r.headers['webhook-timestamp']).toBe(String(Math.floor(r.at / 1000)));
      expect(verify(webhook.secret, r)).toMatchObject({
        type: 'contact.created',
        data: { contactId: 'ct_42', data: { email: 'grace@example.com' } },
      });
    }
    const endpointRow = await h.db.kysely
      .selectFrom('webhook_endpoints')
      .select('failing_since')
      .where('id', '=', webhook.id)
      .executeTakeFirstOrThrow();
    expect(endpointRow.failing_since).toBeNull();
  });

  it('retries on the schedule 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then FAILED; a manual retry sends it again with the same webhook-id', async () => {
    const clock = testClock();
    const ws = await h.workspace();
    let up = false;
    const receiver = await startReceiver(clock.now, () => (up ? 200 : 503));
    const webhook = await endpoint(ws, receiver.url);
    await events(ws, [{ type: 'contact.created', data: {} }], clock.now());
    const d = dispatcher(clock.now);
    await d.fanOut();
    const waits = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR];
    for (const [i, wait] of waits.entries()) {
      expect(await drain(d)).toBe(1);
      const [log] = await deliveries(ws, webhook.id);
      expect(log).toMatchObject({
        status: 'PENDING',
        attempts: i + 1,
        nextAttemptAt: new Date(clock.ms + wait).toISOString(),
      });
      clock.advance(wait - 1);
      expect(await d.dispatch()).toBe(0);
      clock.advance(1);
    }
    expect(await drain(d)).toBe(1);
    let [log] = await deliveries(ws, webhook.id, '?status=FAILED');
    expect(log).toMatchObject({ status: 'FAILED', attempts: 8, lastStatusCode: 503, nextAttemptAt: null });
    expect(log.attemptLog).toHaveLength(8);
    clock.advance(DAY);
    expect(await d.dispatch()).toBe(0);
    expect(receiver.requests).toHaveLength(8);

    up = true;
    const retry = await h.call(ws.key, 'POST', `/v1/webhooks/${webhook.id}/deliveries/${log.id}/retry`);
    expect(retry.statusCode, retry.body).toBe(202);
    expect(retry.json()).toMatchObject({ id: log.id, status: 'PENDING', attempts: 0 });
    expect((await h.call(ws.key, 'POST', `/v1/webhooks/${webhook.id}/deliveries/${log.id}/retry`)).statusCode).toBe(
      409,
    );
    clock.set(Date.now() + 1000);
    expect(await drain(d)).toBe(1);
    [log] = await deliveries(ws, webhook.id);
    expect(log).toMatchObject({ status: 'SUCCEEDED', attempts: 1, lastStatusCode: 200 });
    expect(log.attemptLog).toHaveLength(9);
    expect(new Set(receiver.requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([log.id]));
    // A SUCCEEDED delivery can be sent again too.
    expect(
      (await h.call(ws.key, 'POST', `/v1/webhooks/${webhook.id}/deliveries/${log.id}/retry`)).json(),
    ).toMatchObject({ status: 'PENDING' });
    expect(await drain(d)).toBe(1);
    expect(receiver.requests).toHaveLength(10);
    verify(webhook.secret, receiver.requests[9]!);
  });

  it('rotation: for 24 hours both secrets sign (two v1 entries, each verifies alone); then only the new one', async () => {
    const clock = testClock();
    const ws = await h.workspace();
    const receiver = await startReceiver(clock.now);
    const svc = service();
    const webhook = await endpoint(ws, receiver.url, ['contact.created'], svc);
    const rotated = await svc.rotateSecret(ws.id, webhook.id);
    const d = dispatcher(clock.now);

    clock.advance(23 * HOUR);
    await events(ws, [{ type: 'contact.created', data: { n: 1 } }], clock.now());
    await d.fanOut();
    await drain(d);
    const during = receiver.requests[0]!;
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(webhook.secret, during)).toMatchObject({ data: { data: { n: 1 } } });
    expect(verify(rotated.secret, during)).toMatchObject({ data: { data: { n: 1 } } });

    clock.advance(2 * HOUR);
    await events(ws, [{ type: 'contact.created', data: { n: 2 } }], clock.now());
    await d.fanOut();
    await drain(d);
    const after = receiver.requests[1]!;
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verify(rotated.secret, after)).toMatchObject({ data: { data: { n: 2 } } });
    expect(() => verify(webhook.secret, after)).toThrow();
  });

  it('a URL on 127.0.0.1 is refused unless WEBHOOKS_ALLOW_PRIVATE=true', async () => {
    const ws = await h.workspace();
    const res = await h.call(ws.key, 'POST', '/v1/webhooks', {
      url: 'https://127.0.0.1:8443/hook',
      eventTypes: ['contact.created'],
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors).toEqual([
      { path: '/url', message: expect.stringMatching(/127\.0\.0\.1, a loopback address.*WEBHOOKS_ALLOW_PRIVATE/) },
    ]);
    await expect(
      new WebhooksService(h.db, { secret: TEST_SECRET, allowHttp: false, allowPrivate: false }).create(ws.id, {
        url: 'https://127.0.0.1:8443/hook',
        eventTypes: ['contact.created'],
      }),
    ).rejects.toMatchObject({ code: 'validation_failed' });
    const allowed = await new WebhooksService(h.db, {
      secret: TEST_SECRET,
      allowHttp: false,
      allowPrivate: true,
    }).create(ws.id, { url: 'https://127.0.0.1:8443/hook', eventTypes: ['contact.created'] });
    made.push({ ws: ws.id, id: allowed.id });
    expect(allowed.url).toBe('https://127.0.0.1:8443/hook');
  });

  it('the guard runs again at delivery: a host that now resolves to a private address is not called (and the connection goes to the address checked)', async () => {
    const clock = testClock();
    const ws = await h.workspace();
    const receiver = await startReceiver(clock.now);
    let answer = '93.184.215.14';
    const resolve: Resolver = async (host) =>
      host === 'hooks.customer.example'
        ? [{ address: answer, family: 4 }]
        : Promise.reject(Object.assign(new Error('no such host'), { code: 'ENOTFOUND' }));
    const url = `http://hooks.customer.example:${receiver.port}/hook`;
    const webhook = await endpoint(ws, url, ['contact.created'], service({ resolve, allowPrivate: false }));
    await expect(
      service({ resolve, allowPrivate: false }).create(ws.id, {
        url: `https://unknown.example/x`,
        eventTypes: ['contact.created'],
      }),
    ).rejects.toMatchObject({
      code: 'validation_failed',
      errors: [{ path: '/url', message: expect.stringMatching(/does not resolve/) }],
    });

    answer = '127.0.0.1'; // DNS rebinding
    await events(ws, [{ type: 'contact.created', data: {} }], clock.now());
    const strict = dispatcher(clock.now, { resolve, allowPrivate: false });
    await strict.fanOut();
    expect(await drain(strict)).toBe(1);
    expect(receiver.requests).toHaveLength(0);
    let [log] = await deliveries(ws, webhook.id);
    expect(log).toMatchObject({ status: 'PENDING', attempts: 1, lastStatusCode: null });
    expect(log.lastError).toMatch(/refused: .*127\.0\.0\.1, a loopback address/);

    // Allowed to reach private addresses, the dispatcher connects to the address the guard checked: the host name
    // exists only in the injected resolver, so the request could not arrive any other way.
    clock.advance(5 * SECOND);
    const lenient = dispatcher(clock.now, { resolve, allowPrivate: true });
    expect(await drain(lenient)).toBe(1);
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0]!.headers.host).toBe(`hooks.customer.example:${receiver.port}`);
    [log] = await deliveries(ws, webhook.id);
    expect(log.status).toBe('SUCCEEDED');
  });

  it('follows no redirect: a 3xx is a failed attempt, retried, and the Location is never requested', async () => {
    const clock = testClock();
    const ws = await h.workspace();
    const receiver = await startReceiver(clock.now, () => ({ status: 307, headers: { location: '/elsewhere' } }));
    const webhook = await endpoint(ws, receiver.url);
    await events(ws, [{ type: 'contact.created', data: {} }], clock.now());
    const d = dispatcher(clock.now);
    await d.fanOut();
    await drain(d);
    expect(receiver.requests.map((r) => r.url)).toEqual(['/hook']);
    const [log] = await deliveries(ws, webhook.id);
    expect(log).toMatchObject({ status: 'PENDING', lastStatusCode: 307 });
    expect(log.lastError).toMatch(/redirects are not followed/);
  });

  it('no answer within the timeout is a failed attempt', async () => {
    const clock = testClock();
    const ws = await h.workspace();
    const receiver = await startReceiver(clock.now, () => ({ status: 200, delayMs: 2000 }));
    const webhook = await endpoint(ws, receiver.url);
    await events(ws, [{ type: 'contact.created', data: {} }], clock.now());
    const d = dispatcher(clock.now, { timeoutMs: 200 });
    await d.fanOut();
    await drain(d);
    const [log] = await deliveries(ws, webhook.id);
    expect(log).toMatchObject({ status: 'PENDING', lastStatusCode: null, lastError: 'no answer within 200 ms' });
    expect(log.attemptLog[0].durationMs).toBeGreaterThanOrEqual(190);
  });

  it('an endpoint that does not answer is paused: one attempt per lane, what it held goes back untried, the other endpoints are served', async () => {
    const clock = testClock();
    const ws = await h.workspace();
    const slow = await startReceiver(clock.now, () => ({ status: 200, delayMs: 2000 }));
    const fine = await startReceiver(clock.now);
    const dead = await endpoint(ws, slow.url);
    const alive = await endpoint(ws, fine.url);
    await events(
      ws,
      Array.from({ length: 6 }, () => ({ type: 'contact.created' as const, data: {} })),
      clock.now(),
    );
    const d = dispatcher(clock.now, { timeoutMs: 200, concurrency: 4 });
    await d.fanOut();
    expect(await drain(d)).toBe(6 + 2);
    // The live endpoint got all six; the dead one was tried twice (its 2 slots), the rest given back without an attempt.
    expect(fine.requests).toHaveLength(6);
    const log = await deliveries(ws, dead.id);
    const tried = log.filter((l: { attempts: number }) => l.attempts === 1);
    const untried = log.filter((l: { attempts: number }) => l.attempts === 0);
    expect(tried).toHaveLength(2);
    expect(untried).toHaveLength(4);
    for (const l of untried)
      expect(l).toMatchObject({
        status: 'PENDING',
        attemptLog: [],
        nextAttemptAt: new Date(clock.ms + 5000).toISOString(),
      });
    expect((await deliveries(ws, alive.id)).every((l: { status: string }) => l.status === 'SUCCEEDED')).toBe(true);
    // Nothing more is due until the pause ends.
    expect(await d.dispatch()).toBe(0);
    clock.advance(5000);
    expect(await d.dispatch()).toBeGreaterThan(0);
  });

  it("fair dispatch (issue 29): a hung endpoint with hundreds waiting in one workspace does not delay another workspace's delivery; at most 2 in flight per endpoint, and it backs off alone", async () => {
    const clock = testClock();
    const [wsA, wsB] = [await h.workspace('A'), await h.workspace('B')];
    const hung = await startHangingReceiver();
    const fine = await startReceiver(clock.now);
    const stuck = await endpoint(wsA, hung.url);
    const stuck2 = await endpoint(wsA, `${hung.url}/2`);
    const served = await endpoint(wsB, fine.url);
    // 2 × 250 deliveries for workspace A, older than workspace B's one.
    await events(
      wsA,
      Array.from({ length: 250 }, (_, n) => ({ type: 'contact.created' as const, data: { n } })),
      clock.now(),
    );
    clock.advance(1);
    await events(wsB, [{ type: 'contact.created', data: { b: true } }], clock.now());
    const d = dispatcher(clock.now, { timeoutMs: 2000 });
    while ((await d.fanOut()) > 0);
    const status = async () => (await deliveries(wsB, served.id))[0];

    // Workspace B's delivery is claimed and sent in the first round, past the 500 older ones; the round does not wait
    // for A's requests, which hang.
    await d.dispatch();
    expect((await status()).status).toBe('SENDING');
    while ((await status()).status === 'SENDING') await d.dispatch();
    expect(await status()).toMatchObject({ status: 'SUCCEEDED', attempts: 1 });
    expect(fine.requests).toHaveLength(1);
    expect(
      await h.db.kysely.selectFrom('webhook_attempts').select('id').where('workspace_id', '=', wsA.id).execute(),
    ).toEqual([]);
    // Meanwhile each of A's endpoints has had 2 requests at most (its own slots).
    expect(hung.requests.filter((r) => r.url === '/hang').length).toBeLessThanOrEqual(2);
    expect(hung.requests.filter((r) => r.url === '/hang/2').length).toBeLessThanOrEqual(2);

    // A's endpoints time out and back off on their own: 2 attempts each, the rest given back untried, due in 5 s.
    await drain(d);
    expect(hung.requests).toHaveLength(4);
    for (const e of [stuck, stuck2]) {
      const rows = await h.db.kysely
        .selectFrom('webhook_deliveries')
        .select(['status', 'attempts', 'next_attempt_at'])
        .where('endpoint_id', '=', e.id)
        .execute();
      expect(rows).toHaveLength(250);
      expect(rows.filter((r) => Number(r.attempts) === 1)).toHaveLength(2);
      expect(
        rows.every((r) => r.status === 'PENDING' && Date.parse(toIso(r.next_attempt_at)!) === clock.ms + 5 * SECOND),
      ).toBe(true);
    }
    expect(await d.dispatch()).toBe(0);
  });

  it('fair dispatch (issue 29): a workspace with many hung endpoints holds half the slots at most; another workspace is served in the first round', async () => {
    const clock = testClock();
    const [wsA, wsB] = [await h.workspace('A'), await h.workspace('B')];
    const hung = await startHangingReceiver();
    const fine = await startReceiver(clock.now);
    for (let i = 0; i < 6; i++) await endpoint(wsA, `${hung.url}/${i}`);
    const served = await endpoint(wsB, fine.url);
    await events(
      wsA,
      Array.from({ length: 20 }, (_, n) => ({ type: 'contact.created' as const, data: { n } })),
      clock.now(),
    );
    clock.advance(1);
    await events(wsB, [{ type: 'contact.created', data: { b: true } }], clock.now());
    // 8 slots: without a limit per workspace, A's 6 endpoints (2 each) would take them all.
    const d = dispatcher(clock.now, { timeoutMs: 2000, concurrency: 8 });
    while ((await d.fanOut()) > 0);
    await d.dispatch();
    const status = async () => (await deliveries(wsB, served.id))[0];
    expect((await status()).status).toBe('SENDING');
    while ((await status()).status === 'SENDING') await d.dispatch();
    expect(await status()).toMatchObject({ status: 'SUCCEEDED', attempts: 1 });
    expect(
      await h.db.kysely.selectFrom('webhook_attempts').select('id').where('workspace_id', '=', wsA.id).execute(),
    ).toEqual([]);
    await drain(d);
    // A's endpoints had 4 requests in flight at most (half of 8), each endpoint 2 at most, then each backed off.
    expect(hung.maxOpen()).toBeLessThanOrEqual(4);
    const perEndpoint = new Map<string, number>();
    for (const r of hung.requests) perEndpoint.set(r.url, (perEndpoint.get(r.url) ?? 0) + 1);
    expect(Math.max(...perEndpoint.values())).toBeLessThanOrEqual(2);
    expect(await d.dispatch()).toBe(0);
  });

  it('fair dispatch (issue 29): a workspace with many slow endpoints that answer never holds more than its share of the hold; another workspace is claimed in the first round, and again while the first one holds its share', async () => {
    const clock = testClock();
    const [wsA, wsB] = [await h.workspace('A'), await h.workspace('B')];
    // A's 24 endpoints answer 200, slowly but within the timeout (so none is paused); 5 deliveries each.
    const slow = await startReceiver(clock.now, () => ({ status: 200, delayMs: 300 }));
    const fine = await startReceiver(clock.now);
    for (let i = 0; i < 24; i++) await endpoint(wsA, `${slow.url}/${i}`);
    const served = await endpoint(wsB, fine.url);
    await events(
      wsA,
      Array.from({ length: 5 }, (_, n) => ({ type: 'contact.created' as const, data: { n } })),
      clock.now(),
    );
    clock.advance(1);
    await events(wsB, [{ type: 'contact.created', data: { b: 1 } }], clock.now());
    // 40 held in all at most; 24 endpoints × 4 each would fill it without a bound per workspace.
    const d = dispatcher(clock.now, { timeoutMs: 2000, batchSize: 20 });
    while ((await d.fanOut()) > 0);
    const sending = async (ws: TestWorkspace) =>
      (
        await h.db.kysely
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('workspace_id', '=', ws.id)
          .where('status', '=', 'SENDING')
          .execute()
      ).length;
    const bStatus = async () => (await deliveries(wsB, served.id)).map((l: { status: string }) => l.status);

    // The first claim: at most half of it for A, and B's delivery, newer than all of A's 120.
    await d.dispatch();
    expect(await bStatus()).toEqual(['SENDING']);
    expect(await sending(wsA)).toBeLessThanOrEqual(10);
    // A takes its share (20, half of the hold) and never more, round after round.
    let rounds = 0;
    for (let a = 0; a < 20 && rounds < 200; rounds++) {
      await d.dispatch();
      a = await sending(wsA);
      expect(a).toBeLessThanOrEqual(20);
    }
    expect(rounds).toBeLessThan(200);
    // B has an event now: there is room for it although A holds all it may (the claim looks past A's endpoints).
    await events(wsB, [{ type: 'contact.created', data: { b: 2 } }], clock.now());
    while ((await d.fanOut()) > 0);
    const aRequestsBefore = slow.requests.length;
    while ((await bStatus()).includes('PENDING')) {
      await d.dispatch();
      expect(await sending(wsA)).toBeLessThanOrEqual(20);
    }
    while ((await bStatus()).includes('SENDING')) await d.dispatch();
    expect(await bStatus()).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    expect(fine.requests).toHaveLength(2);
    // B's second request was sent before A's 120 were all sent (A's share of the hold left room for it).
    expect(aRequestsBefore).toBeLessThan(120);
    await drain(d);
    expect(slow.requests).toHaveLength(120);
  });

  it("fair dispatch (issue 29): an endpoint that answered fast and then slowly gives back what it held beyond a slow endpoint's hold", async () => {
    const clock = testClock();
    const ws = await h.workspace();
    // The first answer is at once (the endpoint is fast: it may hold 40), the others come after 800 ms (under the timeout).
    const receiver = await startReceiver(clock.now, (n) => ({ status: 200, delayMs: n === 1 ? 0 : 800 }));
    const webhook = await endpoint(ws, receiver.url);
    await events(
      ws,
      Array.from({ length: 60 }, (_, n) => ({ type: 'contact.created' as const, data: { n } })),
      clock.now(),
    );
    const d = dispatcher(clock.now, { timeoutMs: 2000, batchSize: 100, endpointHold: 40 });
    while ((await d.fanOut()) > 0);
    const sending = async () =>
      (
        await h.db.kysely
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('endpoint_id', '=', webhook.id)
          .where('status', '=', 'SENDING')
          .execute()
      ).length;
    // Fast: it takes up to its fast hold.
    let most = 0;
    while (d.recorded < 2) {
      await d.dispatch();
      if (d.recorded < 2) most = Math.max(most, await sending());
    }
    expect(most).toBeGreaterThan(12);
    // A slow answer recorded: no longer fast, it keeps at most what is in flight (8 at most) and a slow endpoint's hold (4).
    expect(await sending()).toBeLessThanOrEqual(12);
    const released = await h.db.kysely
      .selectFrom('webhook_deliveries')
      .select(['id', 'attempts'])
      .where('endpoint_id', '=', webhook.id)
      .where('status', '=', 'PENDING')
      .execute();
    expect(released.length).toBeGreaterThan(60 - 12 - 2);
    expect(released.every((r) => Number(r.attempts) === 0)).toBe(true);
  });

  it('outcomes let go after 3 failed recordings are no longer renewed while the dispatcher holds others: their leases run out and they are claimed again', async () => {
    const clock = testClock();
    const ws = await h.workspace();
    const hung = await startHangingReceiver();
    const fine = await startReceiver(clock.now);
    await endpoint(ws, hung.url);
    const answered = await endpoint(ws, fine.url);
    await events(ws, [{ type: 'contact.created', data: {} }], clock.now());
    // The hung request keeps the dispatcher busy (and renewing) throughout; leases of 300 ms are renewed every 100 ms.
    const d = dispatcher(clock.now, { timeoutMs: 3000, leaseMs: 300 });
    await d.fanOut();
    const lease = async (endpointId: string) =>
      await h.db.kysely
        .selectFrom('webhook_deliveries')
        .select(['status', 'lease_expires_at'])
        .where('endpoint_id', '=', endpointId)
        .executeTakeFirstOrThrow();
    // Recording fails (its table is gone for a while): 3 times in a row, then the answered delivery's outcome is let go.
    await sql`alter table webhook_attempts rename to webhook_attempts_away`.execute(h.db.kysely);
    let failures = 0;
    try {
      for (let round = 0; failures < 3 && round < 500; round++) await d.dispatch().catch(() => failures++);
    } finally {
      await sql`alter table webhook_attempts_away rename to webhook_attempts`.execute(h.db.kysely);
    }
    expect(failures).toBe(3);
    expect(fine.requests).toHaveLength(1);
    expect(hung.requests).toHaveLength(1);
    expect(await lease(answered.id)).toMatchObject({ status: 'SENDING' });
    // Later: the renewal still runs for the hung request, and only for it.
    clock.advance(1000);
    const renewedUntil = new Date(clock.ms + 300).toISOString();
    while (
      toIso(
        (
          await lease(
            (
              await h.db.kysely
                .selectFrom('webhook_endpoints')
                .select('id')
                .where('url', '=', hung.url)
                .executeTakeFirstOrThrow()
            ).id,
          )
        ).lease_expires_at,
      ) !== renewedUntil
    ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(Date.parse(toIso((await lease(answered.id)).lease_expires_at)!)).toBeLessThan(clock.ms);
    // Another dispatcher claims it again and sends it (at least once).
    const other = dispatcher(clock.now, { workerId: 'other' });
    await other.dispatch();
    while ((await lease(answered.id)).status === 'SENDING') await other.dispatch();
    expect((await lease(answered.id)).status).toBe('SUCCEEDED');
    expect(fine.requests).toHaveLength(2);
  });

  it('an endpoint deleted while its deliveries are in flight: the outcomes of the others are recorded all the same', async () => {
    const clock = testClock();
    const ws = await h.workspace();
    const slow = await startReceiver(clock.now, () => ({ status: 200, delayMs: 300 }));
    const kept = await endpoint(ws, `${slow.url}/kept`);
    const gone = await endpoint(ws, `${slow.url}/gone`);
    await events(ws, [{ type: 'contact.created', data: {} }], clock.now());
    const d = dispatcher(clock.now);
    await d.fanOut();
    await d.dispatch();
    expect(d.held).toBe(2);
    await h.db.kysely.deleteFrom('webhook_endpoints').where('id', '=', gone.id).execute();
    expect(await drain(d)).toBe(1);
    expect(await deliveries(ws, kept.id)).toEqual([expect.objectContaining({ status: 'SUCCEEDED', attempts: 1 })]);
  });

  it('an endpoint failing for 5 days in a row is disabled, with a reason, and what waits for it is FAILED', async () => {
    const clock = testClock();
    const ws = await h.workspace();
    const receiver = await startReceiver(clock.now, () => 500);
    const webhook = await endpoint(ws, receiver.url);
    const d = dispatcher(clock.now, { batchSize: 1, endpointConcurrency: 1, endpointHold: 1 });
    await events(ws, [{ type: 'contact.created', data: { n: 1 } }], clock.now());
    await d.fanOut();
    await drain(d);
    const t0 = clock.ms;
    const since = async () =>
      await h.db.kysely
        .selectFrom('webhook_endpoints')
        .select(['failing_since', 'enabled', 'disabled_reason'])
        .where('id', '=', webhook.id)
        .executeTakeFirstOrThrow();
    expect(Date.parse(toIso((await since()).failing_since!))).toBe(t0);

    clock.advance(4 * DAY);
    await events(ws, [{ type: 'contact.created', data: { n: 2 } }], clock.now());
    await d.fanOut();
    await drain(d); // a failure after 4 days: still enabled
    expect((await since()).enabled).toBe(1);

    clock.advance(DAY);
    await events(
      ws,
      [
        { type: 'contact.created', data: { n: 3 } },
        { type: 'contact.created', data: { n: 4 } },
      ],
      clock.now(),
    );
    await d.fanOut();
    const before = receiver.requests.length;
    await drain(d);
    expect(receiver.requests).toHaveLength(before + 1); // one more failure, 5 days after the first
    const row = await since();
    expect(row.enabled).toBe(0);
    expect(row.disabled_reason).toMatch(/every delivery has failed since/);
    const got = (await h.call(ws.key, 'GET', `/v1/webhooks/${webhook.id}`)).json();
    expect(got).toMatchObject({ enabled: false, disabledReason: row.disabled_reason });
    const all = await deliveries(ws, webhook.id);
    expect(all).toHaveLength(4);
    expect(all.every((x: { status: string }) => x.status === 'FAILED')).toBe(true);
    expect(
      all
        .filter((x: { attempts: number }) => x.attempts === 0)
        .every((x: { lastError: string }) => x.lastError === row.disabled_reason),
    ).toBe(true);
    const hits = receiver.requests.length;
    clock.advance(DAY);
    await events(ws, [{ type: 'contact.created', data: { n: 5 } }], clock.now());
    await d.fanOut();
    expect(await drain(d)).toBe(0);
    expect(receiver.requests).toHaveLength(hits);
    expect(await deliveries(ws, webhook.id)).toHaveLength(4); // a disabled endpoint gets no new deliveries
  });

  it('two dispatchers at once never send one delivery twice', async () => {
    const clock = testClock();
    const ws = await h.workspace();
    const receiver = await startReceiver(clock.now, () => ({ status: 200, delayMs: Math.floor(Math.random() * 5) }));
    const webhook = await endpoint(ws, receiver.url);
    const N = 300;
    await events(
      ws,
      Array.from({ length: N }, (_, i) => ({ type: 'contact.created' as const, data: { n: i } })),
      clock.now(),
    );
    const [a, b] = [
      dispatcher(clock.now, { batchSize: 20, concurrency: 8, workerId: 'A' }),
      dispatcher(clock.now, { batchSize: 20, concurrency: 8, workerId: 'B' }),
    ];
    while ((await a.fanOut()) + (await b.fanOut()) > 0);
    const counts = await Promise.all([drain(a), drain(b)]);
    expect(counts[0] + counts[1]).toBe(N);
    if (h.dbName === 'postgres') expect(Math.min(...counts)).toBeGreaterThan(0);
    const perId = new Map<string, number>();
    for (const r of receiver.requests)
      perId.set(String(r.headers['webhook-id']), (perId.get(String(r.headers['webhook-id'])) ?? 0) + 1);
    expect(perId.size).toBe(N);
    expect([...perId.values()].every((n) => n === 1)).toBe(true);
    const statuses = await h.db.kysely
      .selectFrom('webhook_deliveries')
      .select('status')
      .where('endpoint_id', '=', webhook.id)
      .execute();
    expect(statuses.every((s) => s.status === 'SUCCEEDED')).toBe(true);
    expect(
      new Set(receiver.requests.map((r) => (JSON.parse(r.body) as { data: { data: { n: number } } }).data.data.n)).size,
    ).toBe(N);
  });

  it('a SENDING delivery whose lease ran out (its dispatcher died) is claimed again', async () => {
    const clock = testClock();
    const ws = await h.workspace();
    const receiver = await startReceiver(clock.now);
    const webhook = await endpoint(ws, receiver.url);
    await events(ws, [{ type: 'contact.created', data: {} }], clock.now());
    const d = dispatcher(clock.now, { leaseMs: 30_000 });
    await d.fanOut();
    await h.db.kysely
      .updateTable('webhook_deliveries')
      .set({
        status: 'SENDING',
        lease_owner: 'dead',
        lease_expires_at: new Date(clock.ms + 30_000).toISOString(),
        attempts: 1,
      })
      .where('endpoint_id', '=', webhook.id)
      .execute();
    expect(await d.dispatch()).toBe(0);
    clock.advance(30_001);
    expect(await drain(d)).toBe(1);
    expect(receiver.requests).toHaveLength(1);
    expect((await deliveries(ws, webhook.id))[0]).toMatchObject({ status: 'SUCCEEDED', attempts: 2 });
  });

  it('prunes deliveries (and their attempts) older than 30 days, in batches', async () => {
    const clock = testClock();
    const ws = await h.workspace();
    const receiver = await startReceiver(clock.now);
    const webhook = await endpoint(ws, receiver.url);
    await events(
      ws,
      [
        { type: 'contact.created', data: {} },
        { type: 'contact.created', data: {} },
      ],
      clock.now(),
    );
    const d = dispatcher(clock.now);
    await d.fanOut();
    await drain(d);
    const [old] = await h.db.kysely
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('endpoint_id', '=', webhook.id)
      .orderBy('id')
      .execute();
    await h.db.kysely
      .updateTable('webhook_deliveries')
      .set({ created_at: new Date(clock.ms - 31 * DAY).toISOString() })
      .where('id', '=', old!.id)
      .execute();
    let pruned = 0;
    for (let n; (n = await d.prune()) > 0;) pruned += n;
    expect(pruned).toBeGreaterThanOrEqual(1);
    const left = await h.db.kysely
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('endpoint_id', '=', webhook.id)
      .execute();
    expect(left).toHaveLength(1);
    expect(left[0]!.id).not.toBe(old!.id);
    expect(
      await h.db.kysely.selectFrom('webhook_attempts').select('id').where('delivery_id', '=', old!.id).execute(),
    ).toEqual([]);
  });
});
