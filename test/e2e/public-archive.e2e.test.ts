/**
 * The public archive in headless Chromium (issue 34, docs/archive.md): the archive page of a workspace (its name and
 * brand colour, newest first, linking its Atom feed) and an archived broadcast rendered for an anonymous reader, each
 * light, dark and at 390 px: no sideways scrolling, no CSP violation, no script error; the archive page follows the
 * reader's colour scheme and has no axe serious or critical violation. Screenshots:
 * docs/images/public-pages/archive-<light|dark|phone>.png and archive-broadcast-<light|dark|phone>.png.
 */
import fs from 'node:fs';
import path from 'node:path';
import net, { type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { connect, type Db } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { PAGE_MODES, describeBrowser, expectNoSeriousAxe, launchBrowser, watchPages } from '../helpers/browser.js';
import { TEST_SECRET } from '../helpers/secret.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHOTS = path.join(ROOT, 'docs', 'images', 'public-pages');

const MODES = PAGE_MODES;

describeBrowser('public archive: light, dark, 390 px (headless Chromium)', () => {
  let db: Db;
  let app: FastifyInstance;
  const serverErrors: string[] = [];
  let base = '';
  let browser: Browser;
  const contexts: Record<string, BrowserContext> = {};
  const csp: string[] = [];
  const errors: string[] = [];
  let newest = '';

  beforeAll(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    db = connect(':memory:');
    await migrateToLatest(db);
    // PUBLIC_URL is the address the browser uses, so the email's images (the social icons) load from it.
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    base = `http://127.0.0.1:${port}`;
    app = await buildApp({
      db,
      config: { logLevel: 'silent', publicUrl: base, secret: TEST_SECRET },
      logger: false,
    });
    // What a 500 was (the page says only that something went wrong): in the failing assertion's message.
    app.addHook('onError', async (_req, _reply, err) => {
      serverErrors.push(err.stack ?? String(err));
    });
    await app.listen({ port, host: '127.0.0.1' });
    const { apiKey } = await app.services.workspaces.createWithAdminKey('Greenleaf Books');
    const call = (method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown) =>
      app.inject({
        method,
        url,
        headers: {
          authorization: `Bearer ${apiKey.key}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });
    const ws = await call('PUT', '/v1/workspace', {
      slug: 'greenleaf',
      settings: { brandColor: '#2e7d32', postalAddress: 'Greenleaf Books, 12 Elm Street, Portland, OR 97201' },
    });
    expect(ws.statusCode, ws.body).toBe(200);
    // The gallery's newsletter, as a writer would start from it.
    const gallery = (await call('GET', '/v1/templates/gallery')).json() as {
      data: { id: string; editorContent: unknown }[];
    };
    const newsletter = gallery.data.find((t) => /newsletter/i.test(t.id)) ?? gallery.data[0]!;
    const subjects = [
      'September: the autumn reading list',
      'October: five books for long evenings',
      'November: our staff picks of the year & a winter sale',
    ];
    for (const [i, subject] of subjects.entries()) {
      const b = await call('POST', '/v1/broadcasts', {
        name: subject,
        archive: true,
        emailContent: { subject, previewText: 'What we read this month', editorContent: newsletter.editorContent },
      });
      expect(b.statusCode, b.body).toBe(201);
      const id = b.json().id as string;
      // Sent, as far as the archive is concerned (the sending itself is test/api/archive.test.ts's).
      await db.kysely
        .updateTable('broadcasts')
        .set({ status: 'SENT', sent_at: new Date(Date.UTC(2026, 8 + i, 12, 9)).toISOString() })
        .where('id', '=', id)
        .execute();
      newest = id;
    }

    browser = await launchBrowser();
    for (const m of MODES) {
      const ctx = await browser.newContext({ viewport: m.viewport, colorScheme: m.colorScheme });
      await watchPages(ctx, csp, errors);
      contexts[m.name] = ctx;
    }
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await db?.close();
  });

  async function noSidewaysScroll(p: Page, what: string): Promise<void> {
    const overflow = await p.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow, `${what}: scrolls sideways`).toBeLessThanOrEqual(0);
  }

  it('the archive page: branded, newest first, the feed linked; light, dark, 390 px', async () => {
    for (const mode of MODES) {
      const p = await contexts[mode.name]!.newPage();
      const res = await p.goto(`${base}/archive/greenleaf`);
      expect(res?.status()).toBe(200);
      expect(await p.textContent('.fc-brand')).toContain('Greenleaf Books');
      const items = await p.$$eval('.fc-archive a', (as) => as.map((a) => a.textContent));
      expect(items[0]).toContain('November');
      expect(items[2]).toContain('September');
      expect(await p.getAttribute('link[rel=alternate]', 'href')).toBe(`${base}/archive/greenleaf/feed.xml`);
      const bg = await p.evaluate(() => getComputedStyle(document.body).backgroundColor);
      const [r, g, b] = bg.match(/\d+/g)!.map(Number);
      expect((r! + g! + b!) / 3 > 128, `${mode.name}: background ${bg}`).toBe(mode.colorScheme === 'light');
      await noSidewaysScroll(p, `archive ${mode.name}`);
      await expectNoSeriousAxe(p, `archive (${mode.name})`, { colorsOnly: mode.name === 'dark' });
      await p.screenshot({ path: path.join(SHOTS, `archive-${mode.name}.png`), fullPage: true });
      await p.close();
    }
  }, 240_000);

  it('an archived broadcast: the email for anyone, with the bar back to the archive; light, dark, 390 px', async () => {
    for (const mode of MODES) {
      const p = await contexts[mode.name]!.newPage();
      const res = await p.goto(`${base}/archive/greenleaf/${newest}`);
      expect(res?.status(), serverErrors.join('\n')).toBe(200);
      expect(await p.textContent('.fc-archive-bar')).toContain('Greenleaf Books');
      expect(await p.getAttribute('.fc-archive-bar a', 'href')).toBe(`${base}/archive/greenleaf`);
      const body = (await p.textContent('body')) ?? '';
      expect(body).toContain('12 Elm Street');
      expect(body).not.toMatch(/unsubscribe/i);
      await noSidewaysScroll(p, `broadcast ${mode.name}`);
      await p.screenshot({
        path: path.join(SHOTS, `archive-broadcast-${mode.name}.png`),
        fullPage: mode.name !== 'phone',
      });
      await p.close();
    }
    expect(csp).toEqual([]);
    expect(errors).toEqual([]);
  }, 240_000);
});
