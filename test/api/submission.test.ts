import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { submissionSink, type EmailInput } from '../../src/composition/submission.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { DomainError, unavailable } from '../../src/errors/errors.js';
import {
  startSubmissionServer,
  type SubmissionServer,
  type SubmissionSettings,
} from '../../src/mail/submission/submission.server.js';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { cli, freePort, serve } from '../helpers/formcast-process.js';
import { selfSigned } from '../helpers/tls.js';
import { verifiedDomain } from '../helpers/fixtures.js';
import { useSending } from '../helpers/sending.js';

/**
 * SMTP submission (contract §20, docs/smtp-submission.md) end to end: a real listener on 127.0.0.1 with STARTTLS
 * (a self-signed certificate made here with the `openssl` command, for 127.0.0.1 and localhost), real clients
 * (nodemailer; swaks, the Debian package, where installed), AUTH checked for real against the workspace's API keys
 * in the test database (SQLite, and PostgreSQL when configured). The sending service is a recording stand-in: it
 * keeps the EmailInput each message became (composition/submission.ts, toEmailInput).
 */
const run = promisify(execFile);
const silent = pino({ level: 'silent' });
const SWAKS = ['/usr/bin/swaks', '/usr/local/bin/swaks'].find((p) => fs.existsSync(p)) ?? null;

const tls = selfSigned({ subject: '/CN=localhost', altNames: 'DNS:localhost,IP:127.0.0.1', key: 'ec' });
const { cert: CERT, key: KEY, dir: certDir } = tls;

interface Recorded {
  workspaceId: string;
  apiKeyId: string;
  input: EmailInput;
  idempotencyKey?: string;
}

