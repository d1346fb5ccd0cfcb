/**
 * The baseline of `npm run bench:send`, run as a child process (`node --import tsx bench/send-baseline.ts`):
 * nodemailer's pooled SMTP transport, used directly, pushing COUNT pre-rendered messages to the sink, each
 * DKIM-signed with the benchmark domain's key (BENCH_DKIM_DOMAIN, BENCH_DKIM_SELECTOR, BENCH_DKIM_KEY: the
 * benchmark reads them from its database, domains.name, dkim_selector, dkim_private_key). No database work per message, no template rendering: the messages have
 * the shape and size of what Formcast sends for the benchmark broadcast (the same From, Subject, HTML with the
 * unsubscribe footer, text part, Message-ID form, List-Unsubscribe headers, the same signed header list), and
 * only the recipient's name, address, Message-ID and unsubscribe link differ, spliced into strings rendered once.
 * Sent with the same pool size (maxConnections) and the same number of messages in flight as Formcast's worker.
 *
 * Environment: BENCH_DKIM_DOMAIN, BENCH_DKIM_SELECTOR, BENCH_DKIM_KEY, SMTP_URL (smtp://127.0.0.1:PORT), BENCH_COUNT,
 * BENCH_MAX_CONNECTIONS, BENCH_CONCURRENCY, BENCH_SUBJECT, BENCH_HTML (the broadcast's templates), PUBLIC_URL.
 * Prints one JSON line: { sent, failed, firstError, elapsedMs, vmHwmKb }.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import nodemailer from 'nodemailer';
import { assembleContent } from '../src/sending/deliveries/message.assembly.js';
import { SIGNED } from '../src/mail/dkim.js';
import { DEFAULT_SETTINGS } from '../src/access/workspaces/workspaces.schemas.js';

function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

const count = Number(env('BENCH_COUNT'));
const maxConnections = Number(env('BENCH_MAX_CONNECTIONS'));
const concurrency = Number(env('BENCH_CONCURRENCY'));
const smtpUrl = new URL(env('SMTP_URL'));
const publicUrl = env('PUBLIC_URL');
const subjectTpl = env('BENCH_SUBJECT');
const htmlTpl = env('BENCH_HTML');
const NAME = '{{ contact.firstName }}';

const key = {
  name: env('BENCH_DKIM_DOMAIN'),
  dkim_selector: env('BENCH_DKIM_SELECTOR'),
  dkim_private_key: env('BENCH_DKIM_KEY'),
};

// Rendered once, with markers where the per-recipient values go; per message only string joins.
const NAME_MARK = '\u0001NAME\u0001';
const URL_MARK = '\u0001URL\u0001';
const subjectParts = subjectTpl.split(NAME);
const rendered = htmlTpl.split(NAME).join(NAME_MARK);
const assembled = assembleContent(
  { subject: subjectTpl, html: rendered, text: null, previewText: null },
  { unsubscribeUrl: URL_MARK, workspace: { name: 'Bench', settings: DEFAULT_SETTINGS } },
);
const html = assembled.html!;
const text = assembled.text;
const splice = (s: string) => s.split(NAME_MARK).map((p) => p.split(URL_MARK));
const htmlParts = splice(html);
const textParts = splice(text);
const fill = (parts: string[][], name: string, url: string) => parts.map((p) => p.join(url)).join(name);

const transport = nodemailer.createTransport({
  pool: true,
  host: smtpUrl.hostname,
  port: Number(smtpUrl.port),
  secure: false,
  maxConnections,
  maxMessages: Infinity,
  connectionTimeout: 15_000,
  greetingTimeout: 15_000,
  socketTimeout: 60_000,
});

// BENCH_KEY_OBJECT=1 hands nodemailer a parsed KeyObject (as Formcast's transport does) instead of the PEM text
// nodemailer's documentation shows; crypto then skips parsing the key for every signature.
const privateKey =
  process.env.BENCH_KEY_OBJECT === '1'
    ? (crypto.createPrivateKey(key.dkim_private_key) as unknown as string)
    : key.dkim_private_key;
const dkim = { domainName: key.name, keySelector: key.dkim_selector, privateKey, headerFieldNames: SIGNED.join(':') };

function message(n: number) {
  const name = `First${n}`;
  const token = `tok${String(n).padStart(29, '0')}`; // 32 characters, as a real token
  const url = `${publicUrl}/unsubscribe/${token}`;
  return {
    from: `Acme <news@${key.name}>`,
    to: `user${String(n).padStart(7, '0')}@example.test`,
    subject: subjectParts.join(name),
    html: fill(htmlParts, name, url),
    text: fill(textParts, name, url),
    messageId: `<dlv_${String(n).padStart(26, '0')}@${key.name}>`,
    headers: { 'List-Unsubscribe': `<${url}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    dkim,
  };
}

let next = 0;
let sent = 0;
let failed = 0;
let firstError: string | null = null;
const started = Date.now();
// The CPU of the sending only (not of loading the program through tsx).
const cpuAtStart = process.cpuUsage();
async function lane() {
  while (next < count) {
    const n = next++;
    try {
      await transport.sendMail(message(n));
      sent++;
    } catch (err) {
      failed++;
      firstError ??= (err as Error).message;
    }
  }
}
await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
const elapsedMs = Date.now() - started;
transport.close();
const vmHwmKb = Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0);
const cpu = process.cpuUsage(cpuAtStart);
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
process.stdout.write(`${JSON.stringify({ sent, failed, firstError, elapsedMs, vmHwmKb, cpuSeconds })}\n`);
process.exit(failed ? 1 : 0);
