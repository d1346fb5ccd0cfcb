/**
 * Tags, search and bulk actions in the console (issue 34), end to end in headless Chromium against a real Formcast
 * (`node bin/formcast serve` on a temp SQLite file, whose worker runs the bulk jobs):
 * - Contacts: the search as you type (part of an address or a name), the tag filter, the tags column; ticking a page
 *   and "select all that match", a bulk tag with its progress, a bulk delete behind a confirmation.
 * - A contact's tags as chips: added and removed.
 * - The segment builder's tag condition with its live count.
 * Each page: axe-core (no serious or critical violation), light, dark and 390 px with no sideways scroll, and
 * screenshots (test-output/e2e/tags, or docs/images/console with UPDATE_SCREENSHOTS=1).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBrowser, expectNoSeriousAxe, launchBrowser, watchPages } from '../helpers/browser.js';
import { apiCaller, cli, consoleUnavailable, serve } from '../helpers/formcast-process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHOTS = process.env.UPDATE_SCREENSHOTS
  ? path.join(ROOT, 'docs', 'images', 'console')
  : path.join(ROOT, 'test-output', 'e2e', 'tags');
const PASSWORD = 'correct horse battery staple 42';
const OWNER = 'mia@acme.test';
const DESKTOP = { width: 1280, height: 860 };
const PHONE = { width: 390, height: 844 };

describeBrowser('tags, search and bulk actions on contacts (formcast serve, Chromium)', () => {
  const unavailable = consoleUnavailable();
  if (unavailable) console.warn(`console tags e2e: skipped: ${unavailable}`);
  let browser: Browser;
  let server: Awaited<ReturnType<typeof serve>>;
  let tmp: string;
  let key: string;
  let adaId: string;
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

  async function check(p: Page, name: string, heading: string | RegExp): Promise<void> {
    await settled(p, heading);
    expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(p.viewportSize()!.width);
    await p.evaluate(() => {
      for (const b of document.querySelectorAll<HTMLButtonElement>('.toast button')) b.click();
    });
    await p.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
    await expectNoSeriousAxe(p, name);
  }

  async function signedIn(
    opts: { viewport?: { width: number; height: number }; dark?: boolean; next?: string } = {},
  ): Promise<Page> {
    const ctx = await browser.newContext({
      viewport: opts.viewport ?? DESKTOP,
      colorScheme: opts.dark ? 'dark' : 'light',
    });
    await watchPages(ctx, csp, errors);
    const p = await ctx.newPage();
    const next = opts.next ?? '/app/contacts';
    await p.goto(`${server.url}/app/login?next=${encodeURIComponent(next)}`);
    await p.locator('input[name="email"]').fill(OWNER);
    await p.locator('input[name="password"]').fill(PASSWORD);
    await Promise.all([p.waitForURL(`${server.url}${next}`), p.locator('input[name="password"]').press('Enter')]);
    return p;
  }

  const rows = (p: Page) => p.locator('table.table tbody tr');
  const until = async (what: () => Promise<boolean>, why: string) => {
    for (let i = 0; i < 200; i++) {
      if (await what()) return;
      await new Promise((r) => setTimeout(r, 150));
    }
    throw new Error(`timed out waiting: ${why}`);
  };

  beforeAll(async () => {
    if (unavailable) return;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-tags-e2e-'));
    fs.mkdirSync(SHOTS, { recursive: true });
    const env = { DATABASE_URL: path.join(tmp, 'formcast.db'), HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
    const created = await cli(['workspace', 'create', 'Acme', '--json'], env);
    key = created.apiKey.key;
    const ws = created.workspace.id;
    const [, started, launched] = await Promise.all([
      cli(
        ['user', 'create', '--workspace', ws, '--email', OWNER, '--role', 'owner', '--password-stdin', '--json'],
        env,
        `${PASSWORD}\n`,
      ),
      serve(env),
      launchBrowser(),
    ]);
    server = started;
    browser = launched;
    adaId = (
      await api('POST', '/v1/contacts', {
        email: 'ada@example.com',
        firstName: 'Ada',
        lastName: 'Lovelace',
        tags: ['VIP', 'Customer'],
      })
    ).id;
    await api('POST', '/v1/contacts', { email: 'grace@navy.example', firstName: 'Grace', lastName: 'Hopper' });
    for (let i = 0; i < 58; i++)
      await api('POST', '/v1/contacts', {
        email: `reader${String(i).padStart(2, '0')}@list.example`,
        firstName: 'Reader',
        tags: i % 2 ? ['Newsletter'] : [],
      });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    server?.child.kill('SIGTERM');
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it.skipIf(unavailable)(
    'searches as you type, filters by tag, and tags every contact that matches in bulk (light)',
    async () => {
      const p = await signedIn();
      await settled(p, 'Contacts');
      await until(async () => (await rows(p).count()) === 50, 'the first page');
      // Search as you type: a part of a name.
      await p.getByLabel('Search', { exact: true }).fill('lovel');
      await until(async () => (await rows(p).count()) === 1, 'the search');
      await expect.poll(() => rows(p).first().innerText()).toContain('VIP');
      await check(p, 'contacts-search', 'Contacts');
      await p.getByLabel('Search', { exact: true }).fill('');
      // The tag filter: 29 readers have "Newsletter".
      await p.getByLabel('Tag', { exact: true }).selectOption('Newsletter');
      await until(async () => (await rows(p).count()) === 29, 'the tag filter');
      await p.getByText('29 contacts match these filters').waitFor();
      // Every contact that matches the search "reader": 58, more than a page.
      await p.getByLabel('Tag', { exact: true }).selectOption('');
      await p.getByLabel('Search', { exact: true }).fill('reader');
      await p.getByText('58 contacts match these filters').waitFor();
      await p.getByLabel('Select the contacts of this page').check();
      await p.getByRole('button', { name: 'Select all 58 that match' }).click();
      await p.getByText('All 58 contacts that match').waitFor();
      await p.getByLabel('Action', { exact: true }).selectOption('tag');
      await p.getByLabel('Tag', { exact: true }).last().fill('Spring 2026');
      await check(p, 'contacts-bulk', 'Contacts');
      await p.getByRole('button', { name: 'Apply' }).click();
      await p.getByText(/Tagging done: 58 contacts/).waitFor({ timeout: 30_000 });
      const tagged = await api('GET', '/v1/contacts/count?tag=spring%202026');
      expect(tagged.count).toBe(58);
      expect(errors).toEqual([]);
    },
    120_000,
  );

  it.skipIf(unavailable)(
    "a contact's tags as chips, added and removed; a bulk delete asks first (dark, and 390 px)",
    async () => {
      const p = await signedIn({ dark: true, next: `/app/contacts/${adaId}` });
      await settled(p, /Ada Lovelace|ada@example.com/);
      const tags = p.getByRole('list', { name: 'Tags' });
      await expect.poll(() => tags.innerText()).toContain('VIP');
      await p.getByLabel('New tag').fill('Speaker');
      await p.getByRole('button', { name: 'Add', exact: true }).click();
      await expect.poll(() => tags.innerText()).toContain('Speaker');
      await p.getByRole('button', { name: 'Remove the tag Customer' }).click();
      await expect.poll(async () => (await api('GET', `/v1/contacts/${adaId}`)).tags).toEqual(['VIP', 'Speaker']);
      await check(p, 'contact-tags-dark', /Ada Lovelace|ada@example.com/);

      const phone = await signedIn({ viewport: PHONE });
      await settled(phone, 'Contacts');
      await phone.getByLabel('Search', { exact: true }).fill('grace');
      await until(async () => (await rows(phone).count()) === 1, 'grace');
      await phone.getByLabel('Select grace@navy.example').check();
      await phone.getByLabel('Action', { exact: true }).selectOption('delete');
      await check(phone, 'contacts-bulk-phone', 'Contacts');
      await phone.getByRole('button', { name: 'Apply' }).click();
      await phone.getByRole('dialog').getByText('This cannot be undone').waitFor();
      await phone.getByRole('button', { name: 'Delete 1 contact' }).click();
      await until(
        async () => (await api('GET', '/v1/contacts?email=grace%40navy.example')).data.length === 0,
        'the delete',
      );
      expect(errors).toEqual([]);
    },
    120_000,
  );

  it.skipIf(unavailable)(
    "the segment builder's tag condition, with its live count",
    async () => {
      const p = await signedIn({ next: '/app/segments/new' });
      await settled(p, 'New segment');
      await p.getByRole('button', { name: '+ Tag condition' }).click();
      await p
        .getByLabel(/: tag$/)
        .last()
        .fill('vip');
      await until(async () => (await p.getByTestId('segment-count').innerText()).trim() === '1', 'the live count');
      await check(p, 'segment-tag-condition', 'New segment');
      expect(errors).toEqual([]);
    },
    120_000,
  );
});
