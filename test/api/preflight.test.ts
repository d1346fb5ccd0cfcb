import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { connect } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { DEFAULT_PIPELINE_OPTIONS, DeliveryPipeline } from '../../src/sending/deliveries/pipeline.js';
import { SqlDeliveryStore } from '../../src/composition/sql-delivery-store.js';
import { buildApp } from '../../src/app.js';
import { createMailer, type Mailer } from '../../src/mail/transport.js';
import { UnsubscribeService } from '../../src/sending/unsubscribe/unsubscribe.service.js';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { insertContact, insertTopic, verifiedDomain } from '../helpers/fixtures.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { startSmtpServer } from '../helpers/smtp.js';

/** Preflight checks, test sends, the unsubscribe page's choices, and the reverse proxy setting (docs/bounces.md). */
const silent = pino({ level: 'silent' });

describeApi('preflight, test sends, unsubscribe page', (h) => {
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let mailer: Mailer;
  let app: FastifyInstance;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${smtp.port}`, outboxDir: '', maxConnections: 2, rateLimit: 0 });
    app = await buildApp({
      db: h.db,
      logger: false,
      mailer,
      config: { logLevel: 'silent', publicUrl: 'http://localhost:3000', secret: TEST_SECRET },
    });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await mailer?.close();
    await smtp?.close();
  });
  beforeEach(() => {
    smtp.received.length = 0;
  });
  const call = (ws: TestWorkspace, method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown) =>
    app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${ws.key}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });

  it('preflight lists every check; a failing one blocks schedule and send with the checks in errors', async () => {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, `pf${h.dbName}.test`);
    for (let i = 0; i < 4; i++)
      await insertContact(h, ws, {
        email: `a${i}@example.com`,
        firstName: i < 3 ? null : 'Dee',
        properties: i === 0 ? { plan: 'pro' } : {},
      });
    const big = `<p>Hi {{ contact.firstName }}, your {{ contact.properties.plan }} plan. Hello {{ contact.lastName | default: "friend" }}</p><img src="https://x.test/a.png"><img src="https://x.test/b.png" alt="Logo"><a href="http://insecure.example/page">old link</a>${'x'.repeat(110 * 1024)}`;
    const b = (
      await call(ws, 'POST', '/v1/broadcasts', {
        name: 'PF',
        from: `news@${domain.name}`,
        emailContent: { subject: 'Hi', html: big },
      })
    ).json();
    const pf = (await call(ws, 'POST', `/v1/broadcasts/${b.id}/preflight`)).json();
    const by = Object.fromEntries(pf.checks.map((c: { id: string }) => [c.id, c]));
    expect(pf.ok).toBe(true);
    expect(by.sender_domain.status).toBe('pass');
    expect(by.audience).toMatchObject({ status: 'pass', detail: expect.stringMatching(/^4 recipients/) });
    expect(by.empty_firstName).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining('3 of 4 recipients have no firstName'),
    });
    expect(by.empty_plan).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining('3 of 4 recipients have no plan'),
    });
    expect(by.empty_lastName).toBeUndefined(); // printed with | default:
    expect(by.html_size).toMatchObject({ status: 'warn', detail: expect.stringContaining('Gmail clips') });
    expect(by.images_alt).toMatchObject({ status: 'warn', detail: expect.stringContaining('1 of 2 images') });
    expect(by.http_links).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining('http://insecure.example/page'),
    });
    expect(by.public_url.status).toBe('warn');
    expect(by.postal_address.status).toBe('warn');
    expect(['dns', 'dns_dkim']).toContain(pf.checks.find((c: { id: string }) => c.id.startsWith('dns'))?.id);

    const empty = (await call(ws, 'POST', '/v1/broadcasts', { name: 'Empty', from: `news@${domain.name}` })).json();
    const failing = (await call(ws, 'POST', `/v1/broadcasts/${empty.id}/preflight`)).json();
    expect(failing.ok).toBe(false);
    expect(
      failing.checks.filter((c: { status: string }) => c.status === 'fail').map((c: { id: string }) => c.id),
    ).toEqual(['subject', 'body']);
    const send = await call(ws, 'POST', `/v1/broadcasts/${empty.id}/send`);
    expect(send.statusCode).toBe(422);
    expect(send.json()).toMatchObject({
      code: 'broadcast_incomplete',
      errors: [{ path: '/emailContent/subject' }, { path: '/emailContent' }],
    });
  });

  it("preflight measures the HTML part as sent (tracked links, footer, pixel) against Gmail's clip, and says when opens are not counted", async () => {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, `pg${h.dbName}.test`);
    // 94 KB as written, 600 links: a template the old check passed, which went out well over 102 KB once tracked.
    const links = Array.from({ length: 600 }, (_, i) => `<a href="https://shop.example/p/${i}">Product ${i}</a> `).join(
      '',
    );
    const template = `<p>Our catalogue</p><p>${links}</p><p>${'Lorem ipsum dolor sit amet. '.repeat(Math.floor((94 * 1024 - links.length) / 28))}</p>`;
    expect(Buffer.byteLength(template)).toBeLessThan(95 * 1024);
    const create = async (html: string, tracking = { opens: true, clicks: true }) =>
      (
        await call(ws, 'POST', '/v1/broadcasts', {
          name: 'Size',
          from: `news@${domain.name}`,
          tracking,
          emailContent: { subject: 'Catalogue', html },
        })
      ).json().id as string;
    const checks = async (id: string) =>
      Object.fromEntries(
        (await call(ws, 'POST', `/v1/broadcasts/${id}/preflight`)).json().checks.map((c: { id: string }) => [c.id, c]),
      );
    const tracked = await checks(await create(template));
    expect(tracked.html_size).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(
        /HTML part as sent .* is \d+\.\d KB: Gmail clips .*the template alone is 9\d\.\d KB/,
      ),
    });
    // Without click tracking the same template stays under the line.
    expect((await checks(await create(template, { opens: true, clicks: false }))).html_size.status).toBe('pass');
    // A short message without an image goes out without the pixel (docs/tracking.md), and preflight says so.
    const short = await checks(await create('<p>Your order has shipped.</p>'));
    expect(short.open_pixel).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining('opens will not be counted'),
    });
    expect(tracked.open_pixel.status).toBe('pass');
    expect((await checks(await create('<p>Short</p>', { opens: false, clicks: true }))).open_pixel).toBeUndefined();
  });

  it('test sends: the real rendering to up to five addresses, [Test] in the subject, counted in no stats', async () => {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, `ts${h.dbName}.test`);
    const contactId = await insertContact(h, ws, { email: 'real@example.com', firstName: 'Rita' });
    const b = (
      await call(ws, 'POST', '/v1/broadcasts', {
        name: 'T',
        from: `Acme <news@${domain.name}>`,
        emailContent: {
          subject: 'Hello {{ contact.firstName | default: "you" }}',
          html: '<p>Hi {{ contact.firstName }}</p>',
        },
      })
    ).json();
    const res = await call(ws, 'POST', `/v1/broadcasts/${b.id}/test`, {
      emails: ['Me@Example.com', 'boss@example.com'],
      contactId,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().sent.map((s: { email: string }) => s.email)).toEqual(['me@example.com', 'boss@example.com']);
    expect(smtp.received.map((m) => m.to).sort()).toEqual(['boss@example.com', 'me@example.com']);
    const m = smtp.received[0]!;
    expect(m.parsed.subject).toBe('[Test] Hello Rita');
    expect(m.parsed.html).toContain('Hi Rita');
    expect(m.mailFrom).toMatch(new RegExp(`^bounces\\+t[0-9a-z]{38}@bounces\\.${domain.name.replace('.', '\\.')}$`));
    expect((await call(ws, 'GET', `/v1/broadcasts/${b.id}`)).json()).toMatchObject({ status: 'DRAFT' });
    expect(await h.db.kysely.selectFrom('deliveries').select('id').where('broadcast_id', '=', b.id).execute()).toEqual(
      [],
    );
    expect(
      (
        await call(ws, 'POST', `/v1/broadcasts/${b.id}/test`, {
          emails: ['a@x.test', 'b@x.test', 'c@x.test', 'd@x.test', 'e@x.test', 'f@x.test'],
        })
      ).statusCode,
    ).toBe(422);
    const incomplete = (await call(ws, 'POST', '/v1/broadcasts', { name: 'x' })).json();
    expect((await call(ws, 'POST', `/v1/broadcasts/${incomplete.id}/test`, { emails: ['a@x.test'] })).json().code).toBe(
      'broadcast_incomplete',
    );
    // The harness's app has no transport: 503.
    expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/test`, { emails: ['a@x.test'] })).statusCode).toBe(
      503,
    );
  });

  it('test sends: an address the relay refuses is listed in failed; a relay that cannot be reached is 503, never a 500', async () => {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, `tf${h.dbName}.test`);
    const b = (
      await call(ws, 'POST', '/v1/broadcasts', {
        name: 'T',
        from: `news@${domain.name}`,
        emailContent: { subject: 'Hi', html: '<p>Hi</p>' },
      })
    ).json();
    smtp.setPolicy((rcpt) => (rcpt === 'nobody@example.com' ? { code: 550, message: '5.1.1 No such user' } : null));
    try {
      const res = await call(ws, 'POST', `/v1/broadcasts/${b.id}/test`, {
        emails: ['nobody@example.com', 'ok@example.com'],
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().sent.map((s: { email: string }) => s.email)).toEqual(['ok@example.com']);
      expect(res.json().failed).toEqual([{ email: 'nobody@example.com', error: expect.stringContaining('550') }]);
    } finally {
      smtp.setPolicy(() => null);
    }
    // A relay on a port where nothing listens.
    const down = createMailer({ smtpUrl: 'smtp://127.0.0.1:1', outboxDir: '', maxConnections: 1, rateLimit: 0 });
    const app2 = await buildApp({
      db: h.db,
      logger: false,
      mailer: down,
      config: { logLevel: 'silent', publicUrl: 'http://localhost:3000', secret: TEST_SECRET },
    });
    try {
      const res = await app2.inject({
        method: 'POST',
        url: `/v1/broadcasts/${b.id}/test`,
        headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ emails: ['ok@example.com'] }),
      });
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json()).toMatchObject({ code: 'unavailable', detail: expect.stringContaining('mail transport') });
      expect(res.headers['retry-after']).toBeDefined();
    } finally {
      await app2.close();
      await down.close();
    }
  });

  it('preflight: a comment that mentions unsubscribe_url is no link to it (the footer is added)', async () => {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, `pc${h.dbName}.test`);
    const create = async (html: string) =>
      (
        await call(ws, 'POST', '/v1/broadcasts', {
          name: 'C',
          from: `news@${domain.name}`,
          emailContent: { subject: 'Hi', html },
        })
      ).json();
    const commented = await create('<!-- TODO: link unsubscribe_url --><p>Hi</p>');
    const linked = await create('<p>Hi <a href="{{ unsubscribe_url }}">leave</a></p>');
    const check = async (id: string) =>
      (await call(ws, 'POST', `/v1/broadcasts/${id}/preflight`))
        .json()
        .checks.find((c: { id: string }) => c.id === 'unsubscribe').detail;
    expect(await check(linked.id)).toBe('the template links {{ unsubscribe_url }}');
    expect(await check(commented.id)).toBe('an unsubscribe footer is added to every message');
  });

  it("the unsubscribe page: leave the topic, leave everything (UNSUBSCRIBED and suppressed), in the workspace's language", async () => {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, `un${h.dbName}.test`);
    await call(ws, 'PUT', '/v1/workspace', { settings: { locale: 'de' } });
    const topicId = await insertTopic(h, ws, 'OPT_IN', 'Produktneuheiten');
    for (const e of ['topic@example.com', 'all@example.com', 'mail@example.com'])
      await insertContact(h, ws, { email: e });
    const b = (
      await call(ws, 'POST', '/v1/broadcasts', {
        name: 'U',
        from: `news@${domain.name}`,
        topicId,
        emailContent: { subject: 'S', html: '<p>x</p>' },
      })
    ).json();
    await call(ws, 'POST', `/v1/broadcasts/${b.id}/send`);
    const pipeline = new DeliveryPipeline(
      new SqlDeliveryStore(h.db),
      mailer,
      { ...DEFAULT_PIPELINE_OPTIONS, secret: TEST_SECRET, workerId: 'un', publicUrl: 'http://localhost:3000' },
      silent as never,
    );
    for (let i = 0; i < 20 && (await pipeline.materialize()) + (await pipeline.sendBatch()) > 0;) i++;
    const link = (email: string) =>
      String(smtp.received.find((m) => m.to === email)!.parsed.html).match(
        /href="http:\/\/localhost:3000(\/unsubscribe\/[A-Za-z0-9_-]+)"/,
      )![1]!;
    const page = await app.inject({ method: 'GET', url: link('all@example.com') });
    expect(page.body).toContain('<html lang="de">');
    expect(page.body).toContain('Von allem abmelden');
    expect(page.body).toContain('Nur E-Mails zu Produktneuheiten abbestellen');
    const form = (url: string, body: string) =>
      app.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: body,
      });
    expect((await form(link('topic@example.com'), 'action=one-click')).body).toContain(
      'erhält keine E-Mails zu Produktneuheiten mehr',
    );
    const contact = (email: string) =>
      h.call(ws.key, 'GET', `/v1/contacts?email=${encodeURIComponent(email)}`).then((r) => r.json().data[0]);
    expect(await contact('topic@example.com')).toMatchObject({
      status: 'SUBSCRIBED',
      suppressed: false,
      topics: [{ id: topicId, subscribed: false }],
    });
    expect((await form(link('all@example.com'), 'action=all')).body).toContain('erhält keine E-Mails mehr von uns');
    expect(await contact('all@example.com')).toMatchObject({ status: 'UNSUBSCRIBED', suppressed: true });
    expect((await h.call(ws.key, 'GET', '/v1/suppressions')).json().data).toEqual([
      expect.objectContaining({ email: 'all@example.com', reason: 'UNSUBSCRIBED', broadcastId: b.id }),
    ]);
    // The mailto address leaves everything, as docs/bounces.md says, where one-click left the topic; each event says how.
    const mailDelivery = await h.db.kysely
      .selectFrom('deliveries')
      .select('id')
      .where('broadcast_id', '=', b.id)
      .where('email', '=', 'mail@example.com')
      .executeTakeFirstOrThrow();
    await new UnsubscribeService(h.db).unsubscribeByMail(ws.id, mailDelivery.id);
    expect(await contact('mail@example.com')).toMatchObject({ status: 'UNSUBSCRIBED', suppressed: true });
    expect((await h.call(ws.key, 'GET', '/v1/suppressions')).json().data).toContainEqual(
      expect.objectContaining({
        email: 'mail@example.com',
        reason: 'UNSUBSCRIBED',
        detail: 'unsubscribed from everything by mail to the List-Unsubscribe address',
      }),
    );
    const via = async (email: string) =>
      (await h.call(ws.key, 'GET', `/v1/events?type=contact.unsubscribed&contactId=${(await contact(email)).id}`))
        .json()
        .data.map((e: { data: { via?: string } }) => e.data.via);
    expect(await via('topic@example.com')).toEqual(['one-click']);
    expect(await via('all@example.com')).toEqual(['page']);
    expect(await via('mail@example.com')).toEqual(['mail']);
  });

  it("a test send's unsubscribe link answers a page saying it is a test, and changes nothing", async () => {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, `tu${h.dbName}.test`);
    await call(ws, 'PUT', '/v1/workspace', { settings: { locale: 'fr' } });
    await insertContact(h, ws, { email: 'me@example.com' });
    const b = (
      await call(ws, 'POST', '/v1/broadcasts', {
        name: 'T',
        from: `news@${domain.name}`,
        emailContent: { subject: 'S', html: '<p>Hello</p>' },
      })
    ).json();
    expect((await call(ws, 'POST', `/v1/broadcasts/${b.id}/test`, { emails: ['me@example.com'] })).statusCode).toBe(
      200,
    );
    const m = smtp.received.find((r) => r.to === 'me@example.com')!;
    const url = /<(http:\/\/localhost:3000\/unsubscribe\/[^>]+)>/.exec(
      m.parsed.headerLines.find((l) => l.key === 'list-unsubscribe')!.line,
    )![1]!;
    expect(url).toBe('http://localhost:3000/unsubscribe/test?lang=fr');
    expect(String(m.parsed.html)).toContain(url.replace('&', '&amp;'));
    const path = url.slice('http://localhost:3000'.length);
    const page = await app.inject({ method: 'GET', url: path });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Ceci est un message de test');
    const oneClick = await app.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    });
    expect(oneClick.statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/unsubscribe/preview' })).body).toContain('This is a test message');
    const contacts = (await h.call(ws.key, 'GET', '/v1/contacts')).json().data;
    expect(contacts).toEqual([expect.objectContaining({ email: 'me@example.com', status: 'SUBSCRIBED' })]);
    expect((await h.call(ws.key, 'GET', '/v1/suppressions')).json().data).toEqual([]);
  });
});

