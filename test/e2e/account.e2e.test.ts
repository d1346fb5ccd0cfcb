/**
 * One's own account in headless Chromium against a real `formcast serve` (issue 33 item 23): the profile page from the
 * user menu (name, password), setting up two-factor sign-in (QR code, a first code, recovery codes shown once), the
 * two-step sign-in (a code of the app; a recovery code), and a workspace that requires it: a person without it sees the
 * set-up and nothing else until it is done. TOTP codes are computed with otplib from the key the page shows. Light,
 * dark and 390 px, axe (no serious or critical violation), no Content-Security-Policy violation, no sideways scroll.
 * Screenshots: docs/images/console/account-*.png.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from 'otplib';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBrowser, expectNoSeriousAxe, launchBrowser, watchPages } from '../helpers/browser.js';
import { cli, consoleUnavailable, serve } from '../helpers/formcast-process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHOTS = path.join(ROOT, 'docs', 'images', 'console');
const OWNER = 'owner@acme.test';
const EDITOR = 'editor@acme.test';
const PASSWORD = 'correct horse battery staple 42';
const NEW_PASSWORD = 'a brand new passphrase 2026';
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

/** The code of the app for `secret`, `ahead` steps from now (one step ahead is within the accepted window). */
const totp = (secret: string, ahead = 0) =>
  generate({ secret: secret.replace(/\s/g, ''), epoch: Math.floor(Date.now() / 1000) + ahead * 30 });

/** A code no step the server accepts gives for `secret` now (a fixed "wrong" code is right 1 in ~300,000). */
async function wrongCode(secret: string): Promise<string> {
  const valid = new Set(await Promise.all([-2, -1, 0, 1, 2].map((step) => totp(secret, step))));
  for (let c = 0; ; c++) if (!valid.has(String(c).padStart(6, '0'))) return String(c).padStart(6, '0');
}

