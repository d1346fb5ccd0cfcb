/**
 * The console's automation editor end to end (contract §15, docs/automations.md), in headless Chromium against a
 * real Formcast (`node bin/formcast serve` on a temp SQLite file, SMTP_URL at the test SMTP server of
 * test/helpers/smtp.ts) serving the built console. A marketer signs in, creates an automation on a form's
 * sign-ups, builds a send, a wait and an if/else with a send on its Yes path, saves; sees the live problems of a
 * bad split and the API's 422 on the step it names; sees activation refused for a sender off the verified domain,
 * on that step's card, fixes it and activates; runs the simulator for a contact and a made-up one and sees the
 * path light up with the rendered subjects; a sign-up then starts a real run, which shows in the Runs tab and in
 * the per-step stats. A viewer finds it all read-only. Screenshots go to /tmp/automations-*.png; every page gets
 * axe-core (no serious or critical violation) and no Content-Security-Policy violation or page error.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { describeBrowser, launchBrowser, expectNoSeriousAxe } from '../helpers/browser.js';
import { startSmtpServer } from '../helpers/smtp.js';
import { apiCaller, cli, consoleUnavailable, serve } from '../helpers/formcast-process.js';

const SHOTS = '/tmp';
const EMAIL = 'mia@acme.test';
const PASSWORD = 'correct horse battery staple 42';
const VIEWER = 'val@acme.test';
const VIEWER_PASSWORD = 'another horse battery staple 7';

describeBrowser("the console's automation editor end to end (formcast serve, headless Chromium)", () => {
  const unavailable = consoleUnavailable();
  if (unavailable) console.warn(`console automations e2e: skipped: ${unavailable}`);
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let server: Awaited<ReturnType<typeof serve>>;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let tmp: string;
  let key: string;
  let formId: string;
  let automationId: string;
  const cspViolations: string[] = [];
  const pageErrors: string[] = [];

  const api = apiCaller(
    () => server.url,
    () => key,
  );

  function watch(p: Page): void {
    p.on('console', (m) => {
      if (/Content[ -]Security[ -]Policy/i.test(m.text()))
        cspViolations.push(`${p.url()} ${JSON.stringify(m.location())}: ${m.text()}`);
    });
    p.on('pageerror', (e) => pageErrors.push(`${p.url()}: ${String(e)}`));
  }

  /** A full-page PNG in /tmp/automations-<name>.png, from the top, without the notifications floating over it. */
  async function shot(p: Page, name: string): Promise<void> {
    await p.evaluate(() => {
      for (const b of document.querySelectorAll<HTMLButtonElement>('.toast button')) b.click();
      window.scrollTo(0, 0);
    });
    await p.waitForFunction(() => document.querySelectorAll('.toast').length === 0);
    await p.screenshot({ path: path.join(SHOTS, `automations-${name}.png`), fullPage: true });
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
    await expectNoSeriousAxe(p, name);
  }

  /** The card of step `n` in the flow. */
  const card = (n: number, type: string) => page.getByRole('article', { name: `Step ${n}: ${type}` });

  /** Opens the + menu named `where` and picks a step type. */
  async function addStep(where: string, type: string): Promise<void> {
    await page.getByRole('button', { name: where, exact: true }).click();
    await page
      .getByRole('group', { name: 'Step types' })
      .getByRole('button', { name: new RegExp(`^${type.replace('/', '\\/')}`) })
      .click();
  }

  beforeAll(async () => {
    if (unavailable) return;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-console-automations-e2e-'));
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
    const ws = created.workspace.id;
    const [, , , started, launched] = await Promise.all([
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
          'Mia Marketer',
          '--password-stdin',
          '--json',
        ],
        env,
        `${PASSWORD}\n`,
      ),
      cli(
        [
          'user',
          'create',
          '--workspace',
          ws,
          '--email',
          VIEWER,
          '--role',
          'viewer',
          '--name',
          'Val Viewer',
          '--password-stdin',
          '--json',
        ],
        env,
        `${VIEWER_PASSWORD}\n`,
      ),
      // Activation needs every send's `from` on a verified domain of the workspace.
      cli(['domain', 'add', 'acme.test', '--workspace', ws, '--verified', '--json'], env),
      serve(env),
      launchBrowser(),
    ]);
    server = started;
    browser = launched;
    await api('POST', '/v1/topics', { name: 'Product news', defaultSubscription: 'OPT_IN' });
    await api('POST', '/v1/contacts', {
      email: 'ada@acme.test',
      firstName: 'Ada',
      lastName: 'Lovelace',
      properties: { plan: 'pro' },
    });
    const form = await api('POST', '/v1/forms', {
      name: 'Newsletter',
      type: 'SIGN_UP',
      slug: 'newsletter',
      fieldMapping: { email: 'email', first_name: 'firstName' },
    });
    formId = form.id;
    await api('POST', `/v1/forms/${formId}/publish`);
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    watch(page);
  }, 120_000);

  afterEach(() => {
    expect(cspViolations.splice(0), 'Content-Security-Policy violations').toEqual([]);
    expect(pageErrors.splice(0), 'page errors').toEqual([]);
  });

  afterAll(async () => {
    if (server && server.child.exitCode !== null)
      console.warn(`formcast serve exited ${server.child.exitCode}:\n${server.output().slice(-3000)}`);
    await browser?.close();
    server?.child.kill('SIGTERM');
    await smtp?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it.skipIf(unavailable)(
    "creates an automation on a form's sign-ups and builds a send, a wait and an if/else; saves",
    async () => {
      await page.goto(`${server.url}/app/login?next=${encodeURIComponent('/app/automations')}`);
      await page.locator('input[name="email"]').fill(EMAIL);
      await page.locator('input[name="password"]').fill(PASSWORD);
      await Promise.all([
        page.waitForURL(`${server.url}/app/automations`),
        page.locator('input[name="password"]').press('Enter'),
      ]);
      expect(await page.getByRole('link', { name: 'Automations' }).getAttribute('aria-current')).toBe('page');
      await check(page, 'list-empty', 'Automations');

      await page.getByRole('button', { name: 'New automation' }).click();
      const dialog = page.getByRole('dialog', { name: 'New automation' });
      await dialog.getByLabel('Name').fill('Welcome series');
      await dialog.getByLabel('Starts when').selectOption('form.submitted');
      await dialog.getByLabel('Form').selectOption({ label: 'Newsletter (/f/newsletter)' });
      await shot(page, 'new');
      await expectNoSeriousAxe(page, 'new');
      await dialog.getByRole('button', { name: 'Create draft' }).click();
      await page.waitForURL(/\/app\/automations\/[^/]+$/);
      automationId = page.url().split('/').pop()!;
      await settled(page, 'Welcome series');
      await page.getByText('No steps yet').waitFor();

      // 1. A send: its form opens beside the flow; live problems show until it is complete.
      await addStep('Add the first step', 'Send email');
      await expect.poll(() => card(1, 'Send email').textContent()).toContain('The subject is empty.');
      await page.getByLabel('From', { exact: true }).fill('Acme <news@acme.test>');
      await page.getByLabel('Subject', { exact: true }).fill('Welcome, {{ contact.firstName | default: "friend" }}');
      await expect.poll(() => card(1, 'Send email').locator('.flow-problems').count()).toBe(0);
      // 2. A wait of 2 days, as a number and a unit.
      await addStep('Add a step after step 1', 'Wait');
      await page.getByLabel('Wait: how many').fill('2');
      await page.getByLabel('Wait: unit').selectOption('days');
      await expect.poll(() => card(2, 'Wait').textContent()).toContain('Wait 2 days');
      // 3. An if/else on the plan, with the FilterBuilder; a send on its Yes path.
      await addStep('Add a step after step 2', 'If / else');
      await page.getByRole('button', { name: '+ Condition' }).click();
      await page.getByLabel('Filter, item 1: field').selectOption('properties');
      await page.getByLabel('Filter, item 1: property key').fill('plan');
      await page.getByLabel('Filter, item 1: operator').selectOption('eq');
      await page.getByLabel('Filter, item 1: value').fill('pro');
      await addStep('Add a step to the Yes path of step 3', 'Send email');
      await expect.poll(() => page.getByLabel('From', { exact: true }).inputValue()).toBe('Acme <news@acme.test>');
      await page.getByLabel('Subject', { exact: true }).fill('{{ contact.firstName }}, a tip for pro users');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByText('Automation saved.').waitFor();

      const saved = await api('GET', `/v1/automations/${automationId}`);
      expect(saved.status).toBe('DRAFT');
      expect(saved.trigger).toMatchObject({ type: 'form.submitted' });
      expect(saved.steps.map((s: any) => s.type)).toEqual(['send', 'wait', 'branch']);
      expect(saved.steps[1].duration).toBe('P2D');
      expect(saved.steps[2].filter).toEqual({ all: [{ field: 'properties.plan', op: 'eq', value: 'pro' }] });
      expect(saved.steps[2].then.map((s: any) => s.type)).toEqual(['send']);
      expect(saved.steps[2].else).toEqual([]);
      for (const id of [saved.steps[0].id, saved.steps[1].id, saved.steps[2].id, saved.steps[2].then[0].id])
        expect(id).toMatch(/^s-[a-z0-9]{8}$/);
      await check(page, 'editor', 'Welcome series');
    },
    120_000,
  );

  it.skipIf(unavailable)(
    "shows a bad step's problems live and the API's 422 on the card it names; moves and removes steps",
    async () => {
      // A split on the No path whose paths add up to 110: the console says so before saving...
      await addStep('Add a step to the No path of step 3', 'A/B split');
      await page.getByLabel('Path A', { exact: true }).fill('60');
      await expect.poll(() => card(5, 'A/B split').textContent()).toContain('The percentages add up to 110, not 100.');
      await page.getByText('1 step needs attention').waitFor();
      // ...and an empty subject on the first send.
      await card(1, 'Send email').getByRole('button', { name: '1. Send email' }).click();
      await page.getByLabel('Subject', { exact: true }).fill('');
      await expect.poll(() => card(1, 'Send email').textContent()).toContain('The subject is empty.');
      await page.getByLabel('Subject', { exact: true }).fill('Welcome, {{ contact.firstName | default: "friend" }}');
      // Saving anyway: the API's 422 (/steps/2/else/0/arms) shows on the split's card, not as a pointer.
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByText(/Not saved: 1 problem/).waitFor();
      await expect.poll(() => card(5, 'A/B split').textContent()).toContain('percents must sum to 100');
      await shot(page, 'validation');
      await expectNoSeriousAxe(page, 'validation');
      // Move the wait above the first send and back; then remove the split: the problems go with it.
      await page.getByRole('button', { name: 'Move Step 2: Wait up' }).click();
      await expect.poll(() => page.locator('.flow-card-select').first().textContent()).toContain('Wait');
      await page.getByRole('button', { name: 'Move Step 1: Wait down' }).click();
      await expect.poll(() => page.locator('.flow-card-select').first().textContent()).toContain('Send email');
      await page.getByRole('button', { name: 'Remove Step 5: A/B split' }).click();
      await expect.poll(() => page.getByText('step needs attention').count()).toBe(0);
      // What is left is what was saved before: nothing to save.
      await page.getByText(/^Saved /).waitFor();
      expect(await page.getByRole('button', { name: 'Save', exact: true }).isDisabled()).toBe(true);
      expect((await api('GET', `/v1/automations/${automationId}`)).steps[2].else).toEqual([]);
    },
    120_000,
  );

  it.skipIf(unavailable)(
    'refuses activation for a sender off the verified domain, on that step; activates once fixed',
    async () => {
      await card(4, 'Send email').getByRole('button', { name: '4. Send email' }).click();
      await page.getByLabel('From', { exact: true }).fill('Acme <news@elsewhere.test>');
      // The console knows the verified domains: a live problem at once.
      await expect.poll(() => card(4, 'Send email').textContent()).toContain('elsewhere.test is not a verified domain');
      // Activate saves first, then the API's 422 automation_incomplete names /steps/2/then/0/from.
      await page.getByRole('button', { name: 'Activate' }).click();
      await page.getByText(/It cannot be activated yet: 1 problem/).waitFor();
      await expect
        .poll(() => card(4, 'Send email').textContent())
        .toContain('From must be an address on one of your verified domains');
      expect(await page.getByLabel('From', { exact: true }).getAttribute('aria-invalid')).toBe('true');
      await shot(page, 'activation-refused');
      await page.getByLabel('From', { exact: true }).fill('Acme <news@acme.test>');
      await page.getByRole('button', { name: 'Activate' }).click();
      await page.getByText('Active: contacts who meet the trigger now enter.').waitFor();
      await page.locator('.page-header .badge', { hasText: 'Active' }).waitFor();
      await page.getByRole('button', { name: 'Pause' }).waitFor();
      expect((await api('GET', `/v1/automations/${automationId}`)).status).toBe('ACTIVE');
    },
    120_000,
  );

  it.skipIf(unavailable)(
    'runs the simulator for a contact and a made-up one: the path lights up with times and subjects',
    async () => {
      await page.getByRole('tab', { name: 'Simulator' }).click();
      await page.getByLabel('Contact', { exact: true }).selectOption({ label: 'ada@acme.test — Ada Lovelace' });
      await page.getByRole('button', { name: 'Run the simulation' }).click();
      await page.getByRole('heading', { name: 'The path' }).waitFor();
      await expect
        .poll(() => page.getByTestId('sim-subject').allTextContents())
        .toEqual(['“Welcome, Ada”', '“Ada, a tip for pro users”']);
      // Ada is on the pro plan: send, wait, if/else (Yes), the pro send — all after entry as the waits say.
      expect(await page.locator('.flow-card.on-path').count()).toBe(4);
      await expect.poll(() => card(3, 'If / else').textContent()).toContain('went down Yes');
      await expect.poll(() => card(4, 'Send email').textContent()).toContain('After 2 days');
      await shot(page, 'simulator');
      await expectNoSeriousAxe(page, 'simulator');

      // A made-up contact on the free plan goes down No: three steps.
      await page.getByLabel('A made-up contact').check();
      await page.getByLabel('Email', { exact: true }).fill('sam@example.com');
      await page.getByLabel('First name').fill('Sam');
      await page.getByLabel('Properties (JSON)').fill('{ "plan": "free" }');
      await page.getByRole('button', { name: 'Run the simulation' }).click();
      await expect.poll(() => page.getByTestId('sim-subject').allTextContents()).toEqual(['“Welcome, Sam”']);
      await expect.poll(() => page.locator('.flow-card.on-path').count()).toBe(3);
      await expect.poll(() => card(3, 'If / else').textContent()).toContain('went down No');
      // Bad JSON is caught before it is sent.
      await page.getByLabel('Properties (JSON)').fill('{ plan: free }');
      await page.getByText(/Not valid JSON/).waitFor();
      expect(await page.getByRole('button', { name: 'Run the simulation' }).isDisabled()).toBe(true);
    },
    120_000,
  );

  it.skipIf(unavailable)(
    'a sign-up starts a run: the Runs tab lists it and the cards show their stats',
    async () => {
      const before = smtp.received.length;
      await api('POST', `/v1/forms/${formId}/submissions`, { email: 'grace@acme.test', first_name: 'Grace' });
      await expect.poll(() => smtp.received.length - before, { timeout: 30_000 }).toBe(1);
      expect(smtp.received.at(-1)!.parsed.subject).toBe('Welcome, Grace');
      await page.reload();
      await settled(page, 'Welcome series');
      // Stats of the first send: entered 1, sent 1 (polled while ACTIVE).
      await expect
        .poll(async () => (await card(1, 'Send email').locator('.flow-stats').textContent()) ?? '', { timeout: 30_000 })
        .toMatch(/Entered1.*Sent1/);
      await page.getByRole('tab', { name: 'Runs' }).click();
      await page.getByRole('heading', { name: 'Runs' }).waitFor();
      await page.getByRole('cell', { name: /Waiting/ }).waitFor({ timeout: 15_000 });
      await page.getByRole('cell', { name: '2. Wait' }).waitFor();
      await check(page, 'runs', 'Welcome series');
      await page.getByRole('tab', { name: 'Flow' }).click();
      await settled(page, 'Welcome series');
      await shot(page, 'stats');

      await page.getByRole('link', { name: 'Automations' }).first().click();
      await settled(page, 'Automations');
      await page.getByRole('cell', { name: /Newsletter/ }).waitFor();
      await check(page, 'list', 'Automations');
    },
    120_000,
  );

  it.skipIf(unavailable)(
    "a viewer sees the automation read-only; the editor at a phone's width",
    async () => {
      const viewer = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const v = await viewer.newPage();
      watch(v);
      await v.goto(`${server.url}/app/login?next=${encodeURIComponent(`/app/automations/${automationId}`)}`);
      await v.locator('input[name="email"]').fill(VIEWER);
      await v.locator('input[name="password"]').fill(VIEWER_PASSWORD);
      await Promise.all([
        v.waitForURL(`${server.url}/app/automations/${automationId}`),
        v.locator('input[name="password"]').press('Enter'),
      ]);
      await settled(v, 'Welcome series');
      expect(await v.getByRole('button', { name: /^Add a step/ }).count()).toBe(0);
      expect(await v.getByRole('button', { name: /^(Save|Pause|Activate|Delete)$/ }).count()).toBe(0);
      expect(await v.getByRole('button', { name: /^(Move|Remove) Step/ }).count()).toBe(0);
      expect(await v.getByLabel('Name', { exact: true }).isDisabled()).toBe(true);
      await v.getByRole('button', { name: '1. Send email' }).click();
      expect(await v.getByLabel('Subject', { exact: true }).isDisabled()).toBe(true);
      await v.goto(`${server.url}/app/automations`);
      await settled(v, 'Automations');
      expect(await v.getByRole('button', { name: 'New automation' }).count()).toBe(0);
      await v.goto(`${server.url}/app/automations/${automationId}`);
      await check(v, 'viewer', 'Welcome series');
      await viewer.close();

      const phone = await browser.newContext({
        viewport: { width: 390, height: 844 },
        storageState: await context.storageState(),
      });
      const p = await phone.newPage();
      watch(p);
      await p.goto(`${server.url}/app/automations/${automationId}`);
      await check(p, 'phone', 'Welcome series');
      // The flow scrolls sideways in its own frame; the page does not.
      expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await phone.close();
    },
    120_000,
  );
});