describeApi('SMTP submission', (h) => {
  let ws: TestWorkspace;
  let recorded: Recorded[];
  let failWith: Error | null;
  // Moved an hour on before each test: one test's failed AUTHs are over before the next one begins.
  let clock = Date.UTC(2026, 0, 1);
  let tlsServer: SubmissionServer;
  let insecureServer: SubmissionServer;

  const settings = (over: Partial<SubmissionSettings>): SubmissionSettings => ({
    port: 0,
    host: '127.0.0.1',
    tls: { cert: CERT, key: KEY },
    allowInsecureAuth: false,
    maxBytes: 200_000,
    ...over,
  });

  beforeAll(async () => {
    ws = await h.workspace();
    const submit = async (
      workspaceId: string,
      apiKeyId: string,
      input: EmailInput,
      opts: { idempotencyKey?: string },
    ) => {
      if (failWith) throw failWith;
      recorded.push({ workspaceId, apiKeyId, input, idempotencyKey: opts.idempotencyKey });
      return { id: `em_${crypto.randomBytes(8).toString('hex')}` };
    };
    const sink = submissionSink(h.app.services.apiKeys, submit);
    tlsServer = await startSubmissionServer({
      settings: settings({}),
      sink,
      log: silent,
      name: 'localhost',
      guards: { maxAuthFailures: 3 },
      now: () => clock,
    });
    insecureServer = await startSubmissionServer({
      settings: settings({ allowInsecureAuth: true }),
      sink,
      log: silent,
      name: 'localhost',
      now: () => clock,
    });
  });
  afterAll(async () => {
    await tlsServer?.close();
    await insecureServer?.close();
  });
  beforeEach(() => {
    recorded = [];
    failWith = null;
    clock += 3_600_000;
  });

  const client = (pass: string, over: Record<string, unknown> = {}) =>
    nodemailer.createTransport({
      host: '127.0.0.1',
      port: tlsServer.port,
      secure: false,
      requireTLS: true,
      tls: { ca: [CERT], servername: 'localhost' },
      auth: { user: 'anything', pass },
      ...over,
    });

  const base = {
    from: '"Shop" <receipts@shop.example>',
    to: 'ann@example.com',
    subject: 'Your receipt',
    text: 'Thanks',
  };

  it('refuses AUTH before STARTTLS (538 5.7.0)', async () => {
    const err = await client(ws.key, { ignoreTLS: true, requireTLS: false })
      .sendMail(base)
      .catch((e: unknown) => e as { responseCode?: number; response?: string });
    expect(err).toMatchObject({ responseCode: 538 });
    expect((err as { response: string }).response).toMatch(/^538 5\.7\.0 .*STARTTLS/);
    expect(recorded).toHaveLength(0);
  });

  it('takes AUTH without TLS where SUBMISSION_ALLOW_INSECURE_AUTH=true', async () => {
    const info = await client(ws.key, { port: insecureServer.port, ignoreTLS: true, requireTLS: false }).sendMail(base);
    expect(info.response).toMatch(/^250 2\.0\.0 Ok: queued as em_[0-9a-f]+$/);
    expect(recorded).toHaveLength(1);
  });

  it('refuses a password that is not a valid API key (535 5.7.8)', async () => {
    for (const pass of ['not-a-key', `${ws.key.slice(0, -2)}${ws.key.endsWith('xx') ? 'yy' : 'xx'}`]) {
      const err = await client(pass)
        .sendMail(base)
        .catch((e: unknown) => e as { responseCode?: number; response?: string });
      expect(err).toMatchObject({ responseCode: 535 });
      expect((err as { response: string }).response).toMatch(/^535 5\.7\.8 /);
    }
    expect(recorded).toHaveLength(0);
  });

  it('refuses a key without send:emails (535), takes one with it alone', async () => {
    const readOnly = await h.key(ws, ['read:forms', 'write:broadcasts']);
    const err = await client(readOnly)
      .sendMail(base)
      .catch((e: unknown) => e as { responseCode?: number });
    expect(err).toMatchObject({ responseCode: 535 });
    const sender = await h.key(ws, ['send:emails']);
    const info = await client(sender).sendMail(base);
    expect(info.response).toMatch(/^250 2\.0\.0 Ok: queued as em_/);
    expect(recorded[0]).toMatchObject({ workspaceId: ws.id });
    expect(recorded[0]!.apiKeyId).toMatch(/^key_/);
  });

  it('makes the message an EmailInput: from, to, cc, bcc (envelope only), reply-to, bodies, headers, tags', async () => {
    const info = await client(ws.key).sendMail({
      from: '"Shop Receipts" <receipts@shop.example>',
      to: ['Ann <ann@example.com>', 'bob@example.com'],
      cc: 'carol@example.com',
      bcc: 'audit@shop.example',
      replyTo: 'help@shop.example',
      subject: 'Order nº 42',
      text: 'Thanks for your order',
      html: '<p>Thanks for your <b>order</b></p>',
      messageId: '<order-42@shop.example>',
      inReplyTo: '<cart-1@shop.example>',
      references: ['<cart-1@shop.example>'],
      list: { unsubscribe: 'https://shop.example/u/1' },
      headers: {
        'X-Order': '42',
        'X-Formcast-Tags': 'receipt, order ,',
        'X-Idempotency-Key': 'order-42',
        Sender: 'evil@elsewhere.example',
      },
    });
    expect(info.response).toMatch(/^250 2\.0\.0 Ok: queued as em_/);
    expect(recorded).toHaveLength(1);
    const { input, idempotencyKey } = recorded[0]!;
    expect(input).toMatchObject({
      from: '"Shop Receipts" <receipts@shop.example>',
      to: ['ann@example.com', 'bob@example.com'],
      cc: ['carol@example.com'],
      bcc: ['audit@shop.example'],
      replyTo: 'help@shop.example',
      subject: 'Order nº 42',
      text: 'Thanks for your order',
      html: '<p>Thanks for your <b>order</b></p>',
      tags: ['receipt', 'order'],
    });
    expect(input.headers).toEqual({
      'X-Order': '42',
      'List-Unsubscribe': '<https://shop.example/u/1>',
      'In-Reply-To': '<cart-1@shop.example>',
      References: '<cart-1@shop.example>',
    });
    expect(input.attachments).toBeUndefined();
    expect(idempotencyKey).toBe('order-42');
  });

  it('derives the idempotency key from Message-ID and the recipients without X-Idempotency-Key', async () => {
    const mail = { ...base, messageId: '<same@shop.example>' };
    await client(ws.key).sendMail(mail);
    await client(ws.key).sendMail(mail);
    await client(ws.key).sendMail({ ...mail, to: 'other@example.com' });
    const keys = recorded.map((r) => r.idempotencyKey);
    expect(keys[0]).toMatch(/^smtp-[0-9a-f]{64}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).not.toBe(keys[0]);
  });

  it('carries attachments as base64 with their bytes, content type and RFC 2231 names', async () => {
    const bytes = crypto.randomBytes(3000);
    await client(ws.key).sendMail({
      ...base,
      attachments: [
        { filename: 'Résumé_année–2026 (copie).pdf', content: bytes, contentType: 'application/pdf' },
        { filename: 'notes.txt', content: 'héllo', contentType: 'text/plain; charset=utf-8' },
      ],
    });
    const [pdf, txt] = recorded[0]!.input.attachments!;
    expect(pdf).toEqual({
      filename: 'Résumé_année–2026 (copie).pdf',
      content: bytes.toString('base64'),
      contentType: 'application/pdf',
    });
    expect(Buffer.from(txt!.content, 'base64').toString('utf8')).toBe('héllo');
    expect(txt).toMatchObject({ filename: 'notes.txt', contentType: 'text/plain' });
    // RFC 2231 as other clients write it: continuations, percent-encoded UTF-8.
    const raw = [
      'From: receipts@shop.example',
      'To: ann@example.com',
      'Subject: 2231',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain',
      '',
      'see attached',
      '--b',
      'Content-Type: application/octet-stream',
      "Content-Disposition: attachment; filename*0*=utf-8''%E6%97%A5%E6%9C%AC; filename*1*=%E8%AA%9E.bin",
      'Content-Transfer-Encoding: base64',
      '',
      bytes.toString('base64').replace(/.{76}/g, '$&\r\n'),
      '--b--',
      '',
    ].join('\r\n');
    await client(ws.key).sendMail({ envelope: { from: 'receipts@shop.example', to: ['ann@example.com'] }, raw });
    expect(recorded[1]!.input.attachments).toEqual([
      { filename: '日本語.bin', content: bytes.toString('base64'), contentType: 'application/octet-stream' },
    ]);
    // A name of spaces only is no name: attachment-1, as for none.
    await client(ws.key).sendMail({
      envelope: { from: 'receipts@shop.example', to: ['ann@example.com'] },
      raw: raw.replace(/filename\*0\*=[^\r]*/, 'filename="   "'),
    });
    expect(recorded[2]!.input.attachments).toEqual([
      { filename: 'attachment-1', content: bytes.toString('base64'), contentType: 'application/octet-stream' },
    ]);
    recorded.splice(2, 1);
    // A Content-Type the API's schema would refuse (no subtype, bytes beyond ASCII) goes on as application/octet-stream.
    for (const [i, type] of ['applicätion/pdf', 'pdf', 'application/pdf<script>'].entries()) {
      await client(ws.key).sendMail({
        envelope: { from: 'receipts@shop.example', to: ['ann@example.com'] },
        raw: Buffer.from(raw.replace('Content-Type: application/octet-stream', `Content-Type: ${type}`), 'utf8'),
      });
      expect(recorded[2 + i]!.input.attachments, type).toEqual([
        { filename: '日本語.bin', content: bytes.toString('base64'), contentType: 'application/octet-stream' },
      ]);
    }
  });

  it('refuses a message over the size limit (552 5.3.4)', async () => {
    const err = await client(ws.key)
      .sendMail({ ...base, attachments: [{ filename: 'big.bin', content: crypto.randomBytes(300_000) }] })
      .catch((e: unknown) => e as { responseCode?: number; response?: string });
    expect(err).toMatchObject({ responseCode: 552 });
    expect((err as { response: string }).response).toMatch(/^552 5\.3\.4 /);
    expect(recorded).toHaveLength(0);
  });

  it('answers 452 beyond 50 recipients; the 50 taken become the email', async () => {
    const to = Array.from({ length: 51 }, (_, i) => `r${i}@example.com`);
    const info = await client(ws.key).sendMail({ ...base, to });
    expect(info.rejected).toEqual(['r50@example.com']);
    const rejected = (info as unknown as { rejectedErrors: { responseCode: number; response: string }[] })
      .rejectedErrors;
    expect(rejected[0]).toMatchObject({ responseCode: 452 });
    expect(rejected[0]!.response).toMatch(/^452 4\.5\.3 /);
    expect(recorded[0]!.input.to).toEqual(to.slice(0, 50));
    expect(recorded[0]!.input.bcc).toBeUndefined();
  });

  it("answers 550 5.7.1 for the service's sender_domain_not_verified, 550 5.6.0 for its validation errors", async () => {
    failWith = new DomainError('sender_domain_not_verified', 'shop.example is not a verified sending domain');
    const err = await client(ws.key)
      .sendMail(base)
      .catch((e: unknown) => e as { responseCode?: number; response?: string });
    expect(err).toMatchObject({ responseCode: 550 });
    expect((err as { response: string }).response).toBe(
      '550 5.7.1 Sender domain not verified: shop.example is not a verified sending domain',
    );
    failWith = new DomainError('validation_failed', '/tags/0: must match pattern');
    const invalid = await client(ws.key)
      .sendMail(base)
      .catch((e: unknown) => e as { response?: string });
    expect((invalid as { response: string }).response).toBe('550 5.6.0 /tags/0: must match pattern');
  });

  it('answers 451 4.3.0 when the service cannot (the database is down), and the server goes on', async () => {
    failWith = unavailable();
    const err = await client(ws.key)
      .sendMail(base)
      .catch((e: unknown) => e as { responseCode?: number; response?: string });
    expect(err).toMatchObject({ responseCode: 451 });
    expect((err as { response: string }).response).toMatch(/^451 4\.3\.0 /);
    failWith = new Error('connection refused');
    const other = await client(ws.key)
      .sendMail(base)
      .catch((e: unknown) => e as { response?: string });
    expect((other as { response: string }).response).toBe('451 4.3.0 Temporary failure, try again later');
    failWith = null;
    await client(ws.key).sendMail(base);
    expect(recorded).toHaveLength(1);
  });

  it('lets no header injection through: only the kept headers, raw, on one line; Bcc only from the envelope', async () => {
    const raw = [
      'From: Shop <receipts@shop.example>',
      'To: ann@example.com',
      'Bcc: evil-header-bcc@elsewhere.example',
      'Subject: =?utf-8?Q?Hello=0D=0ABcc:_evil-subject@elsewhere.example?=',
      'Sender: evil@elsewhere.example',
      'Return-Path: <evil@elsewhere.example>',
      'Received: from evil by evil',
      'DKIM-Signature: v=1; a=rsa-sha256; d=elsewhere.example; s=x; b=AAAA',
      'X-Encoded: =?utf-8?Q?a=0D=0ABcc:_evil-encoded@elsewhere.example?=',
      'X-Folded: part one',
      ' part two',
      'X-Formcast-Tags: a',
      'Content-Type: text/plain; charset=utf-8',
      'MIME-Version: 1.0',
      '',
      'Body',
      '',
    ].join('\r\n');
    await client(ws.key).sendMail({
      envelope: { from: 'receipts@shop.example', to: ['ann@example.com', 'hidden@example.com'] },
      raw,
    });
    const { input } = recorded[0]!;
    expect(input.headers).toEqual({
      'X-Encoded': '=?utf-8?Q?a=0D=0ABcc:_evil-encoded@elsewhere.example?=',
      'X-Folded': 'part one part two',
    });
    expect(input.subject).toBe('Hello Bcc: evil-subject@elsewhere.example');
    expect(input.to).toEqual(['ann@example.com']);
    expect(input.bcc).toEqual(['hidden@example.com']);
    expect(JSON.stringify(input)).not.toContain('evil-header-bcc');
    expect(Object.values(input.headers!).join('')).not.toMatch(/[\r\n]/);
  });

  it('refuses a message without a From, or whose To names none of the recipients (550 5.6.0)', async () => {
    const noFrom = await client(ws.key)
      .sendMail({ envelope: { from: 'a@shop.example', to: ['ann@example.com'] }, raw: 'To: ann@example.com\r\n\r\nx' })
      .catch((e: unknown) => e as { response?: string });
    expect((noFrom as { response: string }).response).toMatch(/^550 5\.6\.0 .*From/);
    const elsewhere = await client(ws.key)
      .sendMail({ ...base, to: 'ann@example.com', envelope: { from: 'a@shop.example', to: ['zed@example.com'] } })
      .catch((e: unknown) => e as { response?: string });
    expect((elsewhere as { response: string }).response).toMatch(/^550 5\.6\.0 .*To header/);
    expect(recorded).toHaveLength(0);
  });

  it('locks an address out after repeated failed AUTHs, until the lock-out is over', async () => {
    // The lock-out is per address; this server's (3 failures) is not the other tests' (they use good keys).
    for (let i = 0; i < 3; i++)
      await client('fc_bad')
        .sendMail(base)
        .catch(() => undefined);
    const refused = await client(ws.key)
      .sendMail(base)
      .catch((e: unknown) => e as { responseCode?: number; response?: string });
    expect(refused).toMatchObject({ responseCode: 421 });
    clock += 16 * 60_000;
    await client(ws.key).sendMail(base);
    expect(recorded).toHaveLength(1);
  });

  it('survives garbage: an unknown AUTH mechanism, bad base64, a broken message', async () => {
    const replies = await talk(insecureServer.port, [
      'EHLO x',
      'AUTH CRAM-MD5',
      'AUTH PLAIN !!!notbase64',
      `AUTH PLAIN ${Buffer.from(`\0u\0${ws.key}`).toString('base64')}`,
      'MAIL FROM:<a@shop.example>',
      'RCPT TO:<ann@example.com>',
      'DATA',
      'From: \r\nTo: =?x?\r\n\r\n\u0000\u00ff.\r\n.',
      'QUIT',
    ]);
    expect(replies).toMatch(/^504 /m);
    expect(replies).toMatch(/^235 /m);
    expect(replies).toMatch(/^550 5\.6\.0 /m);
    expect(replies).toMatch(/^221 /m);
  });

  it.skipIf(!SWAKS)(
    `swaks: STARTTLS, AUTH PLAIN and LOGIN, an RFC 2231 attachment${SWAKS ? '' : ' [skipped: swaks is not installed (Debian package swaks)]'}`,
    async () => {
      const file = path.join(certDir, 'Prüfbericht.bin');
      const bytes = crypto.randomBytes(1024);
      fs.writeFileSync(file, bytes);
      for (const method of ['PLAIN', 'LOGIN']) {
        const { stdout } = await run(SWAKS!, [
          ...[
            '--server',
            '127.0.0.1',
            '--port',
            String(tlsServer.port),
            '--tls',
            '--tls-verify',
            '--tls-ca-path',
            tls.certPath,
          ],
          ...['--tls-sni', 'localhost', '--auth', method, '--auth-user', 'me', '--auth-password', ws.key],
          ...['--from', 'receipts@shop.example', '--to', 'ann@example.com', '--header', 'X-Formcast-Tags: swaks'],
          ...['--attach-type', 'application/octet-stream', '--attach-name', 'Prüfbericht.bin', '--attach', `@${file}`],
        ]);
        expect(stdout).toMatch(/<~ {2}250 2\.0\.0 Ok: queued as em_/);
      }
      expect(recorded).toHaveLength(2);
      expect(recorded[0]!.input).toMatchObject({
        from: 'receipts@shop.example',
        to: ['ann@example.com'],
        tags: ['swaks'],
      });
      const attachment = recorded[0]!.input.attachments!.find((a) => a.content === bytes.toString('base64'));
      expect(attachment).toBeDefined();
    },
  );

  it.skipIf(!SWAKS)(
    `swaks: AUTH refused before STARTTLS, and a bad key${SWAKS ? '' : ' [skipped: swaks is not installed]'}`,
    async () => {
      const common = [
        '--server',
        '127.0.0.1',
        '--port',
        String(tlsServer.port),
        '--from',
        'a@shop.example',
        '--to',
        'b@example.com',
      ];
      const plain = await run(SWAKS!, [
        ...common,
        '--auth',
        'PLAIN',
        '--auth-user',
        'me',
        '--auth-password',
        ws.key,
      ]).catch((e: { stdout: string }) => e);
      expect(plain.stdout).toMatch(/<\*\* 538 5\.7\.0 /);
      const bad = await run(SWAKS!, [
        ...common,
        '--tls',
        '--auth',
        'LOGIN',
        '--auth-user',
        'me',
        '--auth-password',
        'nope',
      ]).catch((e: { stdout: string }) => e);
      expect(bad.stdout).toMatch(/<~\* 535 5\.7\.8 /);
      expect(recorded).toHaveLength(0);
    },
  );
});

