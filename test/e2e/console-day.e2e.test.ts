/**
 * A marketer's whole day (issue 33, "Done means"): every page of the console, as owner, editor and viewer (the owner
 * also in the dark theme and at a phone's 390 px: see VARIANTS_OF), in headless Chromium against a real Formcast (`node bin/formcast serve`
 * on a temp SQLite file) with a workspace that has something on every page: a published and a draft form with
 * sign-ups, contacts, a topic, a segment, a template, an image, a sent and a draft broadcast, an automation, a verified
 * domain, a webhook, a suppression.
 *
 * Each page fails the test on:
 * - a horizontal scroll (the document wider than the window),
 * - a raw error code of the catalogue (src/errors/catalogue.ts), a JSON pointer or a schema validator's sentence
 *   ("must NOT have fewer than …") shown to a person, or a scope name on a page that is not about keys,
 * - a "could not be loaded" panel or "Page not found",
 * - an axe-core serious or critical violation (every page in the light and dark themes for the owner, in the light
 *   theme for the editor and viewer, and at 390 px for the owner),
 * - an uncaught page error or a Content-Security-Policy violation.
 * Every failure of a walk is collected, so one run names them all.
 *
 * Screenshots: test-output/e2e/day/<role>-<variant>-<page>.png; with DOCS_SCREENSHOTS=1 the owner's are written to
 * docs/images/console/ too (the pictures docs/console.md shows), so `DOCS_SCREENSHOTS=1 npx vitest run
 * test/e2e/console-day.e2e.test.ts` refreshes them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../../src/errors/catalogue.js';
import { describeBrowser, expectNoSeriousAxe, launchBrowser, watchPages } from '../helpers/browser.js';
import { startSmtpServer } from '../helpers/smtp.js';
import { apiCaller, cli, consoleUnavailable, localServeEnv, serve } from '../helpers/formcast-process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHOTS = path.join(ROOT, 'test-output', 'e2e', 'day');
const DOCS_SHOTS = path.join(ROOT, 'docs', 'images', 'console');
const DOCS = process.env.DOCS_SCREENSHOTS === '1';
const PASSWORD = 'correct horse battery staple 42';
const ROLES = ['owner', 'editor', 'viewer'] as const;
type Role = (typeof ROLES)[number];
const PEOPLE: Record<Role, { email: string; name: string }> = {
  owner: { email: 'olivia@acme.test', name: 'Olivia Owner' },
  editor: { email: 'eddie@acme.test', name: 'Eddie Editor' },
  viewer: { email: 'vera@acme.test', name: 'Vera Viewer' },
};
const VARIANTS: Record<string, BrowserContextOptions> = {
  light: { viewport: { width: 1280, height: 860 }, colorScheme: 'light' },
  dark: { viewport: { width: 1280, height: 860 }, colorScheme: 'dark' },
  phone: { viewport: { width: 390, height: 844 }, colorScheme: 'light', isMobile: true, hasTouch: true },
};
/**
 * The owner walks every page in every variant; an editor and a viewer in the light theme. What differs between roles
 * is which controls a page shows (the owner's are the most), not its theme or its width: the dark theme is the same
 * style sheet for everyone, and every route at 390 px as each role is console-roles-mobile.e2e.test.ts's. Their dark
 * and phone walks here cost CI ~2 minutes for nothing either of those checks.
 */
const VARIANTS_OF: Record<Role, string[]> = { owner: ['light', 'dark', 'phone'], editor: ['light'], viewer: ['light'] };
/** A long name without spaces: what breaks layouts that do not wrap. */
const LONG = `Spring${'Sale'.repeat(20)}Announcement`;

const CODES = Object.keys(ERROR_CATALOGUE);

