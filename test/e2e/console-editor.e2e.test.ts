/**
 * The console's email block editor end to end (issue 31, contract §16), in headless Chromium against a real Formcast
 * (`node bin/formcast serve` on a temp SQLite file, SMTP_URL at the test SMTP server) serving the built console.
 *
 * A marketer creates a broadcast in the visual editor, adds blocks, types bold text, inserts a merge tag, uploads a
 * PNG, drags a block with the mouse and moves one with the keyboard, undoes, previews the email as a contact (desktop,
 * phone, dark), sees the autosave's state (also a failed save, kept and retried, and two saves racing), sends a test
 * that arrives at the SMTP server with the rendered HTML, switches to code and back; then edits an automation send
 * step's email in its dialog. What the page shows is checked against what the API stored. Every state: screenshots
 * in test-output/e2e/console-editor-*.png (light, dark, 390 px), axe-core (no serious or critical violation, dark
 * included), and no Content-Security-Policy violation or page error anywhere.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page, Request, Response } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBrowser, launchBrowser, expectNoSeriousAxe, watchPages } from '../helpers/browser.js';
import { startSmtpServer } from '../helpers/smtp.js';
import { cli, consoleUnavailable, localServeEnv, serve } from '../helpers/formcast-process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHOTS = path.join(ROOT, 'test-output', 'e2e');
const PNG = path.join(ROOT, 'test', 'fixtures', 'images', 'spring-sale.png');
const EMAIL = 'mia@acme.test';
const PASSWORD = 'correct horse battery staple 42';

describeBrowser("the console's email block editor end to end (formcast serve, headless Chromium)", () => {
  const unavailable = consoleUnavailable();
  if (unavailable) console.warn(`console editor e2e: skipped: ${unavailable}`);
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let server: Awaited<ReturnType<typeof serve>>;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let tmp: string;
  let key: string;
  let broadcastId: string;
  const cspViolations: string[] = [];
  const pageErrors: string[] = [];

  async function api(method: string, url: string, body?: unknown): Promise<any> {
    const res = await fetch(`${server.url}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  }

  async function shot(p: Page, name: string, fullPage = true): Promise<void> {
    // From the top: a full-page capture keeps sticky bars where the page was scrolled to.
    await p.evaluate((top) => {
      for (const b of document.querySelectorAll<HTMLButtonElement>('.toast button')) b.click();
      if (top) window.scrollTo(0, 0);
    }, fullPage);
    await p.screenshot({ path: path.join(SHOTS, `console-editor-${name}.png`), fullPage });
  }

  /** One part of the page: the page from its top (sticky bars where they belong), clipped to the part. */
  async function shotOf(p: Page, selector: string, name: string): Promise<void> {
    await p.evaluate(() => window.scrollTo(0, 0));
    const box = (await p.locator(selector).boundingBox())!;
    await p.screenshot({ path: path.join(SHOTS, `console-editor-${name}.png`), fullPage: true, clip: box });
  }
  const shotEditor = (p: Page, name: string) => shotOf(p, '.composer-content', name);

  const stored = async () => (await api('GET', `/v1/broadcasts/${broadcastId}`)).emailContent;
  const storedTypes = async () => (await stored()).editorContent.blocks.map((b: any) => b.type);
  /** The editor's top-level blocks, in order, as the page shows them. */
  const shownTypes = (p: Page = page) =>
    p.locator('.ee-list-root > .ee-block').evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.blockType));
  const saved = (p: Page = page) =>
    expect.poll(() => p.getByTestId('autosave-state').first().textContent(), { timeout: 15_000 }).toMatch(/^✓?Saved /);

  beforeAll(async () => {
    if (unavailable) return;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-console-editor-e2e-'));
    fs.mkdirSync(SHOTS, { recursive: true });
    smtp = await startSmtpServer();
    const env = localServeEnv(tmp, smtp.port);
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
    await api('PUT', '/v1/workspace', {
      settings: { postalAddress: 'Acme Inc., 1 Main Street, Springfield', brandColor: '#0f766e' },
    });
    await api('POST', '/v1/contacts', {
      email: 'ada@acme.test',
      firstName: 'Ada',
      lastName: 'Lovelace',
      properties: { plan: 'pro' },
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    await watchPages(context, cspViolations, pageErrors);
    page = await context.newPage();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    server?.child.kill('SIGTERM');
    await smtp?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it.skipIf(unavailable)(
    'creates a broadcast in the visual editor: blocks, bold text, a merge tag, an uploaded image, autosaved',
    async () => {
      await page.goto(`${server.url}/app/login?next=${encodeURIComponent('/app/broadcasts')}`);
      await page.locator('input[name="email"]').fill(EMAIL);
      await page.locator('input[name="password"]').fill(PASSWORD);
      await Promise.all([
        page.waitForURL(`${server.url}/app/broadcasts`),
        page.locator('input[name="password"]').press('Enter'),
      ]);
      await page.getByRole('button', { name: 'New broadcast' }).first().click();
      const dialog = page.getByRole('dialog', { name: 'New broadcast' });
      await dialog.getByLabel('Name').fill('Spring news');
      expect(await dialog.getByLabel(/^Visual editor/).isChecked()).toBe(true);
      await expectNoSeriousAxe(page, 'new broadcast dialog');
      await dialog.getByRole('button', { name: 'Create draft' }).click();
      await page.waitForURL(/\/app\/broadcasts\/[^/]+$/);
      broadcastId = page.url().split('/').pop()!;
      await page.locator('.ee-block').first().waitFor();
      // A new document: heading, greeting, footer; the workspace's brand colour; the footer shows the address.
      expect(await shownTypes()).toEqual(['heading', 'text', 'footer']);
      expect((await stored()).editorContent.settings).toEqual({ brandColor: '#0f766e' });
      await page.getByText('Acme Inc., 1 Main Street, Springfield').first().waitFor();

      await page.getByLabel('From').fill('Acme <news@acme.test>');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByText('Broadcast saved.').waitFor();
      await page.getByLabel('Subject').fill('Spring news for {{ contact.firstName }}');

      // The heading, typed in place.
      const heading = page.getByRole('textbox', { name: /^Heading text/ });
      await heading.click();
      await page.keyboard.press('ControlOrMeta+a');
      await page.keyboard.type('Spring is here');
      // Bold text and a merge tag at the cursor, in the greeting's text block.
      const text = page.getByRole('textbox', { name: /^Text \(/ }).first();
      await text.click();
      await page.keyboard.press('End');
      await page.keyboard.type(' Our ');
      await page.keyboard.press('ControlOrMeta+b');
      await page.keyboard.type('spring sale');
      await page.keyboard.press('ControlOrMeta+b');
      await page.keyboard.type(' starts now, ');
      await page.getByRole('button', { name: 'Merge tag' }).click();
      await page.getByRole('menuitem', { name: 'First name {{ contact.firstName }}', exact: true }).click();
      await page.keyboard.type('.');
      expect(await text.innerHTML()).toContain('<strong>spring sale</strong> starts now, {{ contact.firstName }}.');

      // An image: added from the palette, uploaded by choosing the PNG, described.
      await page.getByRole('button', { name: 'Image', exact: true }).click();
      await page
        .locator('.ee-block[data-block-type="image"]')
        .getByRole('button', { name: 'Choose an image…' })
        .click();
      await page.getByTestId('image-file-input').setInputFiles(PNG);
      await page.locator('.ee-block[data-block-type="image"] img.ee-image-img').waitFor({ timeout: 15_000 });
      await page.getByLabel('Alternative text').fill('Spring sale: 20% off everything');
      // A button with its link.
      await page.getByRole('button', { name: 'Button', exact: true }).click();
      await page.getByLabel('Button text').fill('Shop the sale');
      await page.getByLabel('Link', { exact: true }).fill('https://acme.test/sale');
      expect(await shownTypes()).toEqual(['heading', 'text', 'image', 'button', 'footer']);

      await saved();
      const content = await stored();
      expect(content.subject).toBe('Spring news for {{ contact.firstName }}');
      const blocks = content.editorContent.blocks;
      expect(blocks.map((b: any) => b.type)).toEqual(['heading', 'text', 'image', 'button', 'footer']);
      expect(blocks[0].text).toBe('Spring is here');
      expect(blocks[1].text).toBe(
        '<p>Hi {{ contact.firstName | default: "there" }},</p><p>Write your message here. Our <strong>spring sale</strong> starts now, {{ contact.firstName }}.</p>',
      );
      expect(blocks[2]).toMatchObject({ alt: 'Spring sale: 20% off everything' });
      expect(blocks[2].url).toMatch(new RegExp(`^${server.url}/i/`));
      expect(blocks[3]).toMatchObject({ text: 'Shop the sale', url: 'https://acme.test/sale' });
      // The service rendered the HTML from the document on the save.
      expect(content.html).toContain('Shop the sale');
      expect(content.html).toContain(blocks[2].url);

      await shot(page, 'composer');
      await shotEditor(page, 'editor');
      await expectNoSeriousAxe(page, 'the editor');
    },
    180_000,
  );

  it.skipIf(unavailable)(
    'moves a block with the mouse and one with the keyboard; undo and redo, by button and by key',
    async () => {
      // The mouse: the button's handle dragged above the heading.
      const handle = (type: string) =>
        page.locator(`.ee-list-root > .ee-block[data-block-type="${type}"] > .ee-block-bar .ee-handle`);
      await page.locator('.ee-list-root').evaluate((e) => e.scrollIntoView({ block: 'center' }));
      const from = (await handle('button').boundingBox())!;
      const to = (await page.locator('.ee-list-root > .ee-block[data-block-type="heading"]').boundingBox())!;
      await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
      await page.mouse.down();
      await page.mouse.move(from.x + from.width / 2, from.y - 12, { steps: 4 });
      await page.mouse.move(to.x + 40, to.y + 4, { steps: 20 });
      await page.mouse.up();
      await expect.poll(() => shownTypes()).toEqual(['button', 'heading', 'text', 'image', 'footer']);

      // The keyboard: the image's handle, Space, Arrow Up twice, Space; announced in words.
      await handle('image').focus();
      await page.keyboard.press('Space');
      const announced = () => page.locator('[id^="DndLiveRegion"]').textContent();
      await expect.poll(announced).toMatch(/Picked up Image block 4 of 5/);
      // The sensor listens from the next task on; each move is announced before the next key.
      await page.waitForTimeout(100);
      await page.keyboard.press('ArrowUp');
      await expect.poll(announced).toMatch(/Image block is over position 3 of 5/);
      await page.keyboard.press('ArrowUp');
      await expect.poll(announced).toMatch(/Image block is over position 2 of 5/);
      await page.keyboard.press('Space');
      await expect.poll(() => shownTypes()).toEqual(['button', 'image', 'heading', 'text', 'footer']);
      await expect.poll(announced).toMatch(/Image block dropped at position 2 of 5/);
      // And by its Move down button.
      await page.getByRole('button', { name: 'Move down: Image block 2 of 5' }).click();
      await expect.poll(() => shownTypes()).toEqual(['button', 'heading', 'image', 'text', 'footer']);
      await saved();
      expect(await storedTypes()).toEqual(['button', 'heading', 'image', 'text', 'footer']);

      // Undo (Ctrl+Z) takes back the last move; Redo (the button) does it again; Undo (the button) twice more.
      await page.keyboard.press('ControlOrMeta+z');
      await expect.poll(() => shownTypes()).toEqual(['button', 'image', 'heading', 'text', 'footer']);
      await page.getByRole('button', { name: 'Redo' }).click();
      await expect.poll(() => shownTypes()).toEqual(['button', 'heading', 'image', 'text', 'footer']);
      await page.getByRole('button', { name: 'Undo' }).click();
      await page.getByRole('button', { name: 'Undo' }).click();
      await page.getByRole('button', { name: 'Undo' }).click();
      await expect.poll(() => shownTypes()).toEqual(['heading', 'text', 'image', 'button', 'footer']);
      await saved();
      expect(await storedTypes()).toEqual(['heading', 'text', 'image', 'button', 'footer']);

      // The footer stays: its Delete says why instead.
      await page.locator('.ee-block[data-block-type="footer"] .ee-handle').focus();
      const del = page.getByRole('button', { name: /^Delete Footer block/ });
      expect(await del.getAttribute('aria-disabled')).toBe('true');
      await del.press('Enter');
      await expect.poll(() => page.locator('.ee > [aria-live="polite"]').textContent()).toMatch(/^The footer stays/);
      expect(await shownTypes()).toContain('footer');
    },
    120_000,
  );

  it.skipIf(unavailable)(
    'previews the email as a contact: desktop, phone and dark, in a sandbox without scripts',
    async () => {
      // Every render request and its answer, said when the personalised preview does not come (CI, 2026-11-30: no
      // "Hi Ada," within 45 s once; never seen here, loaded or not).
      const renders: string[] = [];
      const t0 = Date.now();
      const onRequest = (r: Request) => {
        if (r.url().endsWith('/v1/email-documents/render'))
          renders.push(
            `+${Date.now() - t0} ms sent ${(r.postData() ?? '').includes('contactId') ? 'for a contact' : 'sample'}`,
          );
      };
      const onResponse = (r: Response) => {
        if (r.url().endsWith('/v1/email-documents/render'))
          renders.push(`+${Date.now() - t0} ms answered ${r.status()}`);
      };
      const onFailed = (r: Request) => {
        if (r.url().endsWith('/v1/email-documents/render'))
          renders.push(`+${Date.now() - t0} ms failed ${r.failure()?.errorText}`);
      };
      page.on('request', onRequest);
      page.on('response', onResponse);
      page.on('requestfailed', onFailed);
      await page.getByRole('button', { name: 'Preview', exact: true }).click();
      await page.getByLabel('Personalise for').selectOption({ label: 'Ada Lovelace — ada@acme.test' });
      const frame = page.frameLocator('iframe[title^="Email preview"]');
      // The personalised render comes after the preview's 600 ms pause and a request to the server, which a loaded CI
      // machine has taken over 15 s to answer.
      const said = async () =>
        `renders ${JSON.stringify(renders)}; selected ${await page.getByLabel('Personalise for').inputValue()}; the panel says ${JSON.stringify(
          (
            await page
              .locator('.ee-preview')
              .innerText()
              .catch((e) => String(e))
          ).slice(0, 600),
        )}`;
      try {
        // A render that failed twice (the query's own retry) leaves the last preview with "could not be rendered" and
        // a Try again button: a person presses it, and so does the test, once, saying why on the report.
        let retried = false;
        const deadline = Date.now() + 45_000;
        for (;;) {
          if (
            await frame
              .getByText('Hi Ada,')
              .isVisible()
              .catch(() => false)
          )
            break;
          const failed = page.locator('.ee-preview').getByRole('button', { name: 'Try again' });
          if (!retried && (await failed.isVisible().catch(() => false))) {
            console.warn(`console editor e2e: the personalised preview failed; pressing Try again: ${await said()}`);
            await failed.click();
            retried = true;
          }
          if (Date.now() > deadline) throw new Error(`no personalised preview within 45 s: ${await said()}`);
          await page.waitForTimeout(250);
        }
      } finally {
        page.off('request', onRequest);
        page.off('response', onResponse);
        page.off('requestfailed', onFailed);
      }
      await frame.getByText(/starts now, Ada\./).waitFor();
      expect(await page.locator('iframe[title^="Email preview"]').getAttribute('sandbox')).toBe('');
      // The email's inline styles apply (moved into one sheet with the page's nonce): the brand-coloured button.
      expect(
        await frame.getByRole('link', { name: 'Shop the sale' }).evaluate((a) => getComputedStyle(a).backgroundColor),
      ).toBe('rgb(15, 118, 110)');
      await shot(page, 'preview-desktop', false);
      await page.getByRole('button', { name: 'Phone', exact: true }).click();
      await page.getByRole('button', { name: 'Dark', exact: true }).click();
      await expect.poll(() => page.locator('iframe[title^="Email preview"]').getAttribute('title')).toContain('phone');
      await frame.getByText('Hi Ada,').waitFor();
      // An element's capture (the frame's content is painted only on screen).
      await page.locator('.ee-preview').screenshot({ path: path.join(SHOTS, 'console-editor-preview-phone-dark.png') });
      await expectNoSeriousAxe(page, 'the preview');
      await page.getByRole('button', { name: 'Desktop', exact: true }).click();
      await page.getByRole('button', { name: 'Light', exact: true }).click();
    },
    120_000,
  );

  it.skipIf(unavailable)(
    'autosave: a failed save keeps the edits and says so, Retry saves them; of two racing saves the newest wins',
    async () => {
      const heading = page.getByRole('textbox', { name: /^Heading text/ });
      // A save that cannot reach the server.
      await page.route('**/v1/broadcasts/*', (route) =>
        route.request().method() === 'PUT' ? route.abort('connectionrefused') : route.continue(),
      );
      // And a preview the server cannot render.
      await page.route('**/v1/email-documents/render', (route) =>
        route.fulfill({
          status: 503,
          contentType: 'application/problem+json',
          body: JSON.stringify({ type: 'about:blank', title: 'Unavailable', status: 503, code: 'unavailable' }),
        }),
      );
      try {
        await heading.click();
        await page.keyboard.press('End');
        await page.keyboard.type('!');
        await expect
          .poll(() => page.getByTestId('autosave-state').first().textContent(), { timeout: 15_000 })
          .toContain('Couldn’t save');
        await shotEditor(page, 'save-failed');
        expect(await heading.textContent()).toBe('Spring is here!');
        expect((await stored()).editorContent.blocks[0].text).toBe('Spring is here');
        // A new render that fails (and its one retry): the panel says so in words, with Try again.
        await page.locator('.ee-preview').getByText('The preview could not be rendered').waitFor({ timeout: 20_000 });
        await page.locator('.ee-preview').screenshot({ path: path.join(SHOTS, 'console-editor-preview-failed.png') });
      } finally {
        await page.unroute('**/v1/broadcasts/*');
        await page.unroute('**/v1/email-documents/render');
      }
      await page.locator('.ee-preview').getByRole('button', { name: 'Try again' }).click();
      await page.frameLocator('iframe[title^="Email preview"]').getByText('Spring is here!').waitFor();
      expect(
        await page
          .locator('.ee-preview')
          .getByText(/could not be rendered/)
          .count(),
      ).toBe(0);
      await page.getByRole('button', { name: 'Retry' }).click();
      await saved();
      expect((await stored()).editorContent.blocks[0].text).toBe('Spring is here!');

      // Two saves race: the first is held back 2.5 s at the network; the edit typed meanwhile is saved after it,
      // and what stays stored (and shown) is the newest.
      let held = true;
      await page.route('**/v1/broadcasts/*', async (route) => {
        if (route.request().method() === 'PUT' && held) {
          held = false;
          await new Promise((r) => setTimeout(r, 2500));
        }
        await route.continue();
      });
      try {
        await heading.click();
        await page.keyboard.press('End');
        await page.keyboard.type(' Soon');
        await expect.poll(() => page.getByTestId('autosave-state').first().textContent()).toBe('Saving…');
        await page.waitForTimeout(1300);
        await page.keyboard.type(' over');
        await saved();
        expect(await heading.textContent()).toBe('Spring is here! Soon over');
        expect((await stored()).editorContent.blocks[0].text).toBe('Spring is here! Soon over');
      } finally {
        await page.unroute('**/v1/broadcasts/*');
      }
    },
    120_000,
  );

  it.skipIf(unavailable)(
    'sends a test for the chosen contact: the message at the SMTP server carries the rendered HTML',
    async () => {
      await page.getByLabel('To (up to 5 addresses)').fill('qa@acme.test');
      await page.getByRole('button', { name: 'Send test' }).click();
      await page.getByText('Sent to qa@acme.test.').waitFor({ timeout: 20_000 });
      await expect.poll(() => smtp.received.filter((m) => m.to === 'qa@acme.test').length).toBe(1);
      const msg = smtp.received.find((m) => m.to === 'qa@acme.test')!;
      expect(msg.parsed.subject).toBe('[Test] Spring news for Ada');
      const html = String(msg.parsed.html);
      expect(html).toContain('Spring is here! Soon over');
      expect(html).toMatch(/<strong>spring sale<\/strong> starts now, Ada\./);
      expect(html).toContain('Shop the sale');
      expect(html).toContain('Acme Inc., 1 Main Street, Springfield');
      expect(String(msg.parsed.text)).toContain('Spring is here! Soon over');
    },
    120_000,
  );

  it.skipIf(unavailable)(
    'the editor in the dark theme and at 390 px; axe finds nothing serious',
    async () => {
      const dark = await browser.newContext({
        viewport: { width: 1280, height: 1000 },
        colorScheme: 'dark',
        storageState: await context.storageState(),
      });
      await watchPages(dark, cspViolations, pageErrors);
      const d = await dark.newPage();
      await d.goto(`${server.url}/app/broadcasts/${broadcastId}`);
      await d.locator('.ee-block').first().waitFor();
      await d.locator('.ee-list-root > .ee-block[data-block-type="text"]').click();
      await shot(d, 'composer-dark');
      await shotEditor(d, 'editor-dark');
      await expectNoSeriousAxe(d, 'the editor, dark');
      await dark.close();

      const phone = await browser.newContext({
        viewport: { width: 390, height: 844 },
        storageState: await context.storageState(),
      });
      await watchPages(phone, cspViolations, pageErrors);
      const p = await phone.newPage();
      await p.goto(`${server.url}/app/broadcasts/${broadcastId}`);
      await p.locator('.ee-block').first().waitFor();
      await shotEditor(p, 'editor-phone');
      expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await expectNoSeriousAxe(p, 'the editor at 390 px');
      await phone.close();
    },
    120_000,
  );

  it.skipIf(unavailable)(
    'switches to HTML code (the blocks left behind, after a confirmation) and starts a new visual document',
    async () => {
      await page.getByRole('button', { name: 'Switch to HTML code…' }).click();
      const confirm = page.getByRole('dialog', { name: 'Switch to HTML code?' });
      await confirm.getByText('The blocks are left behind').waitFor();
      await expectNoSeriousAxe(page, 'the switch to code');
      await confirm.getByRole('button', { name: 'Switch to code' }).click();
      await page.locator('.cm-content').waitFor();
      await saved();
      const code = await stored();
      expect(code.editorContent).toBeNull();
      expect(code.html).toContain('Shop the sale');

      await page.getByRole('button', { name: 'Start a visual document…' }).click();
      await page
        .getByRole('dialog', { name: 'Start a visual document?' })
        .getByRole('button', { name: 'Start a visual document' })
        .click();
      await page.locator('.ee-block').first().waitFor();
      expect(await shownTypes()).toEqual(['heading', 'text', 'footer']);
      await saved();
      expect(await storedTypes()).toEqual(['heading', 'text', 'footer']);
    },
    120_000,
  );

  it.skipIf(unavailable)(
    'a PNG dropped on a block becomes an image block after it, uploaded',
    async () => {
      const png = fs.readFileSync(PNG).toString('base64');
      const files = await page.evaluateHandle((b64) => {
        const dt = new DataTransfer();
        const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        dt.items.add(new File([bytes], 'spring-sale.png', { type: 'image/png' }));
        return dt;
      }, png);
      const heading = page.locator('.ee-list-root > .ee-block[data-block-type="heading"]');
      await heading.dispatchEvent('dragenter', { dataTransfer: files });
      await heading.dispatchEvent('dragover', { dataTransfer: files });
      await heading.dispatchEvent('drop', { dataTransfer: files });
      await expect.poll(() => shownTypes()).toEqual(['heading', 'image', 'text', 'footer']);
      await page.locator('.ee-block[data-block-type="image"] img.ee-image-img').waitFor({ timeout: 15_000 });
      await page.getByLabel('Alternative text').fill('Spring sale');
      await saved();
      const image = (await stored()).editorContent.blocks[1];
      expect(image).toMatchObject({ type: 'image', alt: 'Spring sale' });
      expect(image.url).toMatch(new RegExp(`^${server.url}/i/`));
    },
    120_000,
  );

  it.skipIf(unavailable)(
    "edits an automation send step's email in its dialog: a DRAFT automation saves it by itself",
    async () => {
      const automation = await api('POST', '/v1/automations', {
        name: 'Welcome',
        trigger: { type: 'contact.created' },
        steps: [],
      });
      await page.goto(`${server.url}/app/automations/${automation.id}`);
      await page.getByRole('button', { name: 'Add the first step' }).click();
      await page
        .getByRole('group', { name: 'Step types' })
        .getByRole('button', { name: /^Send email/ })
        .click();
      await page.getByLabel('Subject', { exact: true }).fill('Welcome, {{ contact.firstName }}');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByText('Automation saved.').waitFor();
      const before = (await api('GET', `/v1/automations/${automation.id}`)).steps[0];
      expect(before.emailContent.editorContent.blocks.map((b: any) => b.type)).toEqual(['heading', 'text', 'footer']);

      await page.getByRole('button', { name: 'Edit the email' }).click();
      const dialog = page.getByRole('dialog', { name: 'Edit the email of this step' });
      const text = dialog.getByRole('textbox', { name: /^Text \(/ });
      await text.click();
      await page.keyboard.press('End');
      await page.keyboard.type(' Welcome aboard!');
      await dialog.getByRole('button', { name: 'Divider', exact: true }).click();
      await saved();
      const after = (await api('GET', `/v1/automations/${automation.id}`)).steps[0];
      expect(after.emailContent.editorContent.blocks.map((b: any) => b.type)).toEqual([
        'heading',
        'text',
        'divider',
        'footer',
      ]);
      expect(after.emailContent.editorContent.blocks[1].text).toContain('Welcome aboard!');
      expect(after.emailContent.html).toContain('Welcome aboard!');
      await shot(page, 'automation-step', false);
      await expectNoSeriousAxe(page, 'the automation step editor');
      await dialog.getByRole('button', { name: 'Done' }).click();
    },
    120_000,
  );

  it.skipIf(unavailable)('no Content-Security-Policy violation and no page error on the way', () => {
    expect(cspViolations).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