describeBrowser('the profile and two-factor sign-in (formcast serve, headless Chromium)', () => {
  const noConsole = consoleUnavailable();
  if (noConsole) console.warn(`account e2e: skipped: ${noConsole}`);
  let browser: Browser;
  let server: Awaited<ReturnType<typeof serve>>;
  let tmp: string;
  const csp: string[] = [];
  const errors: string[] = [];
  let ownerSecret = '';
  let ownerCodes: string[] = [];

  beforeAll(async () => {
    if (noConsole) return;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-account-e2e-'));
    fs.mkdirSync(SHOTS, { recursive: true });
    const env = { DATABASE_URL: path.join(tmp, 'formcast.db'), HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
    const created = await cli(['workspace', 'create', 'Acme', '--json'], env);
    for (const [email, role] of [
      [OWNER, 'owner'],
      [EDITOR, 'editor'],
    ])
      await cli(
        [
          'user',
          'create',
          '--workspace',
          created.workspace.id,
          '--email',
          email!,
          '--role',
          role!,
          '--password-stdin',
          '--json',
        ],
        env,
        `${PASSWORD}\n`,
      );
    [server, browser] = await Promise.all([serve(env), launchBrowser()]);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    server?.child.kill('SIGTERM');
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    expect(csp, 'Content-Security-Policy violations').toEqual([]);
    expect(errors, 'page errors').toEqual([]);
  });

  async function newPage(options: BrowserContextOptions = {}): Promise<Page> {
    const ctx = await browser.newContext({ viewport: DESKTOP, colorScheme: 'light', ...options });
    await watchPages(ctx, csp, errors);
    return ctx.newPage();
  }

  /** The password step; `to`: where it lands (the console, or the code page). */
  async function passwordStep(p: Page, email: string, password: string, to: string): Promise<void> {
    await p.goto(`${server.url}/app/login`);
    await p.locator('input[name="email"]').fill(email);
    await p.locator('input[name="password"]').fill(password);
    await Promise.all([p.waitForURL(`${server.url}${to}`), p.locator('input[name="password"]').press('Enter')]);
  }

  async function codeStep(p: Page, code: string, to = '/app'): Promise<void> {
    await p.locator('input[name="code"]').fill(code);
    await Promise.all([p.waitForURL(`${server.url}${to}`), p.locator('input[name="code"]').press('Enter')]);
  }

  async function settled(p: Page, heading: string | RegExp): Promise<void> {
    await p.getByRole('heading', { level: 1, name: heading }).waitFor();
    await p.waitForFunction(() => document.querySelectorAll('.skeleton, .spinner').length === 0, undefined, {
      timeout: 15_000,
    });
  }

  /** A full-page screenshot, axe, and no sideways scroll. */
  async function check(p: Page, name: string): Promise<void> {
    // From the top: a full-page shot of a scrolled page repeats the sticky bars in its middle.
    await p.evaluate(() => window.scrollTo(0, 0));
    await p.screenshot({ path: path.join(SHOTS, `account-${name}.png`), fullPage: true });
    await expectNoSeriousAxe(p, name);
    const sideways = await p.evaluate(() => {
      const width = document.documentElement.clientWidth;
      const wide = [...document.querySelectorAll<HTMLElement>('body *')]
        .filter((e) => e.getBoundingClientRect().right > width + 1)
        .slice(0, 5)
        .map((e) => `${e.tagName.toLowerCase()}.${e.className} (${Math.round(e.getBoundingClientRect().right)})`);
      return { by: document.documentElement.scrollWidth - width, wide };
    });
    expect(sideways.by, `${name} scrolls sideways: ${sideways.wide.join(', ')}`).toBeLessThanOrEqual(0);
    // No raw error code, JSON pointer or scope name shown to people.
    const text = await p.locator('body').innerText();
    expect(text).not.toMatch(/\/currentPassword|\/code\b|validation_failed|rate_limited|two_factor_required/);
  }

  it(
    'the profile from the user menu: a new name, a wrong current password refused in plain words, a new password',
    { timeout: 120_000 },
    async () => {
      if (noConsole) return;
      const p = await newPage();
      await passwordStep(p, OWNER, PASSWORD, '/app');
      await p.getByRole('button', { name: /Account menu/ }).click();
      await p.getByRole('link', { name: 'Your profile' }).click();
      await p.waitForURL(`${server.url}/app/profile`);
      await settled(p, 'Your profile');
      await check(p, 'profile-light');

      await p.getByLabel('Name', { exact: true }).fill('Olivia Owner');
      await p.getByRole('button', { name: 'Save', exact: true }).click();
      await p.getByText('Saved.').waitFor();
      await expect(p.locator('.user-name').innerText()).resolves.toBe('Olivia Owner');

      const form = p.locator('form', { has: p.getByRole('heading', { name: 'Password' }) });
      await form.getByLabel('Current password').fill('not my password at all');
      await form.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
      await form.getByLabel('New password again').fill(NEW_PASSWORD);
      await form.getByRole('button', { name: 'Change password' }).click();
      await form.getByText('That is not your current password.').waitFor();
      await check(p, 'password-wrong');
      await form.getByLabel('Current password').fill(PASSWORD);
      await form.getByRole('button', { name: 'Change password' }).click();
      await p.getByText(/^Password changed\./).waitFor();
      await p.context().close();
    },
  );

  it(
    'sets up two-factor sign-in: the QR code and key, a first code, recovery codes shown once',
    { timeout: 120_000 },
    async () => {
      if (noConsole) return;
      const p = await newPage();
      await passwordStep(p, OWNER, NEW_PASSWORD, '/app');
      await p.goto(`${server.url}/app/profile`);
      await settled(p, 'Your profile');
      const section = p.locator('section', { has: p.getByRole('heading', { name: 'Two-factor sign-in' }) });
      await section.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
      await section.getByLabel('Current password').fill(NEW_PASSWORD);
      await section.getByRole('button', { name: 'Continue' }).click();
      await section.getByRole('img', { name: /QR code/ }).waitFor();
      ownerSecret = (await section.locator('.copy-field code').innerText()).replace(/\s/g, '');
      expect(ownerSecret).toMatch(/^[A-Z2-7]{32}$/);
      await check(p, 'setup-scan');
      await section.getByLabel('Code from the app').fill(await wrongCode(ownerSecret));
      await section.getByRole('button', { name: 'Turn on two-factor sign-in' }).click();
      await section.getByText(/That code is not right/).waitFor();
      await section.getByLabel('Code from the app').fill(await totp(ownerSecret));
      await section.getByRole('button', { name: 'Turn on two-factor sign-in' }).click();
      await section.getByText('Two-factor sign-in is on.').waitFor();
      ownerCodes = await section.locator('.recovery-codes li').allInnerTexts();
      expect(ownerCodes).toHaveLength(10);
      await check(p, 'setup-codes');
      await section.getByRole('button', { name: 'I have saved my codes' }).click();
      await section.getByText(/10 recovery codes/).waitFor();
      await expect(section.locator('.badge').innerText()).resolves.toBe('On');
      await p.context().close();
    },
  );

  it(
    'signs in in two steps: the password, then a code of the app (a wrong one refused) or a recovery code',
    { timeout: 120_000 },
    async () => {
      if (noConsole) return;
      const p = await newPage();
      await passwordStep(p, OWNER, NEW_PASSWORD, '/app/login/two-factor');
      await p.getByRole('heading', { level: 1, name: 'Enter your sign-in code' }).waitFor();
      await check(p, 'code-light');
      await p.locator('input[name="code"]').fill(await wrongCode(ownerSecret));
      await p.locator('input[name="code"]').press('Enter');
      await p.getByText('That code is not right').waitFor();
      await check(p, 'code-wrong');
      // The code of the next step: within the accepted window, and later than the one the set-up used.
      await codeStep(p, await totp(ownerSecret, 1));
      await settled(p, /Dashboard|Welcome|Acme/);
      await p.context().close();

      // Dark, with a recovery code; the profile says one fewer is left.
      const dark = await newPage({ colorScheme: 'dark' });
      await passwordStep(dark, OWNER, NEW_PASSWORD, '/app/login/two-factor');
      await check(dark, 'code-dark');
      await codeStep(dark, ownerCodes[0]!);
      await dark.goto(`${server.url}/app/profile`);
      await settled(dark, 'Your profile');
      await dark.getByText(/9 recovery codes/).waitFor();
      await check(dark, 'profile-dark');
      await dark.context().close();

      // 390 px: the code page and the profile.
      const phone = await newPage({ viewport: PHONE });
      await passwordStep(phone, OWNER, NEW_PASSWORD, '/app/login/two-factor');
      await check(phone, 'code-phone');
      await codeStep(phone, ownerCodes[1]!);
      await phone.goto(`${server.url}/app/profile`);
      await settled(phone, 'Your profile');
      await check(phone, 'profile-phone');
      // A used recovery code does not work twice.
      const again = await newPage();
      await passwordStep(again, OWNER, NEW_PASSWORD, '/app/login/two-factor');
      await again.locator('input[name="code"]').fill(ownerCodes[1]!);
      await again.locator('input[name="code"]').press('Enter');
      await again.getByText('That code is not right').waitFor();
      await again.context().close();
      await phone.context().close();
    },
  );

  it(
    'an owner requires two-factor sign-in: the editor sees only the set-up after signing in, then the console',
    { timeout: 120_000 },
    async () => {
      if (noConsole) return;
      const owner = await newPage();
      await passwordStep(owner, OWNER, NEW_PASSWORD, '/app/login/two-factor');
      await codeStep(owner, ownerCodes[2]!);
      await owner.goto(`${server.url}/app/settings`);
      await settled(owner, 'Settings');
      await owner.getByLabel('Require two-factor sign-in for everyone').check();
      await owner.getByRole('button', { name: 'Save settings' }).click();
      await owner.getByText('Settings saved.').waitFor();
      await owner.context().close();

      for (const [name, options] of [
        ['gate-dark', { colorScheme: 'dark' }],
        ['gate-phone', { viewport: PHONE }],
      ] as const) {
        const p = await newPage(options);
        await passwordStep(p, EDITOR, PASSWORD, '/app');
        await settled(p, 'Set up two-factor sign-in');
        await check(p, name);
        await p.context().close();
      }

      const p = await newPage();
      await passwordStep(p, EDITOR, PASSWORD, '/app');
      await settled(p, 'Set up two-factor sign-in');
      await expect(p.locator('nav').count()).resolves.toBe(0);
      await check(p, 'gate-light');
      await p.getByLabel('Current password').fill(PASSWORD);
      await p.getByRole('button', { name: 'Continue' }).click();
      const secret = (await p.locator('.copy-field code').innerText()).replace(/\s/g, '');
      await p.getByLabel('Code from the app').fill(await totp(secret));
      await p.getByRole('button', { name: 'Turn on two-factor sign-in' }).click();
      await p.getByText('Two-factor sign-in is on.').waitFor();
      await check(p, 'gate-codes');
      await Promise.all([
        p.waitForURL(`${server.url}/app`),
        p.getByRole('button', { name: 'I have saved my codes' }).click(),
      ]);
      await p.locator('nav').first().waitFor();
      await p.context().close();
    },
  );
});