/** What a person must never read on a page: raw codes, pointers, validator wording, "could not be loaded". */
function findRawText(text: string, page: string): string[] {
  const found: string[] = [];
  for (const code of CODES) if (code.includes('_') && new RegExp(`\\b${code}\\b`).test(text)) found.push(code);
  const patterns: [RegExp, string][] = [
    [/could not be loaded/i, 'a "could not be loaded" panel'],
    [/page not found/i, '"Page not found"'],
    [/must NOT have|must match pattern|must be equal to one of|must have required property/, "a validator's sentence"],
    [/(^|\s)\/[a-zA-Z]+(\/[\w-]+)*\s+(must|is required|is invalid)/, 'a JSON pointer'],
    [/\b[a-zA-Z]+\.\d+\s+must\b/, 'a dotted path'],
    [/\bmanage:[a-z]+\b/, 'a scope name'],
  ];
  if (!/api-keys/.test(page))
    patterns.push([/\b(read|write):(forms|broadcasts|contacts|domains|webhooks)\b/, 'a scope name']);
  for (const [re, what] of patterns) {
    const m = re.exec(text);
    if (m)
      found.push(
        `${what}: "${text.slice(Math.max(0, m.index - 40), m.index + m[0].length + 40).replace(/\s+/g, ' ')}"`,
      );
  }
  return found;
}

