import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PIPELINE_OPTIONS, DeliveryPipeline } from '../../src/sending/deliveries/pipeline.js';
import { SqlDeliveryStore } from '../../src/composition/sql-delivery-store.js';
import { createMailer, type Mailer } from '../../src/mail/transport.js';
import { ConfirmationSender } from '../../src/forms/submissions/confirmations.sender.js';
import { buildApp } from '../../src/app.js';
import { AutomationEngine, DEFAULT_ENGINE } from '../../src/integrations/automations/automations.engine.js';
import { WebhooksService } from '../../src/integrations/webhooks/webhooks.service.js';
import { describeApi } from '../helpers/app.js';
import { insertContact, verifiedDomain } from '../helpers/fixtures.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { startSmtpServer, type Received } from '../helpers/smtp.js';

/**
 * Mail that inboxes trust (docs/deliverability.md): a broadcast of each kind Formcast sends, read back raw from a real
 * SMTP server and scored by SpamAssassin (Debian's package, local rules only: `spamassassin -L -t`): a typical
 * newsletter (HTML and text parts, preview text, one image, links, the footer with a postal address), a short text
 * (a few lines, no image: it goes out without the open pixel), a double opt-in confirmation, a test send, and an
 * automation's send step. Each must score below 1.0. Their DKIM signatures are verified by mailauth, and the tampering
 * oversigning guards against must break them. The newsletter's domain has a verified tracking host: its links and
 * pixel are there. Without SpamAssassin installed (.ci/run installs it), the scoring is reported skipped, with the
 * reason.
 */
const silent = pino({ level: 'silent' });
const NEWSLETTER = fs.readFileSync(
  path.join(import.meta.dirname, '..', 'fixtures', 'deliverability', 'newsletter.html'),
  'utf8',
);

function spamAssassin(): string | null {
  try {
    execFileSync('spamassassin', ['--version'], { stdio: 'ignore' });
    return null;
  } catch {
    return 'spamassassin is not installed (apt-get install spamassassin; .ci/run does)';
  }
}
const saMissing = spamAssassin();
if (saMissing) console.warn(`deliverability scoring skipped: ${saMissing}`);

