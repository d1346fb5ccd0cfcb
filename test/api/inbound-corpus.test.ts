import fs from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseInbound } from '../../src/sending/bounces/bounces.parse.js';
import { InboundProcessor, type InboundOutcome } from '../../src/sending/bounces/bounces.inbound.js';
import { startInboundServer, type InboundServer } from '../../src/sending/bounces/bounces.server.js';
import { reportRules } from '../../src/sending/bounces/bounces.service.js';
import { DEFAULT_PIPELINE_OPTIONS, DeliveryPipeline } from '../../src/sending/deliveries/pipeline.js';
import { SqlDeliveryStore } from '../../src/composition/sql-delivery-store.js';
import { createMailer, type Mailer } from '../../src/mail/transport.js';
import { UnsubscribeService } from '../../src/sending/unsubscribe/unsubscribe.service.js';
import { describeApi } from '../helpers/app.js';
import { insertContact, verifiedDomain } from '../helpers/fixtures.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { startSmtpServer, type Received } from '../helpers/smtp.js';

/**
 * The corpus of real-world report shapes (test/fixtures/inbound/corpus, issue 32): DSNs and plain bounces of Gmail,
 * Outlook/Exchange, Yahoo/AOL, iCloud, Postfix, Exim, qmail and Sendmail, with and without status codes; delays;
 * success notices; complaint loops (Yahoo CFL, Microsoft JMRP) at the fixed `fbl@`/`abuse@` addresses, proved or not;
 * `postmaster@`; auto-replies and challenge-response; the List-Unsubscribe mailto; DMARC aggregate reports as XML, gzip
 * and zip at `dmarc@`. Each is sent by a real SMTP client to the inbound listener at the address its manifest names,
 * for its own recipient of a real broadcast (signed by the pipeline), and what happened is read back: the listener's
 * outcome, the delivery, the contact, the review list, the DMARC rows. The classifier's accuracy over the corpus is
 * printed (and must be 100%).
 */
const DIR = path.join(import.meta.dirname, '..', 'fixtures', 'inbound', 'corpus');
/** The sending domain of every shape: the DMARC reports are compressed, so they name it literally. */
const DOMAIN = 'acme-corpus.test';

type Outcome =
  'hard' | 'soft' | 'blocked' | 'failed' | 'complaint' | 'delay' | 'auto_reply' | 'kept' | 'unsubscribe' | 'dmarc';

interface Entry {
  file: string;
  receiver: string;
  shape: string;
  to: 'bounces' | 'unsubscribe' | 'postmaster' | 'abuse' | 'fbl' | 'dmarc';
  expected: {
    outcome: Outcome;
    status?: string;
    reportId?: string;
    messages?: number;
    fail?: number;
    duplicate?: boolean;
  };
}

const manifest = JSON.parse(fs.readFileSync(path.join(DIR, 'manifest.json'), 'utf8')) as Entry[];

describe('the inbound corpus: its manifest', () => {
  it(`has at least 40 shapes, each file present (found ${manifest.length})`, () => {
    expect(manifest.length).toBeGreaterThanOrEqual(40);
    for (const e of manifest) expect(fs.existsSync(path.join(DIR, e.file)), e.file).toBe(true);
    expect(new Set(manifest.map((e) => e.file)).size).toBe(manifest.length);
  });

  it("covers each receiver the issue names, delays, code-less bounces, both complaint loops, auto-replies, challenge-response and DMARC's three encodings", () => {
    const has = (re: RegExp) => manifest.filter((e) => re.test(`${e.receiver} ${e.shape} ${e.file}`)).length;
    for (const r of [
      /gmail/i,
      /outlook|exchange|microsoft 365/i,
      /yahoo/i,
      /icloud/i,
      /postfix/i,
      /exim/i,
      /qmail/i,
      /sendmail/i,
    ])
      expect(has(r), String(r)).toBeGreaterThanOrEqual(2);
    expect(manifest.filter((e) => e.expected.outcome === 'delay').length).toBeGreaterThanOrEqual(4);
    expect(
      manifest.filter((e) => /without (a|an enhanced) (status )?code|no code|code-?less/i.test(e.shape)).length,
    ).toBeGreaterThanOrEqual(6);
    expect(has(/Yahoo CFL/)).toBeGreaterThanOrEqual(1);
    expect(has(/Microsoft JMRP/)).toBeGreaterThanOrEqual(2);
    expect(has(/auto-?repl|out-of-office|vacation/i)).toBeGreaterThanOrEqual(3);
    expect(has(/challenge-response/)).toBeGreaterThanOrEqual(3);
    for (const enc of [/zip/, /gzip/, /plain XML/]) expect(has(enc), String(enc)).toBeGreaterThanOrEqual(1);
  });
});

