/**
 * The public pages in headless Chromium (issue 33 items 2 and 14): sign-in, password reset, invitation, double opt-in
 * confirmation, the unsubscribe preference centre (subscribed, just unsubscribed, suppressed) and /docs/errors, each
 * light, dark and at 390 px: the reader's colour scheme is followed (dark background under prefers-color-scheme: dark),
 * the workspace's brand where a workspace is known, no sideways scrolling, no axe serious or critical violation, no CSP
 * violation. The preference centre is walked by clicking: what it shows after each click is what is stored.
 * Screenshots: docs/images/public-pages/<page>-<light|dark|phone>.png.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { connect, type Db } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { requestResubscription } from '../../src/forms/index.js';
import { newId } from '../../src/lib/ids.js';
import { sha256 } from '../../src/access/users/sessions.service.js';
import { PAGE_MODES, describeBrowser, expectNoSeriousAxe, launchBrowser, watchPages } from '../helpers/browser.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { unsubscribeLink } from '../helpers/unsubscribe.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHOTS = path.join(ROOT, 'docs', 'images', 'public-pages');

const MODES = PAGE_MODES;

describeBrowser('public pages: light, dark, 390 px, branded (headless Chromium)', () => {
  let db: Db;
  let app: FastifyInstance;
  let base = '';
  let browser: Browser;
  const contexts: Record<string, BrowserContext> = {};
  const csp: string[] = [];
  const errors: string[] = [];
  const paths: Record<string, string> = {};
  let adaId = '';
  let workspaceId = '';

  beforeAll(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    db = connect(':memory:');
    await migrateToLatest(db);
    app = await buildApp({
      db,
      config: { logLevel: 'silent', publicUrl: 'http://127.0.0.1', secret: TEST_SECRET },
      logger: false,
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

    const { workspace, apiKey } = await app.services.workspaces.createWithAdminKey('Greenleaf Books');
    workspaceId = workspace.id;
    const call = (method: 'POST' | 'PUT', url: string, body: unknown) =>
      app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${apiKey.key}`, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
    expect((await call('PUT', '/v1/workspace', { settings: { brandColor: '#2e7d32' } })).statusCode).toBe(200);
    const monthly = (
      await call('POST', '/v1/topics', { name: 'Monthly newsletter', defaultSubscription: 'OPT_IN' })
    ).json();
    await call('POST', '/v1/topics', { name: 'Book club picks', defaultSubscription: 'OPT_IN' });
    await call('POST', '/v1/topics', { name: 'Offers and events', defaultSubscription: 'OPT_OUT' });
    const ada = (await call('POST', '/v1/contacts', { email: 'ada@example.com', firstName: 'Ada' })).json();
    adaId = ada.id;
    paths.unsubscribe = await unsubscribeLink(db, workspace.id, ada.id, 'ada@example.com', {
      topicId: monthly.id,
      from: 'Greenleaf Journal <news@greenleaf.test>',
    });
    const bo = (await call('POST', '/v1/contacts', { email: 'bo@example.com' })).json();
    await call('POST', '/v1/suppressions', { email: 'bo@example.com', reason: 'MANUAL' });
    paths.blocked = await unsubscribeLink(db, workspace.id, bo.id, 'bo@example.com', {
      from: 'Greenleaf Journal <news@greenleaf.test>',
    });
    // A confirmation link (a re-subscription's: no form) and an invitation, as their emails would carry them.
    const cy = (await call('POST', '/v1/contacts', { email: 'cy@example.com', status: 'UNSUBSCRIBED' })).json();
    await db.kysely
      .transaction()
      .execute((trx) => requestResubscription(trx, workspace.id, cy.id, new Date().toISOString()));
    const confirmation = await db.kysely
      .selectFrom('confirmations')
      .select('token')
      .where('contact_id', '=', cy.id)
      .executeTakeFirstOrThrow();
    paths.confirm = `/confirm/${confirmation.token}`;
    const inviteToken = 'i'.repeat(43);
    await db.kysely
      .insertInto('invitations')
      .values({
        id: newId('inv'),
        workspace_id: workspace.id,
        email: 'dee@example.com',
        role: 'editor',
        token_hash: sha256(inviteToken),
        invited_by: null,
        created_at: new Date().toISOString(),
        expires_at: new Date(Date.now() + 86_400_000).toISOString(),
        accepted_at: null,
        revoked_at: null,
      })
      .execute();
    paths.invite = `/app/invite/${inviteToken}`;
    paths.login = '/app/login';
    paths.reset = '/app/reset';
    paths.errors = '/docs/errors';

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

  /** Looks at the page in one mode: dark means a dark background, no sideways scroll, axe, a screenshot. */
  async function look(p: Page, mode: (typeof MODES)[number], name: string): Promise<void> {
    const bg = await p.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const [r, g, b] = bg.match(/\d+/g)!.map(Number);
    const light = (r! + g! + b!) / 3 > 128;
    expect(light, `${name} ${mode.name}: background ${bg}`).toBe(mode.colorScheme === 'light');
    const overflow = await p.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow, `${name} ${mode.name}: scrolls sideways`).toBeLessThanOrEqual(0);
    // Dark is the same markup in other colours: only the rules about colours (light checked it whole).
    await expectNoSeriousAxe(p, `${name} (${mode.name})`, { colorsOnly: mode.name === 'dark' });
    // The error catalogue is long: its first screen is enough to look at.
    await p.screenshot({ path: path.join(SHOTS, `${name}-${mode.name}.png`), fullPage: name !== 'errors' });
  }

  it.each([
    ['sign-in', 'login', 'Sign in to Formcast', 'Formcast'],
    ['reset', 'reset', 'Reset', 'Formcast'],
    ['invitation', 'invite', 'Join Greenleaf Books', 'Greenleaf Books'],
    ['confirm', 'confirm', 'Confirm your subscription', 'Greenleaf Books'],
    ['errors', 'errors', 'Errors', 'Formcast'],
    ['unsubscribe-blocked', 'blocked', 'bo@example.com receives no emails from Greenleaf Books.', 'Greenleaf Books'],
  ])(
    '%s: light, dark, 390 px',
    async (name, key, heading, brand) => {
      for (const mode of MODES) {
        const p = await contexts[mode.name]!.newPage();
        const res = await p.goto(base + paths[key]!);
        expect(res?.status(), name).toBeLessThan(400);
        await expect.poll(() => p.textContent('body')).toContain(heading);
        expect(await p.textContent('.fc-brand')).toContain(brand);
        await look(p, mode, name);
        await p.close();
      }
    },
    240_000,
  );

  it('the preference centre: its state after each click is the stored state, in every mode', async () => {
    const status = async () =>
      (await db.kysely.selectFrom('contacts').select('status').where('id', '=', adaId).executeTakeFirstOrThrow())
        .status;
    for (const mode of MODES) {
      // Each mode starts from a subscribed Ada, set back directly.
      await db.kysely
        .deleteFrom('suppressions')
        .where('workspace_id', '=', workspaceId)
        .where('email', '=', 'ada@example.com')
        .execute();
      await db.kysely.updateTable('contacts').set({ status: 'SUBSCRIBED' }).where('id', '=', adaId).execute();
      await db.kysely.deleteFrom('contact_topics').where('contact_id', '=', adaId).execute();

      const p = await contexts[mode.name]!.newPage();
      await p.goto(base + paths.unsubscribe!);
      await expect.poll(() => p.textContent('.fc-state')).toContain('ada@example.com is subscribed.');
      expect(await p.textContent('.fc-sender')).toContain('Greenleaf Journal (Greenleaf Books)');
      await look(p, mode, 'unsubscribe');

      await p.getByLabel('Too many emails').check();
      await p.getByLabel('Anything else you would like to tell us? (optional)').fill('Lovely, but weekly is a lot.');
      await p.getByRole('button', { name: 'Unsubscribe from everything' }).click();
      await expect.poll(() => p.textContent('.fc-notice')).toContain('will not receive our emails any more');
      expect(await status()).toBe('UNSUBSCRIBED');
      expect(await p.textContent('.fc-state')).toContain('ada@example.com is unsubscribed.');
      expect(await p.getByRole('button', { name: 'Save my choices' }).count()).toBe(0);
      await look(p, mode, 'unsubscribe-done');

      await p.getByRole('button', { name: 'Send me a confirmation email' }).click();
      await expect.poll(() => p.textContent('.fc-notice')).toContain('A confirmation email is on its way');
      expect(await status()).toBe('UNSUBSCRIBED');
      await look(p, mode, 'unsubscribe-resubscribe');
      await p.close();
      await db.kysely.deleteFrom('confirmations').where('contact_id', '=', adaId).execute();
    }
    const reasons = await db.kysely
      .selectFrom('events')
      .select('data')
      .where('contact_id', '=', adaId)
      .where('type', '=', 'contact.unsubscribed')
      .execute();
    expect(reasons.map((r) => JSON.parse(String(r.data)).reason)).toContain('too_many');
    expect(csp).toEqual([]);
    expect(errors).toEqual([]);
  }, 480_000);
});
