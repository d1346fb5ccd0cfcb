/**
 * The public archive in the console (issue 34, docs/archive.md), end to end in headless Chromium against a real
 * Formcast: the archive's address in Settings, the "Show in the public archive" switch of a draft's composer and of a
 * sent broadcast's report, and the archive page that follows. Light, dark and 390 px, no sideways scroll, axe;
 * screenshots in test-output/e2e/archive (docs/images/console with UPDATE_SCREENSHOTS=1).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBrowser } from '../helpers/browser.js';
import { consoleUnavailable } from '../helpers/formcast-process.js';
import {
  check,
  PHONE,
  settled,
  signedIn,
  startConsole,
  until,
  type ConsoleFixture,
} from '../helpers/console-fixture.js';

describeBrowser('the public archive in the console (formcast serve, Chromium)', () => {
  const unavailable = consoleUnavailable();
  if (unavailable) console.warn(`console archive e2e: skipped: ${unavailable}`);
  let fx: ConsoleFixture;
  let draftId: string;
  let sentId: string;

  beforeAll(async () => {
    if (unavailable) return;
    fx = await startConsole({ shots: 'archive' });
    await fx.api('POST', '/v1/contacts', { email: 'ada@example.com', firstName: 'Ada' });
    const broadcast = (name: string, subject: string) =>
      fx.api('POST', '/v1/broadcasts', {
        name,
        from: 'Acme <news@acme.test>',
        emailContent: { subject, html: `<p>${subject}, {{ contact.firstName }}.</p>` },
      });
    draftId = (await broadcast('December letter', 'Winter news')).id;
    sentId = (await broadcast('November letter', 'Autumn news')).id;
    await fx.api('POST', `/v1/broadcasts/${sentId}/send`);
    await until(async () => (await fx.api('GET', `/v1/broadcasts/${sentId}`)).status === 'SENT', 'the send');
  }, 180_000);

  afterAll(async () => {
    await fx?.close();
  });

  it.skipIf(unavailable)(
    "the archive's address in Settings; the switch of a draft and of a sent broadcast; the page that follows",
    async () => {
      const p = await signedIn(fx);
      await p.goto(`${fx.url}/app/settings`);
      await settled(p, 'Settings');
      const address = p.getByLabel('Archive address', { exact: true });
      await address.fill('Acme News');
      await p.getByText('with single hyphens between words').first().waitFor();
      await address.fill('acme-news');
      await p.getByText(`${fx.url}/archive/acme-news`).first().waitFor();
      await p.getByRole('button', { name: /^Save/ }).click();
      await until(async () => (await fx.api('GET', '/v1/workspace')).slug === 'acme-news', 'the slug saved');
      await check(fx, p, 'archive-settings', 'Settings');

      // The draft's composer: on, saved with the draft.
      await p.goto(`${fx.url}/app/broadcasts/${draftId}`);
      await settled(p, 'December letter');
      await p.getByLabel('Show in the public archive').check();
      await p.getByRole('button', { name: /^Save/ }).first().click();
      await until(async () => (await fx.api('GET', `/v1/broadcasts/${draftId}`)).archive === true, 'the draft saved');
      await check(fx, p, 'archive-composer', 'December letter');

      // The sent broadcast's report (dark, 390 px): on, then the archive page lists it.
      const m = await signedIn(fx, { viewport: PHONE, dark: true });
      await m.goto(`${fx.url}/app/broadcasts/${sentId}`);
      await settled(m, 'November letter');
      const archived = m.getByRole('region', { name: 'Public archive' }).getByLabel('Show in the public archive');
      expect(await archived.isChecked()).toBe(false);
      await archived.check();
      await m.getByText('Shown in the public archive.').waitFor();
      expect((await fx.api('GET', `/v1/broadcasts/${sentId}`)).archive).toBe(true);
      await check(fx, m, 'archive-report-390-dark', 'November letter');
      const page = await m.goto(`${fx.url}/archive/acme-news`);
      expect(page?.status()).toBe(200);
      expect(await m.locator('.fc-archive a').allTextContents()).toEqual(['Autumn news']);
      await m.context().close();
      await p.context().close();
      expect(fx.errors).toEqual([]);
      expect(fx.csp).toEqual([]);
    },
    120_000,
  );
});