/** Sends SMTP lines one at a time (each after the reply to the one before) and returns the whole conversation. */
async function talk(port: number, lines: string[]): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  let waiting: (() => void) | null = null;
  socket.on('data', (d) => {
    received += d.toString('latin1');
    // A complete reply: its last line is "ddd text".
    if (/(^|\r\n)\d{3} [^\r\n]*\r\n$/.test(received)) waiting?.();
  });
  const next = () =>
    new Promise<void>((resolve) => {
      waiting = resolve;
    });
  await next(); // the greeting
  for (const line of lines) {
    const replied = next();
    socket.write(`${line}\r\n`);
    await replied;
  }
  socket.end();
  return received;
}

describe('SMTP submission settings (loadConfig)', () => {
  const env = (over: Record<string, string>) => ({ DATABASE_URL: ':memory:', HOST: '127.0.0.2', ...over });

  it('is off without SUBMISSION_PORT', () => {
    expect(loadConfig(env({})).submission).toBeNull();
  });

  it('reads the certificate and key from files or as PEM text (\\n escapes allowed), on HOST by default', () => {
    const fromFiles = loadConfig(
      env({ SUBMISSION_PORT: '587', SUBMISSION_TLS_CERT: tls.certPath, SUBMISSION_TLS_KEY: tls.keyPath }),
    ).submission;
    expect(fromFiles).toEqual({
      port: 587,
      host: '127.0.0.2',
      tls: { cert: CERT, key: KEY },
      allowInsecureAuth: false,
      maxBytes: 15 * 1024 * 1024,
    });
    const fromText = loadConfig(
      env({
        SUBMISSION_PORT: '2587',
        SUBMISSION_HOST: '0.0.0.0',
        SUBMISSION_TLS_CERT: CERT.trim().replaceAll('\n', '\\n'),
        SUBMISSION_TLS_KEY: KEY,
        SUBMISSION_MAX_BYTES: '1048576',
      }),
    ).submission;
    expect(fromText).toMatchObject({ port: 2587, host: '0.0.0.0', maxBytes: 1048576 });
    expect(fromText!.tls!.cert.trim()).toBe(CERT.trim());
  });

  it('refuses what cannot work: no certificate without the insecure flag, half a pair, a key of another certificate', () => {
    expect(() => loadConfig(env({ SUBMISSION_PORT: '587' }))).toThrow(ConfigError);
    expect(() => loadConfig(env({ SUBMISSION_PORT: '587', SUBMISSION_TLS_CERT: tls.certPath }))).toThrow(
      /both SUBMISSION_TLS_CERT and SUBMISSION_TLS_KEY/,
    );
    expect(() =>
      loadConfig(env({ SUBMISSION_PORT: '587', SUBMISSION_TLS_CERT: '/nonexistent.pem', SUBMISSION_TLS_KEY: KEY })),
    ).toThrow(/SUBMISSION_TLS_CERT is neither PEM text nor a readable file/);
    const other = selfSigned({ subject: '/CN=other', key: 'ec' });
    expect(() =>
      loadConfig(env({ SUBMISSION_PORT: '587', SUBMISSION_TLS_CERT: tls.certPath, SUBMISSION_TLS_KEY: other.keyPath })),
    ).toThrow(/not a usable certificate and key/);
    expect(
      loadConfig(env({ SUBMISSION_PORT: '587', SUBMISSION_ALLOW_INSECURE_AUTH: 'true' })).submission,
    ).toMatchObject({ tls: null, allowInsecureAuth: true });
  });
});

