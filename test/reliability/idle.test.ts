/**
 * An idle worker polls slowly (docs/sending.md, "Idle"; src/jobs/runner.ts IdlePolling), and work given by the same
 * process is not held up by it: `formcast serve` on SQLite whose loops go idle after 300 ms and then look once a minute
 * (WORKER_IDLE_AFTER_MS, WORKER_IDLE_POLL_MS). An email accepted by the API wakes the transactional lane, and a
 * broadcast sent the loops that write its audience and send it: each reaches the SMTP server in seconds, where the
 * idle poll alone would take up to a minute.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, localServeEnv, serve } from '../helpers/formcast-process.js';
import { startSmtpServer } from '../helpers/smtp.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('formcast serve, idle: work given by the API is taken at once, not at the next idle poll', () => {
  let tmp: string;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let server: Awaited<ReturnType<typeof serve>> | undefined;
  let key: string;

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-idle-'));
    smtp = await startSmtpServer();
    const env = localServeEnv(tmp, smtp.port, { WORKER_IDLE_AFTER_MS: '300', WORKER_IDLE_POLL_MS: '60000' });
    const created = await cli(['workspace', 'create', 'Acme', '--json'], env);
    key = created.apiKey.key;
    await cli(['domain', 'add', 'acme.test', '--workspace', created.workspace.id, '--verified', '--json'], env);
    server = await serve(env);
  }, 120_000);

  afterAll(async () => {
    server?.child.kill('SIGTERM');
    await smtp?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('an email accepted while every loop is idle reaches the SMTP server at once, not at the next idle poll', async () => {
    // Past the 300 ms: every loop now looks once a minute.
    await sleep(1_500);
    const res = await fetch(`${server!.url}/v1/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        from: 'Acme <receipts@acme.test>',
        to: ['ada@example.com'],
        subject: 'Your receipt',
        text: 'Thank you.',
      }),
    });
    expect(res.status).toBe(202);
    for (let i = 0; i < 150 && !smtp.received.some((m) => m.to === 'ada@example.com'); i++) await sleep(100);
    // Looked for up to 15 s (a loaded machine), where the idle poll alone comes after 60 s.
    expect(smtp.received.filter((m) => m.to === 'ada@example.com')).toHaveLength(1);
  }, 60_000);

  it('a broadcast sent while every loop is idle is materialised and sent at once', async () => {
    const api = async (method: string, url: string, body?: unknown) => {
      const res = await fetch(`${server!.url}${url}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      expect(res.status, `${method} ${url}: ${await res.clone().text()}`).toBeLessThan(300);
      return res.json();
    };
    await api('POST', '/v1/contacts', { email: 'bo@example.com', firstName: 'Bo', status: 'SUBSCRIBED' });
    const b = await api('POST', '/v1/broadcasts', {
      name: 'News',
      from: 'Acme <news@acme.test>',
      emailContent: { subject: 'News', html: '<p>Hello {{ contact.firstName }}.</p>' },
    });
    await sleep(1_500);
    await api('POST', `/v1/broadcasts/${b.id}/send`);
    for (let i = 0; i < 150 && !smtp.received.some((m) => m.to === 'bo@example.com'); i++) await sleep(100);
    expect(smtp.received.filter((m) => m.to === 'bo@example.com')).toHaveLength(1);
  }, 60_000);
});
