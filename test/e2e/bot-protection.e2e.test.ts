/**
 * Bot protection in headless Chromium (docs/bot-protection.md) against the real app, in this process on a port of its
 * own (SQLite in memory), with the default proof-of-work difficulty: a person fills the hosted page and both embeds
 * (on a site of another origin) and gets through without doing anything about the check; a script without a solution
 * is refused; a solution the browser sent cannot be sent again; a burst of patterned sign-ups is held. Embed
 * impressions are counted once per page view. Screenshots go to test-output/e2e/.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { connect, type Db } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { describeBrowser, launchBrowser, startSite, type Site } from '../helpers/browser.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { freePort } from '../helpers/formcast-process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHOTS = path.join(ROOT, 'test-output', 'e2e');

describeBrowser('bot protection (the app on a port, headless Chromium)', () => {
  let browser: Browser;
  let app: FastifyInstance;
  let db: Db;
  let base: string;
  let key: string;
  let ws: string;
  let site: Site;
  const forms: Record<string, { id: string; slug: string }> = {};

  async function api(method: string, url: string, body?: unknown): Promise<any> {
    const res = await app.inject({
      method: method as 'GET',
      url,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.body ? res.json() : null;
  }
  async function publish(slug: string, config: Record<string, unknown>): Promise<void> {
    const form = await api('POST', '/v1/forms', {
      name: slug,
      type: 'SIGN_UP',
      slug,
      fieldMapping: { email: 'email', first_name: 'firstName' },
      ...config,
    });
    await api('POST', `/v1/forms/${form.id}/publish`);
    forms[slug] = { id: form.id, slug };
  }
  const rows = () =>
    db.kysely.selectFrom('submissions').selectAll().where('workspace_id', '=', ws).orderBy('id').execute();
  const emailOf = (r: { data: string }) => JSON.parse(r.data).email as string;

  beforeAll(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    db = connect(':memory:');
    await migrateToLatest(db);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // Every visitor is 127.0.0.1 here (no network signal); the pattern rule is set low to see a burst held.
    app = await buildApp({
      db,
      logger: false,
      config: {
        logLevel: 'silent',
        publicUrl: base,
        secret: TEST_SECRET,
        signupBursts: { windowSeconds: 600, ipRange: 10, pattern: 2, mailbox: 3, domain: 25 },
      },
    });
    await app.listen({ port, host: '127.0.0.1' });
    const made = await app.services.workspaces.createWithAdminKey('E2E');
    key = made.apiKey.key;
    ws = made.workspace.id;
    const protection = { protection: { proofOfWork: true } };
    await publish('pow-hosted', {
      settings: { ...protection, successAction: { type: 'MESSAGE', message: 'Thanks, you are on the list.' } },
    });
    await publish('pow-inline', {
      display: 'INLINE_EMBED',
      settings: { ...protection, successAction: { type: 'MESSAGE', message: 'Inline: welcome!' } },
    });
    await publish('pow-popup', {
      display: 'POPUP',
      settings: { ...protection, successAction: { type: 'MESSAGE', message: 'Popup: welcome!' } },
    });
    await publish('plain-inline', { display: 'INLINE_EMBED' });
    browser = await launchBrowser();
    // Another port is another origin: the embeds run cross-origin, as on a customer's site.
    site = await startSite();
    const { pages } = site;
    const embed = (slug: string, attrs = '') => `<script src="${base}/f/${slug}/embed.js"${attrs}></script>`;
    pages.set(
      '/inline',
      `<!doctype html><html><head><title>Blog</title></head><body><h1>A blog post</h1><p>Subscribe below.</p>${embed('pow-inline')}</body></html>`,
    );
    pages.set(
      '/popup',
      `<!doctype html><html><head><title>Shop</title></head><body><h1>A shop</h1><button id="opener" data-formcast-open="pow-popup">Newsletter</button>${embed('pow-popup', ' data-formcast-delay="off"')}</body></html>`,
    );
    pages.set('/plain', `<!doctype html><html><body><h1>Plain</h1>${embed('plain-inline')}</body></html>`);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await app?.close();
    await db?.close();
  });

  async function open(
    url: string,
  ): Promise<{ page: Page; errors: string[]; posts: { url: string; body: string | null }[] }> {
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    const errors: string[] = [];
    const posts: { url: string; body: string | null }[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text());
    });
    page.on('request', (r) => {
      if (r.method() === 'POST') posts.push({ url: r.url(), body: r.postData() });
    });
    await page.goto(url);
    return { page, errors, posts };
  }
  const widgetState = (page: Page) =>
    page
      .locator('altcha-widget')
      .first()
      .evaluate((w) => (w as unknown as { getState(): string }).getState());

  it('the hosted page: the check runs by itself, the person fills the form and gets the thanks page (a GET: reloading sends nothing)', async () => {
    const { page, errors, posts } = await open(`${base}/f/pow-hosted`);
    await page.screenshot({ path: path.join(SHOTS, 'bot-protection-hosted-checking.png'), fullPage: true });
    await expect.poll(() => widgetState(page), { timeout: 30_000 }).toBe('verified');
    await page.waitForTimeout(1_000); // the tick's animation
    await page.screenshot({ path: path.join(SHOTS, 'bot-protection-hosted-verified.png'), fullPage: true });
    // Labelled: the widget's checkbox has an accessible name that says what happened, and ticked itself.
    expect(await page.getByRole('checkbox', { name: 'Verified' }).isChecked()).toBe(true);
    await page.getByLabel('Email').fill('hosted.person@example.com');
    await page
      .getByRole('button')
      .filter({ hasText: /subscribe|send/i })
      .first()
      .click();
    await page.waitForURL(`${base}/f/pow-hosted/thanks`);
    expect(await page.getByRole('status').textContent()).toContain('Thanks, you are on the list.');
    await page.screenshot({ path: path.join(SHOTS, 'bot-protection-hosted-thanks.png'), fullPage: true });
    await page.reload();
    expect(await page.getByRole('status').textContent()).toContain('Thanks, you are on the list.');
    const stored = (await rows()).filter((r) => emailOf(r) === 'hosted.person@example.com');
    expect(stored.map((r) => [r.status, r.source])).toEqual([['ACCEPTED', 'HOSTED']]);
    expect(errors).toEqual([]);

    // A replay of what the browser sent is refused: a solution counts once.
    const sent = posts.find((p) => p.url === `${base}/f/pow-hosted`)!;
    expect(sent.body).toContain('_fc_pow=');
    // How long the browser worked on it (the default difficulty): well under the few seconds a person takes to type.
    const payload = JSON.parse(Buffer.from(new URLSearchParams(sent.body!).get('_fc_pow')!, 'base64').toString('utf8'));
    console.info(`proof of work solved in ${payload.solution.time} ms (counter ${payload.solution.counter})`);
    expect(payload.solution.time).toBeLessThan(10_000);
    const replay = await fetch(`${base}/f/pow-hosted`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: sent.body!.replace('hosted.person', 'replayed'),
    });
    expect(replay.status).toBe(422);
    expect(await replay.json()).toMatchObject({ code: 'proof_of_work_failed', reason: 'replayed' });
    // A script that posts without the check is refused, and the page says why.
    const bare = await fetch(`${base}/f/pow-hosted`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'email=script%40example.com',
    });
    expect(bare.status).toBe(422);
    expect(await bare.text()).toContain('automatic spam check');
    expect((await rows()).some((r) => ['replayed@example.com', 'script@example.com'].includes(emailOf(r)))).toBe(false);
  });

  it('without JavaScript the check cannot run: the page says so, and a submission comes back with the message, values kept', async () => {
    const ctx = await browser.newContext({ javaScriptEnabled: false });
    const page = await ctx.newPage();
    await page.goto(`${base}/f/pow-hosted`);
    // (The <noscript> note is in the page; Chromium with script execution turned off through CDP still parses it as script-enabled.)
    expect(await page.content()).toContain('needs JavaScript');
    await page.getByLabel('Email').fill('nojs@example.com');
    await page
      .getByRole('button')
      .filter({ hasText: /subscribe|send/i })
      .first()
      .click();
    await page.waitForLoadState();
    expect(await page.locator('[data-formcast-error="_fc_pow"]').textContent()).toContain('automatic spam check');
    expect(await page.getByLabel('Email').inputValue()).toBe('nojs@example.com');
    await page.screenshot({ path: path.join(SHOTS, 'bot-protection-hosted-refused.png'), fullPage: true });
    expect((await rows()).some((r) => emailOf(r) === 'nojs@example.com')).toBe(false);
    await ctx.close();
  });

  it('a person who sends at once waits for the check instead of being refused', async () => {
    const { page, errors } = await open(`${base}/f/pow-hosted`);
    await page.getByLabel('Email').fill('quick.person@example.com');
    await page
      .getByRole('button')
      .filter({ hasText: /subscribe|send/i })
      .first()
      .click();
    await page.waitForURL(`${base}/f/pow-hosted/thanks`, { timeout: 30_000 });
    expect((await rows()).filter((r) => emailOf(r) === 'quick.person@example.com')).toHaveLength(1);
    expect(errors).toEqual([]);
  });

  it('INLINE_EMBED on another site: the widget comes from the Formcast origin, the person signs up; one impression per page view', async () => {
    const viewsBefore = (await api('GET', `/v1/forms/${forms['pow-inline']!.id}`)).stats.views as number;
    const { page, errors, posts } = await open(`${site.url}/inline`);
    const email = page.getByLabel('Email');
    await expect.poll(() => email.isVisible(), { timeout: 15_000 }).toBe(true);
    await expect
      .poll(async () => (await api('GET', `/v1/forms/${forms['pow-inline']!.id}`)).stats.views)
      .toBe(viewsBefore + 1);
    await email.fill('inline.person@example.com'); // focus starts the check
    await page.screenshot({ path: path.join(SHOTS, 'bot-protection-inline-checking.png'), fullPage: true });
    await page.getByRole('button', { name: /subscribe/i }).click();
    await expect.poll(() => page.getByText('Inline: welcome!').isVisible(), { timeout: 30_000 }).toBe(true);
    await page.screenshot({ path: path.join(SHOTS, 'bot-protection-inline-done.png'), fullPage: true });
    const stored = (await rows()).filter((r) => emailOf(r) === 'inline.person@example.com');
    expect(stored.map((r) => [r.status, r.source])).toEqual([['ACCEPTED', 'EMBED']]);
    expect(errors).toEqual([]);
    // The embed's JSON body carried the solution; replayed, it is refused.
    const sent = posts.find((p) => p.url === `${base}/f/pow-inline`)!;
    const body = JSON.parse(sent.body!);
    expect(typeof body._fc_pow).toBe('string');
    const replay = await fetch(`${base}/f/pow-inline`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ ...body, email: 'again@example.com' }),
    });
    expect(await replay.json()).toMatchObject({ code: 'proof_of_work_failed', reason: 'replayed' });
    // Reloading the host page: one more impression.
    await page.reload();
    await expect
      .poll(async () => (await api('GET', `/v1/forms/${forms['pow-inline']!.id}`)).stats.views)
      .toBe(viewsBefore + 2);
  });

  it('POPUP on another site: opened, filled, sent without noticing the check; opening it again counts no impression', async () => {
    const id = forms['pow-popup']!.id;
    const { page, errors } = await open(`${site.url}/popup`);
    await expect.poll(async () => (await api('GET', `/v1/forms/${id}`)).stats.views).toBe(1);
    await page.click('#opener');
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await dialog.getByLabel('Email').fill('popup.person@example.com');
    await page.screenshot({ path: path.join(SHOTS, 'bot-protection-popup.png') });
    await dialog.getByRole('button', { name: /subscribe/i }).click();
    await expect.poll(() => page.getByText('Popup: welcome!').isVisible(), { timeout: 30_000 }).toBe(true);
    await page.keyboard.press('Escape');
    await page.click('#opener');
    await page.waitForTimeout(300);
    expect((await api('GET', `/v1/forms/${id}`)).stats.views).toBe(1);
    expect((await rows()).filter((r) => emailOf(r) === 'popup.person@example.com').map((r) => r.status)).toEqual([
      'ACCEPTED',
    ]);
    expect(errors).toEqual([]);
  });

  it('a burst of patterned sign-ups through the embed is held: the visitor sees success, nobody is signed up', async () => {
    const emails = ['bomb1@victims.example', 'bomb2@victims.example', 'bomb3@victims.example', 'bomb4@victims.example'];
    for (const e of emails) {
      const { page } = await open(`${site.url}/plain`);
      await page.getByLabel('Email').fill(e);
      await page.getByRole('button', { name: /subscribe/i }).click();
      await expect.poll(() => page.getByRole('status').textContent(), { timeout: 15_000 }).toMatch(/thanks/i);
      await page.context().close();
    }
    const stored = (await rows()).filter((r) => emails.includes(emailOf(r)));
    expect(stored.map((r) => r.status)).toEqual(['ACCEPTED', 'ACCEPTED', 'HELD', 'HELD']);
    const contacts = await db.kysely
      .selectFrom('contacts')
      .select('email')
      .where('workspace_id', '=', ws)
      .where('email', 'in', emails)
      .execute();
    expect(contacts.map((c) => c.email).sort()).toEqual(['bomb1@victims.example', 'bomb2@victims.example']);
    const held = await api('GET', `/v1/forms/${forms['plain-inline']!.id}/submissions?status=HELD`);
    expect(held.data).toHaveLength(2);
  });

  it('the console: the proof-of-work switch is kept on save; a held sign-up is found under "held for review" and released', async () => {
    await app.services.users.create(ws, {
      email: 'mia@acme.test',
      role: 'owner',
      password: 'correct horse battery staple 42',
      name: 'Mia',
    });
    const draft = await api('POST', '/v1/forms', {
      name: 'Bot check (draft)',
      type: 'SIGN_UP',
      fieldMapping: { email: 'email' },
    });
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${base}/app/login?next=${encodeURIComponent(`/app/forms/${draft.id}`)}`);
    await page.locator('input[name="email"]').fill('mia@acme.test');
    await page.locator('input[name="password"]').fill('correct horse battery staple 42');
    await Promise.all([
      page.waitForURL(`${base}/app/forms/${draft.id}`),
      page.locator('input[name="password"]').press('Enter'),
    ]);
    await page.getByLabel('Ask browsers for a proof of work before they may submit').check();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Form saved.').waitFor();
    expect((await api('GET', `/v1/forms/${draft.id}`)).settings.protection).toEqual({ proofOfWork: true });
    await page
      .getByRole('group', { name: 'Bot protection' })
      .screenshot({ path: path.join(SHOTS, 'bot-protection-console-switch.png') });

    const formId = forms['plain-inline']!.id;
    await page.goto(`${base}/app/forms/${formId}?tab=submissions`);
    await page.getByLabel('Only those held for review').check();
    const rowsShown = page.getByRole('row').filter({ has: page.getByRole('button', { name: /^Release/ }) });
    await expect.poll(() => rowsShown.count(), { timeout: 15_000 }).toBe(2);
    await page.screenshot({ path: path.join(SHOTS, 'bot-protection-console-held.png'), fullPage: true });
    await rowsShown
      .first()
      .getByRole('button', { name: /^Release/ })
      .click();
    await page.getByText('Released: the person is signed up.').waitFor();
    const after = await api('GET', `/v1/forms/${formId}/submissions?status=RELEASED`);
    expect(after.data).toHaveLength(1);
    expect((await api('GET', `/v1/forms/${formId}/submissions?status=HELD`)).data).toHaveLength(1);
    expect(errors).toEqual([]);
    await ctx.close();
  });
});
