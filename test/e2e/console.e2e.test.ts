/**
 * The web console (/app, contract §14) end to end, in headless Chromium against a real Formcast
 * (`node bin/formcast serve` on a temp SQLite file) serving the built console (dist/console).
 * A marketer signs in through /app/login, builds and publishes a form, opens its live preview, adds a
 * sending domain and reads its DNS records, changes the workspace's settings and creates an API key; adds a
 * webhook endpoint to a local receiver and sees a test event delivered; invites a viewer, whose invitation
 * arrives at a local SMTP server, who joins through its link and finds every write out of reach.
 * Every page: a screenshot in test-output/e2e/console-*.png (1280×800; the main pages also at a phone's
 * 390×844 and in the dark theme), axe-core (no serious or critical violation, dark theme included), and a
 * test fails on any Content-Security-Policy violation (reported by the page's `securitypolicyviolation`
 * events and the console) or uncaught page error. Assets and pages come compressed (br, gzip).
 */
import fs from 'node:fs';
import http from 'node:http';
import { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { describeBrowser, launchBrowser, expectNoSeriousAxe, watchPages } from '../helpers/browser.js';
import { startSmtpServer } from '../helpers/smtp.js';
import { apiCaller, cli, consoleUnavailable, serve } from '../helpers/formcast-process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHOTS = path.join(ROOT, 'test-output', 'e2e');
const EMAIL = 'marketer@acme.test';
const PASSWORD = 'correct horse battery staple 42';
const VIEWER = 'viewer@acme.test';
const VIEWER_PASSWORD = 'another horse battery staple 7';
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

interface Hook {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on loopback: keeps every request and answers 204. */
async function startReceiver(): Promise<{ url: string; received: Hook[]; close(): Promise<void> }> {
  const received: Hook[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req
      .setEncoding('utf8')
      .on('data', (d: string) => (body += d))
      .on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/formcast`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describeBrowser('the web console end to end (formcast serve, headless Chromium)', () => {
  const unavailable = consoleUnavailable();
  if (unavailable) console.warn(`console e2e: skipped: ${unavailable}`);
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let server: Awaited<ReturnType<typeof serve>>;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let tmp: string;
  let key: string;
  let env: Record<string, string>;
  let workspaceId: string;
  let formId: string;
  const cspViolations: string[] = [];
  const pageErrors: string[] = [];

  /**
   * Every page of a context reports Content-Security-Policy violations (its `securitypolicyviolation`
   * events, from every frame, through a binding the page's CSP does not govern) and uncaught errors.
   */

  /** Signs in through /app/login in this page and waits for the dashboard. */
  async function signIn(p: Page, email: string, password: string): Promise<void> {
    await p.goto(`${server.url}/app/login?next=${encodeURIComponent('/app')}`);
    await p.locator('input[name="email"]').fill(email);
    await p.locator('input[name="password"]').fill(password);
    await Promise.all([p.waitForURL(`${server.url}/app`), p.locator('input[name="password"]').press('Enter')]);
    await settled(p, 'Dashboard');
  }

  const api = apiCaller(
    () => server.url,
    () => key,
  );

  /** axe-core in the page (evaluated over the DevTools protocol, which the page's CSP does not govern). */

  async function shot(p: Page, name: string, { fullPage = true } = {}): Promise<void> {
    // From the top: a full-page capture keeps sticky bars where the page was scrolled to. Notifications are
    // dismissed first (they float over whatever the capture puts under them).
    await p.evaluate(() => {
      for (const b of document.querySelectorAll<HTMLButtonElement>('.toast button')) b.click();
      window.scrollTo(0, 0);
    });
    await p.waitForFunction(() => document.querySelectorAll('.toast').length === 0);
    await p.screenshot({ path: path.join(SHOTS, `console-${name}.png`), fullPage });
  }

  /** A page of the console is ready: its heading shown, no skeleton left. */
  async function settled(p: Page, heading: string | RegExp): Promise<void> {
    await p.getByRole('heading', { level: 1, name: heading }).waitFor();
    await p.waitForFunction(() => document.querySelectorAll('.skeleton, .spinner').length === 0, undefined, {
      timeout: 10_000,
    });
  }

  async function check(p: Page, name: string, heading: string | RegExp): Promise<void> {
    await settled(p, heading);
    await shot(p, name);
    await expectNoSeriousAxe(p, name);
  }

  beforeAll(async () => {
    if (unavailable) return;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-console-e2e-'));
    fs.mkdirSync(SHOTS, { recursive: true });
    [smtp, receiver] = await Promise.all([startSmtpServer(), startReceiver()]);
    env = {
      DATABASE_URL: path.join(tmp, 'formcast.db'),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      DNS_SERVERS: '127.0.0.1:9',
      DNS_TIMEOUT_MS: '300',
      SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
      WEBHOOKS_ALLOW_HTTP: 'true',
      WEBHOOKS_ALLOW_PRIVATE: 'true',
    };
    const created = await cli(['workspace', 'create', 'Acme', '--json'], env);
    key = created.apiKey.key;
    workspaceId = created.workspace.id;
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
    context = await browser.newContext({ viewport: DESKTOP });
    await watchPages(context, cspViolations, pageErrors);
    page = await context.newPage();
  }, 120_000);

  afterEach(() => {
    const csp = cspViolations.splice(0);
    const errors = pageErrors.splice(0);
    expect(csp, 'Content-Security-Policy violations').toEqual([]);
    expect(errors, 'page errors').toEqual([]);
  });

  afterAll(async () => {
    // A server that died during the suite: show why.
    if (server && server.child.exitCode !== null)
      console.warn(`formcast serve exited ${server.child.exitCode}:\n${server.output().slice(-3000)}`);
    await browser?.close();
    server?.child.kill('SIGTERM');
    await smtp?.close();
    await receiver?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it.skipIf(unavailable)(
    'serves the console with its CSP and sends a signed-out visitor to the sign-in page',
    async () => {
      const res = await fetch(`${server.url}/app/forms`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(res.headers.get('cache-control')).toBe('no-cache');
      const html = await res.text();
      // The style nonce: fresh per answer, the same in the header and in the page's meta tag.
      const nonce = /<meta property="csp-nonce" nonce="([^"]+)"/.exec(html)![1]!;
      expect(res.headers.get('content-security-policy')).toContain(`style-src 'self' 'nonce-${nonce}'`);
      expect(res.headers.get('content-security-policy')).not.toContain('unsafe-inline');
      const asset = /src="(\/app\/assets\/[^"]+\.js)"/.exec(html)![1]!;
      const js = await fetch(`${server.url}${asset}`);
      expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      // Compressed by the build (.br, .gz), chosen by Accept-Encoding; index.html compressed per answer.
      for (const encoding of ['br', 'gzip']) {
        const packed = await fetch(`${server.url}${asset}`, { headers: { 'accept-encoding': encoding } });
        expect(packed.headers.get('content-encoding')).toBe(encoding);
        expect(packed.headers.get('vary')).toBe('Accept-Encoding');
        expect(await packed.text()).toBe(
          await (await fetch(`${server.url}${asset}`, { headers: { 'accept-encoding': 'identity' } })).text(),
        );
        const index = await fetch(`${server.url}/app/forms`, { headers: { 'accept-encoding': encoding } });
        expect(index.headers.get('content-encoding')).toBe(encoding);
        expect(await index.text()).toContain('<div id="root">');
      }
      expect(
        (await fetch(`${server.url}${asset}`, { headers: { 'accept-encoding': 'identity' } })).headers.get(
          'content-encoding',
        ),
      ).toBeNull();

      await page.goto(`${server.url}/app/settings`);
      await page.waitForURL(/\/app\/login/);
      expect(new URL(page.url()).searchParams.get('next')).toBe('/app/settings');
    },
  );

  it.skipIf(unavailable)(
    'signs in and walks the pages: dashboard, forms, domains, settings, API keys',
    async () => {
      // Sign in through the backend's page; the `next` address brings us back to where we were going.
      await signIn(page, EMAIL, PASSWORD);
      await check(page, 'dashboard', 'Dashboard');
      await page.locator('.sidebar-workspace', { hasText: 'Acme' }).waitFor();

      // Forms: the empty list, then a new form through the dialog.
      await page.getByRole('link', { name: 'Forms' }).click();
      await check(page, 'forms-empty', 'Forms');
      await page.getByRole('button', { name: 'New form' }).click();
      const dialog = page.getByRole('dialog', { name: 'New form' });
      await dialog.getByLabel('Name').fill('Acme newsletter');
      await dialog.getByRole('button', { name: 'Create form' }).click();
      await page.waitForURL(/\/app\/forms\/[^/]+$/);
      await settled(page, 'Acme newsletter');

      // Details: a field, the success message, the slug and SEO fields; saved.
      await page.getByRole('button', { name: 'Add field' }).click();
      await page.getByLabel('Form field 2').fill('first_name');
      await page.getByLabel('Contact property 2').fill('firstName');
      await page.getByLabel('Message').fill('Thanks for joining!');
      await page.getByLabel('Slug').fill('newsletter');
      await page.getByLabel('Page title').fill('Join the Acme newsletter');
      await page.getByLabel('Meta description').fill('Monthly news from Acme: new products, events and offers.');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByText('Form saved.').waitFor();
      await check(page, 'form-details', 'Acme newsletter');
      formId = page.url().split('/').pop()!;
      const saved = await api('GET', `/v1/forms/${formId}`);
      expect(saved).toMatchObject({
        slug: 'newsletter',
        seoTitle: 'Join the Acme newsletter',
        fieldMapping: { email: 'email', first_name: 'firstName' },
        settings: { successAction: { type: 'MESSAGE', message: 'Thanks for joining!' } },
      });

      // HTML: the editor and the cross-validation beside it.
      await page.getByRole('tab', { name: 'HTML' }).click();
      await page.locator('.cm-content').waitFor();
      await page.getByRole('heading', { name: 'Cross-validation' }).waitFor();
      await check(page, 'form-html', 'Acme newsletter');

      // Publish, then the live preview of the hosted page and the embed snippet.
      await page.getByRole('button', { name: 'Publish', exact: true }).click();
      await page.getByText(/Published: version 1 is live/).waitFor();
      expect((await api('GET', `/v1/forms/${formId}`)).status).toBe('PUBLISHED');
      await page.getByRole('tab', { name: 'Preview & embed' }).click();
      const frame = page.frameLocator('iframe.preview-frame');
      await frame.locator('input[name="email"]').waitFor();
      await page.getByText(`<script src="${server.url}/f/newsletter/embed.js" async></script>`).waitFor();
      await check(page, 'form-preview', 'Acme newsletter');
      // The hosted page and embed.js come compressed too.
      for (const url of ['/f/newsletter?preview=1', '/f/newsletter/embed.js']) {
        const res = await fetch(`${server.url}${url}`, { headers: { 'accept-encoding': 'gzip, br' } });
        expect(res.headers.get('content-encoding'), url).toBe('br');
        expect(res.headers.get('vary'), url).toBe('Accept-Encoding');
        expect(await res.text(), url).toContain('newsletter');
      }
      // The preview is not a visitor: no view counted.
      expect((await api('GET', `/v1/forms/${formId}`)).stats.views).toBe(0);

      await page.getByRole('tab', { name: 'Versions' }).click();
      await page.getByRole('cell', { name: /v1/ }).first().waitFor();
      await check(page, 'form-versions', 'Acme newsletter');

      await page.getByRole('link', { name: 'Forms', exact: true }).first().click();
      await page.getByRole('link', { name: 'Acme newsletter' }).waitFor();
      await check(page, 'forms', 'Forms');

      // Domains: add one, its DNS records with copy buttons, a verification that says per record what it found.
      await page.getByRole('link', { name: 'Domains' }).click();
      await check(page, 'domains-empty', 'Domains');
      await page.getByRole('button', { name: 'Add domain' }).first().click();
      await page.getByRole('dialog').getByLabel('Domain').fill('acme.test');
      await page.getByRole('dialog').getByRole('button', { name: 'Add domain' }).click();
      await page.waitForURL(/\/app\/domains\/[^/]+$/);
      await settled(page, 'acme.test');
      const records = page.getByRole('table', { name: /DNS records/ }).locator('tbody tr');
      expect(await records.count()).toBeGreaterThanOrEqual(2);
      await page
        .getByRole('button', { name: /Copy TXT record value/ })
        .first()
        .waitFor();
      await page.getByRole('button', { name: 'Verify DNS records' }).click();
      await page.getByText(/not verified yet/).waitFor({ timeout: 15_000 });
      await check(page, 'domain', 'acme.test');

      // Settings: rename, postal address, tracking default.
      await page.getByRole('link', { name: 'Settings' }).click();
      await settled(page, 'Settings');
      await page.getByLabel('Name').fill('Acme Inc.');
      await page.getByLabel('Postal address').fill('1 Main Street, Springfield');
      await page.getByLabel('Track link clicks').uncheck();
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.getByText('Settings saved.').waitFor();
      await check(page, 'settings', 'Settings');
      expect(await api('GET', '/v1/workspace')).toMatchObject({
        name: 'Acme Inc.',
        settings: { postalAddress: '1 Main Street, Springfield', tracking: { opens: true, clicks: false } },
      });

      // API keys: create one (shown once), then the list.
      await page.getByRole('link', { name: 'API keys' }).click();
      await settled(page, 'API keys');
      await page.getByRole('button', { name: 'Create API key' }).first().click();
      const keyDialog = page.getByRole('dialog', { name: 'Create an API key' });
      await keyDialog.getByLabel('Name').fill('Website');
      // Nothing is ticked at first (issue 33 item 17): a key gets exactly what is chosen.
      await keyDialog.getByRole('checkbox', { name: 'Read forms' }).check();
      await keyDialog.getByRole('button', { name: 'Create key' }).click();
      const shown = page.getByRole('dialog', { name: 'Your new API key' });
      await shown.waitFor();
      const newKey = (await shown.locator('code').first().textContent())!;
      expect(newKey.length).toBeGreaterThan(20);
      await shot(page, 'api-key-created');
      await shown.getByRole('button', { name: 'Done' }).click();
      await check(page, 'api-keys', 'API keys');

      // The other pages of the menu, and the not-found page.
      for (const [link, heading, name] of [
        ['Contacts', 'Contacts', 'contacts'],
        ['Segments', 'Segments', 'segments'],
        ['Topics', 'Topics', 'topics'],
        ['Broadcasts', 'Broadcasts', 'broadcasts'],
        ['Webhooks', 'Webhooks', 'webhooks'],
        ['People', 'People', 'people'],
      ] as const) {
        await page.getByRole('link', { name: link, exact: true }).click();
        await check(page, name, heading);
      }
      await page.goto(`${server.url}/app/no-such-page`);
      await check(page, 'not-found', /not found/i);

      // A phone's width: the menu collapses behind a button.
      await page.setViewportSize(PHONE);
      await page.goto(`${server.url}/app`);
      await settled(page, 'Dashboard');
      await shot(page, 'phone-dashboard');
      await expectNoSeriousAxe(page, 'phone-dashboard');
      await page.getByRole('button', { name: 'Menu', exact: true }).click();
      // The drawer slides in: captured once it is in place, as the screen shows it.
      await page.waitForFunction(() => getComputedStyle(document.querySelector('.sidebar')!).transform === 'none');
      await shot(page, 'phone-menu', { fullPage: false });
      await page.getByRole('link', { name: 'Forms', exact: true }).click();
      await check(page, 'phone-forms', 'Forms');
      await page.getByRole('link', { name: 'Acme newsletter' }).click();
      await check(page, 'phone-form', 'Acme newsletter');
      await page.getByRole('tab', { name: 'HTML' }).click();
      await page.locator('.cm-content').waitFor();
      await check(page, 'phone-form-html', 'Acme newsletter');
      await page.goto(`${server.url}/app/settings`);
      await check(page, 'phone-settings', 'Settings');
      await page.setViewportSize(DESKTOP);
    },
    240_000,
  );

  it.skipIf(unavailable)(
    'in the dark theme (prefers-color-scheme: dark) every main page keeps its contrast',
    async () => {
      const dark = await browser.newContext({
        viewport: DESKTOP,
        colorScheme: 'dark',
        storageState: await context.storageState(),
      });
      await watchPages(dark, cspViolations, pageErrors);
      try {
        const p = await dark.newPage();
        for (const [url, heading, name] of [
          ['/app', 'Dashboard', 'dashboard'],
          ['/app/forms', 'Forms', 'forms'],
          [`/app/forms/${formId}`, 'Acme newsletter', 'form'],
          ['/app/domains', 'Domains', 'domains'],
          ['/app/settings', 'Settings', 'settings'],
          ['/app/people', 'People', 'people'],
          ['/app/api-keys', 'API keys', 'api-keys'],
          ['/app/contacts', 'Contacts', 'contacts'],
          ['/app/segments', 'Segments', 'segments'],
          ['/app/broadcasts', 'Broadcasts', 'broadcasts'],
          ['/app/webhooks', 'Webhooks', 'webhooks'],
        ] as const) {
          await p.goto(`${server.url}${url}`);
          await check(p, `dark-${name}`, heading);
        }
        expect(await p.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(15, 18, 24)');
        await p.goto(`${server.url}/app/forms/${formId}`);
        await settled(p, 'Acme newsletter');
        await p.getByRole('tab', { name: 'HTML' }).click();
        await p.locator('.cm-content').waitFor();
        await check(p, 'dark-form-html', 'Acme newsletter');
      } finally {
        await dark.close();
      }
    },
    120_000,
  );

  it.skipIf(unavailable)(
    'webhooks: adds an endpoint, shows its secret once, sends a test event and logs it delivered',
    async () => {
      await page.goto(`${server.url}/app/webhooks`);
      await settled(page, 'Webhooks');
      await page.getByRole('button', { name: 'Add endpoint' }).first().click();
      const dialog = page.getByRole('dialog', { name: 'Add a webhook endpoint' });
      await dialog.getByLabel('URL').fill(receiver.url);
      await dialog.getByLabel('Description').fill('CRM sync');
      await dialog.getByLabel('form.submitted').check();
      await shot(page, 'webhook-new');
      await expectNoSeriousAxe(page, 'webhook-new');
      await dialog.getByRole('button', { name: 'Add endpoint' }).click();
      await page.waitForURL(/\/app\/webhooks\/[^/]+$/);
      await settled(page, 'CRM sync');
      await page.getByText('No deliveries yet').waitFor();

      // The secret is shown once, right after the endpoint is added (GET never carries it: issue 29).
      const secret = (await page
        .getByRole('region', { name: 'Signing secret' })
        .locator('.copy-field code')
        .textContent())!;
      expect(secret).toMatch(/^whsec_/);

      await page.getByRole('button', { name: 'Send a test event' }).click();
      await page.getByText('Test event queued.').waitFor();
      // The log refreshes itself until the delivery is done.
      await page.getByRole('table', { name: 'Deliveries' }).getByText('Succeeded').waitFor({ timeout: 20_000 });
      await check(page, 'webhook', 'CRM sync');
      const hook = receiver.received.find((r) => r.body.includes('webhook.test'));
      expect(hook, JSON.stringify(receiver.received.map((r) => r.body))).toBeDefined();
      // Signed with the secret the page showed (Standard Webhooks).
      const verified = new Webhook(secret).verify(hook!.body, {
        'webhook-id': String(hook!.headers['webhook-id']),
        'webhook-timestamp': String(hook!.headers['webhook-timestamp']),
        'webhook-signature': String(hook!.headers['webhook-signature']),
      }) as { type: string };
      expect(verified.type).toBe('webhook.test');

      await page.getByRole('link', { name: 'Webhooks', exact: true }).first().click();
      await page.getByRole('link', { name: receiver.url }).waitFor();
      await check(page, 'webhooks-list', 'Webhooks');
      // Back on the endpoint's page, the secret is no longer shown: only a rotation shows a (new) one.
      await page.getByRole('link', { name: receiver.url }).click();
      await settled(page, 'CRM sync');
      await page.getByText('The secret is shown only when the endpoint is added or its secret rotated.').waitFor();
      expect(await page.getByRole('region', { name: 'Signing secret' }).locator('.copy-field').count()).toBe(0);
    },
    120_000,
  );

  it.skipIf(unavailable)(
    'people: invites a viewer by email, who joins and finds every write out of reach',
    async () => {
      // Invitations go out from a verified domain of the workspace.
      await cli(['domain', 'add', 'mail.acme.test', '--workspace', workspaceId, '--verified', '--json'], env);
      await page.goto(`${server.url}/app/people`);
      await settled(page, 'People');
      await page.getByRole('button', { name: 'Invite a person' }).first().click();
      const dialog = page.getByRole('dialog', { name: 'Invite a person' });
      await dialog.getByLabel('Email').fill(VIEWER);
      await dialog.getByLabel('Role').selectOption('viewer');
      await dialog.getByRole('button', { name: 'Send invitation' }).click();
      await page.getByText(`Invitation sent to ${VIEWER}.`).waitFor();
      await page.getByRole('table', { name: 'Invitations' }).getByText(VIEWER).waitFor();
      await check(page, 'people-invited', 'People');

      // The email, at the SMTP server: its link is the invitation's page.
      await expect.poll(() => smtp.received.filter((m) => m.to === VIEWER).length, { timeout: 15_000 }).toBe(1);
      const mail = smtp.received.find((m) => m.to === VIEWER)!;
      const link = new RegExp(`${server.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/app/invite/[A-Za-z0-9_-]+`).exec(
        String(mail.parsed.text),
      )?.[0];
      expect(link, String(mail.parsed.text)).toBeDefined();

      // The viewer, in a browser of their own.
      const other = await browser.newContext({ viewport: DESKTOP });
      await watchPages(other, cspViolations, pageErrors);
      try {
        const v = await other.newPage();
        await v.goto(link!);
        await v.locator('input[name="name"]').fill('Vic Viewer');
        await v.locator('input[name="password"]').fill(VIEWER_PASSWORD);
        await shot(v, 'invite-accept');
        await Promise.all([v.waitForURL(/\/app\/?$/), v.locator('input[name="password"]').press('Enter')]);
        await settled(v, 'Dashboard');
        await v.getByText('Welcome back, Vic Viewer').waitFor();

        // No write buttons where a viewer cannot write.
        await v.goto(`${server.url}/app/forms`);
        await v.getByRole('link', { name: 'Acme newsletter' }).waitFor();
        await settled(v, 'Forms');
        expect(await v.getByRole('button', { name: 'New form' }).count()).toBe(0);
        await check(v, 'viewer-forms', 'Forms');
        await v.getByRole('link', { name: 'Acme newsletter' }).click();
        await settled(v, 'Acme newsletter');
        for (const name of ['Save changes', 'Publish', 'Edit as a new version', 'Add field']) {
          const button = v.getByRole('button', { name, exact: true });
          if (await button.count()) expect(await button.first().isDisabled(), name).toBe(true);
        }
        await v.goto(`${server.url}/app/webhooks`);
        await settled(v, 'Webhooks');
        expect(await v.getByRole('button', { name: 'Add endpoint' }).count()).toBe(0);
        await v.goto(`${server.url}/app/people`);
        await settled(v, 'People');
        expect(await v.getByRole('button', { name: 'Invite a person' }).count()).toBe(0);
        await check(v, 'viewer-people', 'People');
        await v.goto(`${server.url}/app/settings`);
        await settled(v, 'Settings');
        expect(
          (await v.getByRole('button', { name: 'Save settings' }).count()) === 0 ||
            (await v.getByRole('button', { name: 'Save settings' }).isDisabled()),
        ).toBe(true);

        // A write forced past the page, with the session's CSRF token: 403, and nothing changed.
        const forced = await v.evaluate(async (id) => {
          const session = (await (await fetch('/v1/session')).json()) as { csrfToken: string };
          const headers = { 'content-type': 'application/json', 'x-csrf-token': session.csrfToken };
          const create = await fetch('/v1/forms', {
            method: 'POST',
            headers,
            body: JSON.stringify({ name: 'Sneaky', type: 'SIGN_UP' }),
          });
          const update = await fetch(`/v1/forms/${id}`, {
            method: 'PUT',
            headers,
            body: JSON.stringify({ name: 'Renamed by a viewer' }),
          });
          const invite = await fetch('/v1/invitations', {
            method: 'POST',
            headers,
            body: JSON.stringify({ email: 'x@acme.test', role: 'owner' }),
          });
          return [create.status, update.status, invite.status, ((await update.json()) as { code?: string }).code];
        }, formId);
        expect(forced.slice(0, 3)).toEqual([403, 403, 403]);
        expect(forced[3]).not.toBe('csrf_failed');
        expect((await api('GET', `/v1/forms/${formId}`)).name).toBe('Acme newsletter');
      } finally {
        await other.close();
      }
      // The owner sees the viewer among the people.
      await page.reload();
      await page.getByRole('table', { name: 'People of the workspace' }).getByText(VIEWER).waitFor();
      await check(page, 'people', 'People');
    },
    120_000,
  );

  it.skipIf(unavailable)(
    'signs out with the CSRF token: the session is dead and /app sends to the sign-in page',
    async () => {
      await page.goto(`${server.url}/app`);
      await settled(page, 'Dashboard');
      await page.getByRole('button', { name: /Account menu/ }).click();
      await Promise.all([page.waitForURL(/\/app\/login/), page.getByRole('button', { name: 'Sign out' }).click()]);
      await page.goto(`${server.url}/app/forms`);
      await page.waitForURL(/\/app\/login\?next=%2Fapp%2Fforms/);
    },
  );
});
