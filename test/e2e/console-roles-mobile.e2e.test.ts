/**
 * The console for every role and on a phone (issue 33 items 7, 11, 13), in headless Chromium against a real
 * Formcast (`node bin/formcast serve` on a temp SQLite file) serving the built console.
 * - Roles (lib/roles.ts `can`): an editor's navigation has no API keys or People; reached by their address, those
 *   pages say in plain words who can and whom to ask (the owner, by name and address), never a scope or "could not
 *   be loaded"; a viewer finds every write out of reach with the reason said.
 * - Forms and broadcasts are duplicated (a new DRAFT "Copy of …", all content, a new slug) and deleted (drafts
 *   only, after a confirmation; a published form explains why not) from their lists and their pages; the API is
 *   read afterwards.
 * - Every route of the console at 390 px, as owner, editor and viewer, with 200-character names without a space
 *   everywhere: no horizontal scroll (document scrollWidth > clientWidth), no raw scope, no "could not be loaded".
 * Screenshots (light, dark, 390 px) in docs/images/console/roles-*.png and test-output/e2e/roles-*.png; axe-core
 * on the pages this suite is about (no serious or critical violation); no CSP violation or page error anywhere.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { SCREENSHOTS, describeBrowser, expectNoSeriousAxe, launchBrowser, watchPages } from '../helpers/browser.js';
import { ROOT, apiCaller, cli, consoleUnavailable, serve } from '../helpers/formcast-process.js';

const SHOTS = path.join(ROOT, 'test-output', 'e2e');
const DOCS = path.join(ROOT, 'docs', 'images', 'console');
const PASSWORD = 'correct horse battery staple 42';
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };
/** 200 characters without a space: what must wrap rather than widen a page. */
const LONG = 'Averyveryverylongnamewithoutanyspace'.repeat(6).slice(0, 200);
const SLUG = 'a-very-long-slug-without-any-spaces-'.repeat(3).slice(0, 99).replace(/-+$/, '');
const OWNER = { email: 'olga.owner@acme.test', name: 'Olga Owner' };
const EDITOR = { email: 'eddie.editor@acme.test', name: 'Eddie Editor' };
const VIEWER = { email: 'vera.viewer@acme.test', name: 'Vera Viewer' };
type Role = 'owner' | 'editor' | 'viewer';

