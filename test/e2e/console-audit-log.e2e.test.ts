/**
 * The audit log page (issue 33 item 23, docs/audit-log.md), end to end in headless Chromium against a real Formcast
 * (`node bin/formcast serve` on a temp SQLite file): changes made by the `formcast` command, by an API key and by a
 * person signed in to the console are listed in plain words to the owner, filtered by what and by who; an editor is
 * told who can read it. Every view: a screenshot in test-output/e2e/audit-log-*.png in the light theme, the dark theme
 * and at 390 px (no horizontal scroll), axe-core (no serious or critical violation), no CSP violation or page error.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBrowser, expectNoSeriousAxe, launchBrowser, watchPages } from '../helpers/browser.js';
import { apiCaller, cli, consoleUnavailable, serve } from '../helpers/formcast-process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHOTS = path.join(ROOT, 'test-output', 'e2e');
const PASSWORD = 'correct horse battery staple 42';
const OWNER = 'mia@acme.test';
const ADMIN = 'lin@acme.test';
const EDITOR = 'eli@acme.test';
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

describeBrowser('the console audit log end to end (formcast serve, headless Chromium)', () => {
  const unavailable = consoleUnavailable();
  if (unavailable) console.warn(`console audit log e2e: skipped: ${unavailable}`);
  let browser: Browser;
  let server: Awaited<ReturnType<typeof serve>>;
  let tmp: string;
  let key: string;
  const csp: string[] = [];
  const errors: string[] = [];
  const api = apiCaller(
    () => server.url,
    () => key,
  );

  async function signedIn(email: string, options: BrowserContextOptions = {}): Promise<Page> {
    const context = await browser.newContext({ viewport: DESKTOP, colorScheme: 'light', ...options });
    await watchPages(context, csp, errors);
    const page = await context.newPage();
    await page.goto(`${server.url}/app/login?next=${encodeURIComponent('/app/audit-log')}`);
    await page.locator('input[name="email"]').fill(email);
    await page.locator('input[name="password"]').fill(PASSWORD);
    await Promise.all([
      page.waitForURL(`${server.url}/app/audit-log`),
      page.locator('input[name="password"]').press('Enter'),
    ]);
    return page;
  }

  async function settled(p: Page): Promise<void> {
    await p.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();
    await p.waitForFunction(() => document.querySelectorAll('.skeleton, .spinner').length === 0, undefined, {
      timeout: 15_000,
    });
  }

  async function check(p: Page, name: string): Promise<void> {
    await settled(p);
    await p.screenshot({ path: path.join(SHOTS, `audit-log-${name}.png`), fullPage: true });
    await expectNoSeriousAxe(p, name);
    const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, `${name}: horizontal scroll`).toBeLessThanOrEqual(0);
  }

  beforeAll(async () => {
    if (unavailable) return;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-audit-e2e-'));
    fs.mkdirSync(SHOTS, { recursive: true });
    const env = {
      DATABASE_URL: path.join(tmp, 'formcast.db'),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      DNS_SERVERS: '127.0.0.1:9',
      DNS_TIMEOUT_MS: '300',
    };
    const created = await cli(['workspace', 'create', 'Acme', '--json'], env);
    const ws = created.workspace.id;
    key = created.apiKey.key;
    const user = (email: string, role: string, name: string) =>
      cli(
        [
          'user',
          'create',
          '--workspace',
          ws,
          '--email',
          email,
          '--role',
          role,
          '--name',
          name,
          '--password-stdin',
          '--json',
        ],
        env,
        `${PASSWORD}\n`,
      );
    await user(OWNER, 'owner', 'Mia Marketer');
    await user(ADMIN, 'admin', 'Lin Admin');
    await user(EDITOR, 'editor', 'Eli Editor');
    await cli(['domain', 'add', 'acme.test', '--workspace', ws, '--verified', '--json'], env);
    [server, browser] = await Promise.all([serve(env), launchBrowser()]);
    // An API key's changes: a key for Zapier, a webhook, a suppression.
    await api('POST', '/v1/api-keys', { name: 'Zapier', scopes: ['read:contacts', 'write:contacts'] });
    await api('POST', '/v1/webhooks', {
      url: 'https://93.184.215.14/formcast',
      eventTypes: ['contact.created'],
      description: 'CRM',
    });
    await api('POST', '/v1/suppressions', {
      email: 'complainer@example.com',
      reason: 'MANUAL',
      detail: 'asked by phone',
    });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    server?.child.kill('SIGTERM');
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it.skipIf(unavailable)(
    "a person's change in the console is theirs in the log; the owner reads every change in plain words, filters by what and who",
    async () => {
      // Lin (an admin) invites a viewer from the console.
      const lin = await signedIn(ADMIN);
      await settled(lin);
      const status = await lin.evaluate(async () => {
        const s = await (await fetch('/v1/session')).json();
        const res = await fetch('/v1/invitations', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-csrf-token': s.csrfToken },
          body: JSON.stringify({ email: 'new@acme.test', role: 'viewer' }),
        });
        return res.status;
      });
      expect(status).toBe(201);
      await lin.context().close();

      const mia = await signedIn(OWNER);
      await settled(mia);
      await mia.evaluate(async () => {
        const s = await (await fetch('/v1/session')).json();
        await fetch('/v1/workspace', {
          method: 'PUT',
          headers: { 'content-type': 'application/json', 'x-csrf-token': s.csrfToken },
          body: JSON.stringify({ name: 'Acme Studio', settings: { locale: 'de' } }),
        });
      });
      await mia.reload();
      await check(mia, 'light');
      const rows = mia.locator('tbody tr');
      await expect.poll(() => rows.count()).toBeGreaterThanOrEqual(8);
      const text = await mia.locator('main').innerText();
      expect(text).toContain('You changed the workspace settings');
      expect(text).toContain('name: Acme → Acme Studio');
      expect(text).toContain('The API key “admin” created the API key “Zapier”');
      expect(text).toContain('The API key “admin” created a webhook to “https://93.184.215.14/formcast”');
      expect(text).toContain('signing secret: new (secrets are never shown)');
      expect(text).toContain('The API key “admin” suppressed “complainer@example.com”');
      expect(text).toContain('The formcast command added the domain “acme.test”');
      expect(text).toContain('The formcast command added “lin@acme.test” to the workspace');
      expect(text).toContain('The formcast command created the API key “admin”');
      expect(text).toContain('status: verified');
      expect(text).toContain('Lin Admin invited “new@acme.test”');
      // No raw codes or ids on the page.
      expect(text).not.toMatch(/api_key\.created|key_[0-9A-Z]{26}|usr_[0-9A-Z]{26}/);

      // What: API keys only.
      await mia.getByLabel('What').selectOption('api_key');
      await expect.poll(() => rows.count()).toBe(2);
      await expect.poll(() => mia.locator('main').innerText()).toContain('created the API key “Zapier”');
      await check(mia, 'filtered');
      // Who: Lin, then the formcast command.
      await mia.getByLabel('What').selectOption('');
      await mia.getByLabel('Who').selectOption({ label: 'Lin Admin (lin@acme.test)' });
      await expect.poll(() => rows.count()).toBe(1);
      expect(await rows.first().innerText()).toContain('Lin Admin invited “new@acme.test”');
      await mia.getByLabel('Who').selectOption('cli');
      await expect
        .poll(async () => (await mia.locator('tbody tr').allInnerTexts()).every((t) => t.includes('formcast command')))
        .toBe(true);
      // A date range with nothing in it.
      await mia.getByLabel('Who').selectOption('');
      await mia.getByLabel('To', { exact: true }).fill('2020-01-01');
      await expect.poll(() => mia.locator('main').innerText()).toContain('Nothing matches these filters');
      await check(mia, 'empty');
      await mia.context().close();

      const dark = await signedIn(OWNER, { colorScheme: 'dark' });
      await check(dark, 'dark');
      await dark.context().close();
      const phone = await signedIn(OWNER, { viewport: PHONE, isMobile: true, hasTouch: true });
      await check(phone, 'phone');
      await phone.context().close();
      const phoneDark = await signedIn(OWNER, { viewport: PHONE, isMobile: true, hasTouch: true, colorScheme: 'dark' });
      await check(phoneDark, 'phone-dark');
      await phoneDark.context().close();

      // An editor is told who can read it, in words.
      const eli = await signedIn(EDITOR);
      await check(eli, 'editor');
      const said = await eli.locator('main').innerText();
      expect(said).toContain('Only admins and owners can read the audit log');
      expect(said).not.toMatch(/read:audit|insufficient_scope|could not be loaded/i);
      await eli.context().close();

      expect(csp).toEqual([]);
      expect(errors).toEqual([]);
    },
    240_000,
  );
});
