/**
 * The starter gallery's emails (src/mail-setup/templates/templates.gallery.ts) as a recipient's client shows them:
 * each rendered (src/mail/blocks/render.ts), personalised by Liquid as a send does, and opened in headless Chromium
 * at 600 px and 390 px, in the light and the dark colour scheme. The page may load nothing but Formcast's own social
 * icons (served here by request interception); at 390 px nothing is wider than the screen and columns stack; in the
 * dark scheme the page turns dark. Screenshots go to test-output/e2e/gallery/, or with UPDATE_SCREENSHOTS=1 to
 * docs/images/gallery/ (the pictures docs/email-editor.md shows).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { liquidHtml } from '../../src/lib/liquid.js';
import { renderDocument } from '../../src/mail/blocks/render.js';
import { GALLERY } from '../../src/mail-setup/templates/templates.gallery.js';
import { describeBrowser, launchBrowser } from '../helpers/browser.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHOTS = process.env.UPDATE_SCREENSHOTS
  ? path.join(ROOT, 'docs', 'images', 'gallery')
  : path.join(ROOT, 'test-output', 'e2e', 'gallery');
const PUBLIC_URL = 'https://mail.acme.example';
const ICONS = path.join(ROOT, 'src', 'pages', 'social');
const SCOPE = {
  contact: { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace', properties: {} },
  broadcast: { id: 'bc_1', name: 'Starter' },
  workspace: { postal_address: 'Acme Inc., 1 Main Street, Springfield, IL 62701, USA' },
  unsubscribe_url: `${PUBLIC_URL}/unsubscribe/v1.example`,
};

describeBrowser('the starter gallery in Chromium (600 and 390 px, light and dark)', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
    fs.mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
  });

  for (const item of GALLERY) {
    it(`${item.id}: looks right and loads nothing from elsewhere`, async () => {
      const rendered = await renderDocument(item.editorContent, {
        publicUrl: PUBLIC_URL,
        title: item.subject,
        lang: 'en',
      });
      const html = liquidHtml.parseAndRenderSync(rendered.html, SCOPE) as string;
      for (const width of [600, 390]) {
        for (const colorScheme of ['light', 'dark'] as const) {
          const page = await browser.newPage({ viewport: { width, height: 900 }, colorScheme });
          const foreign: string[] = [];
          await page.route('**/*', (route) => {
            const url = route.request().url();
            const icon = /^https:\/\/mail\.acme\.example\/assets\/social\/([a-z]+)\.png$/.exec(url);
            if (icon) return route.fulfill({ path: path.join(ICONS, `${icon[1]}.png`), contentType: 'image/png' });
            foreign.push(url);
            return route.abort();
          });
          await page.setContent(html, { waitUntil: 'load' });
          const layout = await page.evaluate(() => {
            const columns = [...document.querySelectorAll('[class*="mj-column-per-"]')].map(
              (c) => (c as HTMLElement).getBoundingClientRect().width,
            );
            const images = [...document.images].map((i) => ({ complete: i.complete, width: i.naturalWidth }));
            return {
              scrollWidth: document.documentElement.scrollWidth,
              narrowest: Math.min(...columns),
              background: getComputedStyle(document.body).backgroundColor,
              images,
            };
          });
          expect(foreign, `${item.id} loaded something from elsewhere`).toEqual([]);
          expect(layout.scrollWidth, `${item.id} at ${width}px`).toBeLessThanOrEqual(width);
          expect(
            layout.images.every((i) => i.complete && i.width > 0),
            'every icon loads',
          ).toBe(true);
          // under 480 px every column takes the whole width of the card (they stack)
          if (width === 390) expect(layout.narrowest).toBeGreaterThan(300);
          const [r, g, b] = layout.background.match(/\d+/g)!.map(Number);
          if (colorScheme === 'dark') expect(r! + g! + b!, 'dark background').toBeLessThan(120);
          else expect(r! + g! + b!, 'light background').toBeGreaterThan(600);
          await page.screenshot({ path: path.join(SHOTS, `${item.id}-${width}-${colorScheme}.png`), fullPage: true });
          await page.close();
        }
      }
    });
  }
});
