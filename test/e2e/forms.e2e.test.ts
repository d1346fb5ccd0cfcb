/**
 * Public forms end to end, in headless Chromium against a real Formcast: `node bin/formcast serve` as a
 * child process on a temp SQLite file, its worker sending confirmation emails to the test SMTP server.
 * Set up through the CLI (workspace, verified sending domain) and the HTTP API (forms, publish), then
 * used as a visitor would: the hosted page, the confirmation link from the email, and the embed script on
 * a page of another origin (inline and as a popup). Screenshots go to test-output/e2e/.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBrowser, launchBrowser, startSite, type Site } from '../helpers/browser.js';
import { startSmtpServer } from '../helpers/smtp.js';
import { apiCaller, cli, freePort, serve } from '../helpers/formcast-process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHOTS = path.join(ROOT, 'test-output', 'e2e');
const XSS_IMG = '<img src=x onerror=window.__pwned=1>';
const XSS_SCRIPT = '"><script>window.__pwned=1</script>';
const XSS = `${XSS_IMG}${XSS_SCRIPT}`;

/** The environment a child sees: ours minus Formcast's own variables, plus `env`. */
/** A port nobody listens on right now (the server must know its own URL before it starts, for PUBLIC_URL). */
/**
 * `serve` on a port picked beforehand, so that PUBLIC_URL (the links in emails, the embed's action) can be
 * the server's own address. Another process could take the port in between: then again on another one.
 */
async function serveOnOwnUrl(env: Record<string, string>): Promise<Awaited<ReturnType<typeof serve>>> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    try {
      const started = await serve({ ...env, PORT: String(port), PUBLIC_URL: publicUrl });
      expect(started.url).toBe(publicUrl);
      return started;
    } catch (err) {
      if (attempt === 3 || !/EADDRINUSE/.test(String(err))) throw err;
    }
  }
}

