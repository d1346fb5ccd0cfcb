/**
 * The console's Templates and Images pages and the workspace's brand colour end to end (issue 31), in headless
 * Chromium against a real Formcast (`node bin/formcast serve` on a temp SQLite file) serving the built console. A
 * marketer starts a template from the gallery of starter emails, saves it, edits and duplicates it, cannot delete the
 * one a form sends as its double opt-in email (and reads why), deletes the copy; uploads a PNG to the image library,
 * sees it, copies its URL, is told in words why a 6 MB file and a file that is not an image are refused, deletes the
 * image; sets the brand colour. Every page: a screenshot in test-output/e2e/console-*.png (light, dark and at 390 px),
 * axe-core (no serious or critical violation) and no Content-Security-Policy violation or page error.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { describeBrowser, launchBrowser, expectNoSeriousAxe, watchPages } from '../helpers/browser.js';
import { apiCaller, cli, consoleUnavailable, serve } from '../helpers/formcast-process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHOTS = path.join(ROOT, 'test-output', 'e2e');
const EMAIL = 'mia@acme.test';
const PASSWORD = 'correct horse battery staple 42';
const DESKTOP = { width: 1280, height: 860 };
const PHONE = { width: 390, height: 844 };

/** A 640 × 400 PNG: a blue-to-orange banner with a title, made here (the fixture is code, not a binary). */
async function bannerPng(): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="640" height="400">
    <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1">
      <stop offset="0" stop-color="#2f4fd6"/><stop offset="1" stop-color="#e4572e"/></linearGradient></defs>
    <rect width="640" height="400" fill="url(#g)"/>
    <circle cx="520" cy="90" r="50" fill="#ffffff" fill-opacity="0.25"/>
    <text x="40" y="330" font-family="sans-serif" font-size="56" font-weight="700" fill="#ffffff">Spring sale</text>
  </svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

