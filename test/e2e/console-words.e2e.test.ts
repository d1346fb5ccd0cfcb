/**
 * Issue 33 items 5, 6 and 18 in the console, in headless Chromium against a real `formcast serve`: an empty draft's
 * "Send now" and "Schedule" are off with the reason and a checklist of what is missing; the API's errors read as
 * sentences next to their field, once (no banner repeating them), with no pointer or API call in sight; the segments
 * list shows how many contacts each segment matches. Screenshots (light, dark, 390 px) in docs/images/console/.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBrowser, expectNoSeriousAxe, launchBrowser, watchPages } from '../helpers/browser.js';
import { ROOT, apiCaller, cli, consoleUnavailable, serve } from '../helpers/formcast-process.js';

const SHOTS = path.join(ROOT, 'docs', 'images', 'console');
const EMAIL = 'wren@acme.test';
const PASSWORD = 'correct horse battery staple 42';
/** What a person must never read: pointers, API calls, schema wording. */
const RAW =
  /\/emails|emails\.\d|\/sendAt|\/emailContent|POST \/v1|must NOT have|must match pattern|\bvalidation_failed\b/;

describeBrowser('console words: send checklist, errors in sentences, segment counts (formcast serve, Chromium)', () => {
  const unavailable = consoleUnavailable();
  if (unavailable) console.warn(`console words e2e: skipped: ${unavailable}`);
  let browser: Browser;
  let server: Awaited<ReturnType<typeof serve>>;
  let tmp: string;
  let key = '';
  const api = apiCaller(
    () => server.url,
    () => key,
  );
  const csp: string[] = [];
  const errors: string[] = [];
  let empty: { id: string };
  let ready: { id: string };

  beforeAll(async () => {
    if (unavailable) return;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-words-e2e-'));
    fs.mkdirSync(SHOTS, { recursive: true });
    const env = {
      DATABASE_URL: path.join(tmp, 'formcast.db'),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      DNS_SERVERS: '127.0.0.1:9',
      DNS_TIMEOUT_MS: '300',
      SMTP_URL: 'smtp://127.0.0.1:9',
    };
    const created = await cli(['workspace', 'create', 'Acme', '--json'], env);
    const ws = created.workspace.id;
    key = created.apiKey.key;
    const [, , started, launched] = await Promise.all([
      cli(
        [
          'user',
          'create',
          '--workspace',
          ws,
          '--email',
          EMAIL,
          '--role',
          'owner',
          '--name',
          'Wren',
          '--password-stdin',
          '--json',
        ],
        env,
        `${PASSWORD}\n`,
      ),
      cli(['domain', 'add', 'acme.test', '--workspace', ws, '--verified', '--json'], env),
      serve(env),
      launchBrowser(),
    ]);
    server = started;
    browser = launched;
    for (const email of ['ana@acme.test', 'bo@acme.test', 'cy@acme.test'])
      await api('POST', '/v1/contacts', { email, firstName: email.split('@')[0] });
    await api('POST', '/v1/segments', {
      name: 'Everyone subscribed',
      filter: { all: [{ field: 'status', op: 'eq', value: 'SUBSCRIBED' }] },
    });
    await api('POST', '/v1/segments', {
      name: 'Nobody',
      filter: { field: 'email', op: 'endsWith', value: '@none.test' },
    });
    empty = await api('POST', '/v1/broadcasts', { name: 'Empty draft' });
    ready = await api('POST', '/v1/broadcasts', {
      name: 'Ready',
      from: 'News <news@acme.test>',
      emailContent: { subject: 'Hello', html: '<p>Hello {{ contact.firstName | default: "there" }}</p>' },
    });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    server?.child.kill('SIGTERM');
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  async function signedIn(opts: { dark?: boolean; width?: number } = {}): Promise<{ ctx: BrowserContext; page: Page }> {
    const ctx = await browser.newContext({
      viewport: { width: opts.width ?? 1280, height: 900 },
      colorScheme: opts.dark ? 'dark' : 'light',
    });
    await watchPages(ctx, csp, errors);
    const page = await ctx.newPage();
    await page.goto(`${server.url}/app/login?next=${encodeURIComponent('/app/segments')}`);
    await page.locator('input[name="email"]').fill(EMAIL);
    await page.locator('input[name="password"]').fill(PASSWORD);
    await Promise.all([
      page.waitForURL(`${server.url}/app/segments`),
      page.locator('input[name="password"]').press('Enter'),
    ]);
    return { ctx, page };
  }

  async function settled(page: Page): Promise<void> {
    await page.waitForFunction(() => document.querySelectorAll('.skeleton, .spinner').length === 0, undefined, {
      timeout: 15_000,
    });
  }

  async function noSideScroll(page: Page): Promise<void> {
    expect(
      await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth),
    ).toBeLessThanOrEqual(0);
  }

  const variants = [
    { name: 'light', opts: {} },
    { name: 'dark', opts: { dark: true } },
    { name: '390', opts: { width: 390 } },
  ] as const;

  it.skipIf(unavailable)(
    'segments list: each segment with the contacts it matches now',
    async () => {
      for (const v of variants) {
        const { ctx, page } = await signedIn(v.opts);
        await page.getByRole('heading', { level: 1, name: 'Segments' }).waitFor();
        await settled(page);
        const counts = page.getByTestId('segment-count');
        await expect.poll(() => counts.count()).toBe(2);
        const texts = (await counts.allTextContents()).sort();
        expect(texts).toEqual(['0 contacts · 0 subscribed', '3 contacts · 3 subscribed']);
        expect(await page.locator('body').innerText()).not.toMatch(/all of 1 condition/);
        await page.screenshot({ path: path.join(SHOTS, `words-segments-${v.name}.png`), fullPage: true });
        await expectNoSeriousAxe(page, `segments ${v.name}`);
        if (v.name === '390') await noSideScroll(page);
        await ctx.close();
      }
    },
    300_000,
  );

  it.skipIf(unavailable)(
    'an empty draft: Send now and Schedule are off, with what is missing as a checklist',
    async () => {
      for (const v of variants) {
        const { ctx, page } = await signedIn(v.opts);
        await page.goto(`${server.url}/app/broadcasts/${empty.id}`);
        await page.getByRole('heading', { level: 1, name: 'Empty draft' }).waitFor();
        await settled(page);
        const checklist = page.locator('#send-checklist');
        await checklist.getByText('It cannot be sent or scheduled yet').waitFor();
        expect(await page.getByRole('button', { name: 'Send now…' }).isDisabled()).toBe(true);
        await page.locator('#send-at').fill('2031-05-04T09:30');
        expect(await page.getByRole('button', { name: 'Schedule', exact: true }).isDisabled()).toBe(true);
        expect(await page.getByRole('button', { name: 'Send now…' }).getAttribute('aria-describedby')).toBe(
          'send-checklist',
        );
        const text = await checklist.innerText();
        for (const missing of ['Missing: A sender (From)', 'Missing: A subject', 'Missing: Content (the email itself)'])
          expect(text.replace(/\s+/g, ' ')).toContain(missing);
        expect(text.replace(/\s+/g, ' ')).toContain('Done: An unsubscribe link');
        // The checks card reads as words too: no pointers, no API calls.
        expect(await page.locator('main').innerText()).not.toMatch(RAW);
        await checklist.scrollIntoViewIfNeeded();
        await page.screenshot({
          path: path.join(SHOTS, `words-send-checklist-${v.name}.png`),
          fullPage: v.name === '390',
        });
        await expectNoSeriousAxe(page, `empty draft ${v.name}`);
        if (v.name === '390') await noSideScroll(page);
        await ctx.close();
      }
    },
    400_000,
  );

  it.skipIf(unavailable)(
    "the API's errors as sentences next to their field, shown once",
    async () => {
      for (const v of variants) {
        const { ctx, page } = await signedIn(v.opts);
        await page.goto(`${server.url}/app/broadcasts/${ready.id}`);
        await page.getByRole('heading', { level: 1, name: 'Ready' }).waitFor();
        await settled(page);
        // Ready: both buttons on, the audience counted.
        await page.locator('#send-checklist').getByText('Everything it needs is there.').waitFor();
        expect(await page.getByRole('button', { name: 'Send now…' }).isDisabled()).toBe(false);
        expect(await page.locator('#send-checklist').innerText()).toMatch(/3 recipients/);

        // A test send to a malformed second address: "Address 2 …" at the field, no banner.
        const to = page.getByLabel('To (up to 5 addresses)');
        await to.fill('wren@acme.test, not-an-address');
        await page.getByRole('button', { name: 'Send test' }).click();
        const toError = page.locator(`#${await to.getAttribute('id')}-error`);
        await toError.waitFor();
        expect(await toError.innerText()).toBe('Address 2 must be an email address, like jane@example.com.');
        expect(await to.getAttribute('aria-invalid')).toBe('true');

        // A send time in the past: the service's rule, in words, at the field.
        await page.locator('#send-at').fill('2020-01-01T09:00');
        await page.getByRole('button', { name: 'Schedule', exact: true }).click();
        const sendAtError = page.locator('#send-at ~ .error');
        await sendAtError.waitFor();
        expect(await sendAtError.innerText()).toBe(
          'Send time must be in the future. To send right away, use “Send now”.',
        );
        expect(await page.locator('.error-summary').count()).toBe(0);
        expect(await page.locator('main').innerText()).not.toMatch(RAW);
        await page.locator('#send-h').scrollIntoViewIfNeeded();
        await page.screenshot({
          path: path.join(SHOTS, `words-field-errors-${v.name}.png`),
          fullPage: v.name === '390',
        });
        await expectNoSeriousAxe(page, `field errors ${v.name}`);
        if (v.name === '390') await noSideScroll(page);
        await ctx.close();
      }
      // Nothing was scheduled.
      expect(await api('GET', `/v1/broadcasts/${ready.id}`)).toMatchObject({ status: 'DRAFT', sendAt: null });
      expect(csp).toEqual([]);
      expect(errors).toEqual([]);
    },
    400_000,
  );
});
