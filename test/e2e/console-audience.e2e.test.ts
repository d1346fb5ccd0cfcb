/**
 * The console's audience and email pages end to end (contacts, segments, topics, broadcasts), in headless
 * Chromium against a real Formcast (`node bin/formcast serve` on a temp SQLite file, SMTP_URL at the test SMTP
 * server of test/helpers/smtp.ts) serving the built console. A marketer signs in through /app/login, finds a
 * contact and opens its page, imports a CSV, builds a segment with the builder and sees the live count, composes
 * a personalised broadcast, previews it, test-sends it, sends it behind the confirmation, watches it finish and
 * opens the report. Every page: a screenshot in test-output/e2e/console-*.png, axe-core (no serious or critical
 * violation) and no Content-Security-Policy violation; the contacts list and the composer also at 390 px.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBrowser, launchBrowser } from '../helpers/browser.js';
import { startSmtpServer } from '../helpers/smtp.js';
import { cli, consoleUnavailable, serve } from '../helpers/formcast-process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHOTS = path.join(ROOT, 'test-output', 'e2e');
const AXE = fs.readFileSync(path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
const EMAIL = 'mia@acme.test';
const PASSWORD = 'correct horse battery staple 42';

describeBrowser(
  "the console's contacts, segments, topics and broadcasts end to end (formcast serve, headless Chromium)",
  () => {
    const unavailable = consoleUnavailable();
    if (unavailable) console.warn(`console audience e2e: skipped: ${unavailable}`);
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    let server: Awaited<ReturnType<typeof serve>>;
    let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
    let tmp: string;
    let key: string;
    let topicId: string;
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

    async function axe(p: Page, name: string): Promise<void> {
      await p.evaluate(AXE);
      const result = await p.evaluate(async () => {
        const r = await (window as any).axe.run(document, { resultTypes: ['violations'] });
        return r.violations.map((v: any) => ({
          id: v.id,
          impact: v.impact,
          help: v.help,
          nodes: v.nodes.slice(0, 3).map((n: any) => n.target.join(' ')),
        }));
      });
      const bad = result.filter((v: any) => v.impact === 'serious' || v.impact === 'critical');
      expect(bad, `axe on ${name}: ${JSON.stringify(bad, null, 2)}`).toEqual([]);
    }

    async function shot(p: Page, name: string): Promise<void> {
      await p.screenshot({ path: path.join(SHOTS, `console-${name}.png`), fullPage: true });
    }

    async function settled(p: Page, heading: string | RegExp): Promise<void> {
      await p.getByRole('heading', { level: 1, name: heading }).waitFor();
      await p.waitForFunction(() => document.querySelectorAll('.skeleton, .spinner').length === 0, undefined, {
        timeout: 15_000,
      });
    }

    async function check(p: Page, name: string, heading: string | RegExp): Promise<void> {
      await settled(p, heading);
      await shot(p, name);
      await axe(p, name);
    }

    beforeAll(async () => {
      if (unavailable) return;
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-console-audience-e2e-'));
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
      const [, , started, launched] = await Promise.all([
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
        cli(['domain', 'add', 'acme.test', '--workspace', created.workspace.id, '--verified', '--json'], env),
        serve(env),
        launchBrowser(),
      ]);
      server = started;
      browser = launched;
      // The audience: a topic and 40 contacts (pro and free plans), through the API.
      topicId = (await api('POST', '/v1/topics', { name: 'Newsletter', defaultSubscription: 'OPT_IN' })).id;
      const rows = [
        {
          email: 'ada@acme.test',
          firstName: 'Ada',
          lastName: 'Lovelace',
          properties: { plan: 'pro', city: 'London', score: 97 },
        },
      ];
      for (let i = 0; i < 39; i++)
        rows.push({
          email: `person${i}@acme.test`,
          firstName: `Person${i}`,
          lastName: 'Example',
          properties: { plan: i % 3 === 0 ? 'pro' : 'free', city: 'Berlin', score: i },
        });
      await api('POST', '/v1/contacts/imports', rows.map((r) => JSON.stringify(r)).join('\n'), 'application/x-ndjson');
      context = await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true });
      page = await context.newPage();
      page.on('console', (m) => {
        if (/Content[ -]Security[ -]Policy/i.test(m.text()))
          cspViolations.push(`${page.url()} ${JSON.stringify(m.location())}: ${m.text()}`);
      });
      page.on('pageerror', (e) => pageErrors.push(String(e)));
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      server?.child.kill('SIGTERM');
      await smtp?.close();
      if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    });

    it.skipIf(unavailable)(
      'signs in, finds a contact by email and opens its page: fields, topics, activity',
      async () => {
        await page.goto(`${server.url}/app/login?next=${encodeURIComponent('/app/contacts')}`);
        await page.locator('input[name="email"]').fill(EMAIL);
        await page.locator('input[name="password"]').fill(PASSWORD);
        await Promise.all([
          page.waitForURL(`${server.url}/app/contacts`),
          page.locator('input[name="password"]').press('Enter'),
        ]);
        await check(page, 'contacts', 'Contacts');
        expect(await page.locator('table.table tbody tr').count()).toBe(40);

        // The search (as you type) is case-insensitive, on a part of the address or the name.
        await page.getByLabel('Search', { exact: true }).fill('ADA@acme.test');
        await page.waitForFunction(() => document.querySelectorAll('table.table tbody tr').length === 1);
        await page.getByRole('link', { name: 'ada@acme.test' }).click();
        await page.waitForURL(/\/app\/contacts\/ct_/);
        await check(page, 'contact', 'Ada Lovelace');
        await expect.poll(() => page.getByLabel('First name').inputValue()).toBe('Ada');
        await page.getByText('Contact created').first().waitFor();

        // A property edited as a key/value row, saved through PUT.
        await page.getByRole('button', { name: 'Add property' }).click();
        await page.getByLabel('Property 4 key').fill('company');
        await page.getByLabel('Property 4 value').fill('Analytical Engines, Ltd.');
        await page.getByRole('button', { name: 'Save contact' }).click();
        await page.getByText('Contact saved.').waitFor();
        const ada = (await api('GET', '/v1/contacts?email=ada@acme.test')).data[0];
        expect(ada.properties).toEqual({ plan: 'pro', city: 'London', score: 97, company: 'Analytical Engines, Ltd.' });

        // The topic switch.
        const sw = page.getByRole('switch', { name: 'Newsletter' });
        expect(await sw.isChecked()).toBe(true);
        // A click, not uncheck(): the switch follows the contact's data, which React sets a moment after the click.
        await sw.click();
        await page.getByText('Unsubscribed from Newsletter.').waitFor();
        await expect.poll(() => sw.isChecked()).toBe(false);
        expect((await api('GET', `/v1/contacts/${ada.id}`)).topics).toEqual([
          { id: topicId, name: 'Newsletter', subscribed: false },
        ]);
        await sw.click();
        await page.getByText('Subscribed to Newsletter.').waitFor();
        await expect.poll(() => sw.isChecked()).toBe(true);
        expect((await api('GET', `/v1/contacts/${ada.id}`)).topics).toEqual([
          { id: topicId, name: 'Newsletter', subscribed: true },
        ]);
        await shot(page, 'contact-edited');
      },
      120_000,
    );

    it.skipIf(unavailable)(
      'imports a CSV with a progress bar, showing counts and the rejected rows by line',
      async () => {
        await page.getByRole('link', { name: 'Contacts', exact: true }).click();
        await settled(page, 'Contacts');
        await page.getByRole('button', { name: 'Import' }).click();
        const dialog = page.getByRole('dialog', { name: 'Import contacts' });
        const csv =
          'email,firstName,plan\nnew1@acme.test,New,pro\nnot-an-email,Bad,free\nnew2@acme.test,"Two, Jr.",free\n';
        await dialog
          .getByLabel('File')
          .setInputFiles({ name: 'people.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
        await dialog.getByRole('button', { name: 'Import' }).click();
        await dialog.getByText('Import finished.').waitFor();
        await expect
          .poll(() => dialog.getByRole('status').first().textContent())
          .toContain('3 rows read: 2 new contacts, 0 contacts updated, 1 row skipped.');
        await dialog.getByRole('cell', { name: '3', exact: true }).waitFor();
        await shot(page, 'contacts-import');
        await axe(page, 'contacts-import');
        await dialog.getByRole('button', { name: 'Done' }).click();

        // The export of every contact: the same file the API streams.
        await page.getByRole('button', { name: 'Export CSV' }).click();
        const exportDialog = page.getByRole('dialog', { name: 'Export contacts as CSV' });
        await shot(page, 'contacts-export');
        const [download] = await Promise.all([
          page.waitForEvent('download'),
          exportDialog.getByRole('link', { name: 'Download CSV' }).click(),
        ]);
        const text = fs.readFileSync((await download.path())!, 'utf8');
        expect(text.split('\r\n')[0]).toBe(
          'id,email,firstName,lastName,status,suppressed,properties,createdAt,updatedAt,tags,timezone',
        );
        expect(text).toContain('"Two, Jr."');
        expect(text.trim().split('\r\n')).toHaveLength(43);
      },
      120_000,
    );

    it.skipIf(unavailable)(
      'builds a segment with the builder and sees the live count; topics',
      async () => {
        await page.getByRole('link', { name: 'Segments' }).click();
        await check(page, 'segments-empty', 'Segments');
        await page.getByRole('button', { name: 'New segment' }).first().click();
        await settled(page, 'New segment');
        await page.getByLabel('Name').fill('Pro plan');
        // The first condition: Property plan is "pro".
        await page.getByLabel('Filter, item 1: field').selectOption('properties');
        await page.getByLabel('Filter, item 1: property key').fill('plan');
        await page.getByLabel('Filter, item 1: operator').selectOption('eq');
        await page.getByLabel('Filter, item 1: value').fill('pro');
        // 1 (Ada) + 13 of the 39 + new1 from the import.
        await expect.poll(() => page.getByTestId('segment-count').textContent(), { timeout: 10_000 }).toBe('15');
        // A topic condition narrows it: subscribed to the newsletter (everyone, by default).
        await page.getByRole('button', { name: '+ Topic condition' }).click();
        await expect.poll(() => page.getByTestId('segment-count').textContent(), { timeout: 10_000 }).toBe('15');
        // A nested any-group: score at least 90, or city is London → Ada only.
        await page.getByRole('button', { name: '+ Group' }).first().click();
        const g = 'Filter, item 3 (group), item 1';
        await page.getByLabel(`${g}: field`).selectOption('properties');
        await page.getByLabel(`${g}: property key`).fill('city');
        await page.getByLabel(`${g}: operator`).selectOption('eq');
        await page.getByLabel(`${g}: value`).fill('London');
        await expect.poll(() => page.getByTestId('segment-count').textContent(), { timeout: 10_000 }).toBe('1');
        // An invalid value shows the API's error next to its condition.
        await page.getByLabel(`${g}: property key`).fill('9bad');
        await page
          .getByText(/must match|property key|pattern/i)
          .first()
          .waitFor({ timeout: 10_000 });
        await page.getByLabel(`${g}: property key`).fill('city');
        await expect.poll(() => page.getByTestId('segment-count').textContent(), { timeout: 10_000 }).toBe('1');
        // Remove the group again; the JSON view shows the filter.
        await page.getByRole('button', { name: 'Remove Filter, item 3', exact: true }).click();
        await page.getByRole('button', { name: /Show the filter as JSON/ }).click();
        const json = JSON.parse((await page.locator('#filter-json').textContent())!);
        expect(json).toEqual({
          all: [
            { field: 'properties.plan', op: 'eq', value: 'pro' },
            { topic: topicId, subscribed: true },
          ],
        });
        await expect.poll(() => page.getByTestId('segment-count').textContent(), { timeout: 10_000 }).toBe('15');
        await check(page, 'segment-builder', 'New segment');
        await page.getByRole('button', { name: 'Create segment' }).click();
        await page.waitForURL(/\/app\/segments\/seg_/);
        await settled(page, 'Pro plan');
        await page.getByRole('link', { name: 'Segments' }).first().click();
        await check(page, 'segments', 'Segments');

        await page.getByRole('link', { name: 'Topics' }).click();
        await check(page, 'topics', 'Topics');
        await page.getByRole('button', { name: 'New topic' }).click();
        const dialog = page.getByRole('dialog', { name: 'New topic' });
        await dialog.getByLabel('Name').fill('Events');
        await dialog.getByLabel('Default subscription').selectOption('OPT_OUT');
        await dialog.getByRole('button', { name: 'Create topic' }).click();
        await page.getByRole('cell', { name: 'Events', exact: true }).waitFor();
      },
      120_000,
    );

    it.skipIf(unavailable)(
      'composes a personalised broadcast, previews it, test-sends, sends it behind the confirmation and opens the report',
      async () => {
        await page.getByRole('link', { name: 'Broadcasts' }).click();
        await check(page, 'broadcasts-empty', 'Broadcasts');
        await page.getByRole('button', { name: 'New broadcast' }).click();
        const dialog = page.getByRole('dialog', { name: 'New broadcast' });
        await dialog.getByLabel('Name').fill('March news');
        // HTML written by hand (the visual editor, the default, has its own suite: console-editor.e2e.test.ts).
        await dialog.getByLabel(/^Code/).check();
        await dialog.getByRole('button', { name: 'Create draft' }).click();
        await page.waitForURL(/\/app\/broadcasts\/[^/]+$/);
        await settled(page, 'March news');

        await page.getByLabel('From').fill('Acme <news@acme.test>');
        await page.getByLabel('Segment').selectOption({ label: 'Pro plan' });
        await page.getByLabel('Topic').selectOption({ label: 'Newsletter' });
        await page.getByLabel('Subject').fill('Hi {{ contact.firstName | default: "there" }}, March news');
        await page.getByLabel('Preview text').fill('What is new this month');
        await page
          .locator('.cm-content')
          .fill(
            '<h1 style="color:#2f4fd6">Hello {{ contact.firstName }}</h1><p>Your plan: {{ contact.properties.plan }}.</p><p><a href="https://acme.test/news">Read more</a></p><p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>',
          );
        await page.getByRole('button', { name: 'Save', exact: true }).click();
        await page.getByText('Broadcast saved.').waitFor();

        // The preview for Ada, in the sandboxed iframe.
        await page.getByLabel('Render for').selectOption({ label: 'ada@acme.test — Ada Lovelace' });
        await expect
          .poll(() => page.getByTestId('preview-subject').textContent(), { timeout: 10_000 })
          .toBe('Hi Ada, March news');
        const frame = page.frameLocator('iframe[title^="Email preview"]');
        await frame.getByRole('heading', { name: 'Hello Ada' }).waitFor();
        expect(await frame.locator('h1').evaluate((h) => getComputedStyle(h).color)).toBe('rgb(47, 79, 214)');
        expect(await page.locator('iframe[title^="Email preview"]').getAttribute('sandbox')).toBe('allow-same-origin');

        // Preflight has run; a test send to two addresses, personalised for Ada.
        await page.getByText('Nothing blocks sending.').waitFor({ timeout: 15_000 });
        await page.getByLabel('To (up to 5 addresses)').fill('qa@acme.test, boss@acme.test');
        await page.getByRole('button', { name: 'Send test' }).click();
        await page.getByText('Sent to qa@acme.test, boss@acme.test.').waitFor({ timeout: 15_000 });
        await expect.poll(() => smtp.received.filter((m) => m.to === 'qa@acme.test').length).toBe(1);
        expect(smtp.received.find((m) => m.to === 'qa@acme.test')!.parsed.subject).toBe('[Test] Hi Ada, March news');

        // The schedule field shows the UTC equivalent with the offset.
        await page.getByLabel(/^Send at \(/).fill('2031-06-01T09:30');
        await page.getByText(/that is 2031-06-01 \d\d:\d\d UTC/).waitFor();
        await check(page, 'broadcast-composer', 'March news');

        // Send, behind the confirmation with the audience count.
        const before = smtp.received.length;
        await page.getByRole('button', { name: 'Send now…' }).click();
        const confirm = page.getByRole('dialog', { name: 'Send this broadcast now?' });
        await expect.poll(() => confirm.getByTestId('audience-count').textContent(), { timeout: 10_000 }).toBe('15');
        await shot(page, 'broadcast-confirm');
        await axe(page, 'broadcast-confirm');
        await confirm.getByRole('button', { name: 'Send to 15 contacts' }).click();
        // The live view while it sends, then the report once SENT.
        await page
          .getByRole('heading', { name: /^(Sending|Results)$/ })
          .first()
          .waitFor({ timeout: 15_000 });
        if (await page.getByRole('heading', { name: 'Sending' }).isVisible()) await shot(page, 'broadcast-progress');
        await page.getByRole('heading', { name: 'Results' }).waitFor({ timeout: 60_000 });
        await check(page, 'broadcast-report', 'March news');
        await expect.poll(() => smtp.received.length - before, { timeout: 20_000 }).toBe(15);
        const toAda = smtp.received.slice(before).find((m) => m.to === 'ada@acme.test')!;
        expect(toAda.parsed.subject).toBe('Hi Ada, March news');
        expect(toAda.parsed.html).toContain('Hello Ada');
        await page.getByRole('cell', { name: 'ada@acme.test' }).waitFor();

        await page.getByRole('link', { name: 'Broadcasts' }).first().click();
        await check(page, 'broadcasts', 'Broadcasts');
      },
      180_000,
    );

    it.skipIf(unavailable)(
      "the contacts list and the composer at a phone's width (390 px)",
      async () => {
        const phone = await browser.newContext({
          viewport: { width: 390, height: 844 },
          storageState: await context.storageState(),
        });
        const p = await phone.newPage();
        p.on('console', (m) => {
          if (/Content[ -]Security[ -]Policy/i.test(m.text()))
            cspViolations.push(`${p.url()} ${JSON.stringify(m.location())}: ${m.text()}`);
        });
        await p.goto(`${server.url}/app/contacts`);
        await check(p, 'contacts-phone', 'Contacts');
        expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
        const draft = await api('POST', '/v1/broadcasts', {
          name: 'Phone draft',
          from: 'news@acme.test',
          emailContent: { subject: 'Hello', html: '<p>Hi {{ contact.firstName }}</p>' },
        });
        await p.goto(`${server.url}/app/broadcasts/${draft.id}`);
        await check(p, 'broadcast-composer-phone', 'Phone draft');
        expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
        await phone.close();
      },
      120_000,
    );

    it.skipIf(unavailable)(
      "a visitor signs up through a form's hosted page; the marketer finds the new contact and its submission",
      async () => {
        const form = await api('POST', '/v1/forms', {
          name: 'Spring sign-up',
          type: 'SIGN_UP',
          slug: 'spring',
          fieldMapping: { email: 'email', first_name: 'firstName' },
        });
        await api('POST', `/v1/forms/${form.id}/publish`);
        // The visitor, in a browser of their own (no console session).
        const visitor = await browser.newContext({ viewport: { width: 800, height: 700 } });
        const v = await visitor.newPage();
        await v.goto(`${server.url}/f/spring`);
        await v.locator('input[name="email"]').fill('Grace@Acme.test');
        await v.locator('input[name="first_name"]').fill('Grace');
        await Promise.all([v.waitForLoadState('load'), v.locator('form button, form [type=submit]').first().click()]);
        await v.locator('[data-formcast-success]').waitFor();
        await visitor.close();
        // The marketer finds her in the console, with the sign-up in her activity.
        await page.goto(`${server.url}/app/contacts`);
        await page.getByLabel('Search', { exact: true }).fill('grace@acme.test');
        await page.waitForFunction(() => document.querySelectorAll('table.table tbody tr').length === 1);
        await page.getByRole('link', { name: 'grace@acme.test' }).click();
        await page.waitForURL(/\/app\/contacts\/ct_/);
        await check(page, 'contact-from-form', 'Grace');
        await page
          .getByText(/form submitted|submitted/i)
          .first()
          .waitFor();
      },
      120_000,
    );

    it.skipIf(unavailable)('no Content-Security-Policy violation and no page error on the way', () => {
      expect(cspViolations).toEqual([]);
      expect(pageErrors).toEqual([]);
    });
  },
);