/** SpamAssassin's score of a raw message and the rules it hit, with local tests only (no network). */
function score(raw: Buffer): { score: number; rules: string } {
  const out = spawnSync('spamassassin', ['-L', '-t'], { input: raw, encoding: 'utf8', timeout: 60_000 });
  const m = /Content analysis details:\s+\((-?\d+(?:\.\d+)?) points/.exec(out.stdout);
  if (!m) throw new Error(`spamassassin gave no score: ${out.stderr || out.stdout.slice(-500)}`);
  return { score: Number(m[1]), rules: out.stdout.slice(out.stdout.indexOf('Content analysis details')) };
}

/** The raw message with `lines` put in front of its headers (what a later hop could add). */
const prepend = (m: Received, lines: string) => Buffer.concat([Buffer.from(lines), m.raw]);

describeApi('deliverability: what is sent scores well and is signed as it should be', (h) => {
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let mailer: Mailer;
  let broadcast: Received;
  let confirmation: Received;
  let short: Received;
  let testSend: Received;
  let automation: Received;
  let dkimRecord: { name: string; value: string };
  let trackingHost: string;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${smtp.port}`, outboxDir: '', maxConnections: 1, rateLimit: 0 });
    const ws = await h.workspace('Acme');
    await h.call(ws.key, 'PUT', '/v1/workspace', {
      settings: { postalAddress: 'Acme Inc., 1 Main Street, Springfield, IL 62701, USA' },
    });
    const domain = await verifiedDomain(h, ws, `acme-news-${h.dbName}.example`);
    dkimRecord = domain.records.find((r: { name: string }) => r.name.includes('._domainkey.'))!;
    // A tracking host whose CNAME a DNS check found (domains.test.ts checks that part through DNS).
    trackingHost = `links.${domain.name}`;
    await h.db.kysely
      .updateTable('domains')
      .set({ tracking_host: trackingHost, tracking_verified_at: new Date().toISOString() })
      .where('id', '=', domain.id)
      .execute();
    await insertContact(h, ws, { email: 'ada@example.com', firstName: 'Ada' });
    const b = (
      await h.call(ws.key, 'POST', '/v1/broadcasts', {
        name: 'November',
        from: `Acme <news@${domain.name}>`,
        replyTo: `hello@${domain.name}`,
        emailContent: {
          subject: 'What is new at Acme in November',
          html: NEWSLETTER,
          previewText: 'Faster exports, a calendar view and dark mode on your phone',
        },
      })
    ).json();
    await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/send`);
    const pipeline = new DeliveryPipeline(
      new SqlDeliveryStore(h.db),
      mailer,
      { ...DEFAULT_PIPELINE_OPTIONS, secret: TEST_SECRET, workerId: 'dl', publicUrl: 'https://mail.acme-news.example' },
      silent as never,
    );
    const drain = async () => {
      for (let i = 0; i < 20 && (await pipeline.materialize()) + (await pipeline.sendBatch()) > 0;) i++;
    };
    await drain();
    broadcast = smtp.received.find((m) => m.to === 'ada@example.com')!;

    // A short text: a few lines and a link, no image (so no open pixel: docs/tracking.md).
    const s = (
      await h.call(ws.key, 'POST', '/v1/broadcasts', {
        name: 'Shipping',
        from: `Acme <news@${domain.name}>`,
        emailContent: {
          subject: 'Your order is on its way',
          html: '<p>Hi {{ contact.firstName | default: "there" }},</p><p>Your order 1042 left our warehouse this morning and should reach you on Thursday. You can follow it on <a href="https://acme-news.example/orders/1042">the order page</a>.</p><p>Thank you for shopping with us,<br>the Acme team</p>',
        },
      })
    ).json();
    await h.call(ws.key, 'POST', `/v1/broadcasts/${s.id}/send`);
    await drain();
    short = smtp.received.find((m) => m.parsed.subject === 'Your order is on its way')!;

    // A test send of the newsletter, through the API of an app that has the transport.
    const app = await buildApp({
      db: h.db,
      logger: false,
      mailer,
      config: { logLevel: 'silent', publicUrl: 'https://mail.acme-news.example', secret: TEST_SECRET },
    });
    await app.ready();
    const tested = await app.inject({
      method: 'POST',
      url: `/v1/broadcasts/${b.id}/test`,
      headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ emails: ['editor@example.com'] }),
    });
    expect(tested.statusCode, tested.body).toBe(200);
    await app.close();
    testSend = smtp.received.find((m) => m.to === 'editor@example.com')!;

    // An automation's send step: a welcome email to a contact who joined.
    const flow = (
      await h.call(ws.key, 'POST', '/v1/automations', {
        name: 'Welcome',
        trigger: { type: 'api' },
        steps: [
          {
            id: 'welcome',
            type: 'send',
            from: `Acme <news@${domain.name}>`,
            emailContent: {
              subject: 'Welcome to Acme, {{ contact.firstName | default: "friend" }}',
              html: '<p>Hi {{ contact.firstName | default: "there" }},</p><p>Thanks for joining Acme. Each month we write about what is new in the app: features, fixes and tips from other teams. If you have a question, just reply to this email and a person will answer.</p><p>Best wishes,<br>Maria from Acme</p>',
            },
          },
        ],
      })
    ).json();
    await h.call(ws.key, 'POST', `/v1/automations/${flow.id}/activate`);
    const lin = await insertContact(h, ws, { email: 'lin@example.com', firstName: 'Lin' });
    await h.call(ws.key, 'POST', `/v1/automations/${flow.id}/trigger`, { contactId: lin });
    const engine = new AutomationEngine(
      h.db,
      new WebhooksService(h.db, { secret: TEST_SECRET, allowHttp: false, allowPrivate: false }),
      { ...DEFAULT_ENGINE, workerId: 'dl-engine', clock: () => Date.now() },
    );
    for (let i = 0; i < 50 && (await engine.intake()) + (await engine.runDue()) > 0; i++);
    await drain();
    automation = smtp.received.find((m) => m.to === 'lin@example.com')!;

    const form = (
      await h.call(ws.key, 'POST', '/v1/forms', {
        name: 'Newsletter',
        type: 'SIGN_UP',
        slug: `dl-${h.dbName}`,
        fieldMapping: { email: 'email', first_name: 'firstName' },
        settings: { doubleOptIn: true },
      })
    ).json();
    await h.call(ws.key, 'POST', `/v1/forms/${form.id}/publish`);
    await h.app.inject({
      method: 'POST',
      url: `/f/dl-${h.dbName}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'email=grace%40example.com&first_name=Grace',
    });
    await new ConfirmationSender(
      h.db,
      mailer,
      'https://mail.acme-news.example',
      silent as never,
      TEST_SECRET,
    ).sendDue();
    confirmation = smtp.received.find((m) => m.to === 'grace@example.com')!;
  });
  afterAll(async () => {
    await mailer?.close();
    await smtp?.close();
  });

  const verify = async (raw: Buffer) =>
    (
      await dkimVerify(raw, {
        resolver: async (name: string) => (name === dkimRecord.name ? [[dkimRecord.value]] : []),
      })
    ).results[0]?.status.result;

  describe.skipIf(saMissing !== null)(`SpamAssassin${saMissing ? ` [skipped: ${saMissing}]` : ''}`, () => {
    it('a typical broadcast scores below 1.0', () => {
      expect(broadcast.parsed.attachments).toEqual([]);
      expect(broadcast.parsed.text).toContain('Acme Inc., 1 Main Street');
      const { score: s, rules } = score(broadcast.raw);
      console.info(`SpamAssassin score of a typical broadcast [${h.dbName}]: ${s}`);
      expect(s, rules).toBeLessThan(1.0);
    });
    it('a confirmation email scores below 1.0', () => {
      const { score: s, rules } = score(confirmation.raw);
      console.info(`SpamAssassin score of a confirmation email [${h.dbName}]: ${s}`);
      expect(s, rules).toBeLessThan(1.0);
    });
    it('a short text broadcast scores below 1.0 (no pixel: no HTML_IMAGE_ONLY)', () => {
      const { score: s, rules } = score(short.raw);
      console.info(`SpamAssassin score of a short text broadcast [${h.dbName}]: ${s}`);
      expect(rules).not.toMatch(/HTML_IMAGE_ONLY/);
      expect(s, rules).toBeLessThan(1.0);
    });
    it('a test send scores below 1.0', () => {
      const { score: s, rules } = score(testSend.raw);
      console.info(`SpamAssassin score of a test send [${h.dbName}]: ${s}`);
      expect(s, rules).toBeLessThan(1.0);
    });
    it("an automation's send step scores below 1.0", () => {
      const { score: s, rules } = score(automation.raw);
      console.info(`SpamAssassin score of an automation email [${h.dbName}]: ${s}`);
      expect(rules).not.toMatch(/HTML_IMAGE_ONLY/);
      expect(s, rules).toBeLessThan(1.0);
    });
  });

  it("the newsletter tracks through its domain's tracking host; the short text goes without a pixel", () => {
    const html = String(broadcast.parsed.html);
    const tracked = [...html.matchAll(/href="(https:\/\/[^"]+\/t\/c\/[^"]+)"/g)].map((m) => new URL(m[1]!).host);
    expect(tracked.length).toBeGreaterThan(0);
    expect(new Set(tracked)).toEqual(new Set([trackingHost]));
    expect(html).toMatch(new RegExp(`<img src="https://${trackingHost.replace(/\./g, '\\.')}/t/o/`));
    // The unsubscribe link stays on PUBLIC_URL (it must work even without the tracking host).
    expect(html).toContain('https://mail.acme-news.example/unsubscribe/');
    expect(String(short.parsed.html)).not.toContain('/t/o/');
    expect(String(short.parsed.html)).toContain(`https://${trackingHost}/t/c/`);
  });

  it('all are DKIM-signed for the sending domain; oversigning makes an added header break the signature', async () => {
    for (const m of [broadcast, confirmation, short, testSend, automation]) expect(await verify(m.raw)).toBe('pass');
    // A second Content-Type put in front changes how the message parses; Cc and Sender change what it shows.
    expect(await verify(prepend(broadcast, 'Content-Type: text/plain; charset=us-ascii\r\n'))).not.toBe('pass');
    expect(await verify(prepend(broadcast, 'Cc: everyone@example.com\r\n'))).not.toBe('pass');
    expect(await verify(prepend(broadcast, 'Sender: Your Bank <alerts@bank.example>\r\n'))).not.toBe('pass');
    expect(await verify(prepend(automation, 'Content-Type: text/html\r\n'))).not.toBe('pass');
    // A second Subject, From or Reply-To put in front (where a reader's client would show it) must not verify.
    expect(await verify(prepend(broadcast, 'Subject: You won a prize\r\n'))).not.toBe('pass');
    expect(await verify(prepend(broadcast, 'From: Your Bank <alerts@bank.example>\r\n'))).not.toBe('pass');
    expect(await verify(prepend(broadcast, 'Reply-To: thief@evil.example\r\n'))).not.toBe('pass');
    expect(await verify(prepend(broadcast, 'List-Unsubscribe: <https://evil.example/u>\r\n'))).not.toBe('pass');
    expect(await verify(prepend(confirmation, 'Reply-To: thief@evil.example\r\n'))).not.toBe('pass');
    // A header nobody signs (a trace header a relay adds) does not break it.
    expect(
      await verify(
        prepend(broadcast, 'Received: from relay.example.net by mx.example.com; Tue, 24 Nov 2026 09:00:00 +0000\r\n'),
      ),
    ).toBe('pass');
  });

  it('the broadcast carries what mailbox providers look for', () => {
    const header = (name: string) => broadcast.parsed.headerLines.find((l) => l.key === name)?.line ?? '';
    expect(header('list-unsubscribe')).toContain('mailto:unsubscribe+');
    expect(header('list-unsubscribe-post')).toContain('List-Unsubscribe=One-Click');
    expect(header('feedback-id')).toMatch(/:formcast$/);
    expect(header('precedence')).toBe('Precedence: bulk');
    expect(broadcast.mailFrom).toMatch(/^bounces\+d[0-9a-z]{38}@bounces\./);
    expect(String(broadcast.parsed.html)).toMatch(/^<!doctype html>/);
    expect(broadcast.parsed.text).toContain('The new calendar view, showing a week of tasks by colour'); // the image's alt text
    expect(broadcast.parsed.text!.match(/\/unsubscribe\//g)).toHaveLength(1);
    expect(broadcast.parsed.text).toContain('\n-- \n');
  });
});
