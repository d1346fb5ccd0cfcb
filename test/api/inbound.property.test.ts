import fc from 'fast-check';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { InboundProcessor } from '../../src/sending/bounces/bounces.inbound.js';
import { startInboundServer, type InboundServer } from '../../src/sending/bounces/bounces.server.js';
import { reportRules } from '../../src/sending/bounces/bounces.service.js';
import { DEFAULT_PIPELINE_OPTIONS, DeliveryPipeline } from '../../src/sending/deliveries/pipeline.js';
import { SqlDeliveryStore } from '../../src/composition/sql-delivery-store.js';
import { newId } from '../../src/lib/ids.js';
import { createMailer, type Mailer } from '../../src/mail/transport.js';
import { UnsubscribeService } from '../../src/sending/unsubscribe/unsubscribe.service.js';
import { describeApi } from '../helpers/app.js';
import { insertContact, verifiedDomain } from '../helpers/fixtures.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { startSmtpServer } from '../helpers/smtp.js';

/**
 * A sweep of the inbound listener (issue 29): generated ARF and DSN reports, each sent by a real SMTP client to one
 * subscriber's own bounce address, naming in their original message any mix of that subscriber's message, a
 * neighbour's, an id of ours that exists nowhere, a foreign Message-ID, valid, forged and damaged VERP tokens. Whatever
 * the mix, the neighbours are never touched, a report is applied only when everything inside agrees with its address,
 * and otherwise it is kept for review; no error is logged.
 */
