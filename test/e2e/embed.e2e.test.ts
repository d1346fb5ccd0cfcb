/**
 * The embed script (src/forms/hosted/embed.ts) in headless Chromium, on its own: a stub "Formcast" origin serves
 * `embedScript(...)` and answers submissions the way docs/api.md §9 says (JSON, CORS), and a second origin
 * serves the host pages. forms.e2e.test.ts runs the same script against the real server; test/unit/embed.test.ts
 * checks the script's text (the compiled runtime, the escaped configuration).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { embedScript, type EmbedOptions } from '../../src/forms/hosted/embed.js';
import { describeBrowser, launchBrowser } from '../helpers/browser.js';

const XSS = '<img src=x onerror=window.__pwned=1>"><script>window.__pwned=1</script>';

function fragment(slug: string, heading: string | null): string {
  return [
    `<form method="post" action="/f/${slug}" data-formcast-form class="fc-form">`,
    heading === null ? '' : `<h1>${heading}</h1>`,
    `<div data-formcast-error-summary></div>`,
    `<div class="fc-field"><label for="fc-field-0">Email</label><input id="fc-field-0" name="email" type="email" autocomplete="email" required>`,
    `<p class="fc-error" data-formcast-error="email"></p></div>`,
    `<div class="fc-field"><label for="fc-field-1">First name</label><input id="fc-field-1" name="first_name" type="text">`,
    `<p class="fc-error" data-formcast-error="first_name"></p></div>`,
    `<div class="fc-hp" style="position:absolute;left:-10000px" aria-hidden="true"><label for="fc-hp">Leave this empty</label><input id="fc-hp" name="_fc_hp" tabindex="-1" autocomplete="off"></div>`,
    `<button type="submit">Subscribe</button>`,
    `<p data-formcast-success hidden></p>`,
    `</form>`,
  ].join('\n');
}

interface Stub {
  url: string;
  /** Bodies received by POST /f/{slug}, with their slug. */
  posts: { slug: string; body: any; origin: string | undefined }[];
  /** Where a submission with first_name "redirect" is sent. */
  redirectTo: string;
  forms: Map<string, Omit<EmbedOptions, 'action'>>;
  /** Holds every answer to a submission until the returned function is called (to see the busy state). */
  holdAnswers(): () => void;
  close(): Promise<void>;
}

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