/** Polls `fn` until it returns a value (not undefined); throws `message` after `ms`. */
async function eventually<T>(
  fn: () => Promise<T | undefined> | T | undefined,
  message: string,
  ms = 10_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(message);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describeBrowser('public forms end to end (formcast serve, headless Chromium)', () => {
  let browser: Browser;
  let server: Awaited<ReturnType<typeof serve>>;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let site: Site;
  let tmp: string;
  let key: string;
  const formIds: Record<string, string> = {};

  const api = apiCaller(
    () => server.url,
    () => key,
  );

  async function publishForm(slug: string, config: Record<string, unknown>): Promise<void> {
    const form = await api('POST', '/v1/forms', {
      type: 'SIGN_UP',
      slug,
      fieldMapping: { email: 'email', first_name: 'firstName' },
      ...config,
    });
    await api('POST', `/v1/forms/${form.id}/publish`);
    formIds[slug] = form.id;
  }

  async function contact(email: string): Promise<any> {
    const { data } = await api('GET', `/v1/contacts?email=${encodeURIComponent(email)}`);
    return data[0];
  }

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-e2e-'));
    fs.mkdirSync(SHOTS, { recursive: true });
    smtp = await startSmtpServer();
    const env = {
      DATABASE_URL: path.join(tmp, 'formcast.db'),
      HOST: '127.0.0.1',
      SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
      WORKER_POLL_MS: '50',
      // The suite submits the same forms many times from 127.0.0.1; the limit itself is tested over HTTP.
      SUBMISSION_RATE_LIMIT: '1000',
      LOG_LEVEL: 'warn',
    };
    const [created, launched] = await Promise.all([
      cli(['workspace', 'create', 'Acme', '--json'], env),
      launchBrowser(),
    ]);
    browser = launched;
    key = created.apiKey.key;
    // The domain (the confirmation emails' sender) is added while the server starts: both are process spawns.
    const [, started] = await Promise.all([
      cli(['domain', 'add', 'acme.test', '--workspace', created.workspace.id, '--verified', '--json'], env),
      serveOnOwnUrl(env),
    ]);
    server = started;

    await Promise.all([
      publishForm('newsletter', {
        name: 'Acme newsletter',
        display: 'INLINE_EMBED',
        seoTitle: 'Join the Acme newsletter',
        seoDescription: 'News from Acme, monthly.',
        settings: { successAction: { type: 'MESSAGE', message: 'Thanks for subscribing!' } },
      }),
      publishForm('double', {
        name: 'Updates list (internal)',
        display: 'INLINE_EMBED',
        settings: {
          successAction: { type: 'MESSAGE', message: 'Check your inbox to confirm.' },
          doubleOptIn: true,
          appearance: { heading: 'Acme updates' },
        },
      }),
      publishForm('popup', {
        name: 'Get 10% off',
        display: 'POPUP',
        settings: {
          successAction: { type: 'MESSAGE', message: 'Your code is on its way.' },
          appearance: { heading: 'Get 10% off' },
        },
      }),
      publishForm('xss', {
        name: `Name ${XSS}`,
        display: 'INLINE_EMBED',
        seoTitle: `Title ${XSS}`,
        seoDescription: `Description ${XSS}`,
        settings: {
          successAction: { type: 'MESSAGE', message: `Message ${XSS}` },
          appearance: { heading: `Heading ${XSS}` },
        },
      }),
    ]);

    // The other origin: a site that embeds the forms (another port on 127.0.0.1).
    site = await startSite();
    const { pages } = site;
    const shell = (body: string) =>
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
      `<title>Acme blog</title><style>body { font-family: Georgia, serif; max-width: 40rem; margin: 2rem auto; } input, button { display: none; }</style></head><body>${body}</body></html>`;
    const script = (slug: string, attrs = '') => `<script src="${server.url}/f/${slug}/embed.js"${attrs}></script>`;
    pages.set(
      '/inline',
      shell(`<h1>Acme blog</h1><p>Our latest post.</p>${script('newsletter')}<p id="after">More posts.</p>`),
    );
    pages.set(
      '/popup',
      shell(
        `<h1>Acme shop</h1><p><a href="#offer" id="offer" data-formcast-open="popup">Get the discount</a></p>${script('popup', ' data-formcast-delay="0"')}`,
      ),
    );
    pages.set('/xss', shell(`<h1>XSS</h1>${script('xss')}`));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (server && server.child.exitCode === null) {
      const exited = new Promise((r) => server.child.once('exit', r));
      server.child.kill('SIGTERM');
      const timer = setTimeout(() => server.child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    await smtp?.close();
    await site?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  async function newPage(): Promise<{ page: Page; errors: string[] }> {
    const ctx = await browser.newContext({ viewport: { width: 800, height: 700 } });
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    return { page, errors };
  }

  it('hosted page: fill and submit, see the success message; the contact is SUBSCRIBED', async () => {
    const { page, errors } = await newPage();
    const res = await page.goto(`${server.url}/f/newsletter`);
    expect(res!.status()).toBe(200);
    expect(res!.headers()['content-security-policy']).toContain("default-src 'none'");
    expect(await page.title()).toBe('Join the Acme newsletter');
    expect(await page.locator('meta[name="description"]').getAttribute('content')).toBe('News from Acme, monthly.');
    expect(await page.locator('form[data-formcast-form]').count()).toBe(1);
    expect(await page.locator('form[data-formcast-form]').getAttribute('action')).toBe('/f/newsletter');
    // The honeypot is in the form but out of sight and out of the tab order.
    const hp = page.locator('input[name="_fc_hp"]');
    expect(await hp.getAttribute('tabindex')).toBe('-1');
    expect(await hp.evaluate((el) => el.getBoundingClientRect().right <= 0)).toBe(true);
    await page.screenshot({ path: path.join(SHOTS, 'hosted-page.png'), fullPage: true });

    await page.getByLabel('Email').fill('ann@example.com');
    await page.getByLabel('First name').fill('Ann');
    const [answer] = await Promise.all([
      page.waitForNavigation(),
      page.getByRole('button', { name: 'Subscribe' }).click(),
    ]);
    expect(answer!.status()).toBe(200);
    expect(await page.locator('[data-formcast-success]').innerText()).toBe('Thanks for subscribing!');
    await page.screenshot({ path: path.join(SHOTS, 'hosted-success.png') });
    expect(await contact('ann@example.com')).toMatchObject({
      email: 'ann@example.com',
      firstName: 'Ann',
      status: 'SUBSCRIBED',
    });
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('hosted page: an invalid email is shown next to the field, the values kept (422)', async () => {
    const { page } = await newPage();
    await page.goto(`${server.url}/f/newsletter`);
    await page.getByLabel('Email').fill('not-an-email');
    await page.getByLabel('First name').fill('Bob');
    const [answer] = await Promise.all([
      page.waitForNavigation(),
      page.getByRole('button', { name: 'Subscribe' }).click(),
    ]);
    expect(answer!.status()).toBe(422);
    const email = page.getByLabel('Email');
    const error = page.locator('[data-formcast-error="email"]');
    expect(await error.innerText()).toMatch(/valid email/i);
    expect(await email.getAttribute('aria-invalid')).toBe('true');
    expect(await email.getAttribute('aria-describedby')).toBe(await error.getAttribute('id'));
    // "Next to the field": the message is the field's own, right below it.
    const [fieldBox, errorBox] = await Promise.all([email.boundingBox(), error.boundingBox()]);
    expect(errorBox!.y).toBeGreaterThanOrEqual(fieldBox!.y + fieldBox!.height - 1);
    expect(errorBox!.y - (fieldBox!.y + fieldBox!.height)).toBeLessThan(40);
    expect(await email.inputValue()).toBe('not-an-email');
    expect(await page.getByLabel('First name').inputValue()).toBe('Bob');
    expect(await page.locator('[data-formcast-error-summary]').innerText()).not.toBe('');
    await page.screenshot({ path: path.join(SHOTS, 'hosted-error.png'), fullPage: true });
    // Corrected, it goes through.
    await email.fill('bob@example.com');
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Subscribe' }).click()]);
    expect(await page.locator('[data-formcast-success]').innerText()).toBe('Thanks for subscribing!');
    expect(await contact('bob@example.com')).toMatchObject({ firstName: 'Bob', status: 'SUBSCRIBED' });
    await page.context().close();
  });

  it('double opt-in: PENDING, the confirmation email arrives, its link confirms; SUBSCRIBED', async () => {
    const { page } = await newPage();
    await page.goto(`${server.url}/f/double`);
    await page.getByLabel('Email').fill('carol@example.com');
    await page.getByLabel('First name').fill('Carol');
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Subscribe' }).click()]);
    expect(await page.locator('[data-formcast-success]').innerText()).toBe('Check your inbox to confirm.');
    expect(await contact('carol@example.com')).toMatchObject({ status: 'PENDING' });

    const mail = await eventually(
      () => smtp.received.find((m) => m.to === 'carol@example.com'),
      'no confirmation email within 10 s',
    );
    expect(mail.parsed.from?.value[0]?.address).toBe('no-reply@acme.test');
    expect(mail.parsed.subject).toBe('Please confirm your subscription to Acme updates'); // the public heading, never the internal name
    const links = [
      ...String(mail.parsed.html || mail.parsed.text).matchAll(/https?:\/\/[^\s"'<>]+\/confirm\/[A-Za-z0-9_-]+/g),
    ].map((m) => m[0]);
    expect(links.length).toBeGreaterThan(0);
    const link = links[0]!;
    expect(link.startsWith(`${server.url}/confirm/`)).toBe(true);
    expect(mail.parsed.text).toContain(link);

    // Following the link shows a page with one button (a scanner's GET confirms nothing); the button confirms.
    const res = await page.goto(link);
    expect(res!.status()).toBe(200);
    expect(await page.locator('h1').innerText()).toBe('Confirm your subscription');
    expect(await contact('carol@example.com')).toMatchObject({ status: 'PENDING' });
    await page.screenshot({ path: path.join(SHOTS, 'confirm-page.png') });
    await Promise.all([
      page.waitForNavigation(),
      page.getByRole('button', { name: 'Confirm my subscription' }).click(),
    ]);
    expect(await page.locator('h1').innerText()).toBe('You are subscribed');
    // The page names the workspace, not the form (a form's name is internal, never shown to visitors).
    expect(await page.locator('main').innerText()).toContain('Thank you for confirming your subscription to Acme.');
    expect(await contact('carol@example.com')).toMatchObject({ firstName: 'Carol', status: 'SUBSCRIBED' });
    const form = await api('GET', `/v1/forms/${formIds.double}`);
    expect(form.stats).toMatchObject({ confirmations: 1 });
    await page.context().close();
  });

  it('inline embed on another origin: errors and success in place; the contact appears', async () => {
    const { page, errors } = await newPage();
    await page.goto(`${site.url}/inline`);
    const host = page.locator('[data-formcast-embed="newsletter"]');
    await expect.poll(() => host.count()).toBe(1);
    expect(await page.evaluate(() => document.querySelector('[data-formcast-embed]')!.nextElementSibling!.id)).toBe(
      'after',
    );
    const email = page.getByLabel('Email');
    await expect.poll(() => email.isVisible()).toBe(true); // the site's `input { display: none }` does not reach it
    await page.screenshot({ path: path.join(SHOTS, 'embed-inline.png'), fullPage: true });

    await email.fill('dave@example');
    await page.getByLabel('First name').fill('Dave');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    const error = page.locator('[data-formcast-error="email"]');
    await expect.poll(() => error.textContent()).toMatch(/valid email/i);
    expect(await email.getAttribute('aria-invalid')).toBe('true');
    expect((await email.getAttribute('aria-describedby'))!.split(' ')).toContain(await error.getAttribute('id'));
    expect(page.url()).toBe(`${site.url}/inline`);

    await email.fill('dave@example.com');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Thanks for subscribing!');
    expect(page.url()).toBe(`${site.url}/inline`);
    expect(await contact('dave@example.com')).toMatchObject({ firstName: 'Dave', status: 'SUBSCRIBED' });
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('popup embed on another origin: a dialog with focus trapped, Esc closes, not shown again; submit there', async () => {
    const { page, errors } = await newPage();
    await page.goto(`${site.url}/popup`);
    const dialog = page.getByRole('dialog', { name: 'Get 10% off' });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    expect(await dialog.getAttribute('aria-modal')).toBe('true');
    await page.screenshot({ path: path.join(SHOTS, 'embed-popup.png') });

    const focused = () =>
      page.evaluate(() => {
        let a = document.activeElement;
        while (a?.shadowRoot?.activeElement) a = a.shadowRoot.activeElement;
        return a ? (a.getAttribute('name') ?? a.getAttribute('aria-label') ?? (a.id || a.textContent)) : null;
      });
    expect(await focused()).toBe('email');
    const cycle: (string | null)[] = [];
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press('Tab');
      cycle.push(await focused());
    }
    expect(cycle).toEqual(['first_name', 'Subscribe', 'Close', 'email']);
    await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('Close');
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.isVisible()).toBe(false);

    // Once per visitor: not shown again on reload.
    await page.reload();
    await expect.poll(() => page.locator('[data-formcast-popup="popup"]').count()).toBe(1);
    await page.waitForTimeout(250);
    expect(await dialog.isVisible()).toBe(false);

    // The site's own link opens it; closing returns focus to the link.
    await page.locator('#offer').click();
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
    expect(await focused()).toBe('offer');

    await page.locator('#offer').click();
    await page.getByLabel('Email').fill('erin@example.com');
    await page.getByLabel('First name').fill('Erin');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Your code is on its way.');
    await page.screenshot({ path: path.join(SHOTS, 'embed-popup-success.png') });
    expect(await contact('erin@example.com')).toMatchObject({ firstName: 'Erin', status: 'SUBSCRIBED' });
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('XSS: name, SEO fields, success message and a submitted value render inert on the hosted page, the success page and the embed', async () => {
    const { page } = await newPage();
    const pwned = () => page.evaluate(() => (window as any).__pwned);
    await page.goto(`${server.url}/f/xss`);
    expect(await page.title()).toBe(`Title ${XSS}`);
    expect(await page.locator('meta[name="description"]').getAttribute('content')).toBe(`Description ${XSS}`);
    // The public heading; the form's name is internal and never shown (contract §4).
    expect(await page.locator('h1').innerText()).toBe(`Heading ${XSS}`);
    expect(await page.content()).not.toContain('Name &lt;img');
    expect(await pwned()).toBeUndefined();

    // A submitted value shown back (the 422 page keeps it).
    await page.getByLabel('Email').fill(`x${XSS_SCRIPT}`);
    await page.getByLabel('First name').fill(XSS);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Subscribe' }).click()]);
    expect(await page.getByLabel('First name').inputValue()).toBe(XSS);
    expect(await page.getByLabel('Email').inputValue()).toBe(`x${XSS_SCRIPT}`);
    expect(await page.locator('script, img').count()).toBe(0);
    expect(await pwned()).toBeUndefined();

    // The success page.
    await page.getByLabel('Email').fill('xss@example.com');
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Subscribe' }).click()]);
    expect(await page.locator('[data-formcast-success]').innerText()).toBe(`Message ${XSS}`);
    expect(await page.title()).toBe(`Title ${XSS}`);
    expect(await page.locator('script, img').count()).toBe(0);
    expect(await pwned()).toBeUndefined();
    expect(await contact('xss@example.com')).toMatchObject({ firstName: XSS });

    // The embed, on a site without a CSP of its own: nothing to fall back on but escaping.
    await page.goto(`${site.url}/xss`);
    await expect.poll(() => page.getByLabel('Email').isVisible()).toBe(true);
    expect(await page.locator('[data-formcast-embed] h1').innerText()).toBe(`Heading ${XSS}`);
    await page.getByLabel('Email').fill('xss2@example.com');
    await page.getByLabel('First name').fill(XSS);
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe(`Message ${XSS}`);
    await page.waitForTimeout(100); // an <img onerror> would have fired by now
    expect(
      await page.evaluate(
        () => document.querySelector('[data-formcast-embed]')!.shadowRoot!.querySelectorAll('script, img').length,
      ),
    ).toBe(0);
    expect(await pwned()).toBeUndefined();
    await page.context().close();
  });
});