describe('formcast serve with SUBMISSION_PORT', () => {
  let dir: string;
  let server: Awaited<ReturnType<typeof serve>> | undefined;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(tls.dir, 'serve-'));
  });
  afterAll(async () => {
    if (server) {
      const closed = new Promise((resolve) => server!.child.once('close', resolve));
      server.child.kill('SIGTERM');
      await closed;
    }
  });

  it('listens with STARTTLS on the configured certificate and checks API keys', async () => {
    const env = { DATABASE_URL: path.join(dir, 'formcast.db'), LOG_LEVEL: 'info' };
    const created = await cli(['workspace', 'create', 'Shop', '--json'], env);
    const port = await freePort();
    server = await serve({
      ...env,
      SUBMISSION_PORT: String(port),
      SUBMISSION_TLS_CERT: tls.certPath,
      SUBMISSION_TLS_KEY: tls.keyPath,
    });
    await expect.poll(() => server!.output()).toContain(`SMTP submission listening on 127.0.0.1:${port}`);
    const transport = (pass: string) =>
      nodemailer.createTransport({
        host: '127.0.0.1',
        port,
        requireTLS: true,
        tls: { ca: [CERT], servername: 'localhost' },
        auth: { user: 'x', pass },
      });
    expect(await transport(created.apiKey.key as string).verify()).toBe(true);
    await expect(transport('fc_nope').verify()).rejects.toMatchObject({ responseCode: 535 });
  });
});