describeBrowser('the console for each role and at 390 px (formcast serve, headless Chromium)', () => {
  const unavailable = consoleUnavailable();
  if (unavailable) console.warn(`console roles e2e: skipped: ${unavailable}`);
  let browser: Browser;
  let server: Awaited<ReturnType<typeof serve>>;
  let tmp: string;
  let key: string;
  const ids: Record<string, string> = {};
  const contexts: BrowserContext[] = [];
  const csp: string[] = [];
  const errors: string[] = [];
  const api = apiCaller(
    () => server.url,
    () => key,
  );

  /** A signed-in page for `who` (a context of its own) at `viewport`, in `scheme`. */
  async function signedIn(
    who: { email: string },
    viewport = DESKTOP,
    scheme: 'light' | 'dark' = 'light',
  ): Promise<Page> {
    const ctx = await browser.newContext({ viewport, colorScheme: scheme });
    contexts.push(ctx);
    await watchPages(ctx, csp, errors);
    const p = await ctx.newPage();
    await p.goto(`${server.url}/app/login?next=${encodeURIComponent('/app')}`);
    await p.locator('input[name="email"]').fill(who.email);
    await p.locator('input[name="password"]').fill(PASSWORD);
    await Promise.all([p.waitForURL(`${server.url}/app`), p.locator('input[name="password"]').press('Enter')]);
    await settled(p);
    return p;
  }

  /** The page is ready: a heading shown, no skeleton or spinner left. */
  async function settled(p: Page, heading?: string | RegExp): Promise<void> {
    await p.getByRole('heading', { level: 1, ...(heading ? { name: heading } : {}) }).waitFor();
    await p.waitForFunction(() => document.querySelectorAll('.skeleton, .spinner').length === 0, undefined, {
      timeout: 15_000,
    });
  }

  /** Waits for an address; a failure names the notifications shown (an error toast says why). */
  async function arrive(p: Page, test: (u: URL) => boolean): Promise<void> {
    await p.waitForURL(test).catch(async (e: unknown) => {
      throw new Error(`${String(e)}; notifications: ${(await p.locator('.toast').allInnerTexts()).join(' | ')}`);
    });
  }

  async function open(p: Page, route: string, heading?: string | RegExp): Promise<void> {
    await p.goto(`${server.url}/app${route}`);
    await settled(p, heading);
  }

  /** A screenshot in test-output/e2e, and in docs/images/console with `docs`. */
  async function shot(p: Page, name: string, docs = false): Promise<void> {
    await p.evaluate(() => window.scrollTo(0, 0));
    const file = path.join(SHOTS, `roles-${name}.png`);
    await p.screenshot({ path: file, fullPage: true });
    if (docs && SCREENSHOTS) fs.copyFileSync(file, path.join(DOCS, `roles-${name}.png`));
  }

  /** What must never show: a scope's name, the generic failure panel, a raw error code. */
  async function plainWords(p: Page, where: string): Promise<void> {
    const text = await p.locator('main').innerText();
    expect(text, where).not.toMatch(/\b(?:read|write|manage):[a-z]+\b/);
    expect(text, where).not.toMatch(/could not be loaded|insufficient_scope/i);
  }

  async function horizontalScroll(p: Page): Promise<{ scrollWidth: number; clientWidth: number; widest: string }> {
    return p.evaluate(() => {
      const root = document.documentElement;
      // The element reaching furthest right, to name in a failure (not inside a frame that scrolls on its own).
      let widest = '';
      let right = root.clientWidth;
      const scrolls = (el: Element | null): boolean => {
        for (let e = el?.parentElement; e && e !== document.body; e = e.parentElement)
          if (getComputedStyle(e).overflowX !== 'visible') return true;
        return false;
      };
      for (const el of document.querySelectorAll('body *')) {
        if (scrolls(el)) continue;
        const r = el.getBoundingClientRect();
        if (r.right > right + 1) {
          right = r.right;
          widest = `${el.tagName.toLowerCase()}.${String(el.className).split(' ').join('.')} (${Math.round(r.right)} px)`;
        }
      }
      return { scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, widest };
    });
  }

  beforeAll(async () => {
    if (unavailable) return;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-roles-e2e-'));
    fs.mkdirSync(SHOTS, { recursive: true });
    fs.mkdirSync(DOCS, { recursive: true });
    const env = {
      DATABASE_URL: path.join(tmp, 'formcast.db'),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      DNS_SERVERS: '127.0.0.1:9',
      DNS_TIMEOUT_MS: '300',
      WEBHOOKS_ALLOW_HTTP: 'true',
      WEBHOOKS_ALLOW_PRIVATE: 'true',
    };
    const created = await cli(['workspace', 'create', LONG, '--json'], env);
    key = created.apiKey.key;
    const user = (u: { email: string; name: string }, role: Role) =>
      cli(
        [
          'user',
          'create',
          '--workspace',
          created.workspace.id,
          '--email',
          u.email,
          '--role',
          role,
          '--name',
          u.name,
          '--password-stdin',
          '--json',
        ],
        env,
        `${PASSWORD}\n`,
      );
    await user(OWNER, 'owner');
    await user(EDITOR, 'editor');
    await user(VIEWER, 'viewer');
    const [started, launched] = await Promise.all([serve(env), launchBrowser()]);
    server = started;
    browser = launched;

    // Long names everywhere a name shows.
    const draft = await api('POST', '/v1/forms', {
      name: LONG,
      type: 'SIGN_UP',
      slug: SLUG,
      description: LONG,
      fieldMapping: { email: 'email', first_name: 'firstName' },
      settings: { successAction: { type: 'MESSAGE', message: `Thanks ${LONG}` }, doubleOptIn: false },
      seoTitle: LONG,
    });
    ids.draftForm = draft.id;
    const live = await api('POST', '/v1/forms', {
      name: `Live ${LONG}`.slice(0, 200),
      type: 'SIGN_UP',
      slug: 'live-newsletter',
      fieldMapping: { email: 'email' },
    });
    await api('POST', `/v1/forms/${live.id}/publish`);
    ids.liveForm = live.id;
    const topic = await api('POST', '/v1/topics', { name: LONG, defaultSubscription: 'OPT_IN' });
    ids.topic = topic.id;
    const contact = await api('POST', '/v1/contacts', {
      email: `${'x'.repeat(60)}@averylongdomainnamewithoutanybreakatall.test`,
      firstName: LONG,
      lastName: LONG,
      properties: { company: LONG },
    });
    ids.contact = contact.id;
    const segment = await api('POST', '/v1/segments', {
      name: LONG,
      filter: { all: [{ field: 'properties.company', op: 'eq', value: LONG }] },
    });
    ids.segment = segment.id;
    const broadcast = await api('POST', '/v1/broadcasts', {
      name: LONG,
      segmentId: segment.id,
      topicId: topic.id,
      emailContent: {
        subject: LONG,
        previewText: LONG,
        html: `<p>Hello {{ contact.firstName }}, ${LONG}</p><p><a href="https://example.com/${LONG}">${LONG}</a></p>`,
        text: `Hello ${LONG}`,
      },
    });
    ids.broadcast = broadcast.id;
    const template = await api('POST', '/v1/templates', {
      name: LONG,
      subject: LONG,
      html: `<p>${LONG}</p>`,
    });
    ids.template = template.id;
    const automation = await api('POST', '/v1/automations', {
      name: LONG,
      trigger: { type: 'contact.created' },
      steps: [{ type: 'wait', duration: 'P1D' }],
    });
    ids.automation = automation.id;
    const domain = await api('POST', '/v1/domains', {
      name: `${'a'.repeat(63)}.${'averylongsubdomainlabel'.repeat(2)}.example`,
    });
    ids.domain = domain.id;
    const webhook = await api('POST', '/v1/webhooks', {
      url: `http://127.0.0.1:9/${LONG}`,
      eventTypes: ['contact.created'],
      description: LONG,
    }).catch(() => api('POST', '/v1/webhooks', { url: `http://127.0.0.1:9/${LONG}`, eventTypes: ['contact.created'] }));
    ids.webhook = webhook.id;
    await api('POST', '/v1/api-keys', { name: LONG, scopes: ['read:forms'] });
  }, 300_000);

  afterEach(() => {
    expect(csp.splice(0), 'Content-Security-Policy violations').toEqual([]);
    expect(errors.splice(0), 'page errors').toEqual([]);
  });

  afterAll(async () => {
    if (server && server.child.exitCode !== null)
      console.warn(`formcast serve exited ${server.child.exitCode}:\n${server.output().slice(-3000)}`);
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    server?.child.kill('SIGTERM');
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it.skipIf(unavailable)(
    "an editor's menu has no API keys or People; by their address they say who can and whom to ask, in plain words",
    async () => {
      const p = await signedIn(EDITOR);
      const nav = p.getByRole('navigation');
      await nav.getByRole('link', { name: 'Forms' }).waitFor();
      expect(await nav.getByRole('link', { name: 'API keys' }).count()).toBe(0);
      expect(await nav.getByRole('link', { name: 'People' }).count()).toBe(0);

      await open(p, '/api-keys', 'API keys');
      const main = p.locator('main');
      await main.getByText('Only admins and owners manage API keys.').waitFor();
      await main.getByRole('link', { name: OWNER.email }).waitFor();
      await expect.poll(() => main.innerText()).toContain(`Ask ${OWNER.name} (${OWNER.email})`);
      await plainWords(p, 'API keys, editor');
      await expectNoSeriousAxe(p, 'API keys, editor');
      await shot(p, 'editor-api-keys', true);

      await open(p, '/people', 'People');
      await main.getByText('Only admins and owners invite people and change their roles.').waitFor();
      await main.getByRole('heading', { name: 'Your sessions' }).waitFor();
      await plainWords(p, 'People, editor');
      await expectNoSeriousAxe(p, 'People, editor');
      await shot(p, 'editor-people');

      await open(p, '/settings', 'Settings');
      await main.getByText("Only owners change the workspace's settings.").waitFor();
      expect(await main.getByRole('button', { name: 'Save settings' }).count()).toBe(0);
      await plainWords(p, 'Settings, editor');

      // An editor writes forms and broadcasts, but not domains or webhooks.
      await open(p, '/forms', 'Forms');
      await main.getByRole('button', { name: 'New form' }).waitFor();
      await open(p, '/domains', 'Domains');
      await main.getByText('Only admins and owners add, verify and remove sending domains.').waitFor();
      await open(p, '/webhooks', 'Webhooks');
      await main.getByText('Only admins and owners add, change and remove webhooks.').waitFor();

      for (const scheme of ['dark', 'light'] as const) {
        const phone = await signedIn(EDITOR, PHONE, scheme);
        await open(phone, '/api-keys', 'API keys');
        await expectNoSeriousAxe(phone, `API keys, editor, 390 px ${scheme}`);
        await shot(phone, `editor-api-keys-phone-${scheme}`, true);
      }
      const dark = await signedIn(EDITOR, DESKTOP, 'dark');
      await open(dark, '/api-keys', 'API keys');
      await expectNoSeriousAxe(dark, 'API keys, editor, dark');
      await shot(dark, 'editor-api-keys-dark', true);
    },
    240_000,
  );

  it.skipIf(unavailable)(
    'a viewer finds every write out of reach, with who can said instead',
    async () => {
      const p = await signedIn(VIEWER);
      const main = p.locator('main');
      const pages: [string, string | RegExp, string][] = [
        ['/forms', 'Forms', 'Only editors, admins and owners create, change and delete forms.'],
        [`/forms/${ids.draftForm}`, LONG, 'Only editors, admins and owners create, change and delete forms.'],
        ['/broadcasts', 'Broadcasts', 'Only editors, admins and owners create, change and send broadcasts'],
        [`/broadcasts/${ids.broadcast}`, LONG, 'Only editors, admins and owners create, change and send broadcasts'],
        ['/contacts', 'Contacts', 'Only editors, admins and owners change contacts, segments and topics.'],
        ['/topics', 'Topics', 'Only editors, admins and owners change contacts, segments and topics.'],
        ['/templates', 'Templates', 'Only editors, admins and owners create, change and send broadcasts'],
      ];
      for (const [route, heading, sentence] of pages) {
        await open(p, route, heading);
        await main.getByText(sentence).first().waitFor();
        for (const name of ['New form', 'New broadcast', 'Publish', 'Duplicate', 'Delete', 'Send now…', 'New topic'])
          expect(await main.getByRole('button', { name, exact: true }).count(), `${route}: ${name}`).toBe(0);
        await plainWords(p, `${route}, viewer`);
      }
      await open(p, '/forms', 'Forms');
      await expectNoSeriousAxe(p, 'forms, viewer');
      await shot(p, 'viewer-forms', true);
    },
    180_000,
  );

  it.skipIf(unavailable)(
    'forms and broadcasts are duplicated and deleted from their lists and pages; a published form says why not',
    async () => {
      const p = await signedIn(OWNER);
      const main = p.locator('main');
      const draft = await api('GET', `/v1/forms/${ids.draftForm}`);

      // Duplicate the draft form from the list: its copy's page opens.
      await open(p, '/forms', 'Forms');
      await shot(p, 'owner-forms', true);
      await main.getByRole('button', { name: `Duplicate form ${LONG}`, exact: true }).click();
      await arrive(p, (u) => /\/app\/forms\/form_/.test(u.pathname) && !u.pathname.endsWith(ids.draftForm!));
      const copyId = p.url().split('/').pop()!;
      await settled(p, `Copy of ${LONG}`.slice(0, 200));
      const copy = await api('GET', `/v1/forms/${copyId}`);
      expect(copy).toMatchObject({
        name: `Copy of ${LONG}`.slice(0, 200),
        status: 'DRAFT',
        version: 1,
        type: draft.type,
        description: draft.description,
        fieldMapping: draft.fieldMapping,
        settings: draft.settings,
        seoTitle: draft.seoTitle,
        slug: `${SLUG.slice(0, 95).replace(/-+$/, '')}-copy`,
      });
      expect(copy.formGroupId).not.toBe(draft.formGroupId);
      const phone = await signedIn(OWNER, PHONE);
      await open(phone, `/forms/${copyId}`);
      await shot(phone, 'form-editor-long-name-phone');

      // Delete the copy from its page, after the confirmation: back on the list, and gone.
      await main.getByRole('button', { name: `Delete form Copy of`, exact: false }).click();
      const dialog = p.getByRole('dialog');
      await dialog.getByRole('heading', { name: 'Delete this form?' }).waitFor();
      await expectNoSeriousAxe(p, 'delete a form');
      await shot(p, 'form-delete-confirm');
      await dialog.getByRole('button', { name: 'Delete form' }).click();
      await p.waitForURL(`${server.url}/app/forms`);
      await expect.poll(() => p.locator('.toast').first().innerText()).toContain('Deleted the draft');
      const gone = await fetch(`${server.url}/v1/forms/${copyId}`, { headers: { authorization: `Bearer ${key}` } });
      expect(gone.status).toBe(404);

      // A published form: Delete is marked unavailable, its tooltip and dialog say why and what to do instead.
      await open(p, `/forms/${ids.liveForm}`);
      const del = main.getByRole('button', { name: /^Delete form Live/ });
      expect(await del.getAttribute('aria-disabled')).toBe('true');
      expect(await del.getAttribute('title')).toMatch(/Only a draft can be deleted, and this version is published/);
      await del.click({ force: true }); // aria-disabled: still pressable, to explain
      await expect.poll(() => p.getByRole('dialog').innerText()).toContain('Edit as a new version');
      await expectNoSeriousAxe(p, 'a published form cannot be deleted');
      await shot(p, 'form-delete-published');
      await p.getByRole('dialog').getByRole('button', { name: 'OK', exact: true }).click();
      expect((await api('GET', `/v1/forms/${ids.liveForm}`)).status).toBe('PUBLISHED');

      // A broadcast: duplicated from its page (all content), the copy deleted from the list.
      const original = await api('GET', `/v1/broadcasts/${ids.broadcast}`);
      await open(p, `/broadcasts/${ids.broadcast}`);
      await main.getByRole('button', { name: `Duplicate broadcast ${LONG}`, exact: true }).click();
      await arrive(p, (u) => /\/app\/broadcasts\/bc_/.test(u.pathname) && !u.pathname.endsWith(ids.broadcast!));
      const bCopyId = p.url().split('/').pop()!;
      await settled(p);
      const bCopy = await api('GET', `/v1/broadcasts/${bCopyId}`);
      expect(bCopy).toMatchObject({
        name: `Copy of ${LONG}`,
        status: 'DRAFT',
        segmentId: original.segmentId,
        topicId: original.topicId,
        emailContent: original.emailContent,
        sentAt: null,
      });
      await open(p, '/broadcasts', 'Broadcasts');
      await shot(p, 'owner-broadcasts');
      await main.getByRole('button', { name: `Delete broadcast Copy of ${LONG}`, exact: true }).click();
      await p.getByRole('dialog').getByRole('button', { name: 'Delete broadcast' }).click();
      await expect
        .poll(() => main.getByRole('button', { name: `Delete broadcast Copy of ${LONG}`, exact: true }).count())
        .toBe(0);
      const bGone = await fetch(`${server.url}/v1/broadcasts/${bCopyId}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(bGone.status).toBe(404);
      expect((await api('GET', `/v1/broadcasts/${ids.broadcast}`)).status).toBe('DRAFT');
    },
    240_000,
  );

  it.skipIf(unavailable)(
    'every route at 390 px, for each role, with 200-character names: no horizontal scroll, no scope, no failed panel',
    async () => {
      const routes = [
        '/',
        '/forms',
        `/forms/${ids.draftForm}`,
        ...['html', 'versions', 'preview', 'results', 'submissions', 'stats'].map(
          (t) => `/forms/${ids.draftForm}?tab=${t}`,
        ),
        `/forms/${ids.liveForm}`,
        '/contacts',
        `/contacts/${ids.contact}`,
        '/segments',
        `/segments/${ids.segment}`,
        '/topics',
        '/broadcasts',
        `/broadcasts/${ids.broadcast}`,
        '/automations',
        `/automations/${ids.automation}`,
        '/emails',
        '/templates',
        `/templates/${ids.template}`,
        '/images',
        '/domains',
        `/domains/${ids.domain}`,
        '/inbound',
        '/webhooks',
        `/webhooks/${ids.webhook}`,
        '/api-keys',
        '/people',
        '/settings',
        '/no-such-page',
      ];
      const failures: string[] = [];
      for (const [who, role] of [
        [OWNER, 'owner'],
        [EDITOR, 'editor'],
        [VIEWER, 'viewer'],
      ] as const) {
        const p = await signedIn(who, PHONE);
        for (const route of routes) {
          await open(p, route);
          const s = await horizontalScroll(p);
          if (s.scrollWidth > s.clientWidth)
            failures.push(`${role} ${route}: ${s.scrollWidth} px wide in ${s.clientWidth} (widest: ${s.widest})`);
          const text = await p.locator('main').innerText();
          if (/\b(?:read|write|manage):[a-z]+\b|could not be loaded|insufficient_scope/i.test(text))
            failures.push(
              `${role} ${route}: ${/.*(?:read|write|manage):[a-z]+.*|.*could not be loaded.*/i.exec(text)}`,
            );
          if (role === 'owner' && ['/people', '/api-keys', '/topics', '/forms'].includes(route))
            await shot(p, `phone-${route.slice(1)}`, true);
        }
      }
      expect(failures).toEqual([]);
    },
    600_000,
  );
});
