/**
 * Engagement segments and the resend, end to end in headless Chromium against a real Formcast (`node bin/formcast
 * serve` on a temp SQLite file, its workers sending to the test SMTP server): a broadcast is sent to three contacts and
 * one of them opens it (the pixel, fetched as Gmail's image proxy does); then
 * - the segment builder's "+ Engagement condition": "has opened <the broadcast> ever" counts 1, "has not" 2, live;
 * - the report's Resend card: "Resend to non-openers" makes the draft and opens it, which says what it is a resend of.
 * Light, dark and 390 px, no sideways scroll, axe-core; screenshots into test-output/e2e/engagement (docs/images/console
 * with UPDATE_SCREENSHOTS=1).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBrowser, expectNoSeriousAxe, launchBrowser, watchPages } from '../helpers/browser.js';
import { apiCaller, cli, consoleUnavailable, serve } from '../helpers/formcast-process.js';
import { startSmtpServer } from '../helpers/smtp.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHOTS = process.env.UPDATE_SCREENSHOTS
  ? path.join(ROOT, 'docs', 'images', 'console')
  : path.join(ROOT, 'test-output', 'e2e', 'engagement');
const PASSWORD = 'correct horse battery staple 42';
const OWNER = 'mia@acme.test';
const GMAIL = 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)';
const HTML = `<p><img src="https://images.example/logo.png" alt="Acme" width="120" height="40"></p>
<p>Hi {{ contact.firstName }}, <a href="https://shop.example/sale">the sale</a> is on.</p>`;

describeBrowser('engagement segments and the resend (formcast serve, Chromium)', () => {
  const unavailable = consoleUnavailable();
  if (unavailable) console.warn(`console engagement e2e: skipped: ${unavailable}`);
  let browser: Browser;
  let server: Awaited<ReturnType<typeof serve>>;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let tmp: string;
  let key: string;
  let broadcastId: string;
  const csp: string[] = [];
  const errors: string[] = [];
  const api = apiCaller(
    () => server.url,
    () => key,
  );

  async function settled(p: Page, heading: string | RegExp): Promise<void> {
    await p.getByRole('heading', { level: 1, name: heading }).waitFor();
    await p.waitForFunction(() => document.querySelectorAll('.skeleton, .spinner').length === 0, undefined, {
      timeout: 15_000,
    });
  }

  async function check(p: Page, name: string): Promise<void> {
    expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(p.viewportSize()!.width);
    await p.evaluate(() => {
      for (const b of document.querySelectorAll<HTMLButtonElement>('.toast button')) b.click();
    });
    await p.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
    await expectNoSeriousAxe(p, name);
  }

  async function signedIn(opts: { width?: number; dark?: boolean } = {}): Promise<Page> {
    const ctx = await browser.newContext({
      viewport: { width: opts.width ?? 1280, height: 860 },
      colorScheme: opts.dark ? 'dark' : 'light',
    });
    await watchPages(ctx, csp, errors);
    const p = await ctx.newPage();
    await p.goto(`${server.url}/app/login?next=${encodeURIComponent('/app')}`);
    await p.locator('input[name="email"]').fill(OWNER);
    await p.locator('input[name="password"]').fill(PASSWORD);
    await Promise.all([p.waitForURL(`${server.url}/app`), p.locator('input[name="password"]').press('Enter')]);
    await settled(p, 'Dashboard');
    return p;
  }

  const until = async (what: () => Promise<boolean>, why: string) => {
    for (let i = 0; i < 200; i++) {
      if (await what()) return;
      await new Promise((r) => setTimeout(r, 150));
    }
    throw new Error(`timed out waiting: ${why}`);
  };

  beforeAll(async () => {
    if (unavailable) return;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-engagement-e2e-'));
    fs.mkdirSync(SHOTS, { recursive: true });
    smtp = await startSmtpServer();
    const env = {
      DATABASE_URL: path.join(tmp, 'formcast.db'),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      DNS_SERVERS: '127.0.0.1:9',
      DNS_TIMEOUT_MS: '300',
      SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
    };
    const created = await cli(['workspace', 'create', 'Acme', '--json'], env);
    key = created.apiKey.key;
    const ws = created.workspace.id;
    const [, , started, launched] = await Promise.all([
      cli(
        ['user', 'create', '--workspace', ws, '--email', OWNER, '--role', 'owner', '--password-stdin', '--json'],
        env,
        `${PASSWORD}\n`,
      ),
      cli(['domain', 'add', 'acme.test', '--workspace', ws, '--verified', '--json'], env),
      serve(env),
      launchBrowser(),
    ]);
    server = started;
    browser = launched;
    for (const [email, firstName] of [
      ['ada@example.com', 'Ada'],
      ['bob@example.com', 'Bob'],
      ['cy@example.com', 'Cy'],
    ])
      await api('POST', '/v1/contacts', { email, firstName, status: 'SUBSCRIBED' });
    const bc = await api('POST', '/v1/broadcasts', {
      name: 'November news',
      from: 'Acme <news@acme.test>',
      emailContent: { subject: 'News', html: HTML },
    });
    broadcastId = bc.id;
    await api('POST', `/v1/broadcasts/${broadcastId}/send`);
    await until(async () => (await api('GET', `/v1/broadcasts/${broadcastId}`)).status === 'SENT', 'the broadcast');
    // Ada opens it (a person, through Gmail's image proxy).
    const ada = smtp.received.find((m) => m.to === 'ada@example.com')!;
    const pixel = /src="([^"]+\/t\/o\/[^"]+)"/.exec(String(ada.parsed.html))![1]!;
    const res = await fetch(`${server.url}${new URL(pixel).pathname}`, { headers: { 'user-agent': GMAIL } });
    expect(res.status).toBe(200);
    await until(
      async () => (await api('GET', `/v1/broadcasts/${broadcastId}`)).stats.uniqueOpens === 1,
      'the open to be recorded',
    );
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    server?.child.kill('SIGTERM');
    await smtp?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it.skipIf(unavailable)(
    'the segment builder: an engagement condition with its live count (light, dark, 390 px)',
    async () => {
      for (const [name, opts] of [
        ['segment-engagement', {}],
        ['segment-engagement-dark', { dark: true }],
        ['segment-engagement-390', { width: 390 }],
      ] as const) {
        const p = await signedIn(opts);
        await p.goto(`${server.url}/app/segments/new`);
        await settled(p, 'New segment');
        await p.getByLabel('Name').fill('Opened November');
        await p.getByRole('button', { name: 'Remove Filter, item 1', exact: true }).click();
        await p.getByRole('button', { name: '+ Engagement condition' }).click();
        const c = 'Filter, item 1';
        await p.getByLabel(`${c}: broadcast`).selectOption({ label: 'November news' });
        await p.getByLabel(`${c}: when`).selectOption('ever');
        await expect.poll(() => p.getByTestId('segment-count').textContent(), { timeout: 10_000 }).toBe('1');
        await p.getByLabel(`${c}: has or has not`).selectOption('false');
        await expect.poll(() => p.getByTestId('segment-count').textContent(), { timeout: 10_000 }).toBe('2');
        await p.getByLabel(`${c}: has or has not`).selectOption('true');
        await expect.poll(() => p.getByTestId('segment-count').textContent(), { timeout: 10_000 }).toBe('1');
        await check(p, name);
        await p.context().close();
      }
      // Saved, the filter is the grammar's.
      const p = await signedIn();
      await p.goto(`${server.url}/app/segments/new`);
      await settled(p, 'New segment');
      await p.getByLabel('Name').fill('Opened November');
      await p.getByRole('button', { name: 'Remove Filter, item 1', exact: true }).click();
      await p.getByRole('button', { name: '+ Engagement condition' }).click();
      await p.getByLabel('Filter, item 1: broadcast').selectOption({ label: 'November news' });
      await p.getByRole('button', { name: 'Create segment' }).click();
      await p.waitForURL(/\/app\/segments\/seg_/);
      const segments = await api('GET', '/v1/segments');
      expect(segments.data[0].filter).toEqual({
        all: [{ engagement: 'opened', broadcastId, withinDays: 30, happened: true }],
      });
      await p.context().close();
    },
    120_000,
  );

  it.skipIf(unavailable)(
    'the report: Resend to non-openers makes the draft and opens it (light, dark, 390 px)',
    async () => {
      for (const [name, opts] of [
        ['broadcast-resend-card-dark', { dark: true }],
        ['broadcast-resend-card-390', { width: 390 }],
      ] as const) {
        const p = await signedIn(opts);
        await p.goto(`${server.url}/app/broadcasts/${broadcastId}`);
        await settled(p, 'November news');
        await p.getByRole('heading', { name: 'Resend' }).waitFor();
        await check(p, name);
        await p.context().close();
      }
      const p = await signedIn();
      await p.goto(`${server.url}/app/broadcasts/${broadcastId}`);
      await settled(p, 'November news');
      await check(p, 'broadcast-resend-card');
      await p.getByRole('button', { name: /Resend to non-openers/ }).click();
      await p.waitForURL((u) => /\/app\/broadcasts\/bc_/.test(u.pathname) && !u.pathname.endsWith(broadcastId));
      await settled(p, 'November news (resend to non-openers)');
      await expect.poll(() => p.getByTestId('resend-of').textContent()).toContain('non-openers');
      const id = new URL(p.url()).pathname.split('/').pop()!;
      const draft = await api('GET', `/v1/broadcasts/${id}`);
      expect(draft).toMatchObject({ status: 'DRAFT', resendOf: { broadcastId, to: 'NON_OPENERS' } });
      const audience = await api('GET', `/v1/broadcasts/${id}/audience`);
      expect(audience.count).toBe(2);
      await check(p, 'broadcast-resend-draft');
      await p.context().close();
      expect(errors).toEqual([]);
      expect(csp).toEqual([]);
    },
    120_000,
  );
});
