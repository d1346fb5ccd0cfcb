import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { snsStringToSign, type SnsMessage } from '../../src/sending/bounces/bounces.providers.js';
import { DEFAULT_PIPELINE_OPTIONS, DeliveryPipeline } from '../../src/sending/deliveries/pipeline.js';
import { SqlDeliveryStore } from '../../src/composition/sql-delivery-store.js';
import { buildApp } from '../../src/app.js';
import { createMailer, type Mailer } from '../../src/mail/transport.js';
import { describeApi } from '../helpers/app.js';
import { insertContact, verifiedDomain } from '../helpers/fixtures.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { startSmtpServer } from '../helpers/smtp.js';
import { selfSigned } from '../helpers/tls.js';

/**
 * Provider webhooks (docs/bounces.md) with the payloads Amazon SES (through SNS) and Postmark document. SNS
 * messages are signed here with a key whose certificate a local HTTP server hands out, as SNS does from its
 * own host (SNS_CERT_HOST_PATTERN lets the test name 127.0.0.1).
 */
const silent = pino({ level: 'silent' });
/** The topic SES publishes to (SES_TOPIC_ARNS). */
const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:ses-feedback';
let openssl = true;
try {
  execFileSync('openssl', ['version'], { stdio: 'ignore' });
} catch {
  openssl = false;
}

