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
import { describeApi } from '../helpers/app.js';
import { insertContact, verifiedDomain } from '../helpers/fixtures.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { startSmtpServer, type Received } from '../helpers/smtp.js';

/**
 * Mail that inboxes trust (docs/bounces.md): a typical broadcast (HTML and text parts, preview text, one image,
 * links, the footer with a postal address) and a confirmation email, each read back raw from a real SMTP server
 * and scored by SpamAssassin (Debian's package, local rules only: `spamassassin -L -t`). Each must score below
 * 1.0. Their DKIM signatures are verified by mailauth, and the tampering oversigning guards against must break
 * them. Without SpamAssassin installed (.ci/run installs it), the scoring is reported skipped, with the reason.
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
  let dkimRecord: { name: string; value: string };

  beforeAll(async () => {
    smtp = await startSmtpServer();
    mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${smtp.port}`, outboxDir: '', maxConnections: 1, rateLimit: 0 });
    const ws = await h.workspace('Acme');
    await h.call(ws.key, 'PUT', '/v1/workspace', {
      settings: { postalAddress: 'Acme Inc., 1 Main Street, Springfield, IL 62701, USA' },
    });
    const domain = await verifiedDomain(h, ws, `acme-news-${h.dbName}.example`);
    dkimRecord = domain.records.find((r: { name: string }) => r.name.includes('._domainkey.'))!;
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
    for (let i = 0; i < 20 && (await pipeline.materialize()) + (await pipeline.sendBatch()) > 0;) i++;
    broadcast = smtp.received.find((m) => m.to === 'ada@example.com')!;

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
  });

  it('both are DKIM-signed for the sending domain; oversigning makes an added header break the signature', async () => {
    expect(await verify(broadcast.raw)).toBe('pass');
    expect(await verify(confirmation.raw)).toBe('pass');
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