it('TRUST_PROXY: behind a trusted proxy the per-IP submission limit counts each client, not the proxy', async () => {
  const db = connect(':memory:');
  await migrateToLatest(db);
  const build = (trustProxy: boolean | string[]) =>
    buildApp({
      db,
      logger: false,
      config: {
        logLevel: 'silent',
        publicUrl: 'http://localhost:3000',
        secret: TEST_SECRET,
        trustProxy,
        submissionsPerMinute: 2,
      },
    });
  const setup = await build(false);
  const { apiKey } = await setup.services.workspaces.createWithAdminKey('Proxy');
  const auth = { authorization: `Bearer ${apiKey.key}`, 'content-type': 'application/json' };
  const form = (
    await setup.inject({
      method: 'POST',
      url: '/v1/forms',
      headers: auth,
      payload: JSON.stringify({ name: 'P', type: 'SIGN_UP', slug: 'proxied', fieldMapping: { email: 'email' } }),
    })
  ).json();
  await setup.inject({ method: 'POST', url: `/v1/forms/${form.id}/publish`, headers: auth, payload: '{}' });
  const submit = (app: FastifyInstance, i: number) =>
    app.inject({
      method: 'POST',
      url: '/f/proxied',
      remoteAddress: '10.0.0.1',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': `203.0.113.${i}` },
      payload: `email=v${i}%40example.com`,
    });
  const untrusted = [];
  for (let i = 0; i < 4; i++) untrusted.push((await submit(setup, i)).statusCode);
  expect(untrusted).toEqual([200, 200, 429, 429]); // every client is the proxy
  await setup.close();
  const trusted = await build(['10.0.0.0/8']);
  const statuses = [];
  for (let i = 10; i < 14; i++) statuses.push((await submit(trusted, i)).statusCode);
  expect(statuses).toEqual([200, 200, 200, 200]);
  await trusted.close();
  await db.close();
});
