/**
 * Sign-up protection (docs/forms.md, "Bot protection") through app.inject, on SQLite and PostgreSQL, the database
 * read afterwards: the proof-of-work challenge (solved here with altcha-lib, at a low difficulty), single-use solutions,
 * expiry on a clock the test moves, the API exempt; sign-up bursts held for review and released or discarded; the
 * redirect after a hosted submission; the embeds' impressions; compressed answers.
 */
import zlib from 'node:zlib';
import { solveChallenge, type Challenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { Db } from '../../src/db/connection.js';
import { PG_URL, testDatabases, type TestDatabase } from '../helpers/db.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { IMPRESSIONS_PER_MINUTE } from '../../src/forms/protection/protection.routes.js';
import { ProtectionService } from '../../src/forms/protection/protection.service.js';

const RULES = { windowSeconds: 600, ipRange: 3, pattern: 3, mailbox: 2, domain: 4 };

function describeProtected(
  title: string,
  suite: (h: { app: () => FastifyInstance; db: () => Db; name: TestDatabase['name'] }) => void,
): void {
  for (const name of ['sqlite', 'postgres'] as const) {
    const target = testDatabases.find((d) => d.name === name);
    (target ? describe : describe.skip)(
      `${title} [${name}${!target && !PG_URL ? ': TEST_DATABASE_URL not set' : ''}]`,
      () => {
        let app: FastifyInstance;
        let db: Db;
        let drop: () => Promise<void>;
        beforeAll(async () => {
          ({ db, drop } = await target!.open());
          app = await buildApp({
            db,
            logger: false,
            config: {
              logLevel: 'silent',
              publicUrl: 'http://localhost:3000',
              secret: TEST_SECRET,
              signupBursts: RULES,
              proofOfWork: { cost: 10, minCounter: 5, maxCounter: 40 },
            },
          });
          await app.ready();
        });
        afterAll(async () => {
          await app?.close();
          await drop?.();
        });
        suite({ app: () => app, db: () => db, name });
      },
    );
  }
}

let slugs = 0;

describeProtected('bot protection', (h) => {
  afterEach(() => vi.useRealTimers());

  async function setup(settings: Record<string, unknown> = {}, type = 'SIGN_UP') {
    const { workspace, apiKey } = await h.app().services.workspaces.createWithAdminKey('Protected');
    const key = apiKey.key;
    const call = (method: InjectOptions['method'], url: string, body?: unknown) =>
      h.app().inject({
        method,
        url,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });
    const slug = `bot-${h.name}-${++slugs}`;
    const created = await call('POST', '/v1/forms', {
      name: 'News',
      type,
      slug,
      display: 'INLINE_EMBED',
      fieldMapping: { email: 'email', first_name: 'firstName' },
      settings,
    });
    expect(created.statusCode, created.body).toBe(201);
    const pub = await call('POST', `/v1/forms/${created.json().id}/publish`);
    expect(pub.statusCode, pub.body).toBe(200);
    return { ws: workspace.id, key, call, slug, form: pub.json() as { id: string; formGroupId: string } };
  }

  const post = (slug: string, body: string, ip = '198.51.100.10', headers: Record<string, string> = {}) =>
    h.app().inject({
      method: 'POST',
      url: `/f/${slug}`,
      remoteAddress: ip,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: body,
    });
  const postJson = (slug: string, body: unknown, ip = '198.51.100.10') =>
    h.app().inject({
      method: 'POST',
      url: `/f/${slug}`,
      remoteAddress: ip,
      headers: { 'content-type': 'application/json', accept: 'application/json', origin: 'https://site.example' },
      payload: JSON.stringify(body),
    });

  async function solution(slug: string): Promise<string> {
    const res = await h.app().inject({ method: 'GET', url: `/f/${slug}/challenge` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['cache-control']).toBe('no-store');
    const challenge = res.json() as Challenge;
    const solved = await solveChallenge({ challenge, deriveKey });
    return Buffer.from(JSON.stringify({ challenge, solution: solved })).toString('base64');
  }
  const submissions = (ws: string) =>
    h.db().kysely.selectFrom('submissions').selectAll().where('workspace_id', '=', ws).orderBy('id').execute();
  const contact = (ws: string, email: string) =>
    h
      .db()
      .kysely.selectFrom('contacts')
      .selectAll()
      .where('workspace_id', '=', ws)
      .where('email', '=', email)
      .executeTakeFirst();

  describe('proof of work', () => {
    it('the setting is validated, stored and returned; the hosted page carries the widget from this origin and a CSP that lets only it run', async () => {
      const { call, slug, form } = await setup({ protection: { proofOfWork: true } });
      expect((await call('GET', `/v1/forms/${form.id}`)).json().settings.protection).toEqual({ proofOfWork: true });
      expect(
        (
          await call('POST', '/v1/forms', {
            name: 'x',
            type: 'SIGN_UP',
            settings: { protection: { proofOfWork: 'yes' } },
          })
        ).statusCode,
      ).toBe(422);
      expect(
        (await call('POST', '/v1/forms', { name: 'x', type: 'SIGN_UP', settings: { protection: { captcha: true } } }))
          .statusCode,
      ).toBe(422);
      const page = await h.app().inject({ method: 'GET', url: `/f/${slug}` });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain(
        `<altcha-widget challenge="http://localhost:3000/f/${slug}/challenge" name="_fc_pow" auto="onload"`,
      );
      expect(page.body).toMatch(/<script type="module" src="\/assets\/altcha\/widget\.js\?v=[\d.]+"><\/script>/);
      expect(page.body).not.toMatch(/https?:\/\/(?!localhost:3000)[^"]*altcha/); // nothing from elsewhere
      const csp = page.headers['content-security-policy'] as string;
      expect(csp).toContain("default-src 'none'; script-src 'self'; worker-src 'self'; connect-src 'self';");
      // The widget's files, from this origin, cacheable, compressed.
      for (const [name, type] of [
        ['widget.js', 'text/javascript'],
        ['pbkdf2.js', 'text/javascript'],
        ['altcha.css', 'text/css'],
      ]) {
        const asset = await h
          .app()
          .inject({ method: 'GET', url: `/assets/altcha/${name}?v=1`, headers: { 'accept-encoding': 'gzip' } });
        expect(asset.statusCode).toBe(200);
        expect(asset.headers['content-type']).toContain(type);
        expect(asset.headers['content-encoding']).toBe('gzip');
        expect(asset.headers['access-control-allow-origin']).toBe('*');
        expect(asset.headers['cache-control']).toContain('immutable');
      }
      expect((await h.app().inject({ method: 'GET', url: '/assets/altcha/../package.json' })).statusCode).toBe(404);
      expect((await h.app().inject({ method: 'GET', url: '/assets/altcha/index.js' })).statusCode).toBe(404);
      // A form without proof of work: no script at all, and no challenge.
      const plain = await setup();
      const plainPage = await h.app().inject({ method: 'GET', url: `/f/${plain.slug}` });
      expect(plainPage.body).not.toContain('<script');
      expect(plainPage.headers['content-security-policy']).not.toContain('script-src');
      expect((await h.app().inject({ method: 'GET', url: `/f/${plain.slug}/challenge` })).statusCode).toBe(404);
    });

    it('a submission without a valid solution is refused (422: the page again, or a problem document); a solution counts once', async () => {
      const { ws, slug } = await setup({ protection: { proofOfWork: true } });
      const none = await post(slug, 'email=nobody%40example.com&first_name=No');
      expect(none.statusCode).toBe(422);
      expect(none.body).toContain('data-formcast-error="_fc_pow"');
      expect(none.body).toContain('automatic spam check');
      expect(none.body).toContain('value="nobody@example.com"'); // what was entered is kept
      const json = await postJson(slug, { email: 'script@example.com' });
      expect(json.statusCode).toBe(422);
      expect(json.headers['content-type']).toContain('application/problem+json');
      expect(json.json()).toMatchObject({
        code: 'proof_of_work_failed',
        status: 422,
        reason: 'missing',
        type: '/docs/errors#proof_of_work_failed',
      });
      const forged = Buffer.from(
        JSON.stringify({
          challenge: {
            parameters: {
              algorithm: 'PBKDF2/SHA-256',
              nonce: '00',
              salt: '00',
              cost: 1,
              keyLength: 32,
              keyPrefix: '00',
            },
            signature: 'a'.repeat(64),
          },
          solution: { counter: 1, derivedKey: '00' },
        }),
      ).toString('base64');
      expect((await postJson(slug, { email: 'forged@example.com', _fc_pow: forged })).json()).toMatchObject({
        code: 'proof_of_work_failed',
        reason: 'invalid',
      });
      expect((await postJson(slug, { email: 'junk@example.com', _fc_pow: 'not base64 json' })).json()).toMatchObject({
        reason: 'malformed',
      });
      expect(await submissions(ws)).toHaveLength(0);

      const good = await solution(slug);
      // Invalid fields first: the solution is not spent, the same one goes again.
      expect((await postJson(slug, { email: 'not-an-address', _fc_pow: good })).json()).toMatchObject({
        ok: false,
        errors: [{ field: 'email' }],
      });
      const ok = await post(slug, `email=person%40example.com&first_name=Pat&_fc_pow=${encodeURIComponent(good)}`);
      expect(ok.statusCode).toBe(200);
      expect(ok.body).toContain('data-formcast-success');
      const replay = await post(slug, `email=bot%40example.com&_fc_pow=${encodeURIComponent(good)}`);
      expect(replay.statusCode).toBe(422);
      expect(replay.body).toContain('already sent');
      expect((await postJson(slug, { email: 'bot2@example.com', _fc_pow: good })).json()).toMatchObject({
        reason: 'replayed',
      });
      const rows = await submissions(ws);
      expect(rows.map((r) => JSON.parse(r.data).email)).toEqual(['person@example.com']);
      expect((await contact(ws, 'person@example.com'))?.status).toBe('SUBSCRIBED');
      expect(await contact(ws, 'bot@example.com')).toBeUndefined();
      const spent = await h.db().kysely.selectFrom('spent_tokens').selectAll().where('workspace_id', '=', ws).execute();
      expect(spent.map((s) => s.kind)).toEqual(['pow']);
      // The purge keeps what has not expired yet.
      await h.app().services.protection.purge();
      expect(
        await h.db().kysely.selectFrom('spent_tokens').selectAll().where('workspace_id', '=', ws).execute(),
      ).toHaveLength(1);
      await h.app().services.protection.purge(Date.now() + 2 * 3_600_000);
      expect(
        await h.db().kysely.selectFrom('spent_tokens').selectAll().where('workspace_id', '=', ws).execute(),
      ).toHaveLength(0);
    });

    it('the same solution sent twice at once: one submission goes through', async () => {
      const { ws, slug } = await setup({ protection: { proofOfWork: true } });
      const good = await solution(slug);
      const answers = await Promise.all(
        ['race1', 'race2', 'race3'].map((n) => postJson(slug, { email: `${n}@example.com`, _fc_pow: good })),
      );
      expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 422, 422]);
      expect(await submissions(ws)).toHaveLength(1);
    });

    it("a solution expires with its challenge (an hour, on the test's clock), and another form's is refused", async () => {
      const t0 = Date.parse('2026-11-24T10:00:00.000Z');
      vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
      vi.setSystemTime(t0);
      const { slug } = await setup({ protection: { proofOfWork: true } });
      const other = await setup({ protection: { proofOfWork: true } });
      const late = await solution(slug);
      expect((await postJson(other.slug, { email: 'elsewhere@example.com', _fc_pow: late })).json()).toMatchObject({
        reason: 'wrong_form',
      });
      vi.setSystemTime(t0 + 61 * 60_000);
      expect((await postJson(slug, { email: 'late@example.com', _fc_pow: late })).json()).toMatchObject({
        code: 'proof_of_work_failed',
        reason: 'expired',
      });
      vi.setSystemTime(t0 + 30 * 60_000);
      expect((await postJson(slug, { email: 'intime@example.com', _fc_pow: late })).json()).toMatchObject({ ok: true });
    });

    it('the API path (authenticated) is exempt', async () => {
      const { ws, call, form } = await setup({ protection: { proofOfWork: true } });
      const res = await call('POST', `/v1/forms/${form.id}/submissions`, { email: 'api@example.com' });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toMatchObject({ status: 'ACCEPTED', heldReasons: null, source: 'API' });
      expect((await contact(ws, 'api@example.com'))?.status).toBe('SUBSCRIBED');
    });
  });

  describe('sign-up bursts', () => {
    it('many sign-ups from one /24 within the window are HELD: nobody signed up, no confirmation, an event; after the window, accepted again', async () => {
      const t0 = Date.parse('2026-11-24T12:00:00.000Z');
      vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
      vi.setSystemTime(t0);
      const { ws, call, slug, form } = await setup();
      const names = ['ann', 'bob', 'cid', 'dee', 'eve'];
      for (const [i, n] of names.entries()) {
        const res = await post(slug, `email=${n}%40mail${i}.example`, `203.0.113.${10 + i}`);
        expect(res.statusCode).toBe(200); // a held one looks like any other to the sender
      }
      const rows = await submissions(ws);
      expect(rows.map((r) => r.status)).toEqual(['ACCEPTED', 'ACCEPTED', 'ACCEPTED', 'HELD', 'HELD']);
      expect(JSON.parse(rows[3]!.held_reasons!)).toEqual(['ip_range']);
      expect(rows[3]!.contact_id).toBeNull();
      expect(await contact(ws, 'dee@mail3.example')).toBeUndefined();
      expect((await contact(ws, 'cid@mail2.example'))?.status).toBe('SUBSCRIBED');
      // Another network, or the same one after the window: accepted.
      expect((await post(slug, 'email=fay%40mail9.example', '192.0.2.1')).statusCode).toBe(200);
      vi.setSystemTime(t0 + 11 * 60_000);
      expect((await post(slug, 'email=gus%40mail8.example', '203.0.113.99')).statusCode).toBe(200);
      expect((await submissions(ws)).slice(5).map((r) => r.status)).toEqual(['ACCEPTED', 'ACCEPTED']);
      // Visible in the API, filterable; and an event of its own.
      const held = (await call('GET', `/v1/forms/${form.id}/submissions?status=HELD`)).json();
      expect(held.data.map((s: { status: string }) => s.status)).toEqual(['HELD', 'HELD']);
      expect(held.data[0]).toMatchObject({ heldReasons: ['ip_range'], reviewedAt: null, contactId: null });
      const events = (await call('GET', '/v1/events?type=form.submission_held')).json();
      expect(events.data).toHaveLength(2);
      expect(events.data[0].data).toMatchObject({ formId: form.id, reasons: ['ip_range'], source: 'HOSTED' });
      const stats = (await call('GET', `/v1/forms/${form.id}`)).json().stats;
      expect(stats.submissions).toBe(5); // held ones do not count until released
    });

    it('addresses of one pattern, plus-address variants of one mailbox, one domain: held; IPv6 by /64', async () => {
      const { ws, slug } = await setup();
      const ips = (i: number) => `2001:db8:${i}::${i}`; // every one on a /64 of its own
      let i = 0;
      const send = (email: string, ip = ips(++i)) => post(slug, `email=${encodeURIComponent(email)}`, ip);
      for (const n of [1, 2, 3, 4]) await send(`user${n}@pattern${n % 2 ? 'a' : 'a'}.example`);
      for (const tag of ['a', 'b', 'c']) await send(`jane+${tag}@gmail.com`);
      for (const n of ['x', 'y', 'z', 'w', 'v']) await send(`${n}@burst.example`);
      for (const n of ['p', 'q', 'r']) await send(`${n}@v6.example`, '2001:db8:ffff:1::1');
      for (const n of ['s']) await send(`${n}@v6b.example`, '2001:db8:ffff:1:abcd::2'); // same /64
      const rows = await submissions(ws);
      const by = (email: string) => rows.find((r) => JSON.parse(r.data).email === email)!;
      expect(['user1', 'user2', 'user3'].map((u) => by(`${u}@patterna.example`).status)).toEqual([
        'ACCEPTED',
        'ACCEPTED',
        'ACCEPTED',
      ]);
      expect(JSON.parse(by('user4@patterna.example').held_reasons!)).toContain('pattern');
      expect(['a', 'b', 'c'].map((t) => by(`jane+${t}@gmail.com`).status)).toEqual(['ACCEPTED', 'ACCEPTED', 'HELD']);
      expect(JSON.parse(by('jane+c@gmail.com').held_reasons!)).toEqual(['mailbox']);
      expect(['x', 'y', 'z', 'w', 'v'].map((n) => by(`${n}@burst.example`).status)).toEqual([
        'ACCEPTED',
        'ACCEPTED',
        'ACCEPTED',
        'ACCEPTED',
        'HELD',
      ]);
      expect(JSON.parse(by('v@burst.example').held_reasons!)).toEqual(['domain']);
      expect(by('s@v6b.example').status).toBe('HELD');
      expect(JSON.parse(by('s@v6b.example').held_reasons!)).toEqual(['ip_range']);
      // Signals are keyed hashes: no address, no network in the table.
      const signals = await h
        .db()
        .kysely.selectFrom('signup_signals')
        .select(['kind', 'key'])
        .where('workspace_id', '=', ws)
        .execute();
      expect(signals.length).toBeGreaterThan(0);
      expect(JSON.stringify(signals)).not.toMatch(/example|gmail|2001|jane/);
    });

    it('a rule that is off (0) stores no signal of its kind and holds nothing; the others still count', async () => {
      const { ws } = await setup();
      const service = new ProtectionService(h.db(), {
        secret: Buffer.from(TEST_SECRET),
        bursts: { ...RULES, pattern: 0, domain: 0 },
      });
      const now = new Date().toISOString();
      const tripped: string[][] = [];
      for (let n = 1; n <= 6; n++) {
        tripped.push(
          await h
            .db()
            .kysely.transaction()
            .execute((trx) => service.burst(trx, ws, `sub_${n}`, `203.0.113.${n}`, `user${n}@off.example`, now)),
        );
      }
      // One /24 (ipRange 3): the 4th on is held for it; six addresses of one pattern and one domain hold nothing.
      expect(tripped).toEqual([[], [], [], ['ip_range'], ['ip_range'], ['ip_range']]);
      const kinds = await h
        .db()
        .kysely.selectFrom('signup_signals')
        .select('kind')
        .distinct()
        .where('workspace_id', '=', ws)
        .execute();
      expect(kinds.map((k) => k.kind)).toEqual(['ip_range']);
    });

    it('sign-ups of one pattern arriving at once: no more than the rule allows are accepted (counted one after another)', async () => {
      const { ws, slug } = await setup();
      const sent = await Promise.all(
        Array.from({ length: 10 }, (_, n) =>
          post(slug, `email=crowd${n}%40together.example`, `2001:db8:${n + 100}::1`),
        ),
      );
      expect(sent.every((r) => r.statusCode === 200)).toBe(true);
      const rows = await submissions(ws);
      expect(rows).toHaveLength(10);
      expect(rows.filter((r) => r.status === 'ACCEPTED').length).toBeLessThanOrEqual(RULES.pattern);
    });

    it('a released sign-up stores typed answers, as an accepted one does (a number stays a number)', async () => {
      const s = await setup();
      const form = await s.call('POST', '/v1/forms', {
        name: 'Typed',
        type: 'SIGN_UP',
        slug: `typed-${h.name}-${++slugs}`,
        fieldMapping: { email: 'email', seats: 'seats' },
        settings: { fields: { seats: { label: 'Seats', type: 'number' } } },
      });
      const typed = (await s.call('POST', `/v1/forms/${form.json().id}/publish`)).json();
      for (const n of [1, 2, 3, 4])
        await post(typed.slug, `email=typed${n}%40t.example&seats=${n * 10}`, `2001:db8:${n + 200}::1`);
      expect(JSON.parse((await contact(s.ws, 'typed1@t.example'))!.properties)).toEqual({ seats: 10 });
      const held = (await s.call('GET', `/v1/forms/${typed.id}/submissions?status=HELD`)).json().data as {
        id: string;
        data: { email: string };
      }[];
      expect(held.map((x) => x.data.email)).toEqual(['typed4@t.example']);
      expect((await s.call('POST', `/v1/forms/${typed.id}/submissions/${held[0]!.id}/release`)).statusCode).toBe(200);
      const released = await contact(s.ws, 'typed4@t.example');
      expect(JSON.parse(released!.properties)).toEqual({ seats: 40 });
    });

    it('release signs the contact up and queues the confirmation (double opt-in); discard leaves nobody signed up; each only once', async () => {
      const s = await setup();
      await h.app().services.domains.add(s.ws, `release-${h.name}-${slugs}.test`, { verified: true });
      // A double opt-in form in the same workspace.
      const doi = await s.call('POST', '/v1/forms', {
        name: 'DOI',
        type: 'SIGN_UP',
        slug: `doi-${h.name}-${++slugs}`,
        fieldMapping: { email: 'email' },
        settings: { doubleOptIn: true },
      });
      const doiForm = (await s.call('POST', `/v1/forms/${doi.json().id}/publish`)).json();
      for (const [i, n] of ['amy', 'ben', 'cal', 'dan', 'eli'].entries())
        await post(doiForm.slug, `email=${n}%40release${i}.example`, `203.0.113.${50 + i}`);
      const held = (await s.call('GET', `/v1/forms/${doiForm.id}/submissions?status=HELD`)).json().data as {
        id: string;
      }[];
      expect(held.length).toBeGreaterThanOrEqual(2);
      const [first, second] = [held[1]!, held[0]!];
      const confirmationsBefore = await h
        .db()
        .kysely.selectFrom('confirmations')
        .select('id')
        .where('workspace_id', '=', s.ws)
        .execute();

      const released = await s.call('POST', `/v1/forms/${doiForm.id}/submissions/${first.id}/release`);
      expect(released.statusCode, released.body).toBe(200);
      expect(released.json()).toMatchObject({ status: 'RELEASED', heldReasons: ['ip_range'] });
      expect(released.json().reviewedAt).toEqual(expect.any(String));
      const email = (released.json().data as { email: string }).email;
      const c = await contact(s.ws, email);
      expect(c?.status).toBe('PENDING');
      expect(released.json().contactId).toBe(c!.id);
      const confirmations = await h
        .db()
        .kysely.selectFrom('confirmations')
        .selectAll()
        .where('workspace_id', '=', s.ws)
        .execute();
      expect(confirmations).toHaveLength(confirmationsBefore.length + 1);
      expect(confirmations.some((x) => x.contact_id === c!.id && x.email_sent_at === null)).toBe(true);
      const submitted = (await s.call('GET', '/v1/events?type=form.submitted')).json().data;
      expect(submitted.some((e: { data: { submissionId: string } }) => e.data.submissionId === first.id)).toBe(true);

      const discarded = await s.call('POST', `/v1/forms/${doiForm.id}/submissions/${second.id}/discard`);
      expect(discarded.statusCode).toBe(200);
      expect(discarded.json()).toMatchObject({ status: 'DISCARDED', contactId: null });
      expect(await contact(s.ws, (discarded.json().data as { email: string }).email)).toBeUndefined();
      // Reviewed once: again is a conflict; an accepted one is not reviewable; another form's id is not found.
      expect((await s.call('POST', `/v1/forms/${doiForm.id}/submissions/${first.id}/release`)).json()).toMatchObject({
        code: 'invalid_state',
      });
      expect((await s.call('POST', `/v1/forms/${doiForm.id}/submissions/${second.id}/release`)).statusCode).toBe(409);
      expect((await s.call('POST', `/v1/forms/${s.form.id}/submissions/${first.id}/release`)).statusCode).toBe(404);
      const row = (await submissions(s.ws)).find((r) => r.id === first.id)!;
      expect(row.status).toBe('RELEASED');
      expect(row.contact_id).toBe(c!.id);
      // Another workspace's key sees nothing.
      const stranger = await setup();
      expect((await stranger.call('POST', `/v1/forms/${doiForm.id}/submissions/${second.id}/discard`)).statusCode).toBe(
        404,
      );
    });
  });

  describe('hosted submissions, embeds, compression', () => {
    it('a hosted submission answers the success page (200, contract §9) with Refresh: 0 to /f/{slug}/thanks, so a reload sends nothing again; errors still re-render in place', async () => {
      const { ws, slug } = await setup({ successAction: { type: 'MESSAGE', message: 'Welcome aboard!' } });
      const res = await post(slug, 'email=prg%40example.com');
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('Welcome aboard!');
      expect(res.headers.refresh).toBe(`0; url=/f/${slug}/thanks`);
      expect(res.headers['cache-control']).toBe('no-store');
      for (let i = 0; i < 2; i++) {
        const thanks = await h.app().inject({ method: 'GET', url: `/f/${slug}/thanks` });
        expect(thanks.statusCode).toBe(200);
        expect(thanks.body).toContain('Welcome aboard!');
        expect(thanks.body).toContain('data-formcast-success');
        expect(thanks.body).not.toContain('<script');
      }
      expect(await submissions(ws)).toHaveLength(1);
      const bad = await post(slug, 'email=nope');
      expect(bad.statusCode).toBe(422);
      expect(bad.body).toContain('value="nope"');
      const redirecting = await setup({ successAction: { type: 'REDIRECT', url: 'https://example.com/welcome' } });
      const r = await post(redirecting.slug, 'email=r%40example.com');
      expect([r.statusCode, r.headers.location]).toEqual([303, 'https://example.com/welcome']);
      // Embeds (JSON) still get their answer in the body.
      expect((await postJson(slug, { email: 'embed@example.com' })).json()).toEqual({
        ok: true,
        message: 'Welcome aboard!',
      });
    });

    it('an embed reports one impression per page view to its beacon (cached script, rate-limited beacon); the hosted page counts too', async () => {
      const { call, slug, form } = await setup();
      const other = await setup();
      const views = async () => (await call('GET', `/v1/forms/${form.id}`)).json().stats.views as number;
      const script = async (s: string) => {
        const res = await h.app().inject({ method: 'GET', url: `/f/${s}/embed.js` });
        expect(res.headers['cache-control']).toBe('public, max-age=300'); // the same for every page view: cached
        return /"impression":"http:\/\/localhost:3000(\/f\/[a-z0-9-]+\/impression)"/.exec(res.body)![1]!;
      };
      expect(await views()).toBe(0);
      const beacon = await script(slug);
      expect(beacon).toBe(`/f/${slug}/impression`);
      const first = await h.app().inject({ method: 'POST', url: beacon, headers: { origin: 'https://blog.example' } });
      expect(first.statusCode).toBe(204);
      expect(first.headers['access-control-allow-origin']).toBe('*');
      expect(await views()).toBe(1);
      await h.app().inject({ method: 'POST', url: await script(other.slug), remoteAddress: '198.51.100.9' }); // another form's own count
      expect(await views()).toBe(1);
      await h.app().inject({ method: 'GET', url: `/f/${slug}` }); // the hosted page still counts
      expect(await views()).toBe(2);
      // Rate-limited per visitor and form: a script cannot inflate the count from one address.
      const codes: number[] = [];
      for (let i = 0; i < 32; i++)
        codes.push(
          (await h.app().inject({ method: 'POST', url: `/f/${other.slug}/impression`, remoteAddress: '198.51.100.77' }))
            .statusCode,
        );
      expect(codes.filter((c) => c === 204)).toHaveLength(IMPRESSIONS_PER_MINUTE);
      expect(codes.filter((c) => c === 429).length).toBe(32 - IMPRESSIONS_PER_MINUTE);
    });

    it('embed.js, the hosted page and the thanks page are compressed per Accept-Encoding, with Vary', async () => {
      const { slug } = await setup({ protection: { proofOfWork: true } });
      for (const url of [`/f/${slug}/embed.js`, `/f/${slug}`, `/f/${slug}/thanks`]) {
        const br = await h.app().inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip, br' } });
        expect(br.headers['content-encoding'], url).toBe('br');
        expect(br.headers.vary).toContain('Accept-Encoding');
        const text = zlib.brotliDecompressSync(br.rawPayload).toString('utf8');
        const gz = await h.app().inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip' } });
        expect(gz.headers['content-encoding']).toBe('gzip');
        expect(gz.headers.vary).toContain('Accept-Encoding');
        const plain = await h.app().inject({ method: 'GET', url });
        expect(plain.headers['content-encoding']).toBeUndefined();
        expect(plain.headers.vary).toContain('Accept-Encoding');
        if (!url.endsWith('embed.js')) expect(zlib.gunzipSync(gz.rawPayload).toString('utf8')).toBe(text);
        else expect(text.length).toBeGreaterThan(gz.rawPayload.length * 2);
      }
      const embed = (await h.app().inject({ method: 'GET', url: `/f/${slug}/embed.js` })).body;
      expect(embed).toContain('altcha-widget');
      expect(embed).toContain('"widget":"http://localhost:3000/assets/altcha/widget.js?v=');
      expect(embed).toContain('auto=\\"onfocus\\"');
    });
  });
});
