import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connect } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { DEFAULT_PIPELINE_OPTIONS, DeliveryPipeline } from '../../src/sending/deliveries/pipeline.js';
import { SqlDeliveryStore } from '../../src/composition/sql-delivery-store.js';
import { buildApp } from '../../src/app.js';
import { redactUrl } from '../../src/http/server.js';
import { createMailer, type Mailer } from '../../src/mail/transport.js';
import { ConfirmationSender } from '../../src/forms/submissions/confirmations.sender.js';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { insertContact, verifiedDomain } from '../helpers/fixtures.js';
import { startSmtpServer } from '../helpers/smtp.js';
import { TEST_SECRET } from '../helpers/secret.js';

/**
 * Regression tests for the defects an outside security sweep found (issue "Security defects found from
 * outside"), each reproduction on SQLite and PostgreSQL. docs/security.md describes the rules they pin down.
 */
const silent = pino({ level: 'silent' });
let slugs = 0;

describeApi('security: input rules and abuse', (h) => {
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let mailer: Mailer;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${smtp.port}`, outboxDir: '', maxConnections: 2, rateLimit: 0 });
  });
  afterAll(async () => {
    await mailer?.close();
    await smtp?.close();
  });
  beforeEach(() => {
    smtp.received.length = 0;
  });

  async function publishedForm(ws: TestWorkspace, body: Record<string, unknown> = {}) {
    const slug = `sec-${h.dbName}-${++slugs}`;
    const created = await h.call(ws.key, 'POST', '/v1/forms', {
      name: 'Newsletter',
      type: 'SIGN_UP',
      slug,
      fieldMapping: { email: 'email', first_name: 'firstName', plan: 'plan' },
      ...body,
    });
    expect(created.statusCode, created.body).toBe(201);
    const pub = await h.call(ws.key, 'POST', `/v1/forms/${created.json().id}/publish`);
    expect(pub.statusCode, pub.body).toBe(200);
    return { ...pub.json(), slug };
  }
  const post = (slug: string, form: string) =>
    h.app.inject({
      method: 'POST',
      url: `/f/${slug}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form,
    });
  const postJson = (slug: string, body: string) =>
    h.app.inject({
      method: 'POST',
      url: `/f/${slug}`,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      payload: body,
    });
  const contacts = (ws: TestWorkspace) =>
    h.db.kysely.selectFrom('contacts').selectAll().where('workspace_id', '=', ws.id).orderBy('email').execute();
  const confirmationsOf = (ws: TestWorkspace) =>
    h.db.kysely.selectFrom('confirmations').selectAll().where('workspace_id', '=', ws.id).execute();
  const sender = () => new ConfirmationSender(h.db, mailer, 'https://forms.example.test', silent as never, TEST_SECRET);

  describe('1. one stored address is one recipient', () => {
    const LIST = '"<victim1@other.example>,<victim2@other.example>"@news.example';

    it('a quoted local part that needs its quotes is refused everywhere; one that does not is stored bare', async () => {
      const ws = await h.workspace();
      await verifiedDomain(h, ws, `q${h.dbName}.test`);
      const form = await publishedForm(ws, { settings: { doubleOptIn: true } });
      for (const email of [LIST, '"john smith"@x.example', '"a\\"b"@x.example']) {
        const page = await post(form.slug, `email=${encodeURIComponent(email)}`);
        expect(page.statusCode, email).toBe(422);
        expect(page.body).toContain('Enter a valid email address');
        const api = await h.call(ws.key, 'POST', '/v1/contacts', { email });
        expect(api.statusCode, email).toBe(422);
        expect(api.json().errors[0].path).toBe('/email');
      }
      const imported = await h.app.inject({
        method: 'POST',
        url: '/v1/contacts/imports',
        headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'text/csv' },
        payload: `email\n"${LIST.replace(/"/g, '""')}"\nok@x.example\n`,
      });
      expect(imported.json()).toMatchObject({ created: 1, skipped: 1, errors: [{ line: 2 }] });
      const bare = await h.call(ws.key, 'POST', '/v1/contacts', { email: '"john"@X.example' });
      expect(bare.json().email).toBe('john@x.example');
      expect((await contacts(ws)).map((c) => c.email)).toEqual(['john@x.example', 'ok@x.example']);
      expect(await confirmationsOf(ws)).toEqual([]);
      // from and replyTo of a broadcast follow the same rule
      const bc = await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'x', replyTo: '"a,b"@x.example' });
      expect(bc.statusCode).toBe(422);
    });

    it('the transport gets one structured recipient: a broadcast and a confirmation each reach exactly their address', async () => {
      const ws = await h.workspace();
      const domain = await verifiedDomain(h, ws, `env${h.dbName}.test`);
      const form = await publishedForm(ws, { settings: { doubleOptIn: true } });
      expect((await post(form.slug, `email=${encodeURIComponent("o'brien+x@example.com")}`)).statusCode).toBe(200);
      await sender().sendDue();
      expect(smtp.received.map((m) => m.to)).toEqual(["o'brien+x@example.com"]);
      smtp.received.length = 0;

      // An address stored before the rule (the quotes dropped, as the old parser did) is never sent to.
      await insertContact(h, ws, { email: '<victim1@other.example>,<victim2@other.example>@news.example' });
      await insertContact(h, ws, { email: 'fine@example.com' });
      const bc = (
        await h.call(ws.key, 'POST', '/v1/broadcasts', {
          name: 'b',
          from: `"Acme, Inc." <news@${domain.name}>`,
          emailContent: { subject: 's', text: 't' },
        })
      ).json();
      expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${bc.id}/send`)).statusCode).toBe(202);
      const pipeline = new DeliveryPipeline(
        new SqlDeliveryStore(h.db),
        mailer,
        { ...DEFAULT_PIPELINE_OPTIONS, secret: TEST_SECRET, workerId: 'sec', publicUrl: 'https://m.example.test' },
        silent as never,
      );
      for (let i = 0; i < 20 && (await pipeline.materialize()) + (await pipeline.sendBatch()) > 0;) i++;
      expect(smtp.received.map((m) => m.to)).toEqual(['fine@example.com']); // o'brien is still PENDING
      expect(smtp.received[0]!.parsed.from?.value[0]).toMatchObject({
        name: 'Acme, Inc.',
        address: `news@${domain.name}`,
      });
      const rows = await h.db.kysely
        .selectFrom('deliveries')
        .select(['email', 'status', 'last_error'])
        .where('broadcast_id', '=', bc.id)
        .execute();
      expect(rows.find((r) => r.email.startsWith('<'))).toMatchObject({
        status: 'FAILED',
        last_error: 'the stored address is not a valid single address',
      });
    });
  });

  describe('2. segment filters cannot hold the server', () => {
    it('the cost is bounded before anything runs: total values of in lists, size', async () => {
      const ws = await h.workspace();
      const list = (k: number) => Array.from({ length: 1000 }, (_, i) => `v${k}-${i}`);
      const many = {
        any: Array.from({ length: 6 }, (_, k) => ({ field: 'properties.plan', op: 'in', value: list(k) })),
      };
      const res = await h.call(ws.key, 'POST', '/v1/segments/preview', { filter: many });
      expect(res.statusCode).toBe(422);
      expect(res.json().errors[0]).toMatchObject({
        path: '/filter',
        message: expect.stringContaining('at most 5000 values'),
      });
      const big = {
        field: 'properties.bio',
        op: 'in',
        value: Array.from({ length: 300 }, (_, k) => `${k}`.padEnd(999, 'y')),
      };
      expect(
        (await h.call(ws.key, 'POST', '/v1/segments', { name: 'big', filter: big })).json().errors[0].message,
      ).toContain('bytes as JSON');
      expect(await h.db.kysely.selectFrom('segments').select('id').where('workspace_id', '=', ws.id).execute()).toEqual(
        [],
      );
    });

    it('an expensive filter is evaluated in slices: other requests are served while it runs', async () => {
      const ws = await h.workspace();
      const rows = Array.from({ length: 3000 }, (_, i) =>
        JSON.stringify({ email: `s${i}@slices.example`, properties: { bio: 'z'.repeat(1500), plan: `p${i % 7}` } }),
      );
      const imp = await h.app.inject({
        method: 'POST',
        url: '/v1/contacts/imports',
        headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'application/x-ndjson' },
        payload: rows.join('\n'),
      });
      expect(imp.json().created).toBe(3000);
      const filter = {
        all: [
          {
            any: Array.from({ length: 40 }, (_, k) => ({
              field: 'properties.bio',
              op: 'contains',
              value: `needle${k}`,
            })),
          },
          { field: 'properties.plan', op: 'in', value: ['p1', 'p2'] },
        ],
      };
      const order: string[] = [];
      const preview = h.call(ws.key, 'POST', '/v1/segments/preview', { filter }).then((r) => {
        order.push('preview');
        return r;
      });
      const other = h.call(ws.key, 'GET', '/v1/workspace').then(() => order.push('workspace'));
      const [res] = await Promise.all([preview, other]);
      expect(res.json()).toMatchObject({ count: 0, subscribed: 0, sample: [] });
      // On SQLite the preview yields between slices; on PostgreSQL it never held the event loop.
      expect(order).toEqual(['workspace', 'preview']);
      const inList = await h.call(ws.key, 'POST', '/v1/segments/preview', {
        filter: { field: 'properties.plan', op: 'in', value: ['p1', 'p2', 3, true] },
      });
      expect(inList.json().count).toBe(
        Array.from({ length: 3000 }, (_, i) => i % 7).filter((p) => p === 1 || p === 2).length,
      );
    });
  });

  describe('3. NUL and lone surrogates are refused at the input layer', () => {
    it('bodies: 422 with the path; nothing is stored', async () => {
      const ws = await h.workspace();
      const topic = await h.call(ws.key, 'POST', '/v1/topics', '{"name":"a\\u0000b","defaultSubscription":"OPT_IN"}');
      expect(topic.statusCode).toBe(422);
      expect(topic.json().errors).toEqual([{ path: '/name', message: 'must not contain NUL characters' }]);
      const surrogate = await h.call(ws.key, 'POST', '/v1/contacts', '{"email":"\\ud800x@fuzz.test"}');
      expect(surrogate.json()).toMatchObject({
        code: 'validation_failed',
        errors: [{ path: '/email', message: 'must be well-formed Unicode (no lone surrogates)' }],
      });
      const key = await h.call(ws.key, 'POST', '/v1/contacts', '{"email":"a@x.example","properties":{"k\\u0000":"v"}}');
      expect(key.statusCode).toBe(422);
      expect(await h.db.kysely.selectFrom('topics').select('id').where('workspace_id', '=', ws.id).execute()).toEqual(
        [],
      );
      expect(await contacts(ws)).toEqual([]);
    });

    it('ids: 404; query strings: 422', async () => {
      const ws = await h.workspace();
      for (const url of ['/v1/forms/%00', '/v1/forms/a%00b', '/v1/contacts/%ED%A0%80']) {
        const res = await h.call(ws.key, 'GET', url);
        expect(res.statusCode, url).toBe(404);
        expect(res.json().code).toBe('not_found');
      }
      const q = await h.call(ws.key, 'GET', '/v1/contacts?email=%00');
      expect(q.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/query/email' }] });
    });

    it('the public form: a JSON lone surrogate or a form-encoded NUL is a 422, not a contact', async () => {
      const ws = await h.workspace();
      const form = await publishedForm(ws);
      expect((await postJson(form.slug, '{"email":"\\ud800"}')).statusCode).toBe(422);
      expect((await postJson(form.slug, '{"email":"a@x.example","first_name":"\\ud800"}')).statusCode).toBe(422);
      expect((await post(form.slug, 'email=b%40x.example&first_name=a%00b')).statusCode).toBe(422);
      expect(await contacts(ws)).toEqual([]);
    });

    it('imports: a bad row is a rejected row; the job completes with the good ones', async () => {
      const ws = await h.workspace();
      const ndjson = [
        '{"email":"good1@x.example"}',
        '{"email":"nul@x.example","properties":{"a\\u0000":"v"}}',
        '{"email":"\\ud800x@fuzz.test"}',
        '{"email":"good2@x.example","firstName":"x\\udfff"}',
        '{"email":"good3@x.example"}',
      ].join('\n');
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/contacts/imports',
        headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'application/x-ndjson' },
        payload: ndjson,
      });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toMatchObject({ status: 'COMPLETED', created: 2, skipped: 3 });
      expect(res.json().errors.map((e: { line: number }) => e.line)).toEqual([2, 3, 4]);
      const csv = await h.app.inject({
        method: 'POST',
        url: '/v1/contacts/imports',
        headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'text/csv' },
        payload: 'email,plan\nc1@x.example,a\u0000b\nc2@x.example,ok\n',
      });
      expect(csv.json()).toMatchObject({ status: 'COMPLETED', created: 1, skipped: 1 });
      expect((await contacts(ws)).map((c) => c.email)).toEqual(['c2@x.example', 'good1@x.example', 'good3@x.example']);
    });
  });

  describe('4. anonymous sign-ups', () => {
    it('a PENDING address gets at most one confirmation per window, however often it signs up', async () => {
      const ws = await h.workspace();
      await verifiedDomain(h, ws, `bomb${h.dbName}.test`);
      const form = await publishedForm(ws, { settings: { doubleOptIn: true } });
      for (let i = 0; i < 6; i++) expect((await post(form.slug, 'email=victim%40example.com')).statusCode).toBe(200);
      expect(await confirmationsOf(ws)).toHaveLength(1);
      await sender().sendDue();
      expect(smtp.received.filter((m) => m.to === 'victim@example.com')).toHaveLength(1);
      expect(
        await h.db.kysely.selectFrom('submissions').select('id').where('workspace_id', '=', ws.id).execute(),
      ).toHaveLength(6);
    });

    it("a stranger's sign-up never overwrites a confirmed contact's data, with or without double opt-in", async () => {
      const ws = await h.workspace();
      await verifiedDomain(h, ws, `over${h.dbName}.test`);
      const plain = await publishedForm(ws);
      const doi = await publishedForm(ws, { settings: { doubleOptIn: true } });
      await insertContact(h, ws, { email: 'ada@example.com', firstName: 'Ada', properties: { plan: 'pro' } });
      await post(plain.slug, 'email=ada%40example.com&first_name=Mallory&plan=free');
      await post(doi.slug, 'email=ada%40example.com&first_name=Mallory&plan=free');
      expect((await contacts(ws))[0]).toMatchObject({ first_name: 'Ada', status: 'SUBSCRIBED' });
      expect(JSON.parse((await contacts(ws))[0]!.properties)).toEqual({ plan: 'pro' });
      expect(await confirmationsOf(ws)).toEqual([]);
    });

    it('an UNSUBSCRIBED address comes back only when its owner follows the confirmation link; then the sign-up applies', async () => {
      const ws = await h.workspace();
      await verifiedDomain(h, ws, `resub${h.dbName}.test`);
      const plain = await publishedForm(ws); // no double opt-in on the form
      await insertContact(h, ws, { email: 'gone@example.com', firstName: 'Old', status: 'UNSUBSCRIBED' });
      expect((await post(plain.slug, 'email=gone%40example.com&first_name=New')).statusCode).toBe(200);
      expect((await contacts(ws))[0]).toMatchObject({ status: 'UNSUBSCRIBED', first_name: 'Old' });
      await sender().sendDue();
      const mail = smtp.received.find((m) => m.to === 'gone@example.com')!;
      const token = String(mail.parsed.html).match(/\/confirm\/([A-Za-z0-9_-]+)/)![1]!;
      const confirmed = await h.app.inject({ method: 'POST', url: `/confirm/${token}` });
      expect(confirmed.statusCode).toBe(200);
      expect((await contacts(ws))[0]).toMatchObject({ status: 'SUBSCRIBED', first_name: 'New' });
    });
  });

  it('5. a replay of POST /v1/api-keys never returns the key, and the replay store never holds it', async () => {
    const ws = await h.workspace();
    const send = () =>
      h.call(ws.key, 'POST', '/v1/api-keys', { name: 'ci', scopes: ['read:forms'] }, { 'idempotency-key': 'key-once' });
    const first = await send();
    expect(first.statusCode).toBe(201);
    const key = first.json().key as string;
    expect(key).toMatch(/^fc_/);
    const replay = await send();
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers['idempotent-redacted']).toBe('key');
    expect(replay.json()).toMatchObject({ id: first.json().id, key: null });
    const stored = await h.db.kysely
      .selectFrom('idempotency_keys')
      .select('response_body')
      .where('workspace_id', '=', ws.id)
      .execute();
    expect(JSON.stringify(stored)).not.toContain(key.slice('fc_'.length + 26 + 1)); // the secret part
  });

  it('6. deep JSON is a 422, with or without an Idempotency-Key', async () => {
    const ws = await h.workspace();
    const deep = `{"name":"x","emailContent":{"editorContent":${'['.repeat(12_000)}${']'.repeat(12_000)}}}`;
    for (const headers of [{}, { 'idempotency-key': 'deep' }] as Record<string, string>[]) {
      const res = await h.call(ws.key, 'POST', '/v1/broadcasts', deep, headers);
      expect(res.statusCode).toBe(422);
      // At the pointer of the first value past the limit: the 63rd array inside editorContent.
      expect(res.json().errors).toEqual([
        {
          path: `/emailContent/editorContent${'/0'.repeat(62)}`,
          message: 'nests deeper than 64 levels of arrays and objects',
        },
      ]);
    }
    const ok = `{"name":"x","emailContent":{"editorContent":${'['.repeat(60)}${']'.repeat(60)}}}`;
    expect((await h.call(ws.key, 'POST', '/v1/broadcasts', ok)).statusCode).toBe(201);
  });

  describe('7. smaller', () => {
    it('a leap-second or 24:00 sendAt is a 422', async () => {
      const ws = await h.workspace();
      const bc = (await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'leap' })).json();
      for (const sendAt of ['2099-12-31T23:59:60Z', '2099-12-31T24:00:00Z', '2099-02-30T10:00:00Z']) {
        const res = await h.call(ws.key, 'PUT', `/v1/broadcasts/${bc.id}`, { sendAt });
        expect(res.statusCode, sendAt).toBe(422);
        expect(res.json().errors[0].path).toBe('/sendAt');
      }
    });

    it('router-level errors are problem+json with a request id', async () => {
      const ws = await h.workspace();
      for (const url of ['/v1/forms/%ff', `/v1/forms/${'a'.repeat(7000)}`]) {
        const res = await h.call(ws.key, 'GET', url);
        expect(res.statusCode).toBe(404);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(res.headers['x-request-id']).toBeTruthy();
        expect(res.json()).toMatchObject({ code: 'not_found', requestId: res.headers['x-request-id'] });
      }
      const page = await h.app.inject({ method: 'GET', url: '/f/%ff' });
      expect(page.statusCode).toBe(404);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.headers['x-request-id']).toBeTruthy();
    });

    it('a template that renders too long fails fast: preview and send are 422', async () => {
      const ws = await h.workspace();
      const domain = await verifiedDomain(h, ws, `slow${h.dbName}.test`);
      const html = '{% for i in (1..100000000) %}{{ i }}{% endfor %}';
      const bc = (
        await h.call(ws.key, 'POST', '/v1/broadcasts', {
          name: 'slow',
          from: `news@${domain.name}`,
          emailContent: { subject: 's', html },
        })
      ).json();
      expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${bc.id}/preview`, {})).statusCode).toBe(422);
      const send = await h.call(ws.key, 'POST', `/v1/broadcasts/${bc.id}/send`);
      expect(send.statusCode).toBe(422);
      expect(send.json().errors[0]).toMatchObject({
        path: '/emailContent',
        message: expect.stringContaining('to render'),
      });
      expect((await h.call(ws.key, 'GET', `/v1/broadcasts/${bc.id}`)).json().status).toBe('DRAFT');
    });

    it('a REDIRECT URL must have a plain host; the CSP carries only a safe origin; ?fragment=1 has a CSP', async () => {
      const ws = await h.workspace();
      const form = (
        await h.call(ws.key, 'POST', '/v1/forms', {
          name: 'r',
          type: 'SIGN_UP',
          slug: `redir-${h.dbName}`,
          fieldMapping: { email: 'email' },
        })
      ).json();
      for (const url of [
        'https://a;script-src *.example/',
        "https://x'y.example/",
        'https://user:pw@example.com/',
        'javascript:alert(1)',
      ]) {
        const res = await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`, {
          settings: { successAction: { type: 'REDIRECT', url } },
        });
        expect(res.statusCode, url).toBe(422);
      }
      expect(
        (
          await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`, {
            settings: { successAction: { type: 'REDIRECT', url: 'https://thanks.example.com/welcome?x=1' } },
          })
        ).statusCode,
      ).toBe(200);
      await h.call(ws.key, 'POST', `/v1/forms/${form.id}/publish`);
      const page = await h.app.inject({ method: 'GET', url: `/f/redir-${h.dbName}` });
      expect(page.headers['content-security-policy']).toContain("form-action 'self' https://thanks.example.com;");
      const fragment = await h.app.inject({ method: 'GET', url: `/f/redir-${h.dbName}?fragment=1` });
      expect(fragment.headers['content-security-policy']).toContain("default-src 'none'");
    });

    it('operations that take no body refuse one (an empty object is fine)', async () => {
      const ws = await h.workspace();
      const form = (await h.call(ws.key, 'POST', '/v1/forms', { name: 'n', type: 'SURVEY' })).json();
      const bad = await h.call(ws.key, 'POST', `/v1/forms/${form.id}/publish`, { status: 'PUBLISHED' });
      expect(bad.statusCode).toBe(422);
      expect(bad.json().errors).toEqual([{ path: '/', message: 'this operation takes no request body' }]);
      expect((await h.call(ws.key, 'GET', `/v1/forms/${form.id}`)).json().status).toBe('DRAFT');
      expect((await h.call(ws.key, 'POST', `/v1/forms/${form.id}/publish`, {})).statusCode).toBe(200);
    });
  });
});

