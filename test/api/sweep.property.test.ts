import fc from 'fast-check';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { InboundProcessor } from '../../src/sending/bounces/bounces.inbound.js';
import { startInboundServer, type InboundServer } from '../../src/sending/bounces/bounces.server.js';
import { reportRules } from '../../src/sending/bounces/bounces.service.js';
import { DEFAULT_PIPELINE_OPTIONS, DeliveryPipeline } from '../../src/sending/deliveries/pipeline.js';
import { SqlDeliveryStore } from '../../src/composition/sql-delivery-store.js';
import { createMailer, type Mailer } from '../../src/mail/transport.js';
import { signClickToken, signOpenToken, type TrackingRef } from '../../src/sending/tracking/tracking.token.js';
import { UnsubscribeService } from '../../src/sending/unsubscribe/unsubscribe.service.js';
import { describeApi, type Harness } from '../helpers/app.js';
import { insertContact, verifiedDomain } from '../helpers/fixtures.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { startSmtpServer, type Received } from '../helpers/smtp.js';

/**
 * Issue 29's own sweep (docs/security.md, "The sweep"): generated inputs against the surfaces a stranger, a
 * subscriber or a low role reaches, each with the invariant that matters there rather than only "no 5xx":
 * - the inbound listener: reports of every shape sent by a subscriber to their own bounce address, naming their
 *   neighbours' messages, never change a neighbour; addresses that are not ours are refused; nothing is answered
 *   with a 5xx after the data;
 * - the provider hooks: unsigned or badly signed SES notifications and Postmark calls never apply anything;
 * - tracking: a token that is not exactly one we signed never redirects; one we signed redirects to its own URL
 *   with a header that carries no control character;
 * - automations: a key without write:webhooks never gets an active webhook step, whatever the step tree;
 * - webhooks: a URL that names a loopback, private or link-local address in any spelling (IPv4-mapped, NAT64,
 *   6to4, decimal, hex) is refused;
 * - console sign-in: hostile credentials and cookies are answered without a 5xx and without a session.
 * SWEEP_RUNS scales every generator (default 40 per property; the figures are printed at the end).
 */
/** The one SNS topic the hooks app accepts: most generated notifications name it, so they reach the signature check. */
const TOPIC = 'arn:aws:sns:us-east-1:123456789012:formcast';
const RUNS = Number(process.env.SWEEP_RUNS ?? 40);
const silent = pino({ level: 'silent' });
const figures: Record<string, number> = {};
const count = (name: string, n = 1) => {
  figures[name] = (figures[name] ?? 0) + n;
};

const hostile = fc.constantFrom(
  'a\u0000b',
  '\ud800',
  '<script>alert(1)</script>',
  "'; drop table contacts; --",
  'x'.repeat(3000),
  '\r\nBcc: evil@x.test',
  '%0d%0aSet-Cookie:x=1',
  '../../etc/passwd',
  'javascript:alert(1)',
  '{{ 7 | times: 7 }}',
  '\u202e',
  '',
);
const text = fc.oneof(fc.string({ maxLength: 80 }), fc.string({ unit: 'binary', maxLength: 80 }), hostile);