describeBrowser(
  'a day in the life of the console: every page, every role, light, dark and 390 px (headless Chromium)',
  () => {
    const unavailable = consoleUnavailable();
    if (unavailable) console.warn(`console day e2e: skipped: ${unavailable}`);
    let browser: Browser;
    let server: Awaited<ReturnType<typeof serve>>;
    let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
    let tmp: string;
    let key: string;
    const ids: Record<string, string> = {};
    const states: Partial<Record<Role, string>> = {};
    const api = apiCaller(
      () => server.url,
      () => key,
    );

    beforeAll(async () => {
      if (unavailable) return;
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-day-e2e-'));
      fs.mkdirSync(SHOTS, { recursive: true });
      if (DOCS) fs.mkdirSync(DOCS_SHOTS, { recursive: true });
      smtp = await startSmtpServer();
      const env = localServeEnv(tmp, smtp.port, { WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' });
      const created = await cli(['workspace', 'create', 'Acme', '--json'], env);
      key = created.apiKey.key;
      const ws = created.workspace.id;
      const users = ROLES.map((role) =>
        cli(
          [
            'user',
            'create',
            '--workspace',
            ws,
            '--email',
            PEOPLE[role].email,
            '--role',
            role,
            '--name',
            PEOPLE[role].name,
            '--password-stdin',
            '--json',
          ],
          env,
          `${PASSWORD}\n`,
        ),
      );
      const [started, launched] = await Promise.all([
        serve(env),
        launchBrowser(),
        cli(['domain', 'add', 'acme.test', '--workspace', ws, '--verified', '--json'], env),
        ...users,
      ]);
      server = started;
      browser = launched;
      await seed();
      for (const role of ROLES) states[role] = await signIn(role);
    }, 240_000);

    afterAll(async () => {
      if (server && server.child.exitCode !== null)
        console.warn(`formcast serve exited ${server.child.exitCode}:\n${server.output().slice(-3000)}`);
      await browser?.close();
      server?.child.kill('SIGTERM');
      await smtp?.close();
      if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    });

    /** Something on every page: the workspace a marketer has after a few weeks. */
    async function seed(): Promise<void> {
      await api('PUT', '/v1/workspace', { settings: { brandColor: '#7c3aed' } }).catch(() => undefined);
      const topic = await api('POST', '/v1/topics', { name: 'Monthly newsletter', defaultSubscription: 'OPT_IN' });
      ids.topic = topic.id;
      const form = await api('POST', '/v1/forms', {
        name: 'Newsletter sign-up',
        type: 'SIGN_UP',
        slug: 'newsletter',
        fieldMapping: { email: 'email', first_name: 'firstName' },
      });
      await api('POST', `/v1/forms/${form.id}/publish`);
      ids.form = form.id;
      const draft = await api('POST', '/v1/forms', { name: LONG, type: 'SIGN_UP', slug: 'spring-sale' });
      ids.draftForm = draft.id;
      const people = [
        ['ada@acme.test', 'Ada', 'Lovelace'],
        ['grace@acme.test', 'Grace', 'Hopper'],
        ['linus@example.org', 'Linus', LONG],
        ['margaret@example.org', 'Margaret', 'Hamilton'],
      ];
      for (const [email, firstName, lastName] of people) {
        const c = await api('POST', '/v1/contacts', { email, firstName, lastName, properties: { plan: 'pro' } });
        ids.contact ??= c.id;
      }
      await fetch(`${server.url}/f/newsletter`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'signup@example.net', first_name: 'Sam' }),
      });
      await api('POST', '/v1/suppressions', { email: 'gone@example.net', reason: 'MANUAL' });
      const segment = await api('POST', '/v1/segments', {
        name: 'Pro plan',
        filter: { all: [{ field: 'properties.plan', op: 'eq', value: 'pro' }] },
      });
      ids.segment = segment.id;
      const template = await api('POST', '/v1/templates', {
        name: 'Monthly letter',
        emailContent: { subject: 'News from Acme', html: '<p>Hello {{ contact.firstName }}</p>' },
      }).catch(() => null);
      if (template) ids.template = template.id;
      const png = fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'images', 'spring-sale.png'));
      const body = new FormData();
      body.append('file', new Blob([png], { type: 'image/png' }), 'spring-sale.png');
      await fetch(`${server.url}/v1/images`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body });
      const content = {
        subject: 'Spring news for {{ contact.firstName | default: "you" }}',
        html: '<h1>Spring news</h1><p>Hello {{ contact.firstName }}, read <a href="https://acme.test/spring">what is new</a>.</p>',
      };
      const sent = await api('POST', '/v1/broadcasts', {
        name: 'Spring news',
        from: 'Acme <news@acme.test>',
        emailContent: content,
      });
      ids.sentBroadcast = sent.id;
      await api('POST', `/v1/broadcasts/${sent.id}/send`);
      const deadline = Date.now() + 60_000;
      while ((await api('GET', `/v1/broadcasts/${sent.id}`)).status !== 'SENT') {
        if (Date.now() > deadline) throw new Error('the seeded broadcast did not reach SENT within 60 s');
        await new Promise((r) => setTimeout(r, 200));
      }
      const draftBroadcast = await api('POST', '/v1/broadcasts', { name: LONG });
      ids.draftBroadcast = draftBroadcast.id;
      const automation = await api('POST', '/v1/automations', {
        name: 'Welcome series',
        trigger: { type: 'contact.created' },
        steps: [
          { type: 'wait', duration: 'P1D' },
          { type: 'send', from: 'news@acme.test', emailContent: { subject: 'Welcome', html: '<p>Welcome!</p>' } },
        ],
      });
      ids.automation = automation.id;
      const domains = await api('GET', '/v1/domains');
      ids.domain = domains.data[0].id;
      const webhook = await api('POST', '/v1/webhooks', {
        url: 'http://127.0.0.1:9/hooks',
        events: ['contact.created'],
      }).catch(() => null);
      if (webhook) ids.webhook = webhook.id;
    }

    /** Signs in as this role through /app/login; the session as a storage state for new contexts. */
    async function signIn(role: Role): Promise<string> {
      const ctx = await browser.newContext(VARIANTS.light);
      const p = await ctx.newPage();
      await p.goto(`${server.url}/app/login?next=${encodeURIComponent('/app')}`);
      await p.locator('input[name="email"]').fill(PEOPLE[role].email);
      await p.locator('input[name="password"]').fill(PASSWORD);
      await Promise.all([p.waitForURL(`${server.url}/app`), p.locator('input[name="password"]').press('Enter')]);
      const file = path.join(tmp, `${role}.json`);
      await ctx.storageState({ path: file });
      await ctx.close();
      return file;
    }

    /** Every page of the console, with the seeded resources' ids. */
    function pages(): [string, string][] {
      const list: [string, string | undefined][] = [
        ['dashboard', '/app'],
        ['forms', '/app/forms'],
        ['form', ids.form && `/app/forms/${ids.form}`],
        ['form-draft', ids.draftForm && `/app/forms/${ids.draftForm}`],
        ['contacts', '/app/contacts'],
        ['contact', ids.contact && `/app/contacts/${ids.contact}`],
        ['suppressions', '/app/suppressions'],
        ['segments', '/app/segments'],
        ['segment', ids.segment && `/app/segments/${ids.segment}`],
        ['topics', '/app/topics'],
        ['broadcasts', '/app/broadcasts'],
        ['broadcast-sent', ids.sentBroadcast && `/app/broadcasts/${ids.sentBroadcast}`],
        ['broadcast-draft', ids.draftBroadcast && `/app/broadcasts/${ids.draftBroadcast}`],
        ['automations', '/app/automations'],
        ['automation', ids.automation && `/app/automations/${ids.automation}`],
        ['templates', '/app/templates'],
        ['template', ids.template && `/app/templates/${ids.template}`],
        ['images', '/app/images'],
        ['domains', '/app/domains'],
        ['domain', ids.domain && `/app/domains/${ids.domain}`],
        ['inbound', '/app/inbound'],
        ['webhooks', '/app/webhooks'],
        ['webhook', ids.webhook && `/app/webhooks/${ids.webhook}`],
        ['api-keys', '/app/api-keys'],
        ['people', '/app/people'],
        ['audit-log', '/app/audit-log'],
        ['profile', '/app/profile'],
        ['settings', '/app/settings'],
      ];
      return list.filter((e): e is [string, string] => typeof e[1] === 'string');
    }

    /** Walks every page as this role in this variant; returns what went wrong, page by page. */
    async function walk(role: Role, variant: string): Promise<string[]> {
      const problems: string[] = [];
      const csp: string[] = [];
      const errors: string[] = [];
      const ctx = await browser.newContext({ ...VARIANTS[variant], storageState: states[role] });
      await watchPages(ctx, csp, errors);
      const p = await ctx.newPage();
      try {
        for (const [name, url] of pages()) {
          const where = `${role}/${variant}/${name}`;
          try {
            await visit(p, url);
            const overflow = await p.evaluate(() => ({
              scroll: document.documentElement.scrollWidth,
              client: document.documentElement.clientWidth,
            }));
            if (overflow.scroll > overflow.client + 1)
              problems.push(`${where}: scrolls sideways (${overflow.scroll} px in a ${overflow.client} px window)`);
            const text = await p.locator('body').innerText();
            for (const raw of findRawText(text, name)) problems.push(`${where}: shows ${raw}`);
            await shot(p, role, variant, name);
            if (
              (role === 'owner' && variant !== 'phone') ||
              variant === 'light' ||
              (role === 'owner' && name === 'dashboard')
            )
              // The dark theme is the light one's markup in other colours: only the rules about colours.
              await expectNoSeriousAxe(p, where, { colorsOnly: variant === 'dark' }).catch((e: Error) =>
                problems.push(e.message.split('\n').slice(0, 12).join('\n')),
              );
          } catch (e) {
            problems.push(`${where}: ${(e as Error).message.split('\n')[0]}`);
          }
          for (const c of csp.splice(0)) problems.push(`${where}: CSP violation ${c}`);
          for (const err of errors.splice(0)) problems.push(`${where}: page error ${err}`);
        }
      } finally {
        await ctx.close();
      }
      return problems;
    }

    /** Opens a page and waits until it is settled: its heading shown, no skeleton or spinner left. */
    async function visit(p: Page, url: string): Promise<void> {
      await p.goto(`${server.url}${url}`);
      await p.locator('h1').first().waitFor({ timeout: 15_000 });
      await p.waitForFunction(() => document.querySelectorAll('.skeleton, .spinner').length === 0, undefined, {
        timeout: 15_000,
      });
    }

    async function shot(p: Page, role: Role, variant: string, name: string): Promise<void> {
      await p.evaluate(() => {
        for (const b of document.querySelectorAll<HTMLButtonElement>('.toast button')) b.click();
        window.scrollTo(0, 0);
      });
      const file = `${role}-${variant}-${name}.png`;
      await p.screenshot({ path: path.join(SHOTS, file) });
      if (DOCS && role === 'owner')
        fs.copyFileSync(path.join(SHOTS, file), path.join(DOCS_SHOTS, `${variant}-${name}.png`));
    }

    for (const role of ROLES)
      it.skipIf(unavailable)(
        `as ${{ owner: 'the owner', editor: 'an editor', viewer: 'a viewer' }[role]}: every page ${role === 'owner' ? 'in light, dark and at 390 px' : 'in light'} reads well`,
        async () => {
          const problems: string[] = [];
          for (const variant of VARIANTS_OF[role]) problems.push(...(await walk(role, variant)));
          expect(problems, problems.join('\n')).toEqual([]);
        },
        600_000,
      );
  },
);