describe('security: tokens in public addresses are not logged', () => {
  it('the access log shows /confirm/[redacted] and /unsubscribe/[redacted]', async () => {
    const lines: string[] = [];
    const db = connect(':memory:');
    await migrateToLatest(db);
    const app = await buildApp({
      db,
      config: { logLevel: 'info', publicUrl: 'http://localhost:3000', secret: TEST_SECRET },
      logStream: { write: (l) => lines.push(l) },
    });
    const token = 'AbCdEfGhIjKlMnOpQrStUvWx';
    await app.inject({ method: 'GET', url: `/confirm/${token}` });
    await app.inject({
      method: 'POST',
      url: `/unsubscribe/${token}`,
      payload: 'List-Unsubscribe=One-Click',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    // A web version link (docs/archive.md) shows the recipient's own message, unsubscribe link included.
    await app.inject({ method: 'GET', url: `/w/w${token}` });
    await app.close();
    await db.close();
    const log = lines.join('');
    expect(log).toContain('/confirm/[redacted]');
    expect(log).toContain('/unsubscribe/[redacted]');
    expect(log).toContain('/w/[redacted]');
    expect(log).not.toContain(token);
    expect(redactUrl('/f/x?token=abc&y=1')).toBe('/f/x?token=[redacted]&y=1');
  });
});