/**
 * SMTP submission joined to the real sending service (composition/submission.ts → EmailsService.sendEmail): a message
 * that nodemailer submits over STARTTLS becomes a transactional email, is sent by the delivery pipeline to the test
 * SMTP server, and is listed by GET /v1/emails; a sender on a domain that is not verified is 550 and nothing is stored.
 */
describeApi('SMTP submission to the sending service', (h) => {
  const sending = useSending(h, { workerId: 'submission', leaseMs: 10_000 });
  let server: SubmissionServer;
  beforeAll(async () => {
    server = await startSubmissionServer({
      settings: {
        port: 0,
        host: '127.0.0.1',
        tls: { cert: CERT, key: KEY },
        allowInsecureAuth: false,
        maxBytes: 2_000_000,
      },
      sink: submissionSink(h.app.services.apiKeys, (w, k, input, o) => h.app.services.emails.sendEmail(w, k, input, o)),
      log: silent,
      name: 'localhost',
    });
  });
  afterAll(async () => server?.close());

  it('a submitted message arrives at the SMTP server as sent (attachment, Bcc hidden) and is in the emails log', async () => {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, `sub${ws.id.slice(-8).toLowerCase()}.test`);
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: server.port,
      requireTLS: true,
      tls: { ca: [CERT], servername: 'localhost' },
      auth: { user: 'app', pass: ws.key },
    });
    const info = await transport.sendMail({
      from: `Shop <orders@${domain.name}>`,
      to: 'ada@example.com',
      bcc: 'audit@example.com',
      subject: 'Your receipt',
      text: 'Thank you for order #7.',
      html: '<p>Thank you for order #7.</p>',
      attachments: [{ filename: 'receipt.txt', content: 'order 7' }],
      headers: { 'X-Formcast-Tags': 'receipt' },
    });
    const id = /queued as (em_[0-9A-Za-z]+)/.exec(info.response)?.[1];
    expect(id, info.response).toBeTruthy();
    await sending.drain();
    const got = sending.smtp.received.filter((m) => m.parsed.subject === 'Your receipt');
    expect(got.map((m) => m.to).sort()).toEqual(['ada@example.com', 'audit@example.com']);
    for (const m of got) {
      expect(m.parsed.text?.trim()).toBe('Thank you for order #7.');
      expect(m.parsed.attachments.map((a) => [a.filename, a.content.toString()])).toEqual([['receipt.txt', 'order 7']]);
      expect(m.raw.toString('latin1')).not.toMatch(/^bcc:/im);
      expect(m.raw.toString('latin1')).toMatch(/^DKIM-Signature:/m);
    }
    const email = (await h.call(ws.key, 'GET', `/v1/emails/${id}`)).json();
    expect(email).toMatchObject({ id, subject: 'Your receipt', status: 'SENT', tags: ['receipt'] });
    expect(email.recipients.map((r: { email: string; status: string }) => [r.email, r.status]).sort()).toEqual([
      ['ada@example.com', 'SENT'],
      ['audit@example.com', 'SENT'],
    ]);
    // More attachments than the API takes (its schema's 20): 550 5.6.0 with the rule, nothing stored.
    const tooMany = await transport
      .sendMail({
        from: `Shop <orders@${domain.name}>`,
        to: 'ada@example.com',
        subject: 'Too many files',
        text: 'see attached',
        attachments: Array.from({ length: 21 }, (_, i) => ({ filename: `f${i}.txt`, content: `file ${i}` })),
      })
      .catch((e: unknown) => e as { responseCode?: number; response?: string });
    expect(tooMany).toMatchObject({ responseCode: 550 });
    expect((tooMany as { response: string }).response).toMatch(
      /^550 5\.6\.0 attachments must have at most 20 items \(these are 21\)/,
    );
    expect(
      await h.db.kysely
        .selectFrom('emails')
        .select('id')
        .where('workspace_id', '=', ws.id)
        .where('subject', '=', 'Too many files')
        .execute(),
    ).toEqual([]);
    // A sender whose domain is not verified: 550, nothing stored.
    await expect(
      transport.sendMail({ from: 'x@unverified.example', to: 'ada@example.com', subject: 'No', text: 'No' }),
    ).rejects.toMatchObject({ responseCode: 550 });
    const list = (await h.call(ws.key, 'GET', '/v1/emails')).json();
    expect(list.data.map((e: { id: string }) => e.id)).toEqual([id]);
  });
});
