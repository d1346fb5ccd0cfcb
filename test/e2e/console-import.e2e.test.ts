/**
 * The console's import with its column mapping, and the contact counts (issue 33 item 12), end to end: `formcast
 * serve` with the built console, headless Chromium. A marketer imports a CSV whose headers are a spreadsheet's
 * ("E-mail Address", FNAME, "Family Name", "Member Since", LEID…): the dialog reads the header and first five rows
 * in the browser, guesses what each column is, refuses to go on without an email column or with a bad property
 * name, and uploads with the `?columns=` map; the contacts arrive with the right fields (checked through the API).
 * The contacts list shows the total and the count of its filters. Every step in light, dark and at 390 px
 * (test-output/e2e/import-*.png; the ones in docs/screenshots/ are copies), axe-core (no serious or critical
 * violation), no horizontal scroll, no CSP violation or page error.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContextOptions, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBrowser, expectNoSeriousAxe, launchBrowser } from '../helpers/browser.js';
import { cli, consoleUnavailable, serve } from '../helpers/formcast-process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHOTS = path.join(ROOT, 'test-output', 'e2e');
const EMAIL = 'mia@acme.test';
const PASSWORD = 'correct horse battery staple 42';
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

/** A spreadsheet's export: odd headers, a semicolon as the delimiter, 7 rows (5 shown in the preview). */
const CSV = [
  'E-mail Address;FNAME;Family Name;Company Name;LEID;Member Since;State;Notes',
  'new1@acme.test;Ana;Silva;Acme Inc;1001;2024-01-05;active;met at the fair',
  'ADA@acme.test;Augusta Ada;King;Analytical Engines;1002;2023-12-10;;',
  'not-an-email;Bad;Row;Nowhere;1003;2024-02-01;active;',
  'bounced@acme.test;Bo;Unce;Acme Inc;1004;2024-02-02;subscribed;',
  'new2@acme.test;"Two, Jr.";Lee;;1005;2024-03-03;;',
  'new3@acme.test;Three;;Beta;1006;;unsubscribed;',
  'new4@acme.test;Four;Four;Gamma;1007;2024-04-04;;',
].join('\r\n');