describeApi('provider hooks: SES through SNS, Postmark', (h) => {
  let app: FastifyInstance;
  let sink: Awaited<ReturnType<typeof startSmtpServer>>;
  let mailer: Mailer;
  let certServer: http.Server;
  let certBase = '';
  let privateKey: crypto.KeyObject;
  const confirmed: string[] = [];

  beforeAll(async () => {
    if (!openssl) return;
    const made = selfSigned({ subject: '/CN=sns.test' });
    privateKey = crypto.createPrivateKey(made.key);
    const pem = made.cert;
    certServer = http.createServer((req, res) => {
      if (req.url === '/SimpleNotificationService-test.pem') return res.end(pem);
      if (req.url?.startsWith('/confirm')) {
        confirmed.push(req.url);
        return res.end('<ConfirmSubscriptionResponse/>');
      }
      res.statusCode = 404;
      res.end();
    });
    await new Promise<void>((r) => certServer.listen(0, '127.0.0.1', r));
    certBase = `http://127.0.0.1:${(certServer.address() as AddressInfo).port}`;
    app = await buildApp({
      db: h.db,
      logger: false,
      config: {
        logLevel: 'silent',
        publicUrl: 'http://localhost:3000',
        secret: TEST_SECRET,
        hooks: {
          snsCertHost: /^127\.0\.0\.1$/,
          snsTopicArns: [TOPIC],
          postmarkUser: 'pm',
          postmarkPassword: 'hook-secret',
        },
      },
    });
    await app.ready();
    sink = await startSmtpServer();
    mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${sink.port}`, outboxDir: '', maxConnections: 2, rateLimit: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await mailer?.close();
    await sink?.close();
    await new Promise((r) => (certServer ? certServer.close(r) : r(undefined)));
  });

  function sign(m: Omit<SnsMessage, 'Signature' | 'SigningCertURL' | 'SignatureVersion'>, version = '1'): SnsMessage {
    const full = {
      ...m,
      SignatureVersion: version,
      SigningCertURL: `${certBase}/SimpleNotificationService-test.pem`,
      Signature: '',
    } as SnsMessage;
    full.Signature = crypto
      .sign(version === '2' ? 'RSA-SHA256' : 'RSA-SHA1', Buffer.from(snsStringToSign(full)), privateKey)
      .toString('base64');
    return full;
  }
  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': url.includes('ses') ? 'text/plain; charset=UTF-8' : 'application/json', ...headers },
      payload: JSON.stringify(body),
    });

  async function sent(count: number) {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, `hk${ws.id.slice(-8).toLowerCase()}.test`);
    const emails = Array.from({ length: count }, (_, i) => `p${i}@example.com`);
    for (const e of emails) await insertContact(h, ws, { email: e });
    const b = (
      await h.call(ws.key, 'POST', '/v1/broadcasts', {
        name: 'N',
        from: `news@${domain.name}`,
        emailContent: { subject: 'Hi', text: 'x' },
      })
    ).json();
    await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/send`);
    const pipeline = new DeliveryPipeline(
      new SqlDeliveryStore(h.db),
      mailer,
      { ...DEFAULT_PIPELINE_OPTIONS, secret: TEST_SECRET, workerId: 'hk', publicUrl: 'https://m.test' },
      silent as never,
    );
    for (let i = 0; i < 50 && (await pipeline.materialize()) + (await pipeline.sendBatch()) > 0;) i++;
    const rows = await h.db.kysely
      .selectFrom('deliveries')
      .select(['id', 'email'])
      .where('broadcast_id', '=', b.id)
      .execute();
    return { ws, domain: domain.name, broadcastId: b.id as string, ids: new Map(rows.map((r) => [r.email, r.id])) };
  }
  const contact = async (wsId: string, email: string) =>
    (
      await h.db.kysely
        .selectFrom('contacts')
        .select('status')
        .where('workspace_id', '=', wsId)
        .where('email', '=', email)
        .executeTakeFirstOrThrow()
    ).status;

  /** An SES notification as SNS delivers it (the shape of AWS's documented examples). */
  function sesNotification(
    type: 'Bounce' | 'Complaint',
    deliveryId: string,
    domain: string,
    email: string,
    bounce?: Record<string, unknown>,
  ) {
    const mail = {
      timestamp: '2026-11-24T09:31:00.000Z',
      source: `news@${domain}`,
      sourceArn: `arn:aws:ses:eu-west-1:123456789012:identity/${domain}`,
      sendingAccountId: '123456789012',
      messageId: '0102018f1a2b3c4d-5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9-000000',
      destination: [email],
      headersTruncated: false,
      headers: [
        { name: 'From', value: `news@${domain}` },
        { name: 'To', value: email },
        { name: 'Message-ID', value: `<${deliveryId}@${domain}>` },
      ],
      commonHeaders: { from: [`news@${domain}`], to: [email], messageId: `<${deliveryId}@${domain}>`, subject: 'Hi' },
    };
    const message =
      type === 'Bounce'
        ? {
            notificationType: 'Bounce',
            bounce: {
              feedbackId: '0102018f-abcd',
              timestamp: '2026-11-24T09:31:05.000Z',
              reportingMTA: 'dsn; a8-70.smtp-out.amazonses.com',
              ...bounce,
            },
            mail,
          }
        : {
            notificationType: 'Complaint',
            complaint: {
              feedbackId: '0102018f-efgh',
              timestamp: '2026-11-24T10:00:00.000Z',
              complainedRecipients: [{ emailAddress: email }],
              complaintFeedbackType: 'abuse',
              userAgent: 'Yahoo!-Mail-Feedback/2.0',
            },
            mail,
          };
    return sign({
      Type: 'Notification',
      MessageId: crypto.randomUUID(),
      TopicArn: TOPIC,
      Message: JSON.stringify(message),
      Timestamp: '2026-11-24T09:31:06.000Z',
      UnsubscribeURL: `${certBase}/unsubscribe`,
    } as never);
  }

  it('SES: signed bounce and complaint notifications are applied; a bad signature or certificate host is 403 and changes nothing', async () => {
    if (!openssl) return;
    const { ws, domain, broadcastId, ids } = await sent(4);
    const permanent = sesNotification('Bounce', ids.get('p0@example.com')!, domain, 'p0@example.com', {
      bounceType: 'Permanent',
      bounceSubType: 'General',
      bouncedRecipients: [
        {
          emailAddress: 'p0@example.com',
          action: 'failed',
          status: '5.1.1',
          diagnosticCode: 'smtp; 550 5.1.1 user unknown',
        },
      ],
    });
    expect((await post('/hooks/ses', permanent)).json()).toEqual({ ok: true, applied: 1 });
    expect(await contact(ws.id, 'p0@example.com')).toBe('BOUNCED');
    const transient = sesNotification('Bounce', ids.get('p1@example.com')!, domain, 'p1@example.com', {
      bounceType: 'Transient',
      bounceSubType: 'MailboxFull',
      bouncedRecipients: [
        {
          emailAddress: 'p1@example.com',
          action: 'failed',
          status: '5.2.2',
          diagnosticCode: 'smtp; 552 5.2.2 Mailbox full',
        },
      ],
    });
    expect((await post('/hooks/ses', transient)).json().applied).toBe(1);
    expect(await contact(ws.id, 'p1@example.com')).toBe('SUBSCRIBED');
    const complaint = sesNotification('Complaint', ids.get('p2@example.com')!, domain, 'p2@example.com');
    expect((await post('/hooks/ses', complaint)).json().applied).toBe(1);
    expect(await contact(ws.id, 'p2@example.com')).toBe('COMPLAINED');
    // SignatureVersion 2 (SHA256) is verified too.
    const v2 = sesNotification('Bounce', ids.get('p3@example.com')!, domain, 'p3@example.com', {
      bounceType: 'Permanent',
      bounceSubType: 'NoEmail',
      bouncedRecipients: [{ emailAddress: 'p3@example.com' }],
    });
    const resigned = sign(
      { ...v2, Signature: undefined, SigningCertURL: undefined, SignatureVersion: undefined } as never,
      '2',
    );
    const tampered = { ...resigned, Message: resigned.Message.replace('NoEmail', 'General') };
    expect((await post('/hooks/ses', tampered)).statusCode).toBe(403);
    expect(
      (
        await post('/hooks/ses', {
          ...resigned,
          SigningCertURL: 'https://evil.example/SimpleNotificationService-test.pem',
        })
      ).statusCode,
    ).toBe(403);
    expect(await contact(ws.id, 'p3@example.com')).toBe('SUBSCRIBED');
    expect((await post('/hooks/ses', resigned)).json().applied).toBe(1);
    expect(await contact(ws.id, 'p3@example.com')).toBe('BOUNCED');
    expect((await h.call(ws.key, 'GET', `/v1/broadcasts/${broadcastId}`)).json().stats).toMatchObject({
      bounced: 2,
      softBounced: 1,
      complained: 1,
    });
    // A duplicate notification changes nothing more.
    expect((await post('/hooks/ses', permanent)).json().applied).toBe(0);
  });

  it('SES: a subscription confirmation is confirmed by fetching its SubscribeURL (on an SNS host only)', async () => {
    if (!openssl) return;
    const m = sign({
      Type: 'SubscriptionConfirmation',
      MessageId: crypto.randomUUID(),
      Token: 'tok123',
      TopicArn: TOPIC,
      Message: 'You have chosen to subscribe to the topic…',
      SubscribeURL: `${certBase}/confirm?Action=ConfirmSubscription&Token=tok123`,
      Timestamp: '2026-11-24T09:00:00.000Z',
    } as never);
    expect((await post('/hooks/ses', m)).json()).toEqual({ ok: true, confirmed: true });
    expect(confirmed).toEqual(['/confirm?Action=ConfirmSubscription&Token=tok123']);
    const elsewhere = sign({
      Type: 'SubscriptionConfirmation',
      MessageId: crypto.randomUUID(),
      Token: 't',
      TopicArn: TOPIC,
      Message: 'x',
      SubscribeURL: 'http://169.254.169.254/latest/meta-data',
      Timestamp: '2026-11-24T09:00:00.000Z',
    } as never);
    expect((await post('/hooks/ses', elsewhere)).statusCode).toBe(400);
  });

  it("SES: only the topics in SES_TOPIC_ARNS: another topic's signed notification or subscription is 403, logged, never confirmed nor applied; unset refuses every topic", async () => {
    if (!openssl) return;
    const lines: string[] = [];
    const logged = await buildApp({
      db: h.db,
      config: {
        logLevel: 'info',
        publicUrl: 'http://localhost:3000',
        secret: TEST_SECRET,
        hooks: { snsCertHost: /^127\.0\.0\.1$/, snsTopicArns: [TOPIC], postmarkUser: null, postmarkPassword: null },
      },
      logStream: { write: (l) => lines.push(l) },
    });
    const unset = await buildApp({
      db: h.db,
      config: { logLevel: 'info', publicUrl: 'http://localhost:3000', secret: TEST_SECRET },
      logStream: { write: (l) => lines.push(l) },
    });
    try {
      const { ws, domain, ids } = await sent(1);
      const send = (a: FastifyInstance, body: unknown) =>
        a.inject({
          method: 'POST',
          url: '/hooks/ses',
          headers: { 'content-type': 'text/plain; charset=UTF-8' },
          payload: JSON.stringify(body),
        });
      const strangers = 'arn:aws:sns:us-east-1:999999999999:not-ours';
      const ours = sesNotification('Complaint', ids.get('p0@example.com')!, domain, 'p0@example.com');
      // Signed by SNS (the same certificate) for somebody else's topic: refused before anything is fetched or applied.
      const foreign = sign({
        ...ours,
        TopicArn: strangers,
        Signature: undefined,
        SigningCertURL: undefined,
        SignatureVersion: undefined,
      } as never);
      const before = confirmed.length;
      const subscribe = sign({
        Type: 'SubscriptionConfirmation',
        MessageId: crypto.randomUUID(),
        Token: 'evil',
        TopicArn: strangers,
        Message: 'You have chosen to subscribe…',
        SubscribeURL: `${certBase}/confirm?Action=ConfirmSubscription&Token=evil`,
        Timestamp: '2026-11-24T09:00:00.000Z',
      } as never);
      for (const a of [logged, app]) {
        expect((await send(a, foreign)).statusCode).toBe(403);
        expect((await send(a, subscribe)).statusCode).toBe(403);
        expect((await send(a, { ...ours, TopicArn: undefined })).statusCode).toBe(403);
      }
      expect(confirmed.length).toBe(before);
      expect(await contact(ws.id, 'p0@example.com')).toBe('SUBSCRIBED');
      expect(lines.some((l) => l.includes('its topic is not in SES_TOPIC_ARNS') && l.includes(strangers))).toBe(true);
      // Unset: nothing is accepted, not even our own topic, and the log names the setting.
      expect((await send(unset, ours)).statusCode).toBe(403);
      expect(lines.some((l) => l.includes('SES_TOPIC_ARNS is not set'))).toBe(true);
      expect(await contact(ws.id, 'p0@example.com')).toBe('SUBSCRIBED');
      // The configured topic still works.
      expect((await send(logged, ours)).json()).toEqual({ ok: true, applied: 1 });
      expect(await contact(ws.id, 'p0@example.com')).toBe('COMPLAINED');
    } finally {
      await logged.close();
      await unset.close();
    }
  });

  it('SES: a signing certificate that cannot be fetched (connection refused, not found, unresolvable host) is 403, not 500, and changes nothing', async () => {
    if (!openssl) return;
    const { ws, domain, ids } = await sent(1);
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const n = sesNotification('Complaint', ids.get('p0@example.com')!, domain, 'p0@example.com');
    for (const url of [`http://127.0.0.1:${deadPort}/SimpleNotificationService-test.pem`, `${certBase}/missing.pem`]) {
      const res = await post('/hooks/ses', { ...n, SigningCertURL: url });
      expect(res.statusCode, url).toBe(403);
      expect(res.json()).toMatchObject({ ok: false, error: expect.stringContaining('could not be fetched') });
    }
    // A host that does not resolve (the pattern lets the test name it; .invalid never resolves, RFC 6761).
    const dns = await buildApp({
      db: h.db,
      logger: false,
      config: {
        logLevel: 'silent',
        publicUrl: 'http://localhost:3000',
        secret: TEST_SECRET,
        hooks: { snsCertHost: /\.invalid$/, snsTopicArns: [TOPIC], postmarkUser: null, postmarkPassword: null },
      },
    });
    try {
      const res = await dns.inject({
        method: 'POST',
        url: '/hooks/ses',
        headers: { 'content-type': 'text/plain; charset=UTF-8' },
        payload: JSON.stringify({
          ...n,
          SigningCertURL: 'https://sns.nowhere.invalid/SimpleNotificationService-test.pem',
        }),
      });
      expect(res.statusCode).toBe(403);
    } finally {
      await dns.close();
    }
    expect(await contact(ws.id, 'p0@example.com')).toBe('SUBSCRIBED');
  });

  it('Postmark: basic auth; Bounce and SpamComplaint records matched by their deliveryId metadata', async () => {
    const { ws, ids } = await sent(2);
    const auth = { authorization: `Basic ${Buffer.from('pm:hook-secret').toString('base64')}` };
    const hard = {
      RecordType: 'Bounce',
      ID: 4323372036,
      Type: 'HardBounce',
      TypeCode: 1,
      Name: 'Hard bounce',
      Tag: 'News',
      MessageID: '883953f4-6105-42a2-a16a-77a8eac79483',
      Metadata: { deliveryId: ids.get('p0@example.com') },
      ServerID: 23,
      MessageStream: 'broadcast',
      Description: 'The server was unable to deliver your message (ex: unknown user, mailbox not found).',
      Details: 'smtp;550 5.1.1 The email account that you tried to reach does not exist.',
      Email: 'p0@example.com',
      From: 'news@acme.test',
      BouncedAt: '2026-11-24T09:31:00Z',
      DumpAvailable: true,
      Inactive: true,
      CanActivate: true,
      Subject: 'Hi',
    };
    expect((await post('/hooks/postmark', hard)).statusCode).toBe(401);
    expect(
      (await post('/hooks/postmark', hard, { authorization: `Basic ${Buffer.from('pm:wrong').toString('base64')}` }))
        .statusCode,
    ).toBe(401);
    expect((await post('/hooks/postmark', hard, auth)).json()).toEqual({ ok: true, applied: 1 });
    expect(await contact(ws.id, 'p0@example.com')).toBe('BOUNCED');
    const complaint = {
      ...hard,
      RecordType: 'SpamComplaint',
      Type: 'SpamComplaint',
      TypeCode: 512,
      Metadata: { deliveryId: ids.get('p1@example.com') },
      Email: 'p1@example.com',
    };
    expect((await post('/hooks/postmark', complaint, auth)).json().applied).toBe(1);
    expect(await contact(ws.id, 'p1@example.com')).toBe('COMPLAINED');
    expect((await post('/hooks/postmark', { ...hard, Metadata: {} }, auth)).json()).toMatchObject({
      ok: true,
      applied: 0,
    });
    // Not configured: 404 (the harness's app has no Postmark credentials).
    expect(
      (
        await h.app.inject({
          method: 'POST',
          url: '/hooks/postmark',
          headers: { 'content-type': 'application/json', ...auth },
          payload: JSON.stringify(hard),
        })
      ).statusCode,
    ).toBe(404);
  });
});