describeApi('issue 29 sweep: generated inputs against the surfaces strangers and subscribers reach', (h: Harness) => {
  let sink: Awaited<ReturnType<typeof startSmtpServer>>;
  let mailer: Mailer;
  let inbound: InboundServer;
  let client: ReturnType<typeof nodemailer.createTransport>;
  let hooksApp: FastifyInstance;
  let sent: {
    ws: { id: string; key: string };
    domain: string;
    broadcastId: string;
    emails: string[];
    byEmail: Map<string, Received>;
  };

  beforeAll(async () => {
    for (const name of Object.keys(figures)) delete figures[name];
    sink = await startSmtpServer();
    mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${sink.port}`, outboxDir: '', maxConnections: 2, rateLimit: 0 });
    const processor = new InboundProcessor(
      h.db,
      TEST_SECRET,
      reportRules(),
      new UnsubscribeService(h.db),
      silent as never,
    );
    inbound = await startInboundServer({ port: 0, host: '127.0.0.1', processor, log: silent as never });
    client = nodemailer.createTransport({
      host: '127.0.0.1',
      port: inbound.port,
      secure: false,
      ignoreTLS: true,
      pool: false,
    });
    // A second app whose SNS certificate host is loopback, so that certificate fetches are really attempted
    // (on a port nothing listens on, or a path that is not a certificate).
    hooksApp = await buildApp({
      db: h.db,
      config: {
        logLevel: 'silent',
        publicUrl: 'http://localhost:3000',
        secret: TEST_SECRET,
        hooks: {
          snsCertHost: /^(127\.0\.0\.1|localhost)$/,
          snsTopicArns: [TOPIC],
          postmarkUser: 'pm',
          postmarkPassword: 'right horse battery',
        },
      },
      logger: false,
    });
    await hooksApp.ready();

    const ws = await h.workspace('Sweep');
    const domain = (await verifiedDomain(h, ws, `sweep${ws.id.slice(-8).toLowerCase()}.test`)).name;
    const emails = Array.from({ length: 8 }, (_, i) => `n${i}@example.com`);
    for (const e of emails) await insertContact(h, ws, { email: e });
    const html =
      '<p>Hi</p><p><a href="https://example.com/a?x=1&amp;y=%C3%A9">a</a> <a href="https://例え.jp/ありがとう">b</a></p>';
    const b = (
      await h.call(ws.key, 'POST', '/v1/broadcasts', {
        name: 'Sweep',
        from: `news@${domain}`,
        emailContent: { subject: 'Hi', html, text: 'Hello' },
      })
    ).json();
    expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/send`)).statusCode).toBe(202);
    const pipeline = new DeliveryPipeline(
      new SqlDeliveryStore(h.db),
      mailer,
      { ...DEFAULT_PIPELINE_OPTIONS, secret: TEST_SECRET, workerId: 'sweep', publicUrl: 'https://m.test' },
      silent as never,
    );
    for (let i = 0; i < 50 && (await pipeline.materialize()) + (await pipeline.sendBatch()) > 0;) i++;
    const byEmail = new Map<string, Received>(sink.received.filter((m) => emails.includes(m.to)).map((m) => [m.to, m]));
    expect(byEmail.size).toBe(emails.length);
    sent = { ws, domain, broadcastId: b.id, emails, byEmail };
  });

  afterAll(async () => {
    client?.close();
    await inbound?.close();
    await hooksApp?.close();
    await mailer?.close();
    await sink?.close();
    console.info(`issue 29 sweep [${h.dbName}]: ${JSON.stringify(figures)}`);
  });

  const stateOf = async (email: string) => {
    const k = h.db.kysely;
    const c = await k
      .selectFrom('contacts')
      .select(['id', 'status'])
      .where('workspace_id', '=', sent.ws.id)
      .where('email', '=', email)
      .executeTakeFirstOrThrow();
    const d = await k
      .selectFrom('deliveries')
      .select(['status', 'bounce_class', 'complained_at', 'soft_bounced_at', 'unsubscribed_at'])
      .where('contact_id', '=', c.id)
      .executeTakeFirstOrThrow();
    const s = await k
      .selectFrom('suppressions')
      .select('reason')
      .where('workspace_id', '=', sent.ws.id)
      .where('email', '=', email)
      .executeTakeFirst();
    return { contact: c.status, delivery: d, suppressed: s?.reason ?? null };
  };
  const messageIdOf = (email: string) => sent.byEmail.get(email)!.parsed.messageId!;
  const returnPathOf = (email: string) => sent.byEmail.get(email)!.mailFrom;

  it('inbound: reports a subscriber sends to their own bounce address never change a neighbour, and every message is answered 250', async () => {
    const attacker = sent.emails[0]!;
    const neighbours = sent.emails.slice(1);
    const before = await Promise.all(neighbours.map(stateOf));
    const target = returnPathOf(attacker);
    const neighbour = fc.constantFrom(...neighbours);
    // The ids a subscriber could try: neighbours' real Message-IDs and Return-Paths, and variations of their own.
    const ownId = messageIdOf(attacker);
    const namedId = fc.oneof(
      neighbour.map(messageIdOf),
      fc.nat({ max: 35 }).map((i) => ownId.replace(/(.)@/, `${'0123456789ABCDEFGHJKMNPQRSTVWXYZ'[i % 32]}@`)),
      text,
    );
    const arf = fc
      .record({
        id: namedId,
        rp: fc.oneof(neighbour.map(returnPathOf), text),
        type: fc.constantFrom('abuse', 'fraud', 'other', 'not-spam', ''),
      })
      .map(({ id, rp, type }) =>
        [
          'From: fbl@isp.example',
          `To: ${target}`,
          'Subject: complaint',
          'MIME-Version: 1.0',
          'Content-Type: multipart/report; report-type=feedback-report; boundary="b1"',
          '',
          '--b1',
          'Content-Type: text/plain',
          '',
          'A complaint.',
          '',
          '--b1',
          'Content-Type: message/feedback-report',
          '',
          `Feedback-Type: ${type}`,
          'User-Agent: sweep/1',
          'Version: 1',
          '',
          '--b1',
          'Content-Type: message/rfc822',
          '',
          `Return-Path: <${rp}>`,
          `Message-ID: ${id}`,
          `From: news@${sent.domain}`,
          'Subject: Hi',
          '',
          'Hello',
          '--b1--',
          '',
        ].join('\r\n'),
      );
    const dsn = fc
      .record({
        rcpt: fc.oneof(neighbour, text),
        status: fc.constantFrom('5.1.1', '5.2.2', '4.4.7', '5.7.1', '9.9.9', ''),
        action: fc.constantFrom('failed', 'delayed', 'delivered', 'relayed', ''),
        id: namedId,
      })
      .map(({ rcpt, status, action, id }) =>
        [
          'From: MAILER-DAEMON@mx.example',
          `To: ${target}`,
          'Subject: Undelivered Mail',
          'MIME-Version: 1.0',
          'Content-Type: multipart/report; report-type=delivery-status; boundary="b2"',
          '',
          '--b2',
          'Content-Type: text/plain',
          '',
          'Could not deliver.',
          '',
          '--b2',
          'Content-Type: message/delivery-status',
          '',
          'Reporting-MTA: dns; mx.example',
          '',
          `Final-Recipient: rfc822; ${rcpt}`,
          `Action: ${action}`,
          `Status: ${status}`,
          '',
          '--b2',
          'Content-Type: text/rfc822-headers',
          '',
          `Message-ID: ${id}`,
          `To: ${rcpt}`,
          '',
          '--b2--',
          '',
        ].join('\r\n'),
      );
    const junk = fc.oneof(
      fc
        .uint8Array({ maxLength: 2000 })
        .map((b) => Buffer.concat([Buffer.from('Subject: x\r\n\r\n'), Buffer.from(b)]).toString('latin1')),
      fc
        .tuple(text, text)
        .map(
          ([a, b]) =>
            `Content-Type: multipart/mixed; boundary="${a}"\r\nMessage-ID: ${b}\r\n\r\n--${a}\r\n\r\n${b}\r\n`,
        ),
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(arf, dsn, junk), async (raw) => {
        count('inbound messages');
        const info = await client.sendMail({
          envelope: { from: '', to: [target] },
          raw: raw.replaceAll(/\r?\n/g, '\r\n'),
        });
        expect(info.response).toMatch(/^250/);
      }),
      { numRuns: RUNS * 2 },
    );
    expect(await Promise.all(neighbours.map(stateOf))).toEqual(before);
  });

  it('inbound: an address that is not a valid token of ours is refused at RCPT, and the listener keeps serving', async () => {
    const local = fc.oneof(
      text,
      fc.string({ minLength: 1, maxLength: 60 }).map((s) => `bounces+${s}`),
      fc.string({ unit: 'grapheme-ascii', minLength: 30, maxLength: 50 }).map((s) => `bounces+${s.toLowerCase()}`),
    );
    await fc.assert(
      fc.asyncProperty(
        local,
        fc.constantFrom(`bounces.${sent.domain}`, 'elsewhere.example', sent.domain),
        async (l, host) => {
          count('inbound addresses');
          // eslint-disable-next-line no-control-regex
          const address = `${l.replaceAll(/[\s<>@\\"\u0000-\u001f]/g, '')}@${host}`;
          if (address === returnPathOf(sent.emails[0]!)) return;
          const err = await client
            .sendMail({ envelope: { from: '', to: [address] }, raw: 'Subject: x\r\n\r\nx\r\n' })
            .then(
              () => null,
              (e: Error & { responseCode?: number }) => e,
            );
          expect(err, address).not.toBeNull();
          if (err!.responseCode !== undefined) expect(err!.responseCode, address).toBeLessThan(600);
        },
      ),
      { numRuns: RUNS },
    );
    const ok = await client.sendMail({
      envelope: { from: '', to: [returnPathOf(sent.emails[0]!)] },
      raw: 'Subject: still here\r\n\r\nx\r\n',
    });
    expect(ok.response).toMatch(/^250/);
  });

  it('hooks: unsigned, badly signed or unfetchable SES notifications and wrong Postmark credentials apply nothing and are never a 5xx', async () => {
    const before = await Promise.all(sent.emails.map(stateOf));
    const sns = fc.record(
      {
        Type: fc.oneof(fc.constantFrom('Notification', 'SubscriptionConfirmation', 'UnsubscribeConfirmation'), text),
        MessageId: text,
        TopicArn: fc.oneof(fc.constantFrom(TOPIC, 'arn:aws:sns:us-east-1:123456789012:evil'), text),
        Message: fc.oneof(
          fc.constant(
            JSON.stringify({
              notificationType: 'Complaint',
              complaint: { complainedRecipients: [{ emailAddress: sent.emails[1] }] },
              mail: { headers: [{ name: 'Message-ID', value: messageIdOf(sent.emails[1]!) }] },
            }),
          ),
          text,
        ),
        Timestamp: text,
        SignatureVersion: fc.constantFrom('1', '2', '3', ''),
        Signature: fc.oneof(fc.base64String({ maxLength: 400 }), text),
        SigningCertURL: fc.oneof(
          fc.constantFrom(
            'http://127.0.0.1:9/cert.pem',
            'http://localhost:1/x.pem',
            'https://127.0.0.1:9/cert.pem',
            'http://127.0.0.1:9/not-a-cert',
            'file:///etc/passwd',
            'http://user:pw@127.0.0.1:9/c.pem',
          ),
          text,
        ),
        SubscribeURL: fc.oneof(fc.constant('http://127.0.0.1:9/confirm'), text),
      },
      { requiredKeys: ['Type'] },
    );
    await fc.assert(
      fc.asyncProperty(sns, fc.constantFrom('application/json', 'text/plain'), async (m, type) => {
        count('ses notifications');
        const res = await hooksApp.inject({
          method: 'POST',
          url: '/hooks/ses',
          headers: { 'content-type': type },
          payload: JSON.stringify(m),
        });
        expect(res.statusCode, res.body).toBeLessThan(500);
        expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
      }),
      { numRuns: RUNS },
    );
    const postmark = fc.record({
      auth: fc.oneof(
        text,
        fc.tuple(text, text).map(([u, p]) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`),
      ),
      body: fc.jsonValue({ maxDepth: 3 }),
    });
    await fc.assert(
      fc.asyncProperty(postmark, async ({ auth, body }) => {
        count('postmark calls');
        const res = await hooksApp.inject({
          method: 'POST',
          url: '/hooks/postmark',
          headers: { 'content-type': 'application/json', authorization: auth.replaceAll(/[^\x20-\x7e]/g, '') },
          payload: JSON.stringify({
            RecordType: 'SpamComplaint',
            MessageID: messageIdOf(sent.emails[2]!),
            Email: sent.emails[2],
            body,
          }),
        });
        expect(res.statusCode, res.body).toBe(401);
      }),
      { numRuns: RUNS },
    );
    expect(await Promise.all(sent.emails.map(stateOf))).toEqual(before);
  });

  it('tracking: only a token we signed redirects, to exactly its URL, with a Location free of control characters', async () => {
    const k = h.db.kysely;
    const d = await k
      .selectFrom('deliveries')
      .select(['id', 'contact_id'])
      .where('broadcast_id', '=', sent.broadcastId)
      .executeTakeFirstOrThrow();
    const ref: TrackingRef = {
      workspaceId: sent.ws.id,
      deliveryId: d.id,
      broadcastId: sent.broadcastId,
      contactId: d.contact_id,
      sentAt: Math.floor(Date.now() / 1000),
    };
    const url = fc.oneof(
      fc.webUrl({ withQueryParameters: true, withFragments: true }),
      fc.constantFrom(
        'https://例え.jp/ありがとう',
        'https://x.example/a b',
        'https://x.example/\r\nSet-Cookie: a=b',
        'https://x.example/%0d%0a',
        'https://x.example/\u2028',
      ),
    );
    await fc.assert(
      fc.asyncProperty(url, fc.nat({ max: 3 }), fc.nat(), async (link, mutation, at) => {
        count('click tokens');
        const token = signClickToken(TEST_SECRET, ref, { linkIndex: 0, linkCount: 1, url: link });
        const res = await h.app.inject({ method: 'GET', url: `/t/c/${token}` });
        expect(res.statusCode).toBeLessThan(500);
        const location = res.headers.location as string | undefined;
        if (res.statusCode === 302) {
          expect(location).toBeDefined();
          // eslint-disable-next-line no-control-regex
          expect(location!).not.toMatch(/[\u0000-\u001f\u007f]/);
          expect(new URL(location!).href).toBe(new URL(link).href);
        }
        // Any change to the token: never a redirect.
        const i = at % token.length;
        const bad =
          mutation === 0
            ? token.slice(0, i)
            : mutation === 1
              ? `${token}${token[i]}`
              : `${token.slice(0, i)}${token[i] === 'A' ? 'B' : 'A'}${token.slice(i + 1)}`;
        if (bad === token) return;
        count('mutated tokens');
        const forged = await h.app.inject({ method: 'GET', url: `/t/c/${bad}` });
        expect(forged.statusCode, bad).toBe(404);
        expect(forged.headers.location).toBeUndefined();
        const open = await h.app.inject({ method: 'GET', url: `/t/o/${bad}` });
        expect(open.statusCode).toBeLessThan(500);
      }),
      { numRuns: RUNS },
    );
    // A real open token answers its GIF.
    expect((await h.app.inject({ method: 'GET', url: `/t/o/${signOpenToken(TEST_SECRET, ref)}` })).statusCode).toBe(
      200,
    );
  });

  it('automations: a key without write:webhooks never ends with an active automation that has a webhook step', async () => {
    const editor = await h.key(sent.ws, ['write:broadcasts', 'write:contacts', 'write:forms']);
    const leaf: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
      fc.record({ type: fc.constant('wait'), duration: fc.constantFrom('PT1H', 'P2D', 'P0D', 'nope', 'P99999D') }),
      fc.record({
        type: fc.constant('send'),
        from: fc.constantFrom(`news@${sent.domain}`, 'x@unverified.example', ''),
        emailContent: fc.record({ subject: text, text }),
      }),
      fc.record({
        type: fc.constant('update'),
        properties: fc.dictionary(
          fc.constantFrom('plan', 'score', '__proto__', 'x'.repeat(70)),
          fc.jsonValue({ maxDepth: 1 }),
          { maxKeys: 3 },
        ),
      }),
      fc.record({
        type: fc.constant('webhook'),
        url: fc.constantFrom(
          'https://93.184.215.14/x',
          'https://hooks.example/x',
          'http://127.0.0.1:9/x',
          'https://[::ffff:127.0.0.1]/x',
        ),
      }),
      fc.record({ type: fc.constant('exit') }),
    );
    const { tree } = fc.letrec<{ tree: Record<string, unknown>[]; step: Record<string, unknown> }>((tie) => ({
      tree: fc.array(tie('step'), { minLength: 1, maxLength: 4 }),
      step: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        leaf,
        fc.record({
          type: fc.constant('branch'),
          filter: fc.constant({ all: [] }),
          then: tie('tree'),
          else: tie('tree'),
        }),
      ),
    }));
    const hasWebhook = (steps: unknown): boolean => JSON.stringify(steps).includes('"type":"webhook"');
    await fc.assert(
      fc.asyncProperty(
        tree,
        fc.constantFrom({ type: 'contact.created' }, { type: 'api' }, { type: 'event', name: 'x' }),
        async (steps, trigger) => {
          count('automation trees');
          const created = await h.call(editor, 'POST', '/v1/automations', { name: 'Sweep', trigger, steps });
          expect(created.statusCode, created.body).toBeLessThan(500);
          if (created.statusCode !== 201) return;
          const activated = await h.call(editor, 'POST', `/v1/automations/${created.json().id}/activate`);
          expect(activated.statusCode, activated.body).toBeLessThan(500);
          if (hasWebhook(steps)) expect(activated.statusCode, activated.body).not.toBe(200);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('webhooks: a URL naming a loopback, private or link-local address in any spelling is refused', async () => {
    const v4 = fc.oneof(
      fc.tuple(fc.constant(127), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(10), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(192), fc.constant(168), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(169), fc.constant(254), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(0), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(100), fc.integer({ min: 64, max: 127 }), fc.nat(255), fc.nat(255)),
    );
    const hex = (a: number, b: number) => ((a << 8) | b).toString(16);
    const spelled = fc.tuple(v4, fc.nat(9)).map(([[a, b, c, d], form]) => {
      const n = ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
      switch (form) {
        case 0:
          return `${a}.${b}.${c}.${d}`;
        case 1:
          return `[::ffff:${a}.${b}.${c}.${d}]`;
        case 2:
          return `[::ffff:0:${a}.${b}.${c}.${d}]`;
        case 3:
          return `[64:ff9b::${hex(a, b)}:${hex(c, d)}]`;
        case 4:
          return `[64:ff9b:1::${hex(a, b)}:${hex(c, d)}]`;
        case 5:
          return `[2002:${hex(a, b)}:${hex(c, d)}::1]`;
        case 6:
          return `[::${a}.${b}.${c}.${d}]`;
        case 7:
          return String(n);
        case 8:
          return `0x${n.toString(16)}`;
        default:
          return `${a}.${(b << 16) + (c << 8) + d}`;
      }
    });
    await fc.assert(
      fc.asyncProperty(spelled, fc.constantFrom('https', 'http'), async (host, scheme) => {
        count('webhook urls');
        const res = await h.call(sent.ws.key, 'POST', '/v1/webhooks', {
          url: `${scheme}://${host}/hook`,
          eventTypes: ['contact.created'],
        });
        expect(res.statusCode, `${host}: ${res.body}`).toBe(422);
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('console sign-in: hostile credentials and cookies get no session and no 5xx', async () => {
    const email = `owner-${sent.ws.id.slice(-6).toLowerCase()}@example.com`;
    await h.app.services.users.create(sent.ws.id, { email, role: 'owner', password: 'correct horse battery staple' });
    const sessionSet = (res: LightMyRequestResponse) =>
      String(res.headers['set-cookie'] ?? '')
        .split(/,(?=[^;]*=)/)
        .some((c) => /session=[^;]+/.test(c) && !/session=;/.test(c));
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.constant(email), text),
        text,
        fc.boolean(),
        fc.nat(255),
        async (e, password, json, ip) => {
          count('sign-in attempts');
          const res = await h.app.inject({
            method: 'POST',
            url: '/app/login',
            remoteAddress: `10.29.0.${ip}`,
            headers: {
              'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded',
              origin: 'http://localhost:3000',
            },
            payload: json
              ? JSON.stringify({ email: e, password })
              : new URLSearchParams({ email: e, password }).toString(),
          });
          expect(res.statusCode, res.body).toBeLessThan(500);
          expect(sessionSet(res), res.body).toBe(false);
        },
      ),
      { numRuns: RUNS },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(fc.constantFrom('fc_session', '__Host-fc_session', 'fc_csrf', 'x'), fc.string({ maxLength: 80 })),
          { maxLength: 4 },
        ),
        async (cookies) => {
          count('cookie headers');
          const cookie = cookies
            // eslint-disable-next-line no-control-regex
            .map(([n, v]) => `${n}=${v.replaceAll(/[;\s\u0000-\u001f\u007f-\uffff]/g, '')}`)
            .join('; ');
          const res = await h.app.inject({ method: 'GET', url: '/v1/workspace', headers: cookie ? { cookie } : {} });
          expect(res.statusCode, res.body).toBe(401);
        },
      ),
      { numRuns: RUNS },
    );
  });
});