describeApi("inbound listener sweep: generated reports sent to one's own bounce address", (h) => {
  let sink: Awaited<ReturnType<typeof startSmtpServer>>;
  let mailer: Mailer;
  let inbound: InboundServer;
  let client: ReturnType<typeof nodemailer.createTransport>;
  const errors: string[] = [];

  beforeAll(async () => {
    sink = await startSmtpServer();
    mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${sink.port}`, outboxDir: '', maxConnections: 2, rateLimit: 0 });
    const log = pino(
      { level: 'warn' },
      {
        write: (l: string) => {
          if ((JSON.parse(l) as { level: number }).level >= 50) errors.push(l);
        },
      },
    );
    inbound = await startInboundServer({
      port: 0,
      host: '127.0.0.1',
      processor: new InboundProcessor(h.db, TEST_SECRET, reportRules(), new UnsubscribeService(h.db), log as never),
      log: log as never,
    });
    client = nodemailer.createTransport({
      host: '127.0.0.1',
      port: inbound.port,
      secure: false,
      ignoreTLS: true,
      pool: true,
    });
  });
  afterAll(async () => {
    client?.close();
    await inbound?.close();
    await mailer?.close();
    await sink?.close();
  });

  it('never touches a neighbour; applies a report only when its original agrees with its address; keeps the rest', async () => {
    const ws = await h.workspace();
    const domain = (await verifiedDomain(h, ws, `sw${ws.id.slice(-8).toLowerCase()}.test`)).name;
    const emails = ['me@example.com', 'n1@example.com', 'n2@example.com'];
    for (const e of emails) await insertContact(h, ws, { email: e });
    const b = (
      await h.call(ws.key, 'POST', '/v1/broadcasts', {
        name: 'N',
        from: `news@${domain}`,
        emailContent: { subject: 'Hi', text: 'x' },
      })
    ).json();
    await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/send`);
    const pipeline = new DeliveryPipeline(
      new SqlDeliveryStore(h.db),
      mailer,
      { ...DEFAULT_PIPELINE_OPTIONS, secret: TEST_SECRET, workerId: 'sw', publicUrl: 'https://m.test' },
      pino({ level: 'silent' }) as never,
    );
    for (let i = 0; i < 50 && (await pipeline.materialize()) + (await pipeline.sendBatch()) > 0;) i++;
    const who = emails.map((e) => {
      const m = sink.received.find((r) => r.to === e)!;
      return {
        address: m.mailFrom,
        token: m.mailFrom.split('@')[0]!.slice('bounces+'.length),
        deliveryId: m.parsed.messageId!.slice(1).split('@')[0]!,
      };
    });
    const me = who[0]!;
    const flip = (t: string) => t.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a'));

    // What the original names: [Message-ID, whether it is another message of ours].
    const messageId = fc.constantFrom(
      [`<${me.deliveryId}@${domain}>`, false],
      [`<${who[1]!.deliveryId}@${domain}>`, true],
      [`<${who[2]!.deliveryId}@other.test>`, true],
      [`<${newId('dlv')}@${domain}>`, true],
      [`<${newId('cnf')}.1@${domain}>`, true],
      ['<0102018f.abc@email.amazonses.com>', false],
      [null, false],
    );
    // A Return-Path or Original-Mail-From: [address or null, whether it names another message or does not verify].
    const sender = fc.constantFrom(
      [me.address, false],
      [me.address.toUpperCase(), false],
      [who[1]!.address, true],
      [`bounces+${flip(me.token)}@bounces.${domain}`, true],
      [`bounces+x@bounces.${domain}`, true],
      ['<>', false],
      ['someone@example.net', false],
      [null, false],
    );
    const text = fc.stringMatching(/^[a-zA-Z0-9 .,!?-]{0,120}$/);
    const report = fc.record({
      kind: fc.constantFrom('arf', 'dsn'),
      headersOnly: fc.boolean(),
      messageId,
      returnPath: sender,
      mailFrom: sender,
      subject: fc.string({ maxLength: 60 }),
      text,
    });

    let runs = 0;
    let kept = 0;
    let applied = 0;
    const inboundCount = async () =>
      (
        await h.db.kysely
          .selectFrom('inbound_messages')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('workspace_id', '=', ws.id)
          .executeTakeFirstOrThrow()
      ).n;
    await fc.assert(
      fc.asyncProperty(report, async (r) => {
        runs++;
        const original = [
          r.returnPath[0] !== null ? `Return-Path: <${r.returnPath[0].replace(/^<>$/, '')}>` : null,
          `From: Acme <news@${domain}>`,
          'To: me@example.com',
          'Subject: Hi',
          r.messageId[0] !== null ? `Message-ID: ${r.messageId[0]}` : null,
          'MIME-Version: 1.0',
          'Content-Type: text/plain; charset=utf-8',
        ]
          .filter((l) => l !== null)
          .join('\r\n');
        const middle =
          r.kind === 'arf'
            ? [
                'Content-Type: message/feedback-report',
                '',
                'Feedback-Type: abuse',
                'User-Agent: sweep/1',
                'Version: 1',
                ...(r.mailFrom[0] !== null ? [`Original-Mail-From: <${r.mailFrom[0].replace(/^<>$/, '')}>`] : []),
                'Original-Rcpt-To: <me@example.com>',
              ]
            : [
                'Content-Type: message/delivery-status',
                '',
                'Reporting-MTA: dns; mx.example.net',
                '',
                'Final-Recipient: rfc822; me@example.com',
                'Action: failed',
                'Status: 5.1.1',
                'Diagnostic-Code: smtp; 550 5.1.1 user unknown',
              ];
        const raw = [
          'From: reports@mx.example.net',
          `To: ${me.address}`,
          `Subject: ${r.subject.replace(/[\r\n]/g, ' ')}`,
          'MIME-Version: 1.0',
          `Content-Type: multipart/report; report-type=${r.kind === 'arf' ? 'feedback-report' : 'delivery-status'}; boundary="sweep-b"`,
          '',
          '--sweep-b',
          'Content-Type: text/plain; charset=utf-8',
          '',
          `A report. ${r.text}`,
          '',
          '--sweep-b',
          ...middle,
          '',
          '--sweep-b',
          `Content-Type: ${r.headersOnly ? 'text/rfc822-headers' : 'message/rfc822'}`,
          '',
          original,
          '',
          ...(r.headersOnly ? [] : ['Hello', '']),
          '--sweep-b--',
          '',
        ].join('\r\n');
        const conflict = r.messageId[1] || r.returnPath[1] || (r.kind === 'arf' && r.mailFrom[1]);
        const before = await inboundCount();
        await client.sendMail({ envelope: { from: '', to: [me.address] }, raw });
        const after = await inboundCount();
        expect(Number(after) - Number(before), JSON.stringify(r)).toBe(conflict ? 1 : 0);
        if (conflict) kept++;
        else applied++;
        for (const e of emails.slice(1)) {
          const c = await h.db.kysely
            .selectFrom('contacts')
            .select('status')
            .where('workspace_id', '=', ws.id)
            .where('email', '=', e)
            .executeTakeFirstOrThrow();
          expect(c.status, e).toBe('SUBSCRIBED');
        }
      }),
      { numRuns: 120 },
    );
    expect(errors).toEqual([]);
    expect(
      await h.db.kysely.selectFrom('suppressions').select('email').where('workspace_id', '=', ws.id).execute(),
    ).toEqual(applied ? [{ email: 'me@example.com' }] : []);
    console.info(
      `inbound sweep (${h.dbName}): ${runs} generated reports, ${kept} kept for review, ${applied} applied to the sender's own delivery, 0 neighbours touched`,
    );
  }, 120_000);
});