describeBrowser(
  'the import with its column mapping, and the contact counts (formcast serve, headless Chromium)',
  () => {
    const unavailable = consoleUnavailable();
    if (unavailable) console.warn(`console import e2e: skipped: ${unavailable}`);
    let browser: Browser;
    let server: Awaited<ReturnType<typeof serve>>;
    let tmp: string;
    let key: string;
    const cspViolations: string[] = [];
    const pageErrors: string[] = [];

    async function api(method: string, url: string, body?: unknown, type = 'application/json'): Promise<any> {
      const res = await fetch(`${server.url}${url}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': type } : {}) },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text}`);
      return text ? JSON.parse(text) : null;
    }

    async function contact(email: string): Promise<any> {
      return (await api('GET', `/v1/contacts?email=${encodeURIComponent(email)}`)).data[0];
    }

    async function signedIn(options: BrowserContextOptions = {}): Promise<Page> {
      const context = await browser.newContext({ viewport: DESKTOP, colorScheme: 'light', ...options });
      const page = await context.newPage();
      page.on('console', (m) => {
        if (/Content[ -]Security[ -]Policy/i.test(m.text())) cspViolations.push(`${page.url()}: ${m.text()}`);
      });
      page.on('pageerror', (e) => pageErrors.push(String(e)));
      await page.goto(`${server.url}/app/login?next=${encodeURIComponent('/app/contacts')}`);
      await page.locator('input[name="email"]').fill(EMAIL);
      await page.locator('input[name="password"]').fill(PASSWORD);
      await Promise.all([
        page.waitForURL(`${server.url}/app/contacts`),
        page.locator('input[name="password"]').press('Enter'),
      ]);
      await page.getByRole('heading', { level: 1, name: 'Contacts' }).waitFor();
      return page;
    }

    /** Screenshot, axe, and nothing wider than the screen. */
    async function check(page: Page, name: string): Promise<void> {
      await page.waitForFunction(() => document.querySelectorAll('.skeleton, .spinner').length === 0);
      await page.screenshot({ path: path.join(SHOTS, `import-${name}.png`), fullPage: true });
      // The dialog (a modal on top of the page) as it is seen: its own screenshot, scrolled content included.
      const dialog = page.locator('dialog[open]');
      if (await dialog.count()) await dialog.screenshot({ path: path.join(SHOTS, `import-${name}-dialog.png`) });
      await expectNoSeriousAxe(page, name);
      const width = page.viewportSize()!.width;
      expect(await page.evaluate(() => document.documentElement.scrollWidth), name).toBeLessThanOrEqual(width);
    }

    const selectOf = (dialog: Locator, header: string) => dialog.getByLabel(`Import “${header}” as`);

    beforeAll(async () => {
      if (unavailable) return;
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-console-import-e2e-'));
      fs.mkdirSync(SHOTS, { recursive: true });
      const env = {
        DATABASE_URL: path.join(tmp, 'formcast.db'),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        DNS_SERVERS: '127.0.0.1:9',
        DNS_TIMEOUT_MS: '300',
      };
      const created = await cli(['workspace', 'create', 'Acme', '--json'], env);
      key = created.apiKey.key;
      const [, started, launched] = await Promise.all([
        cli(
          [
            'user',
            'create',
            '--workspace',
            created.workspace.id,
            '--email',
            EMAIL,
            '--role',
            'owner',
            '--name',
            'Mia Marketer',
            '--password-stdin',
            '--json',
          ],
          env,
          `${PASSWORD}\n`,
        ),
        serve(env),
        launchBrowser(),
      ]);
      server = started;
      browser = launched;
      // Ada is there already (the import updates her); bounced@ is on the suppression list.
      await api('POST', '/v1/contacts', { email: 'ada@acme.test', firstName: 'Ada', properties: { plan: 'pro' } });
      await api('POST', '/v1/contacts', { email: 'grace@acme.test', firstName: 'Grace', status: 'UNSUBSCRIBED' });
      await api('POST', '/v1/suppressions', { email: 'bounced@acme.test', reason: 'MANUAL' });
    }, 180_000);

    afterAll(async () => {
      await browser?.close();
      server?.child.kill('SIGTERM');
      if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    });

    it.skipIf(unavailable)(
      'maps odd headers, refuses a file without an email column or with a bad property name, imports with the map',
      async () => {
        const page = await signedIn();
        await expect.poll(() => page.locator('.page-header').first().textContent()).toContain('2 contacts');
        await page.getByRole('button', { name: 'Import', exact: true }).click();
        const dialog = page.getByRole('dialog', { name: 'Import contacts' });
        await dialog
          .getByLabel('File')
          .setInputFiles({ name: 'export.csv', mimeType: 'text/csv', buffer: Buffer.from(CSV) });
        await dialog.getByRole('group', { name: 'Match the columns' }).waitFor();

        // The preview: the header and the first 5 rows (of 7), read in the browser; each column says what it becomes.
        const preview = dialog.getByRole('region', { name: 'The first rows of the file' });
        expect(await preview.locator('tbody tr').count()).toBe(5);
        expect(await preview.locator('tbody').textContent()).toContain('Two, Jr.');
        expect(await preview.locator('tbody').textContent()).not.toContain('new3@acme.test');
        // The guesses, from the names.
        const guessed = {
          'E-mail Address': 'email',
          FNAME: 'firstName',
          'Family Name': 'lastName',
          'Company Name': 'property',
          LEID: 'property',
          'Member Since': 'property',
          State: 'status',
          Notes: 'property',
        };
        for (const [header, target] of Object.entries(guessed))
          expect(await selectOf(dialog, header).inputValue(), header).toBe(target);
        expect(
          await dialog
            .getByLabel('Property name for')
            .evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value)),
        ).toEqual(['companyName', 'LEID', 'memberSince', 'Notes']);
        await expect.poll(() => preview.locator('thead').textContent()).toContain('E-mail Address→ email address');
        await check(page, 'mapping');

        // No email column, and a property name with a space: refused in words, next to the columns, nothing sent.
        await selectOf(dialog, 'E-mail Address').selectOption('skip');
        await selectOf(dialog, 'LEID').selectOption('skip');
        await selectOf(dialog, 'Notes').selectOption('skip');
        const memberSince = dialog.getByLabel('Property name for “Member Since”');
        await memberSince.fill('joined on');
        await dialog.getByRole('button', { name: 'Import', exact: true }).click();
        await dialog.getByText('2 things to fix before the import:').waitFor();
        await dialog.getByText('Choose the column that holds the email addresses: every contact needs one.').waitFor();
        await dialog.getByText('Member Since: A property name starts with a letter').waitFor();
        await expect.poll(() => preview.locator('thead').textContent()).toContain('LEID→ not imported');
        await check(page, 'mapping-errors');
        expect((await api('GET', '/v1/contacts/imports')).data).toHaveLength(0);

        // Fixed: the email column back, the property renamed. Then the upload with the map.
        await selectOf(dialog, 'E-mail Address').selectOption('email');
        await memberSince.fill('joined');
        const [request] = await Promise.all([
          page.waitForRequest((r) => r.url().includes('/v1/contacts/imports') && r.method() === 'POST'),
          dialog.getByRole('button', { name: 'Import', exact: true }).click(),
        ]);
        expect(JSON.parse(new URL(request.url()).searchParams.get('columns')!)).toEqual({
          'E-mail Address': 'email',
          FNAME: 'firstName',
          'Family Name': 'lastName',
          'Company Name': 'properties.companyName',
          LEID: null,
          'Member Since': 'properties.joined',
          State: 'status',
          Notes: null,
        });
        await dialog.getByText('Import finished.').waitFor();
        const summary = dialog.locator('.import-summary');
        await expect
          .poll(() => summary.textContent())
          .toContain('7 rows read: 5 new contacts, 1 contact updated, 1 row skipped.');
        expect(await summary.textContent()).toContain('One of the imported contacts is on the suppression list');
        expect(await summary.textContent()).toContain('The skipped row was not imported');
        await dialog.getByRole('cell', { name: '4', exact: true }).waitFor();
        await dialog.getByText('How the columns were imported').click();
        await dialog.getByText('Member Since → property “joined”').waitFor();
        await check(page, 'result');

        // The contacts, through the API: the fields the columns were mapped to, and nothing of the skipped ones.
        const ana = await contact('new1@acme.test');
        expect(ana).toMatchObject({
          firstName: 'Ana',
          lastName: 'Silva',
          status: 'SUBSCRIBED',
          properties: { companyName: 'Acme Inc', joined: '2024-01-05' },
        });
        expect(Object.keys(ana.properties).sort()).toEqual(['companyName', 'joined']);
        expect(await contact('ada@acme.test')).toMatchObject({
          firstName: 'Augusta Ada',
          lastName: 'King',
          properties: { companyName: 'Analytical Engines', joined: '2023-12-10' },
        });
        expect(await contact('new2@acme.test')).toMatchObject({ firstName: 'Two, Jr.', lastName: 'Lee' });
        expect(await contact('new3@acme.test')).toMatchObject({ status: 'UNSUBSCRIBED', lastName: null });
        expect(await contact('bounced@acme.test')).toMatchObject({ suppressed: true });
        // The row with no address was not imported: 2 contacts before, 5 new.
        expect(await api('GET', '/v1/contacts/count')).toEqual({ count: 7 });

        // The list counts them: 2 before + 5 new; and the count of a filter.
        await dialog.getByRole('button', { name: 'Done' }).click();
        await expect.poll(() => page.locator('.page-header').first().textContent()).toContain('7 contacts');
        // Grace, new3 (and bounced@, whose suppressed address kept it from being subscribed), as the API counts them.
        const unsubscribed = (await api('GET', '/v1/contacts/count?status=UNSUBSCRIBED')).count as number;
        expect(unsubscribed).toBeGreaterThanOrEqual(2);
        await page.getByLabel('Status').selectOption('UNSUBSCRIBED');
        await page.getByText(`${unsubscribed} contacts match these filters, of 7 contacts in all.`).waitFor();
        await check(page, 'contacts-count');
        await page.getByLabel('Status').selectOption('PENDING');
        await page.getByText('No contacts match these filters').waitFor();
        await page.context().close();
      },
      180_000,
    );

    it.skipIf(unavailable)(
      'the same steps in the dark theme and at 390 px',
      async () => {
        for (const [name, options] of [
          ['dark', { colorScheme: 'dark' }],
          ['phone', { viewport: PHONE }],
        ] as const) {
          const page = await signedIn(options);
          await page.getByRole('button', { name: 'Import', exact: true }).click();
          const dialog = page.getByRole('dialog', { name: 'Import contacts' });
          await dialog
            .getByLabel('File')
            .setInputFiles({ name: 'export.csv', mimeType: 'text/csv', buffer: Buffer.from(CSV) });
          await dialog.getByRole('group', { name: 'Match the columns' }).waitFor();
          await check(page, `mapping-${name}`);
          await selectOf(dialog, 'E-mail Address').selectOption('skip');
          await dialog.getByRole('button', { name: 'Import', exact: true }).click();
          await dialog.getByText('Choose the column that holds the email addresses').first().waitFor();
          await check(page, `mapping-errors-${name}`);
          await selectOf(dialog, 'E-mail Address').selectOption('email');
          await dialog.getByRole('button', { name: 'Import', exact: true }).click();
          await dialog.getByText('Import finished.').waitFor();
          // The same file again: everyone is there already.
          await expect.poll(() => dialog.locator('.import-summary').textContent()).toContain('0 new contacts');
          await check(page, `result-${name}`);
          await dialog.getByRole('button', { name: 'Done' }).click();
          await page.getByLabel('Status').selectOption('SUBSCRIBED');
          await page.getByText(/contacts match these filters, of 7 contacts in all/).waitFor();
          await check(page, `contacts-count-${name}`);
          await page.context().close();
        }
        expect(cspViolations).toEqual([]);
        expect(pageErrors).toEqual([]);
      },
      180_000,
    );
  },
);