/** The placeholders of a shape, from what the recipient (and a neighbour) really received. */
interface Seen {
  recipient: string;
  token: string;
  deliveryId: string;
  unsubscribe: string;
  headers: string;
  message: string;
}

function fill(text: string, me: Seen, other: Seen): string {
  const tampered = other.headers.replace(/^Subject: .*$/m, 'Subject: Hi (edited)');
  return text
    .replaceAll('{{ORIGINAL_HEADERS_OF_OTHER_TAMPERED}}', tampered)
    .replaceAll('{{ORIGINAL_HEADERS}}', me.headers)
    .replaceAll('{{ORIGINAL_MESSAGE}}', me.message)
    .replaceAll('{{UNSUBSCRIBE_ADDRESS}}', me.unsubscribe)
    .replaceAll('{{OTHER_TOKEN}}', other.token)
    .replaceAll('{{RECIPIENT}}', me.recipient)
    .replaceAll('{{TOKEN}}', me.token)
    .replaceAll('{{DOMAIN}}', DOMAIN)
    .replaceAll('{{DELIVERY_ID}}', me.deliveryId)
    .replace(/\r?\n/g, '\r\n');
}

function seenBy(m: Received): Seen {
  const raw = m.raw.toString('utf8');
  const end = raw.indexOf('\r\n\r\n');
  return {
    recipient: m.to,
    token: m.mailFrom.split('@')[0]!.slice('bounces+'.length),
    deliveryId: m.parsed.messageId!.slice(1).split('@')[0]!,
    unsubscribe: /<mailto:(unsubscribe\+[a-z0-9]+@[^?>]+)\?/.exec(
      m.parsed.headerLines.find((l) => l.key === 'list-unsubscribe')!.line,
    )![1]!,
    headers: raw.slice(0, end),
    message: raw,
  };
}

