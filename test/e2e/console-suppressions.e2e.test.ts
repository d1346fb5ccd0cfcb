/**
 * The console's suppression list and three small fixes of issue 33, end to end in headless Chromium against a real
 * Formcast (`node bin/formcast serve` on a temp SQLite file, its workers sending to the test SMTP server, which
 * refuses `gone…` addresses with a 5.1.1 hard bounce):
 * - /app/suppressions (item 1): reached from the nav (Audience) and from a suppressed contact's page (filtered to its
 *   address); the search by a part of the address, the reason and day filters, pages of 50 (Previous/Next), the source
 *   of each entry (a broadcast's report, or the automation and its step), adding one address or a pasted list with the
 *   summary (added, already there, invalid), removing one behind a confirmation that says it may be mailed again;
 *   viewers read, editors write.
 * - A contact's activity links an automation's email to the automation at its step, never to a 404 (item 9).
 * - Renaming the workspace shows the new name in the sidebar at once (item 15).
 * - The API key dialog ticks nothing; Admin clears and disables the others and says why (item 17).
 * Each page: axe-core (no serious or critical violation), light, dark and 390 px with no sideways scroll, and
 * screenshots (test-output/e2e/suppressions, or docs/images/console with UPDATE_SCREENSHOTS=1).
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
  : path.join(ROOT, 'test-output', 'e2e', 'suppressions');
const PASSWORD = 'correct horse battery staple 42';
const PEOPLE = { owner: 'mia@acme.test', editor: 'eddie@acme.test', viewer: 'vera@acme.test' } as const;
const DESKTOP = { width: 1280, height: 860 };
const PHONE = { width: 390, height: 844 };

describeBrowser(
  'the suppression list page and the activity, settings and API key fixes (formcast serve, Chromium)',
  () => {
    const unavailable = consoleUnavailable();
    if (unavailable) console.warn(`console suppressions e2e: skipped: ${unavailable}`);
    let browser: Browser;
    let server: Awaited<ReturnType<typeof serve>>;
    let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
    let tmp: string;
    let key: string;
    let automationId: string;
    let broadcastId: string;
    let adaId: string;
    let goneId: string;
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

    async function shot(p: Page, name: string): Promise<void> {
      await p.evaluate(() => {
        for (const b of document.querySelectorAll<HTMLButtonElement>('.toast button')) b.click();
      });
      await p.waitForFunction(() => document.querySelectorAll('.toast').length === 0);
      await p.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
    }

    /** Settled, no sideways scroll, a screenshot and axe. */
    async function check(p: Page, name: string, heading: string | RegExp): Promise<void> {
      await settled(p, heading);
      expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(p.viewportSize()!.width);
      await shot(p, name);
      await expectNoSeriousAxe(p, name);
    }

    async function signedIn(
      who: keyof typeof PEOPLE,
      opts: { viewport?: { width: number; height: number }; dark?: boolean } = {},
    ): Promise<Page> {
      const ctx = await browser.newContext({
        viewport: opts.viewport ?? DESKTOP,
        colorScheme: opts.dark ? 'dark' : 'light',
      });
      await watchPages(ctx, csp, errors);
      const p = await ctx.newPage();
      await p.goto(`${server.url}/app/login?next=${encodeURIComponent('/app')}`);
      await p.locator('input[name="email"]').fill(PEOPLE[who]);
      await p.locator('input[name="password"]').fill(PASSWORD);
      await Promise.all([p.waitForURL(`${server.url}/app`), p.locator('input[name="password"]').press('Enter')]);
      await settled(p, 'Dashboard');
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
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-suppressions-e2e-'));
      fs.mkdirSync(SHOTS, { recursive: true });
      smtp = await startSmtpServer();
      smtp.setPolicy((a) => (a.startsWith('gone') ? { code: 550, message: '5.1.1 <' + a + '>: User unknown' } : null));
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
      const user = (role: keyof typeof PEOPLE) =>
        cli(
          ['user', 'create', '--workspace', ws, '--email', PEOPLE[role], '--role', role, '--password-stdin', '--json'],
          env,
          `${PASSWORD}\n`,
        );
      const [, , , , started, launched] = await Promise.all([
        user('owner'),
        user('editor'),
        user('viewer'),
        cli(['domain', 'add', 'acme.test', '--workspace', ws, '--verified', '--json'], env),
        serve(env),
        launchBrowser(),
      ]);
      server = started;
      browser = launched;

      // Contacts: ada (gets the automation's email), gone-auto (bounces it), gone-news (bounces the broadcast).
      const contact = async (email: string, firstName: string) =>
        (await api('POST', '/v1/contacts', { email, firstName, status: 'SUBSCRIBED' })).id as string;
      adaId = await contact('ada@example.com', 'Ada');
      const goneAuto = await contact('gone-auto@example.com', 'Gus');
      goneId = await contact('gone-news@example.com', 'Nia');
      const automation = await api('POST', '/v1/automations', {
        name: 'Welcome series',
        trigger: { type: 'api' },
        steps: [
          { id: 'wait', type: 'wait', duration: 'PT1S' },
          {
            id: 'hello',
            type: 'send',
            from: 'Acme <news@acme.test>',
            emailContent: { subject: 'Welcome', html: '<p>Welcome</p>' },
          },
        ],
      });
      automationId = automation.id;
      await api('POST', `/v1/automations/${automationId}/activate`);
      for (const contactId of [adaId, goneAuto])
        await api('POST', `/v1/automations/${automationId}/trigger`, { contactId });
      await until(
        async () =>
          (await api('GET', '/v1/suppressions/gone-auto%40example.com').catch(() => null)) !== null &&
          (await api('GET', `/v1/contacts/${adaId}/activity?type=email.sent`)).data.length === 1,
        "the automation's emails",
      );
      const bc = await api('POST', '/v1/broadcasts', {
        name: 'November news',
        from: 'Acme <news@acme.test>',
        emailContent: { subject: 'News', html: '<p>News</p>' },
      });
      broadcastId = bc.id;
      await api('POST', `/v1/broadcasts/${broadcastId}/send`);
      await until(
        async () => (await api('GET', `/v1/broadcasts/${broadcastId}`)).status === 'SENT',
        'the broadcast to be sent',
      );
      // Enough entries for two pages (50 a page), and a note on one.
      await api('POST', '/v1/suppressions/bulk', {
        emails: Array.from({ length: 55 }, (_, i) => `old${String(i).padStart(2, '0')}@list.example`),
        detail: 'from the old shop',
      });
      await api('POST', '/v1/suppressions', { email: 'asked@example.org', reason: 'MANUAL', detail: 'asked by phone' });
    }, 180_000);

    afterAll(async () => {
      await browser?.close();
      server?.child.kill('SIGTERM');
      await smtp?.close();
      if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    });

    it.skipIf(unavailable)(
      'lists, searches, filters and pages the list, with each entry’s source linked (owner, light)',
      async () => {
        const p = await signedIn('owner');
        await p.getByRole('navigation').getByRole('link', { name: 'Suppressions' }).click();
        await p.waitForURL(/\/app\/suppressions$/);
        await check(p, 'suppressions', 'Suppressions');
        expect(await rows(p).count()).toBe(50);
        await p.getByRole('button', { name: 'Next →' }).click();
        await p.locator('.pager').getByText('Page 2').waitFor();
        // 55 + asked + 2 bounces = 58: 8 on the second page.
        await until(async () => (await rows(p).count()) === 8, 'page 2');
        await p.getByRole('button', { name: '← Previous' }).click();
        await until(async () => (await rows(p).count()) === 50, 'page 1 again');

        // The search: a part of the address.
        await p.getByLabel('Address contains').fill('GONE');
        await p.getByRole('button', { name: 'Search' }).click();
        await until(async () => (await rows(p).count()) === 2, 'the search');
        expect(p.url()).toContain('q=GONE');
        const auto = rows(p).filter({ hasText: 'gone-auto@example.com' });
        await expect
          .poll(() => auto.getByRole('link', { name: 'Automation “Welcome series”' }).getAttribute('href'))
          .toBe(`/app/automations/${automationId}?step=hello`);
        await auto.getByText('5.1.1').first().waitFor();
        await auto.getByRole('cell', { name: 'Hard bounce', exact: true }).waitFor();
        const news = rows(p).filter({ hasText: 'gone-news@example.com' });
        expect(await news.getByRole('link', { name: 'Broadcast “November news”' }).getAttribute('href')).toBe(
          `/app/broadcasts/${broadcastId}`,
        );
        await check(p, 'suppressions-search', 'Suppressions');

        // Reason and days.
        await p.getByLabel('Reason').selectOption('MANUAL');
        await p.getByText('No suppressed address contains “GONE”').waitFor();
        await p.getByRole('button', { name: 'Clear the search and filters' }).click();
        await until(async () => (await rows(p).count()) === 50, 'cleared');
        await p.getByLabel('Reason').selectOption('MANUAL');
        await p.getByLabel('Address contains').fill('asked');
        await p.getByRole('button', { name: 'Search' }).click();
        await until(async () => (await rows(p).count()) === 1, 'asked, by hand');
        await rows(p).getByText('asked by phone').waitFor();
        // The days around the entry's own (not "today": midnight may have passed since it was added).
        const added = new Date((await api('GET', '/v1/suppressions?q=asked')).data[0].createdAt);
        const before = new Date(added);
        before.setDate(before.getDate() - 1);
        const day = (d: Date) =>
          `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
        await p.getByLabel('Added until').fill(day(before));
        await p.getByText('No suppressed address contains “asked”').waitFor();
        await p.getByLabel('Added until').fill(day(added));
        await until(async () => (await rows(p).count()) === 1, 'added today');

        // The source links lead to real pages.
        await p.goto(`${server.url}/app/suppressions?q=gone-news`);
        await p.getByRole('link', { name: 'Broadcast “November news”' }).click();
        await settled(p, 'November news');
        await p.context().close();
      },
      120_000,
    );

    it.skipIf(unavailable)(
      'adds one address or a pasted list with a summary, and removes one behind a confirmation (editor)',
      async () => {
        const p = await signedIn('editor');
        await p.goto(`${server.url}/app/suppressions`);
        await settled(p, 'Suppressions');
        await p.getByRole('button', { name: 'Add addresses' }).click();
        const dialog = p.getByRole('dialog', { name: 'Add addresses to the suppression list' });
        await dialog
          .getByLabel('Addresses')
          .fill('new1@example.com, NEW2@example.com\nnot an address\nasked@example.org\n');
        await dialog.getByLabel('Note (optional)').fill('from the fair');
        await shot(p, 'suppressions-add');
        await expectNoSeriousAxe(p, 'suppressions-add');
        await dialog.getByRole('button', { name: 'Add 4 addresses' }).click();
        const summary = p.getByRole('dialog', { name: 'Added to the suppression list' });
        await summary.getByText('2 addresses added').waitFor();
        await summary.getByText('1 was on the list already').waitFor();
        await summary.getByText('1 is not an email address').waitFor();
        await summary.getByText('“not an address”').waitFor();
        await shot(p, 'suppressions-add-summary');
        await expectNoSeriousAxe(p, 'suppressions-add-summary');
        expect(await api('GET', '/v1/suppressions/new2%40example.com')).toMatchObject({
          reason: 'MANUAL',
          detail: 'from the fair',
        });
        // Correcting the invalid one: back to the form with just it.
        await summary.getByRole('button', { name: 'Correct the invalid ones' }).click();
        await expect.poll(() => dialog.getByLabel('Addresses').inputValue()).toBe('not an address');
        await dialog.getByLabel('Addresses').fill('fixed@example.com');
        await dialog.getByRole('button', { name: 'Add address' }).click();
        await summary.getByText('1 address added').waitFor();
        await summary.getByRole('button', { name: 'Done' }).click();

        // Remove: the confirmation says what it means.
        await p.getByLabel('Address contains').fill('new1');
        await p.getByRole('button', { name: 'Search' }).click();
        await until(async () => (await rows(p).count()) === 1, 'new1');
        await p.getByRole('button', { name: 'Remove new1@example.com from the list' }).click();
        const confirm = p.getByRole('dialog', { name: 'Remove this address from the suppression list?' });
        await confirm.getByText('may be mailed again').waitFor();
        await confirm.getByText('someone added it to the list').waitFor();
        await shot(p, 'suppressions-remove');
        await expectNoSeriousAxe(p, 'suppressions-remove');
        await confirm.getByRole('button', { name: 'Remove from the list' }).click();
        await p.getByText('No suppressed address contains “new1”').waitFor();
        await expect(api('GET', '/v1/suppressions/new1%40example.com')).rejects.toThrow(/404/);
        await p.context().close();
      },
      120_000,
    );

    it.skipIf(unavailable)('viewers read the list, with nothing to add or remove', async () => {
      const p = await signedIn('viewer');
      await p.goto(`${server.url}/app/suppressions?reason=BOUNCED`);
      await settled(p, 'Suppressions');
      await until(async () => (await rows(p).count()) === 2, 'the bounces');
      expect(await p.getByRole('button', { name: 'Add addresses' }).count()).toBe(0);
      expect(await p.getByRole('button', { name: /^Remove/ }).count()).toBe(0);
      await p.context().close();
    });

    it.skipIf(unavailable)(
      "a suppressed contact's page links to the list filtered to its address; an automation's email links to the automation at its step",
      async () => {
        const p = await signedIn('owner');
        await p.goto(`${server.url}/app/contacts/${goneId}`);
        await settled(p, 'Nia');
        await p.getByRole('link', { name: 'suppression list' }).click();
        await p.waitForURL(/\/app\/suppressions\?q=gone-news%40example\.com$/);
        await settled(p, 'Suppressions');
        await until(async () => (await rows(p).count()) === 1, 'the address');
        await expect.poll(() => p.getByLabel('Address contains').inputValue()).toBe('gone-news@example.com');

        await p.goto(`${server.url}/app/contacts/${adaId}`);
        await settled(p, 'Ada');
        await p.getByText('Email sent').first().waitFor();
        // The broadcast's email links to its report, the automation's to the automation: no link to a hidden message.
        await p.getByRole('link', { name: 'Open the broadcast “November news”' }).first().waitFor();
        const hidden = await api('GET', `/v1/contacts/${adaId}/activity?type=email.sent`);
        const automationMessage = hidden.data.find((e: any) => e.source?.type === 'automation').broadcastId;
        expect(await p.locator(`a[href="/app/broadcasts/${automationMessage}"]`).count()).toBe(0);
        await check(p, 'contact-activity', 'Ada');
        await p.getByRole('link', { name: 'Open the automation “Welcome series” at this email' }).first().click();
        await p.waitForURL(new RegExp(`/app/automations/${automationId}\\?step=hello$`));
        await settled(p, 'Welcome series');
        // The send step is open beside the flow.
        await p.getByRole('heading', { name: /^2\. Send/ }).waitFor();
        expect(await p.getByText(/not found/i).count()).toBe(0);
        await p.context().close();
      },
      120_000,
    );

    it.skipIf(unavailable)(
      'renaming the workspace shows the new name in the sidebar at once; the API key dialog ticks nothing and admin replaces the rest',
      async () => {
        const p = await signedIn('owner');
        await p.getByRole('link', { name: 'Settings' }).click();
        await settled(p, 'Settings');
        await p.getByLabel('Name', { exact: true }).fill('Acme Books');
        await p.getByRole('button', { name: 'Save settings' }).click();
        await p.getByText('Settings saved.').waitFor();
        await p.locator('.sidebar-workspace', { hasText: 'Acme Books' }).waitFor();
        await p.locator('.topbar-title', { hasText: 'Acme Books' }).waitFor();

        await p.getByRole('link', { name: 'API keys' }).click();
        await settled(p, 'API keys');
        await p.getByRole('button', { name: 'Create API key' }).click();
        const dialog = p.getByRole('dialog', { name: 'Create an API key' });
        expect(await dialog.locator('input[type="checkbox"]:checked').count()).toBe(0);
        await dialog.getByText('a key needs at least one permission').waitFor();
        await dialog.getByLabel('Name').fill('Shop');
        await dialog.getByLabel('Read forms').check();
        await dialog.getByLabel(/^Admin/).check();
        expect(await dialog.getByLabel('Read forms').isChecked()).toBe(false);
        expect(await dialog.getByLabel('Read forms').isDisabled()).toBe(true);
        await dialog.getByText('Admin already includes every permission below').waitFor();
        await shot(p, 'api-key-admin');
        await expectNoSeriousAxe(p, 'api-key-admin');
        await dialog.getByRole('button', { name: 'Create key' }).click();
        await p.getByRole('dialog', { name: 'Your new API key' }).getByText('“Shop” can: admin.').waitFor();
        const keys = await api('GET', '/v1/api-keys');
        expect(keys.data.find((k: any) => k.name === 'Shop').scopes).toEqual(['admin']);
        // Unticking admin leaves nothing ticked.
        await p.getByRole('button', { name: 'Done' }).click();
        await p.context().close();
      },
      120_000,
    );

    it.skipIf(unavailable)(
      'dark and 390 px: the list, the dialogs and the activity',
      async () => {
        for (const [mode, opts] of [
          ['dark', { dark: true }],
          ['phone', { viewport: PHONE }],
          ['phone-dark', { viewport: PHONE, dark: true }],
        ] as const) {
          const p = await signedIn('owner', opts);
          await p.goto(`${server.url}/app/suppressions?q=gone`);
          await check(p, `suppressions-${mode}`, 'Suppressions');
          await p.getByRole('button', { name: 'Add addresses' }).click();
          await p
            .getByRole('dialog', { name: 'Add addresses to the suppression list' })
            .getByLabel('Addresses')
            .fill('x@example.com');
          await shot(p, `suppressions-add-${mode}`);
          await expectNoSeriousAxe(p, `suppressions-add-${mode}`);
          await p.keyboard.press('Escape');
          await p.getByRole('button', { name: 'Remove gone-auto@example.com from the list' }).click();
          await shot(p, `suppressions-remove-${mode}`);
          await expectNoSeriousAxe(p, `suppressions-remove-${mode}`);
          await p.keyboard.press('Escape');
          await p.goto(`${server.url}/app/contacts/${adaId}`);
          await p.getByText('Email sent').first().waitFor();
          await check(p, `contact-activity-${mode}`, 'Ada');
          await p.context().close();
        }
        expect(csp).toEqual([]);
        expect(errors).toEqual([]);
      },
      180_000,
    );
  },
);