async function startStub(): Promise<Stub> {
  const posts: Stub['posts'] = [];
  const forms = new Map<string, Omit<EmbedOptions, 'action'>>();
  let url = '';
  let held = Promise.resolve();
  const server = http.createServer((req, res) => {
    const m = /^\/f\/([a-z0-9-]+)(\/embed\.js)?$/.exec(req.url ?? '');
    const form = m ? forms.get(m[1]!) : undefined;
    const cors = {
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'POST',
      'access-control-allow-headers': 'Content-Type',
    };
    if (!m || !form) return res.writeHead(404).end();
    if (m[2] && req.method === 'GET') {
      void embedScript({ ...form, action: `${url}/f/${form.slug}` }).then((script) =>
        res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', ...cors }).end(script),
      );
      return;
    }
    if (req.method === 'OPTIONS') return res.writeHead(204, cors).end();
    if (req.method !== 'POST') return res.writeHead(405).end();
    let raw = '';
    req
      .setEncoding('utf8')
      .on('data', (d: string) => (raw += d))
      .on('end', () => {
        const body = JSON.parse(raw);
        posts.push({ slug: form.slug, body, origin: req.headers.origin });
        const send = (status: number, value: unknown) => {
          void held.then(() =>
            res.writeHead(status, { 'content-type': 'application/json', ...cors }).end(JSON.stringify(value)),
          );
        };
        if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(body.email ?? ''))
          return send(422, {
            ok: false,
            errors: [{ field: 'email', message: `Enter a valid email address (${body.email})` }],
          });
        if (body.first_name === 'slow down')
          return send(429, { ok: false, errors: [{ field: null, message: 'Too many submissions, try again later.' }] });
        if (body.first_name === 'redirect') return send(200, { ok: true, redirect: stub.redirectTo });
        send(200, { ok: true, message: `Thanks, ${body.first_name || 'friend'}! ${XSS}` });
      });
  });
  url = await listen(server);
  const stub: Stub = {
    url,
    posts,
    forms,
    redirectTo: '',
    holdAnswers() {
      let release!: () => void;
      held = new Promise<void>((resolve) => (release = resolve));
      return () => {
        release();
        held = Promise.resolve();
      };
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
  return stub;
}

describeBrowser('embed script (stub server, headless Chromium)', () => {
  let browser: Browser;
  let stub: Stub;
  let site: { url: string; pages: Map<string, string>; close(): Promise<void> };

  beforeAll(async () => {
    browser = await launchBrowser();
    stub = await startStub();
    stub.forms.set('inline', {
      slug: 'inline',
      display: 'INLINE_EMBED',
      title: 'Inline',
      formHtml: fragment('inline', 'Join the inline list'),
    });
    stub.forms.set('popup', {
      slug: 'popup',
      display: 'POPUP',
      title: 'Popup',
      formHtml: fragment('popup', 'Join the popup list'),
    });
    stub.forms.set('untitled', {
      slug: 'untitled',
      display: 'POPUP',
      title: `Untitled ${XSS}`,
      formHtml: fragment('untitled', null),
    });
    stub.forms.set('evil', {
      slug: 'evil',
      display: 'INLINE_EMBED',
      title: XSS,
      formHtml:
        `</script><script>window.__pwned=1</script>${XSS}<a href="javascript:window.__pwned=1">x</a>` +
        fragment('evil', XSS),
    });
    stub.forms.set('bare', {
      slug: 'bare',
      display: 'INLINE_EMBED',
      title: 'Bare',
      formHtml: '<form><label for="e">Email</label><input id="e" name="email"><button>Go</button></form>',
    });
    const pages = new Map<string, string>();
    const server = http.createServer((req, res) => {
      const body = pages.get(req.url ?? '');
      if (body === undefined) return res.writeHead(404).end();
      // /csp: a site with a strict policy of its own that allows just the Formcast origin.
      const csp =
        req.url === '/csp'
          ? {
              'content-security-policy': `default-src 'none'; script-src ${stub.url}; connect-src ${stub.url}; style-src 'self'`,
            }
          : {};
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...csp }).end(body);
    });
    site = { url: await listen(server), pages, close: () => new Promise((r) => server.close(() => r())) };
    stub.redirectTo = `${site.url}/thanks`;
    // Host page CSS that would wreck a form it could reach.
    const hostile =
      '<style>input, button { display: none !important; } form { color: red; } * { font-family: serif; }</style>';
    const embed = (slug: string, attrs = '') => `<script src="${stub.url}/f/${slug}/embed.js"${attrs}></script>`;
    pages.set(
      '/inline',
      `<!doctype html><html><head><title>Host</title>${hostile}</head><body><h1>Host page</h1>${embed('inline')}<footer id="after">after</footer></body></html>`,
    );
    pages.set(
      '/inline-twice',
      `<!doctype html><html><head>${embed('inline')}</head><body><div data-formcast-embed="inline"></div><p>text</p>${embed('inline')}</body></html>`,
    );
    pages.set(
      '/popup',
      `<!doctype html><html><head><title>Host</title>${hostile}</head><body><h1>Host page</h1><a href="#subscribe" id="opener" data-formcast-open>Subscribe</a>${embed('popup', ' data-formcast-delay="0"')}${embed('popup', ' data-formcast-delay="0"')}</body></html>`,
    );
    pages.set(
      '/popup-manual',
      `<!doctype html><html><body><button id="opener" data-formcast-open="untitled">Open</button>${embed('untitled', ' data-formcast-delay="off"')}</body></html>`,
    );
    pages.set('/evil', `<!doctype html><html><body>${embed('evil')}</body></html>`);
    pages.set(
      '/csp',
      `<!doctype html><html><body><p>Strict site</p>${embed('inline')}${embed('popup', ' data-formcast-delay="off"')}</body></html>`,
    );
    pages.set('/bare', `<!doctype html><html><body>${embed('bare')}</body></html>`);
    pages.set('/thanks', '<!doctype html><html><body><h1>Thanks page</h1></body></html>');
  });
  afterAll(async () => {
    await browser?.close();
    await stub?.close();
    await site?.close();
  });

  async function open(
    path: string,
    init?: (ctx: BrowserContext) => Promise<unknown>,
  ): Promise<{ page: Page; errors: string[] }> {
    const ctx = await browser.newContext();
    if (init) await init(ctx);
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // Failed loads (the favicon, a 422 answer) are logged too: only script errors count.
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text());
    });
    await page.goto(`${site.url}${path}`);
    return { page, errors };
  }

  it('INLINE_EMBED: renders after the script tag in a shadow root, untouched by the host CSS; errors, then success, across origins', async () => {
    const { page, errors } = await open('/inline', (ctx) =>
      ctx.addInitScript(() => {
        // The page's global names before any script runs, to tell what the embed adds.
        const before = new Set(Object.getOwnPropertyNames(window));
        Object.defineProperty(window, '__globalsAdded', {
          value: () => Object.getOwnPropertyNames(window).filter((n) => !before.has(n) && n !== '__globalsAdded'),
        });
      }),
    );
    const host = page.locator('[data-formcast-embed="inline"]');
    await expect.poll(() => host.count()).toBe(1);
    // Placed right after the script tag, before the footer.
    expect(
      await page.evaluate(() => {
        const h = document.querySelector('[data-formcast-embed]')!;
        return [h.previousElementSibling!.tagName, h.nextElementSibling!.id, !!h.shadowRoot];
      }),
    ).toEqual(['SCRIPT', 'after', true]);
    const email = page.getByLabel('Email');
    await expect.poll(() => email.isVisible()).toBe(true); // the host's `input { display: none }` does not reach it
    expect(await page.getByRole('button', { name: 'Subscribe' }).isVisible()).toBe(true);
    expect(await page.locator('#after').evaluate((el) => getComputedStyle(el).fontFamily)).toBe('serif');

    // The honeypot is out of sight and out of the tab order, but still submitted.
    const hp = page.locator('[name="_fc_hp"]');
    expect(await hp.getAttribute('tabindex')).toBe('-1');
    expect(await hp.evaluate((el) => el.getBoundingClientRect().right <= 0)).toBe(true);

    await email.fill('ann@example');
    await page.getByLabel('First name').fill('Ann');
    const answer = stub.holdAnswers();
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Subscribe' }).isDisabled()).toBe(true);
    answer();
    const error = page.locator('[data-formcast-error="email"]');
    await expect.poll(() => error.textContent()).toBe('Enter a valid email address (ann@example)');
    expect(await page.getByRole('button', { name: 'Subscribe' }).isDisabled()).toBe(false);
    expect(await email.getAttribute('aria-invalid')).toBe('true');
    const errorId = await error.getAttribute('id');
    expect(errorId).toBeTruthy();
    expect(await email.getAttribute('aria-describedby')).toBe(errorId);
    expect(await email.evaluate((el) => (el.getRootNode() as ShadowRoot).activeElement === el)).toBe(true);
    expect(await email.inputValue()).toBe('ann@example');
    expect(await page.getByLabel('First name').inputValue()).toBe('Ann');

    await email.fill('ann@example.com');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    const status = page.getByRole('status');
    await expect.poll(() => status.textContent()).toBe(`Thanks, Ann! ${XSS}`);
    expect(await email.isVisible()).toBe(false);
    expect(await error.textContent()).toBe('');
    expect(await email.getAttribute('aria-invalid')).toBeNull();
    expect(await email.getAttribute('aria-describedby')).toBeNull();
    expect(await page.evaluate(() => (window as any).__pwned)).toBeUndefined();

    const posted = stub.posts.filter((p) => p.slug === 'inline');
    expect(posted.at(-1)).toEqual({
      slug: 'inline',
      body: { email: 'ann@example.com', first_name: 'Ann', _fc_hp: '' },
      origin: site.url,
    });
    // Globals: one window.Formcast, nothing else.
    expect(await page.evaluate(() => (window as any).__globalsAdded())).toEqual(['Formcast']);
    expect(await page.evaluate(() => typeof (window as any).Formcast.open)).toBe('function');
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('INLINE_EMBED: a 429 goes to the error summary; a redirect is followed', async () => {
    const { page, errors } = await open('/inline');
    await page.getByLabel('Email').fill('bob@example.com');
    await page.getByLabel('First name').fill('slow down');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    const summary = page.locator('[data-formcast-error-summary]');
    await expect.poll(() => summary.textContent()).toBe('Too many submissions, try again later.');
    expect(await summary.getAttribute('role')).toBe('alert');

    await page.getByLabel('First name').fill('redirect');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await page.waitForURL(`${site.url}/thanks`);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('markup without the data-formcast-* places: the error goes after the control, the message replaces the form', async () => {
    const { page, errors } = await open('/bare');
    const email = page.getByLabel('Email');
    await email.fill('nope');
    await page.getByRole('button', { name: 'Go' }).click();
    const error = page.locator('[data-formcast-error="email"]');
    await expect.poll(() => error.textContent()).toBe('Enter a valid email address (nope)');
    expect(await error.evaluate((el) => (el.previousElementSibling as HTMLInputElement).name)).toBe('email');
    expect(await email.getAttribute('aria-describedby')).toBe(await error.getAttribute('id'));
    await email.fill('bare@example.com');
    await page.getByRole('button', { name: 'Go' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe(`Thanks, friend! ${XSS}`);
    expect(await page.locator('form').isVisible()).toBe(false);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('INLINE_EMBED included twice: one form where each tag stands (a head tag uses the placeholder)', async () => {
    const { page, errors } = await open('/inline-twice');
    await expect.poll(() => page.locator('[data-formcast-embed="inline"]').count()).toBe(2);
    expect(
      await page.evaluate(() =>
        [...document.querySelectorAll('[data-formcast-embed]')].map((h) => [h.parentElement!.tagName, !!h.shadowRoot]),
      ),
    ).toEqual([
      ['BODY', true],
      ['BODY', true],
    ]);
    expect(await page.getByLabel('Email').count()).toBe(2);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('POPUP: an accessible dialog, focus trapped, Esc closes and focus returns; once per visitor; data-formcast-open', async () => {
    const { page, errors } = await open('/popup');
    const dialog = page.getByRole('dialog', { name: 'Join the popup list' });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    // Included twice: still one popup.
    expect(await page.locator('[data-formcast-popup]').count()).toBe(1);
    expect(await dialog.getAttribute('aria-modal')).toBe('true');
    const focused = () =>
      page.evaluate(() => {
        let a = document.activeElement;
        while (a?.shadowRoot?.activeElement) a = a.shadowRoot.activeElement;
        return a ? (a.getAttribute('name') ?? a.getAttribute('aria-label') ?? (a.id || a.textContent)) : null;
      });
    expect(await focused()).toBe('email');
    const order: (string | null)[] = [];
    for (let i = 0; i < 5; i++) {
      await page.keyboard.press('Tab');
      order.push(await focused());
    }
    // email → first_name → Subscribe → Close → email (cycled) …; never the honeypot, never the host page.
    expect(order).toEqual(['first_name', 'Subscribe', 'Close', 'email', 'first_name']);
    await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('email');
    await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('Close');
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.isVisible()).toBe(false);

    // Opened from the host page's button: focus goes back to it on close.
    await page.locator('#opener').click();
    await expect.poll(() => dialog.isVisible()).toBe(true);
    expect(await focused()).toBe('email');
    await page.getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
    expect(await focused()).toBe('opener');

    // Once per visitor: a reload does not show it again.
    expect(await page.evaluate(() => localStorage.getItem('formcast:popup:popup'))).toBeTruthy();
    await page.reload();
    await page.waitForTimeout(300);
    expect(await page.locator('[data-formcast-popup]').count()).toBe(1);
    expect(await dialog.isVisible()).toBe(false);
    // Submitting in the popup.
    await page.locator('#opener').click();
    await page.getByLabel('Email').fill('pop@example.com');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe(`Thanks, friend! ${XSS}`);
    expect(stub.posts.at(-1)).toMatchObject({ slug: 'popup', body: { email: 'pop@example.com' }, origin: site.url });
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('POPUP without storage: shown once per page view; labelled by the title when the markup has no heading', async () => {
    const { page, errors } = await open('/popup', (ctx) =>
      ctx.addInitScript(() => {
        Object.defineProperty(window, 'localStorage', {
          get() {
            throw new DOMException('denied', 'SecurityError');
          },
        });
      }),
    );
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.isVisible()).toBe(false);
    await page.reload();
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await page.context().close();
    expect(errors).toEqual([]);

    const manual = await open('/popup-manual');
    await manual.page.waitForTimeout(300);
    const untitled = manual.page.getByRole('dialog');
    expect(await untitled.isVisible()).toBe(false); // data-formcast-delay="off"
    await manual.page.locator('#opener').click();
    await expect.poll(() => untitled.isVisible()).toBe(true);
    expect(await manual.page.getByRole('dialog', { name: `Untitled ${XSS}` }).count()).toBe(1);
    expect(await manual.page.evaluate(() => (window as any).__pwned)).toBeUndefined();
    expect(manual.errors).toEqual([]);
    await manual.page.context().close();
  });

  it('on a site with a strict CSP (no inline styles): styled, honeypot hidden, submits, nothing blocked', async () => {
    const { page, errors } = await open('/csp', (ctx) =>
      ctx.addInitScript(() => {
        const seen: string[] = [];
        document.addEventListener('securitypolicyviolation', (e) =>
          seen.push(`${e.violatedDirective} ${e.blockedURI} ${e.sample}`),
        );
        Object.defineProperty(window, '__violations', { value: seen });
      }),
    );
    const email = page.getByLabel('Email').first();
    await expect.poll(() => email.isVisible()).toBe(true);
    expect(await email.evaluate((el) => getComputedStyle(el).minHeight)).toBe('44px'); // the shadow root's stylesheet applies
    expect(
      await page
        .locator('[name="_fc_hp"]')
        .first()
        .evaluate((el) => el.getBoundingClientRect().right <= 0),
    ).toBe(true);
    await email.fill('strict@example.com');
    await page.getByRole('button', { name: 'Subscribe' }).first().click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toBe(`Thanks, friend! ${XSS}`);
    expect(await page.evaluate(() => (window as any).Formcast.open('popup'))).toBe(true);
    await expect.poll(() => page.getByRole('dialog').isVisible()).toBe(true);
    expect(await page.evaluate(() => (window as any).__violations)).toEqual([]);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('markup and title with script and handlers render inert', async () => {
    const { page } = await open('/evil');
    await expect.poll(() => page.getByLabel('Email').isVisible()).toBe(true);
    await page.waitForTimeout(200); // an <img onerror> would have fired by now
    expect(await page.evaluate(() => (window as any).__pwned)).toBeUndefined();
    const inside = await page.evaluate(() => {
      const root = document.querySelector('[data-formcast-embed]')!.shadowRoot!;
      return {
        scripts: root.querySelectorAll('script').length,
        handlers: root.querySelectorAll('[onerror]').length,
        js: root.querySelectorAll('a[href^="javascript"]').length,
      };
    });
    expect(inside).toEqual({ scripts: 0, handlers: 0, js: 0 });
    await page.context().close();
  });
});