describeApi('the inbound corpus through the listener', (h) => {
  let sink: Awaited<ReturnType<typeof startSmtpServer>>;
  let mailer: Mailer;
  let inbound: InboundServer;
  let client: ReturnType<typeof nodemailer.createTransport>;
  const lines: { msg: string; rcptTo?: string; outcome?: InboundOutcome }[] = [];

  beforeAll(async () => {
    sink = await startSmtpServer();
    mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${sink.port}`, outboxDir: '', maxConnections: 2, rateLimit: 0 });
    const log = pino({ level: 'info' }, { write: (l: string) => lines.push(JSON.parse(l) as (typeof lines)[number]) });
    const processor = new InboundProcessor(
      h.db,
      TEST_SECRET,
      reportRules(),
      new UnsubscribeService(h.db),
      log as never,
    );
    inbound = await startInboundServer({ port: 0, host: '127.0.0.1', processor, log: log as never });
    client = nodemailer.createTransport({ host: '127.0.0.1', port: inbound.port, secure: false, ignoreTLS: true });
  });
  afterAll(async () => {
    client?.close();
    await inbound?.close();
    await mailer?.close();
    await sink?.close();
  });

  it('each shape, sent to the address its manifest names, comes out as the manifest says: the classifier is 100% accurate on the corpus', async () => {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, DOMAIN);
    const emails = manifest.map((_, i) => `r${i}@example.com`);
    for (const e of emails) await insertContact(h, ws, { email: e });
    const b = (
      await h.call(ws.key, 'POST', '/v1/broadcasts', {
        name: 'News',
        from: `Acme <news@${DOMAIN}>`,
        emailContent: { subject: 'Hi', text: 'Hello, this is our newsletter.' },
      })
    ).json();
    await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/send`);
    const pipeline = new DeliveryPipeline(
      new SqlDeliveryStore(h.db),
      mailer,
      { ...DEFAULT_PIPELINE_OPTIONS, secret: TEST_SECRET, workerId: 'corpus', publicUrl: 'https://m.test' },
      pino({ level: 'silent' }) as never,
    );
    for (let i = 0; i < 50 && (await pipeline.materialize()) + (await pipeline.sendBatch()) > 0;) i++;
    const seen = emails.map((e) => seenBy(sink.received.find((m) => m.to === e)!));

    const k = h.db.kysely;
    const state = async (email: string) => {
      const c = await k
        .selectFrom('contacts')
        .select(['id', 'status'])
        .where('workspace_id', '=', ws.id)
        .where('email', '=', email)
        .executeTakeFirstOrThrow();
      const d = await k
        .selectFrom('deliveries')
        .select(['status', 'bounce_class', 'soft_bounced_at', 'complained_at'])
        .where('contact_id', '=', c.id)
        .executeTakeFirstOrThrow();
      return { contact: c.status, ...d };
    };
    /** What the state says happened, in the manifest's words, and whether the rest of the state agrees. */
    const observe = async (e: Entry, i: number, outcome: InboundOutcome | undefined): Promise<string> => {
      const s = await state(emails[i]!);
      const untouched =
        s.contact === 'SUBSCRIBED' && s.status === 'SENT' && s.bounce_class === null && s.complained_at === null;
      if (!outcome) return 'no outcome logged';
      switch (outcome.result) {
        case 'bounce':
          if (s.bounce_class === 'hard' && s.contact === 'BOUNCED' && s.status === 'BOUNCED') return 'hard';
          if (s.bounce_class === 'soft' && s.soft_bounced_at && s.contact === 'SUBSCRIBED' && s.status === 'SENT')
            return 'soft';
          if ((s.bounce_class === 'blocked' || s.bounce_class === 'failed') && s.status === 'FAILED')
            return s.contact === 'SUBSCRIBED' ? s.bounce_class : `${s.bounce_class} (contact ${s.contact})`;
          return `bounce with state ${JSON.stringify(s)}`;
        case 'complaint':
          return s.contact === 'COMPLAINED' && s.complained_at
            ? 'complaint'
            : `complaint with state ${JSON.stringify(s)}`;
        case 'unsubscribed':
          return s.contact === 'UNSUBSCRIBED' ? 'unsubscribe' : `unsubscribe with state ${JSON.stringify(s)}`;
        case 'ignored': {
          const what = outcome.why.startsWith('a delay') ? 'delay' : 'auto_reply';
          return untouched ? what : `${what} with state ${JSON.stringify(s)}`;
        }
        case 'kept':
          return untouched ? 'kept' : `kept with state ${JSON.stringify(s)}`;
        case 'dmarc':
          return untouched ? 'dmarc' : `dmarc with state ${JSON.stringify(s)}`;
      }
    };

    const results: { file: string; receiver: string; expected: string; got: string; detail: string }[] = [];
    for (const [i, e] of manifest.entries()) {
      const me = seen[i]!;
      const other = seen[(i + 1) % seen.length]!;
      const raw = fill(fs.readFileSync(path.join(DIR, e.file), 'utf8'), me, other);
      const to =
        e.to === 'bounces'
          ? `bounces+${me.token}@bounces.${DOMAIN}`
          : e.to === 'unsubscribe'
            ? me.unsubscribe
            : `${e.to}@bounces.${DOMAIN}`;
      const before = lines.length;
      await client.sendMail({ envelope: { from: e.to === 'unsubscribe' ? me.recipient : '', to: [to] }, raw });
      const outcome = lines.slice(before).find((l) => l.msg === 'inbound message' && l.rcptTo === to)?.outcome;
      let got = await observe(e, i, outcome);
      let detail = outcome ? JSON.stringify(outcome).slice(0, 200) : '';
      // What the parser read: the status of a bounce, as the manifest says it.
      if (e.expected.status !== undefined && got === e.expected.outcome) {
        const report = await parseInbound(Buffer.from(raw));
        const status = report.kind === 'bounce' ? report.results[0]!.status : null;
        if (status !== e.expected.status) got = `${got} with status ${status}`;
      }
      // A kept message is on the review list, at the address it came to.
      if (e.expected.outcome === 'kept' && got === 'kept') {
        const kept = await k
          .selectFrom('inbound_messages')
          .select('reason')
          .where('workspace_id', '=', ws.id)
          .where('rcpt_to', '=', to)
          .orderBy('id', 'desc')
          .executeTakeFirst();
        if (!kept) got = 'kept but not listed';
        else detail = kept.reason;
      }
      // A DMARC report's records are stored, once.
      if (e.expected.outcome === 'dmarc' && got === 'dmarc' && outcome?.result === 'dmarc') {
        if (e.expected.duplicate) {
          if (outcome.reports !== 0 || outcome.duplicates !== 1) got = `dmarc stored ${outcome.reports} again`;
        } else {
          const rows = await k
            .selectFrom('dmarc_rows')
            .innerJoin('dmarc_reports', 'dmarc_reports.id', 'dmarc_rows.report_id')
            .select(['dmarc_rows.messages', 'dmarc_rows.dmarc'])
            .where('dmarc_reports.workspace_id', '=', ws.id)
            .where('dmarc_reports.report_id', '=', e.expected.reportId!)
            .execute();
          const messages = rows.reduce((n, r) => n + Number(r.messages), 0);
          const fail = rows.filter((r) => r.dmarc === 'fail').reduce((n, r) => n + Number(r.messages), 0);
          if (messages !== e.expected.messages || fail !== e.expected.fail)
            got = `dmarc with ${messages} messages, ${fail} failing`;
        }
      }
      results.push({ file: e.file, receiver: e.receiver, expected: e.expected.outcome, got, detail });
    }

    const right = results.filter((r) => r.got === r.expected);
    const accuracy = right.length / results.length;
    const lines_ = results.map(
      (r) =>
        `${r.got === r.expected ? 'ok  ' : 'MISS'} ${r.file.padEnd(48)} ${r.expected.padEnd(11)} ${r.got === r.expected ? '' : r.got}`,
    );
    console.log(
      `inbound corpus [${h.dbName}]: ${right.length}/${results.length} shapes classified as expected (${(accuracy * 100).toFixed(1)}%)\n${lines_.join('\n')}`,
    );
    const out = path.join(import.meta.dirname, '..', '..', 'test-output');
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(
      path.join(out, `inbound-corpus-${h.dbName}.json`),
      JSON.stringify({ accuracy, right: right.length, total: results.length, results }, null, 2),
    );
    expect(results.filter((r) => r.got !== r.expected)).toEqual([]);

    // What the API shows of the DMARC reports: the three distinct ones, their sources and why they failed.
    const dmarc = (await h.call(ws.key, 'GET', `/v1/domains/${domain.id}/dmarc?from=2026-11-22&to=2026-11-23`)).json();
    const unique = manifest.filter((e) => e.expected.outcome === 'dmarc' && !e.expected.duplicate);
    expect(dmarc.summary).toMatchObject({
      messages: unique.reduce((n, e) => n + e.expected.messages!, 0),
      fail: unique.reduce((n, e) => n + e.expected.fail!, 0),
      reports: unique.length,
      reporters: ['Enterprise Outlook', 'google.com', 'mx.example.net'],
    });
    const crm = dmarc.sources.find((s: { ip: string }) => s.ip === '198.51.100.23');
    expect(crm).toMatchObject({ messages: 16, fail: 16, quarantined: 16 });
    expect(crm.why[0].reason).toMatch(
      /DKIM signed by crm-mailer\.net, not by acme-corpus\.test; SPF passes for crm-mailer\.net/,
    );
    expect(dmarc.sources[0]).toMatchObject({ ip: '203.0.113.7', messages: 210, fail: 0 });

    // Everything kept is on the review list.
    const kept = (await h.call(ws.key, 'GET', '/v1/inbound?limit=100')).json().data;
    expect(kept).toHaveLength(manifest.filter((e) => e.expected.outcome === 'kept').length);
  }, 120_000);
});
