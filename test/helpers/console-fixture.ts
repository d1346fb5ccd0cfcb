/**
 * A console suite's fixture (the pieces every console e2e suite had written for itself): a real `formcast serve` on a
 * temp SQLite file with a workspace, its owner and a verified domain, sending to the test SMTP server; Chromium; and
 * the steps the suites share: sign in, wait for a page to settle, and check a page (no sideways scroll, toasts
 * dismissed, a screenshot, axe). Later suites use it; the older ones still carry their own copies.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { expect } from 'vitest';
import { expectNoSeriousAxe, launchBrowser, watchPages } from './browser.js';
import { apiCaller, cli, ROOT, serve } from './formcast-process.js';
import { startSmtpServer } from './smtp.js';

export const CONSOLE_PASSWORD = 'correct horse battery staple 42';
export const DESKTOP = { width: 1280, height: 860 };
export const PHONE = { width: 390, height: 844 };

export interface ConsoleFixture {
  url: string;
  key: string;
  workspaceId: string;
  owner: string;
  browser: Browser;
  smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  api: (method: string, url: string, body?: unknown) => Promise<any>;
  /** CSP violations and uncaught errors of every page opened by signedIn. */
  csp: string[];
  errors: string[];
  shots: string;
  close(): Promise<void>;
}

/** Starts it all; `shots` names the folder under test-output/e2e (docs/images/console with UPDATE_SCREENSHOTS=1). */
export async function startConsole(opts: { shots: string; domain?: string; owner?: string }): Promise<ConsoleFixture> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `formcast-${opts.shots}-e2e-`));
  const shots = process.env.UPDATE_SCREENSHOTS
    ? path.join(ROOT, 'docs', 'images', 'console')
    : path.join(ROOT, 'test-output', 'e2e', opts.shots);
  fs.mkdirSync(shots, { recursive: true });
  const smtp = await startSmtpServer();
  const env = {
    DATABASE_URL: path.join(tmp, 'formcast.db'),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    DNS_SERVERS: '127.0.0.1:9',
    DNS_TIMEOUT_MS: '300',
    SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
  };
  const owner = opts.owner ?? 'mia@acme.test';
  const created = await cli(['workspace', 'create', 'Acme', '--json'], env);
  const workspaceId = created.workspace.id as string;
  const [, , server, browser] = await Promise.all([
    cli(
      ['user', 'create', '--workspace', workspaceId, '--email', owner, '--role', 'owner', '--password-stdin', '--json'],
      env,
      `${CONSOLE_PASSWORD}\n`,
    ),
    cli(['domain', 'add', opts.domain ?? 'acme.test', '--workspace', workspaceId, '--verified', '--json'], env),
    serve(env),
    launchBrowser(),
  ]);
  const key = created.apiKey.key as string;
  return {
    url: server.url,
    key,
    workspaceId,
    owner,
    browser,
    smtp,
    api: apiCaller(
      () => server.url,
      () => key,
    ),
    csp: [],
    errors: [],
    shots,
    async close() {
      await browser.close();
      server.child.kill('SIGTERM');
      await smtp.close();
      fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/** The page's heading is there and nothing is loading any more. */
export async function settled(p: Page, heading: string | RegExp): Promise<void> {
  await p.getByRole('heading', { level: 1, name: heading }).waitFor();
  await p.waitForFunction(() => document.querySelectorAll('.skeleton, .spinner').length === 0, undefined, {
    timeout: 15_000,
  });
}

/** Settled, no sideways scroll, toasts dismissed, a full-page screenshot `<name>.png`, and no serious axe violation. */
export async function check(fx: ConsoleFixture, p: Page, name: string, heading: string | RegExp): Promise<void> {
  await settled(p, heading);
  expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(p.viewportSize()!.width);
  await p.evaluate(() => {
    for (const b of document.querySelectorAll<HTMLButtonElement>('.toast button')) b.click();
  });
  await p.waitForFunction(() => document.querySelectorAll('.toast').length === 0);
  await p.screenshot({ path: path.join(fx.shots, `${name}.png`), fullPage: true });
  await expectNoSeriousAxe(p, name);
}

/** A new browser context signed in as the owner, on the dashboard. */
export async function signedIn(
  fx: ConsoleFixture,
  opts: { viewport?: { width: number; height: number }; dark?: boolean; timezoneId?: string } = {},
): Promise<Page> {
  const ctx = await fx.browser.newContext({
    viewport: opts.viewport ?? DESKTOP,
    colorScheme: opts.dark ? 'dark' : 'light',
    ...(opts.timezoneId ? { timezoneId: opts.timezoneId } : {}),
  });
  await watchPages(ctx, fx.csp, fx.errors);
  const p = await ctx.newPage();
  await p.goto(`${fx.url}/app/login?next=${encodeURIComponent('/app')}`);
  await p.locator('input[name="email"]').fill(fx.owner);
  await p.locator('input[name="password"]').fill(CONSOLE_PASSWORD);
  await Promise.all([p.waitForURL(`${fx.url}/app`), p.locator('input[name="password"]').press('Enter')]);
  await settled(p, 'Dashboard');
  return p;
}

/** Polls `what` (every 150 ms, 30 s at most). */
export async function until(what: () => Promise<boolean>, why: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await what()) return;
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`timed out waiting: ${why}`);
}
