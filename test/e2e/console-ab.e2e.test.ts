/**
 * A/B broadcasts in the console (issue 34, docs/ab-tests.md), end to end in headless Chromium against a real Formcast
 * (`node bin/formcast serve` on a temp SQLite file, its messages written to the outbox): the composer's A/B section
 * saves a test of two variants; a sent test's variants are shown side by side with the lead in plain words, and "Pick
 * this variant" chooses the winner. Screenshots in docs/images/console/ab-*.png in the light theme, the dark theme and
 * at 390 px (no horizontal scroll), axe-core (no serious or critical violation), no CSP violation or page error.
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
const SHOTS = path.join(ROOT, 'docs', 'images', 'console');
const PASSWORD = 'correct horse battery staple 42';
const OWNER = 'mia@acme.test';
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const COMPOSER = 'form[aria-labelledby="ab-h"]';
const RESULTS = 'section[aria-labelledby="ab-results-h"]';

describeBrowser('A/B broadcasts in the console (formcast serve, headless Chromium)', () => {
  const unavailable = consoleUnavailable();
  if (unavailable) console.warn(`console A/B e2e: skipped: ${unavailable}`);
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

  async function signedIn(to: string, options: BrowserContextOptions = {}): Promise<Page> {
    const context = await browser.newContext({ viewport: DESKTOP, colorScheme: 'light', ...options });
    await watchPages(context, csp, errors);
    const page = await context.newPage();
    await page.goto(`${server.url}/app/login?next=${encodeURIComponent(to)}`);
    await page.locator('input[name="email"]').fill(OWNER);
    await page.locator('input[name="password"]').fill(PASSWORD);
    await Promise.all([page.waitForURL(`${server.url}${to}`), page.locator('input[name="password"]').press('Enter')]);
    return page;
  }

  async function settled(p: Page): Promise<void> {
    await p.waitForFunction(() => document.querySelectorAll('.skeleton, .spinner').length === 0, undefined, {
      timeout: 15_000,
    });
  }

  /** The A/B card's screenshot (`card`), axe and no horizontal scroll over the whole page. */
  async function check(p: Page, name: string, card: string): Promise<void> {
    await settled(p);
    // A window tall enough for the whole card: no scrolling, so no sticky header or save bar drawn over it.
    const width = p.viewportSize()!.width;
    const box = await p.locator(card).boundingBox();
    await p.setViewportSize({ width, height: Math.max(900, Math.ceil((box?.y ?? 0) + (box?.height ?? 0) + 200)) });
    await p.locator(card).screenshot({ path: path.join(SHOTS, `ab-${name}.png`) });
    await expectNoSeriousAxe(p, name);
    const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, `${name}: horizontal scroll`).toBeLessThanOrEqual(0);
  }

  beforeAll(async () => {
    if (unavailable) return;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-ab-e2e-'));
    fs.mkdirSync(SHOTS, { recursive: true });
    const env = {
      DATABASE_URL: path.join(tmp, 'formcast.db'),
      OUTBOX_DIR: path.join(tmp, 'outbox'),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      DNS_SERVERS: '127.0.0.1:9',
      DNS_TIMEOUT_MS: '300',
      WORKER_POLL_MS: '200',
    };
    const created = await cli(['workspace', 'create', 'Acme', '--json'], env);
    const ws = created.workspace.id;
    key = created.apiKey.key;
    await cli(
      [
        'user',
        'create',
        '--workspace',
        ws,
        '--email',
        OWNER,
        '--role',
        'owner',
        '--name',
        'Mia Marketer',
        '--password-stdin',
        '--json',
      ],
      env,
      `${PASSWORD}\n`,
    );
    await cli(['domain', 'add', 'acme.test', '--workspace', ws, '--verified', '--json'], env);
    [server, browser] = await Promise.all([serve(env), launchBrowser()]);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    server?.child.kill('SIGTERM');
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it.skipIf(unavailable)(
    'the composer saves an A/B test of two variants',
    async () => {
      const b = await api('POST', '/v1/broadcasts', {
        name: 'November news',
        from: 'Acme <news@acme.test>',
        emailContent: { subject: 'What is new in November', html: '<p>Hello {{ contact.firstName }}</p>' },
      });
      const page = await signedIn(`/app/broadcasts/${b.id}`);
      await settled(page);
      await page.getByLabel('Test variants of this email first').check();
      const b2 = page.getByRole('group', { name: 'Variant B' });
      await b2.getByLabel('Subject').fill('Three things we shipped');
      await b2.getByLabel('Preview text').fill('And one we did not');
      await page.getByLabel('Test share (%)').fill('30');
      await page.getByLabel('Winner by').selectOption('CLICKS');
      await page.getByRole('button', { name: 'Save A/B test' }).click();
      await page.getByText('A/B test saved.').first().waitFor();
      const saved = await api('GET', `/v1/broadcasts/${b.id}`);
      expect(saved.abTest).toMatchObject({
        testPercent: 30,
        winnerBy: 'CLICKS',
        waitMinutes: 240,
        variants: [
          { id: 'a', subject: 'What is new in November', emailContent: null },
          { id: 'b', subject: 'Three things we shipped', previewText: 'And one we did not' },
        ],
      });
      await check(page, 'composer-light', COMPOSER);
      await page.context().close();
      const dark = await signedIn(`/app/broadcasts/${b.id}`, { colorScheme: 'dark' });
      await check(dark, 'composer-dark', COMPOSER);
      await dark.context().close();
      const phone = await signedIn(`/app/broadcasts/${b.id}`, { viewport: PHONE });
      await check(phone, 'composer-phone', COMPOSER);
      await phone.context().close();
      expect(csp).toEqual([]);
      expect(errors).toEqual([]);
    },
    120_000,
  );

  it.skipIf(unavailable)(
    'a sent test: variants side by side, the lead in words, "Pick this variant" chooses the winner',
    async () => {
      // 80 at 50 %: a test share of exactly 40, 20 per variant (docs/ab-tests.md, "The test share").
      for (let i = 0; i < 80; i++)
        await api('POST', '/v1/contacts', {
          email: `reader${i}@example.com`,
          firstName: `R${i}`,
          status: 'SUBSCRIBED',
        });
      const b = await api('POST', '/v1/broadcasts', {
        name: 'December news',
        from: 'Acme <news@acme.test>',
        emailContent: {
          subject: 'December',
          // With an image: a short HTML part without one gets no open pixel (docs/tracking.md).
          html: '<p><img src="https://images.example/logo.png" alt="Acme" width="120" height="40"></p><p>Hello {{ contact.firstName }}</p>',
        },
        abTest: {
          variants: [
            { id: 'a', subject: 'December at Acme' },
            { id: 'b', subject: 'Our December, in three pictures' },
          ],
          testPercent: 50,
          winnerBy: 'OPENS',
          waitMinutes: 240,
        },
      });
      await api('POST', `/v1/broadcasts/${b.id}/send`);
      // The test share goes out (to the outbox); the broadcast waits for its winner, SENDING.
      const deadline = Date.now() + 60_000;
      let got = await api('GET', `/v1/broadcasts/${b.id}`);
      while (
        !(got.stats?.variants?.length && got.stats.abResult.decidesAt && got.stats.queued === 0) &&
        Date.now() < deadline
      ) {
        await new Promise((r) => setTimeout(r, 300));
        got = await api('GET', `/v1/broadcasts/${b.id}`);
      }
      expect(got.status).toBe('SENDING');
      expect(got.stats.variants.map((v: { sent: number }) => v.sent).every((n: number) => n > 0)).toBe(true);

      // People open some of variant B's messages: their mail client loads the pixel (a browser's user agent).
      const outbox = path.join(tmp, 'outbox');
      const pixels = fs
        .readdirSync(outbox, { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.eml'))
        .map((f) =>
          fs
            .readFileSync(path.join(outbox, f), 'utf8')
            .replace(/=\r?\n/g, '')
            .replace(/=3D/g, '='),
        )
        .filter((m) => m.includes('Our December, in three pictures'))
        .map((m) => /https?:\/\/[^"\s]+\/t\/o\/[^"\s]+/.exec(m)?.[0])
        .filter((u): u is string => !!u);
      expect(pixels.length).toBeGreaterThan(0);
      for (const url of pixels.slice(0, Math.ceil(pixels.length * 0.6)))
        await fetch(url, {
          headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0' },
        });
      const opened = Date.now() + 15_000;
      while ((await api('GET', `/v1/broadcasts/${b.id}`)).stats.abResult.leader !== 'b' && Date.now() < opened)
        await new Promise((r) => setTimeout(r, 300));

      const page = await signedIn(`/app/broadcasts/${b.id}`);
      await page.getByRole('heading', { name: 'A/B test' }).waitFor();
      await page.getByText('B leads A by').waitFor();
      await page.getByText('The winner is chosen').waitFor();
      await expect(page.locator('[data-variant="a"]')).toBeDefined();
      await check(page, 'results-light', RESULTS);
      await page.context().close();
      const dark = await signedIn(`/app/broadcasts/${b.id}`, { colorScheme: 'dark' });
      await dark.getByRole('heading', { name: 'A/B test' }).waitFor();
      await check(dark, 'results-dark', RESULTS);
      await dark.context().close();
      const phone = await signedIn(`/app/broadcasts/${b.id}`, { viewport: PHONE });
      await phone.getByRole('heading', { name: 'A/B test' }).waitFor();
      await check(phone, 'results-phone', RESULTS);

      await phone.locator('[data-variant="b"]').getByRole('button', { name: 'Pick this variant' }).click();
      await phone.getByRole('button', { name: 'Pick variant B' }).click();
      await phone.getByText('Winner picked').first().waitFor();
      const picked = await api('GET', `/v1/broadcasts/${b.id}`);
      expect(picked.stats.abResult.winner).toBe('b');
      await phone.locator('[data-variant="b"] .badge-success').waitFor();
      await phone.context().close();
      expect(csp).toEqual([]);
      expect(errors).toEqual([]);
    },
    180_000,
  );
});