describeBrowser('the console: templates, the gallery, images and the brand colour (formcast serve, Chromium)', () => {
  const unavailable = consoleUnavailable();
  if (unavailable) console.warn(`console templates e2e: skipped: ${unavailable}`);
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let server: Awaited<ReturnType<typeof serve>>;
  let tmp: string;
  let key: string;
  let templateId: string;
  const cspViolations: string[] = [];
  const pageErrors: string[] = [];
  const api = apiCaller(
    () => server.url,
    () => key,
  );

  /** Notifications float over the bottom right corner (the settings' Save button): dismissed before a click there. */
  async function dismissToasts(p: Page): Promise<void> {
    await p.evaluate(() => {
      for (const b of document.querySelectorAll<HTMLButtonElement>('.toast button')) b.click();
    });
    await p.waitForFunction(() => document.querySelectorAll('.toast').length === 0);
  }

  async function shot(p: Page, name: string, { fullPage = true } = {}): Promise<void> {
    await dismissToasts(p);
    await p.evaluate(() => {
      if (!document.querySelector('dialog[open]')) window.scrollTo(0, 0);
    });
    await p.screenshot({ path: path.join(SHOTS, `console-${name}.png`), fullPage });
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

  beforeAll(async () => {
    if (unavailable) return;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-console-templates-e2e-'));
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
    context = await browser.newContext({ viewport: DESKTOP });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    await watchPages(context, cspViolations, pageErrors);
    page = await context.newPage();
    await page.goto(`${server.url}/app/login?next=${encodeURIComponent('/app/templates')}`);
    await page.locator('input[name="email"]').fill(EMAIL);
    await page.locator('input[name="password"]').fill(PASSWORD);
    await Promise.all([
      page.waitForURL(`${server.url}/app/templates`),
      page.locator('input[name="password"]').press('Enter'),
    ]);
  }, 120_000);

  afterEach(() => {
    const csp = cspViolations.splice(0);
    const errors = pageErrors.splice(0);
    expect(csp, 'Content-Security-Policy violations').toEqual([]);
    expect(errors, 'page errors').toEqual([]);
  });

  afterAll(async () => {
    if (server && server.child.exitCode !== null)
      console.warn(`formcast serve exited ${server.child.exitCode}:\n${server.output().slice(-3000)}`);
    await browser?.close();
    server?.child.kill('SIGTERM');
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it.skipIf(unavailable)(
    'starts a template from the gallery, creates it, edits it and duplicates it',
    async () => {
      await check(page, 'templates-empty', 'Templates');
      await page.getByRole('button', { name: 'New template' }).click();
      const gallery = page.getByRole('dialog', { name: 'New template' });
      await gallery.getByRole('heading', { name: 'Starter templates', exact: true }).waitFor();
      const items: { id: string; name: string; subject: string }[] = (await api('GET', '/v1/templates/gallery')).data;
      expect(items.length).toBeGreaterThanOrEqual(6);
      // Every starter shows its live thumbnail: the document rendered into a sandboxed frame.
      await expect
        .poll(() => gallery.locator('iframe.thumb-frame').count(), { timeout: 20_000 })
        .toBeGreaterThanOrEqual(items.length);
      const frames = gallery.locator('iframe.thumb-frame');
      expect(await frames.first().getAttribute('sandbox')).toBe('allow-same-origin');
      await page.waitForFunction(() => document.querySelectorAll('dialog[open] .skeleton').length === 0, undefined, {
        timeout: 20_000,
      });
      await shot(page, 'template-gallery', { fullPage: false });
      await expectNoSeriousAxe(page, 'template-gallery');

      const first = items[0]!;
      const escaped = first.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      await gallery.getByRole('button', { name: new RegExp(`^${escaped}`) }).click();
      await page.waitForURL(/\/app\/templates\/new$/);
      await settled(page, 'New template');
      expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe(first.name);
      // The starter's subject comes with it.
      expect(await page.getByLabel('Subject').inputValue()).toBe(first.subject);
      await page.getByLabel('Name', { exact: true }).fill('Monthly newsletter');
      await page.getByLabel('Subject').fill('News for {{ contact.firstName | default: "you" }}');
      await page.getByRole('button', { name: 'Create template' }).click();
      await page.waitForURL(/\/app\/templates\/tmpl_/);
      await page.getByText('Template Monthly newsletter created.').waitFor();
      templateId = page.url().split('/').pop()!;
      const stored = await api('GET', `/v1/templates/${templateId}`);
      expect(stored).toMatchObject({
        name: 'Monthly newsletter',
        subject: 'News for {{ contact.firstName | default: "you" }}',
      });
      expect(stored.editorContent.type).toBe('formcast/blocks');
      // The service rendered the document into the template's HTML, with the footer's Liquid kept for the send.
      expect(stored.html).toContain('{{ unsubscribe_url }}');
      await check(page, 'template-editor', 'Monthly newsletter');

      // Edit: a new subject, saved.
      await page.getByLabel('Subject').fill('Our March news');
      await page.getByText('Unsaved changes').waitFor();
      await page.getByRole('button', { name: 'Save template' }).click();
      await page.getByText('Template saved.').waitFor();
      expect((await api('GET', `/v1/templates/${templateId}`)).subject).toBe('Our March news');
      await expect.poll(() => page.getByText('Unsaved changes').count()).toBe(0);

      // Duplicate ("Save as template"): a copy under a new name, opened at once.
      await page.getByRole('button', { name: 'Duplicate' }).click();
      const dup = page.getByRole('dialog', { name: 'Save as template' });
      expect(await dup.getByLabel('Template name').inputValue()).toBe('Copy of Monthly newsletter');
      await shot(page, 'template-duplicate', { fullPage: false });
      await expectNoSeriousAxe(page, 'template-duplicate');
      await dup.getByLabel('Template name').fill('Newsletter (spring)');
      await dup.getByRole('button', { name: 'Save template' }).click();
      await page.getByRole('heading', { level: 1, name: 'Newsletter (spring)' }).waitFor();
      const all = (await api('GET', '/v1/templates')).data;
      expect(all.map((t: any) => t.name).sort()).toEqual(['Monthly newsletter', 'Newsletter (spring)']);
      const copy = all.find((t: any) => t.name === 'Newsletter (spring)');
      expect(copy.subject).toBe('Our March news');
      expect(copy.editorContent).toEqual(stored.editorContent);

      // A blank template: a new visual document (empty but for its footer), switched to HTML written by hand.
      await page.getByRole('link', { name: 'Templates', exact: true }).first().click();
      await settled(page, 'Templates');
      await page.getByRole('button', { name: 'New template' }).click();
      await page
        .getByRole('dialog', { name: 'New template' })
        .getByRole('button', { name: /^Blank/ })
        .click();
      await settled(page, 'New template');
      expect(await page.locator('[data-mode]').getAttribute('data-mode')).toBe('visual');
      await page.getByLabel('Name', { exact: true }).fill('Plain confirmation');
      await page.getByLabel('Subject').fill('Please confirm');
      await page.getByRole('button', { name: 'Switch to HTML code…' }).click();
      await page
        .getByRole('dialog', { name: 'Switch to HTML code?' })
        .getByRole('button', { name: 'Switch to code' })
        .click();
      // The code editor holds the blank document's HTML: emptied with CodeMirror's own commands (a synthetic fill over
      // its highlighted spans makes Chrome's native editing add style attributes, which the CSP refuses), then typed.
      await page.locator('.cm-content').click();
      await page.keyboard.press('ControlOrMeta+A');
      await page.keyboard.press('Backspace');
      await page.keyboard.insertText('<p>Hi {{ contact.firstName }}, <a href="{{ confirm_url }}">confirm</a>.</p>');
      await page.getByRole('button', { name: 'Create template' }).click();
      await page.getByRole('heading', { level: 1, name: 'Plain confirmation' }).waitFor();
      const plain = (await api('GET', '/v1/templates')).data.find((t: any) => t.name === 'Plain confirmation');
      expect(plain).toMatchObject({
        subject: 'Please confirm',
        html: '<p>Hi {{ contact.firstName }}, <a href="{{ confirm_url }}">confirm</a>.</p>',
        editorContent: null,
      });
      await page.frameLocator('iframe[title="Email preview"]').getByRole('link', { name: 'confirm' }).waitFor();

      await page.getByRole('link', { name: 'Templates', exact: true }).first().click();
      await check(page, 'templates', 'Templates');
      expect(await page.locator('table.table tbody tr').count()).toBe(3);
      await page
        .getByRole('row', { name: /Monthly newsletter/ })
        .getByText('Visual')
        .waitFor();
      await page
        .getByRole('row', { name: /Plain confirmation/ })
        .getByText('HTML')
        .waitFor();
    },
    180_000,
  );

  it.skipIf(unavailable)(
    "explains why a form's double opt-in email cannot be deleted, and deletes another template",
    async () => {
      const form = await api('POST', '/v1/forms', {
        name: 'Spring sign-up',
        type: 'SIGN_UP',
        fieldMapping: { email: 'email' },
        settings: { doubleOptIn: true },
        doubleOptInEmailId: templateId,
      });
      await page.goto(`${server.url}/app/templates`);
      await settled(page, 'Templates');
      await page.getByRole('button', { name: 'Delete Monthly newsletter' }).click();
      const confirm = page.getByRole('dialog', { name: 'Delete Monthly newsletter?' });
      await confirm.getByRole('button', { name: 'Delete template' }).click();
      await confirm.getByText('This template is in use, so it cannot be deleted.').waitFor();
      await confirm.getByText(/sends it as its double opt-in email/).waitFor();
      await confirm.getByRole('link', { name: 'Spring sign-up (version 1)' }).waitFor();
      expect(await confirm.getByRole('link', { name: 'Spring sign-up (version 1)' }).getAttribute('href')).toBe(
        `/app/forms/${form.id}`,
      );
      await shot(page, 'template-in-use', { fullPage: false });
      await expectNoSeriousAxe(page, 'template-in-use');
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      expect((await api('GET', `/v1/templates/${templateId}`)).id).toBe(templateId);

      await page.getByRole('button', { name: 'Delete Newsletter (spring)' }).click();
      const again = page.getByRole('dialog', { name: 'Delete Newsletter (spring)?' });
      await again.getByRole('button', { name: 'Delete template' }).click();
      await page.getByText('Template Newsletter (spring) deleted.').waitFor();
      await expect.poll(() => page.locator('table.table tbody tr').count()).toBe(2);
      expect((await api('GET', '/v1/templates')).data.map((t: any) => t.name).sort()).toEqual([
        'Monthly newsletter',
        'Plain confirmation',
      ]);
    },
    120_000,
  );

  it.skipIf(unavailable)(
    'uploads a PNG to the image library, copies its URL, refuses a large file and a non-image in words, deletes it',
    async () => {
      await page.getByRole('link', { name: 'Images', exact: true }).click();
      await check(page, 'images-empty', 'Images');
      const png = await bannerPng();
      const [chooser] = await Promise.all([
        page.waitForEvent('filechooser'),
        page.getByRole('button', { name: 'Choose images…' }).click(),
      ]);
      await chooser.setFiles({ name: 'spring-banner.png', mimeType: 'image/png', buffer: png });
      await page.getByText('Uploaded', { exact: true }).waitFor({ timeout: 20_000 });
      const list = (await api('GET', '/v1/images')).data;
      expect(list).toHaveLength(1);
      const img = list[0];
      expect(img).toMatchObject({ contentType: 'image/png', width: 640, height: 400 });
      const card = page.locator('.image-card').first();
      await card.getByText('640 × 400 px · PNG').waitFor();
      // The thumbnail is the public image itself, loaded.
      await expect
        .poll(() => card.locator('img').evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth))
        .toBe(640);

      // Copy URL puts the public address on the clipboard.
      await card.getByRole('button', { name: /Copy URL/ }).click();
      await card.getByText('Copied').waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(img.url);
      const res = await fetch(img.url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/png');

      // Refusals in words: a file over 5 MB (said before it is sent) and a file that is not an image (said by the server).
      const [again] = await Promise.all([
        page.waitForEvent('filechooser'),
        page.getByRole('button', { name: 'Choose images…' }).click(),
      ]);
      await again.setFiles([
        { name: 'huge.png', mimeType: 'image/png', buffer: Buffer.alloc(6 * 1024 * 1024, 1) },
        {
          name: 'notes.png',
          mimeType: 'image/png',
          buffer: Buffer.from('these are not the pixels you are looking for'),
        },
      ]);
      await page.getByText(/huge\.png is too large \(6\.0 MB\): an image can be at most 5 MB/).waitFor();
      await page
        .getByText(/notes\.png was not uploaded: the file is a text file .*upload a PNG, JPEG, GIF or WebP image\./)
        .waitFor({ timeout: 20_000 });
      expect((await api('GET', '/v1/images')).data).toHaveLength(1);
      await check(page, 'images', 'Images');

      // Keyboard: the copy and delete buttons are reachable by Tab, and the dialog is answered by keyboard.
      await card.getByRole('button', { name: `Delete ${'spring-banner.png'}` }).focus();
      await page.keyboard.press('Enter');
      const confirm = page.getByRole('dialog', { name: /^Delete .*\?$/ });
      await confirm.getByText(/Emails already sent that show it lose it/).waitFor();
      await shot(page, 'image-delete', { fullPage: false });
      await expectNoSeriousAxe(page, 'image-delete');
      await page.keyboard.press('Enter'); // the confirm button has the focus
      await page.getByText(/deleted\.$/).waitFor();
      await page.getByText('No images yet').waitFor();
      expect((await api('GET', '/v1/images')).data).toHaveLength(0);
      expect((await fetch(img.url)).status).toBe(404);
    },
    120_000,
  );

  it.skipIf(unavailable)(
    "saves the workspace's brand colour",
    async () => {
      await page.getByRole('link', { name: 'Settings', exact: true }).click();
      await settled(page, 'Settings');
      await page.getByLabel('Brand colour', { exact: true }).fill('#E4572E');
      expect(await page.getByLabel('Pick the brand colour').inputValue()).toBe('#e4572e');
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.getByText('Settings saved.').waitFor();
      expect((await api('GET', '/v1/workspace')).settings.brandColor).toBe('#e4572e');
      // A value that is not a colour is said at the field, and nothing is sent.
      await page.getByLabel('Brand colour', { exact: true }).fill('orange');
      await page.getByText('A colour as # and six hex digits, such as #2f4fd6.').waitFor();
      await dismissToasts(page);
      await page.getByRole('button', { name: 'Save settings' }).click();
      expect((await api('GET', '/v1/workspace')).settings.brandColor).toBe('#e4572e');
      await page.getByLabel('Brand colour', { exact: true }).fill('#e4572e');
      await check(page, 'settings-brand', 'Settings');
    },
    60_000,
  );

  it.skipIf(unavailable)(
    'the pages in the dark theme and at 390 px keep their contrast and fit',
    async () => {
      // An image for the library's grid.
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(await bannerPng())], { type: 'image/png' }), 'spring-banner.png');
      const up = await fetch(`${server.url}/v1/images`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}` },
        body: form,
      });
      // 201, also when the library still holds the same image (contract §16).
      expect(up.status).toBe(201);
      for (const [name, options] of [
        ['dark', { viewport: DESKTOP, colorScheme: 'dark' as const }],
        ['phone', { viewport: PHONE }],
        ['phone-dark', { viewport: PHONE, colorScheme: 'dark' as const }],
      ] as const) {
        const ctx = await browser.newContext({ ...options, storageState: await context.storageState() });
        await watchPages(ctx, cspViolations, pageErrors);
        try {
          const p = await ctx.newPage();
          for (const [url, heading, shotName] of [
            ['/app/templates', 'Templates', 'templates'],
            [`/app/templates/${templateId}`, 'Monthly newsletter', 'template-editor'],
            ['/app/images', 'Images', 'images'],
            ['/app/settings', 'Settings', 'settings-brand'],
          ] as const) {
            await p.goto(`${server.url}${url}`);
            await check(p, `${name}-${shotName}`, heading);
            if (name.startsWith('phone'))
              expect(await p.evaluate(() => document.documentElement.scrollWidth), url).toBeLessThanOrEqual(390);
          }
          await p.goto(`${server.url}/app/templates`);
          await settled(p, 'Templates');
          await p.getByRole('button', { name: 'New template' }).click();
          const gallery = p.getByRole('dialog', { name: 'New template' });
          // The thumbnails on screen (those further down render as they come into view).
          await expect
            .poll(() => gallery.locator('iframe.thumb-frame').count(), { timeout: 20_000 })
            .toBeGreaterThanOrEqual(name.startsWith('phone') ? 1 : 6);
          await p.waitForFunction(() => document.querySelectorAll('dialog[open] .skeleton').length === 0);
          await shot(p, `${name}-template-gallery`, { fullPage: false });
          await expectNoSeriousAxe(p, `${name}-template-gallery`);
        } finally {
          await ctx.close();
        }
      }
    },
    180_000,
  );
  it.skipIf(unavailable)(
    'a new broadcast starts from a template of the gallery, and its email can be kept as a template',
    async () => {
      await page.goto(`${server.url}/app/broadcasts`);
      await settled(page, 'Broadcasts');
      await page.getByRole('button', { name: 'New broadcast' }).first().click();
      const dialog = page.getByRole('dialog', { name: 'New broadcast' });
      await dialog.getByRole('radio', { name: /From a template/ }).check();
      const gallery = page.getByRole('dialog', { name: 'Start from a template' });
      await gallery.getByRole('heading', { name: 'Starter templates', exact: true }).waitFor();
      const items: { id: string; name: string }[] = (await api('GET', '/v1/templates/gallery')).data;
      const starter = items.find((i) => i.id === 'welcome') ?? items[0]!;
      const escaped = starter.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      await gallery.getByRole('button', { name: new RegExp(`^${escaped}`) }).click();
      await dialog.getByTestId('new-broadcast-template').getByText(starter.name).waitFor();
      // The draft is named after the template until the marketer names it.
      expect(await dialog.getByLabel('Name').inputValue()).toBe(starter.name);
      await dialog.getByLabel('Name').fill('Welcome from a template');
      await dialog.getByRole('button', { name: 'Create draft' }).click();
      await page.waitForURL(/\/app\/broadcasts\/bc_/);
      const id = page.url().split('/').pop()!;
      const stored = await api('GET', `/v1/broadcasts/${id}`);
      expect(stored.emailContent.editorContent.type).toBe('formcast/blocks');
      // Rendered by the service from the starter's document.
      expect(stored.emailContent.html).toContain('{{ unsubscribe_url }}');
      await settled(page, 'Welcome from a template');
      await page.getByRole('button', { name: 'Save as template' }).click();
      const save = page.getByRole('dialog', { name: /template/i });
      await save.getByRole('button', { name: /Save/ }).last().click();
      await expect
        .poll(async () =>
          (await api('GET', '/v1/templates')).data.some(
            (t: { name: string; editorContent: { type?: string } | null }) =>
              t.name === 'Welcome from a template' && t.editorContent?.type === 'formcast/blocks',
          ),
        )
        .toBe(true);
    },
    120_000,
  );
});
