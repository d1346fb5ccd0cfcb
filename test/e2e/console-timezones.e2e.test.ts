/**
 * Time zones in the console (issue 34), end to end in headless Chromium against a real Formcast (`node bin/formcast
 * serve` on a temp SQLite file, its workers sending to the test SMTP server): the workspace's zone in Settings, a
 * contact's zone picker, scheduling "at this time in each contact's time zone", and the progress per zone of a
 * local-time broadcast that is sending (Tokyo's turn passed, Berlin's and New York's to come). Light, dark and 390 px,
 * no sideways scroll, axe; screenshots in test-output/e2e/timezones (docs/images/console with UPDATE_SCREENSHOTS=1).
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBrowser, watchPages } from '../helpers/browser.js';
import { consoleUnavailable } from '../helpers/formcast-process.js';
import {
  check as checkPage,
  PHONE,
  settled,
  signedIn as signIn,
  startConsole,
  until,
  type ConsoleFixture,
} from '../helpers/console-fixture.js';

/** The wall-clock time (YYYY-MM-DDTHH:mm) an instant shows in a zone. */
function wallIn(ms: number, timeZone: string): string {
  const p: Record<string, string> = {};
  for (const x of new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
  }).formatToParts(ms))
    p[x.type] = x.value;
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}`;
}

describeBrowser('time zones in the console (formcast serve, Chromium)', () => {
  const unavailable = consoleUnavailable();
  if (unavailable) console.warn(`console time zones e2e: skipped: ${unavailable}`);
  let fx: ConsoleFixture;
  let graceId: string;
  let draftId: string;
  let sendingId: string;
  const api = (method: string, url: string, body?: unknown) => fx.api(method, url, body);
  const check = (p: Page, name: string, heading: string | RegExp) => checkPage(fx, p, name, heading);
  const signedIn = (opts: { viewport?: { width: number; height: number }; dark?: boolean } = {}) =>
    signIn(fx, { ...opts, timezoneId: 'Europe/London' });

  beforeAll(async () => {
    if (unavailable) return;
    fx = await startConsole({ shots: 'timezones' });
    await api('PUT', '/v1/workspace', { settings: { timezone: 'America/New_York' } });
    await api('POST', '/v1/contacts', { email: 'kenji@example.com', firstName: 'Kenji', timezone: 'Asia/Tokyo' });
    await api('POST', '/v1/contacts', { email: 'ada@example.com', firstName: 'Ada', timezone: 'Europe/Berlin' });
    graceId = (await api('POST', '/v1/contacts', { email: 'grace@example.com', firstName: 'Grace' })).id;
    const broadcast = (name: string) =>
      api('POST', '/v1/broadcasts', {
        name,
        from: 'Acme <news@acme.test>',
        emailContent: { subject: 'Good morning', html: '<p>Good morning</p>' },
      });
    draftId = (await broadcast('Sunday letter')).id;
    // Sending at local time: Tokyo's clock already shows the time (sent at once), Berlin's and New York's do not.
    const sending = await broadcast('Weekly digest');
    sendingId = sending.id;
    const now = Date.now(); // once: a minute turning between readings made the offset a minute off
    const wall = wallIn(now - 60_000, 'Asia/Tokyo');
    const nyOffsetMs = Date.parse(`${wallIn(now, 'America/New_York')}Z`) - Math.floor(now / 60_000) * 60_000;
    const sendAt = new Date(Date.parse(`${wall}Z`) - nyOffsetMs).toISOString();
    const scheduled = await api('PUT', `/v1/broadcasts/${sendingId}`, { sendAt, sendAtLocal: true });
    expect(scheduled.localSendTime.slice(0, 16)).toBe(wall);
    await until(
      async () => (await api('GET', `/v1/broadcasts/${sendingId}`)).stats?.sent === 1,
      "Tokyo's turn of the local-time broadcast",
    );
  }, 180_000);

  afterAll(async () => {
    await fx?.close();
  });

  it.skipIf(unavailable)(
    "the workspace's time zone in Settings, and a contact's zone picker (light, dark)",
    async () => {
      const p = await signedIn();
      await p.goto(`${fx.url}/app/settings`);
      await settled(p, 'Settings');
      const zone = p.getByLabel('Time zone', { exact: true });
      expect(await zone.inputValue()).toBe('America/New_York');
      await check(p, 'timezones-settings', 'Settings');

      const d = await signedIn({ dark: true });
      await d.goto(`${fx.url}/app/contacts/${graceId}`);
      await settled(d, 'Grace');
      const picker = d.getByLabel('Time zone', { exact: true });
      expect(await picker.inputValue()).toBe('');
      await picker.selectOption('Asia/Tokyo');
      await d.getByRole('button', { name: /^Save/ }).click();
      await until(
        async () => (await api('GET', `/v1/contacts/${graceId}`)).timezone === 'Asia/Tokyo',
        'the zone saved',
      );
      await check(d, 'timezones-contact-dark', 'Grace');

      // A form keeps the visitor's zone when asked (settings.captureTimezone), and a save of the form keeps it.
      const form = await api('POST', '/v1/forms', {
        name: 'Newsletter',
        type: 'SIGN_UP',
        slug: 'newsletter',
        fieldMapping: { email: 'email' },
      });
      await p.goto(`${fx.url}/app/forms/${form.id}`);
      await settled(p, 'Newsletter');
      await p.getByLabel('Keep the visitor’s time zone').check();
      await p.getByRole('button', { name: 'Save changes' }).click();
      await p.getByText('Form saved.').waitFor();
      expect((await api('GET', `/v1/forms/${form.id}`)).settings.captureTimezone).toBe(true);
      await p.getByRole('button', { name: 'Save changes' }).click();
      await p.getByText('Form saved.').first().waitFor();
      expect((await api('GET', `/v1/forms/${form.id}`)).settings.captureTimezone).toBe(true);
      // Its hosted page fills the field from the browser (a visitor in Tokyo), by this origin's one script.
      await api('POST', `/v1/forms/${form.id}/publish`);
      const visitor = await fx.browser.newContext({ viewport: PHONE, timezoneId: 'Asia/Tokyo' });
      await watchPages(visitor, fx.csp, fx.errors);
      const v = await visitor.newPage();
      await v.goto(`${fx.url}/f/newsletter`);
      await expect.poll(() => v.locator('input[name="_fc_tz"]').inputValue()).toBe('Asia/Tokyo');
      await v.locator('input[name="email"]').fill('kenji@example.com');
      await v.locator('input[name="email"]').press('Enter');
      await until(async () => {
        const found = (await api('GET', `/v1/contacts?email=${encodeURIComponent('kenji@example.com')}`)).data;
        return found?.[0]?.timezone === 'Asia/Tokyo';
      }, "the visitor's zone on the new contact");
      await visitor.close();
      await d.context().close();
      await p.context().close();
    },
    120_000,
  );

  it.skipIf(unavailable)(
    "schedules at a time in each contact's time zone, and shows the progress per zone (light, 390 px)",
    async () => {
      const p = await signedIn();
      await p.goto(`${fx.url}/app/broadcasts/${draftId}`);
      await settled(p, 'Sunday letter');
      await p.getByLabel('Send at this time in each contact’s time zone').check();
      const tomorrow = wallIn(Date.now() + 86_400_000, 'UTC').slice(0, 10);
      await p.locator('#send-at').fill(`${tomorrow}T09:00`);
      await expect.poll(() => p.locator('#send-at-hint').innerText()).toMatch(/in their own time zone/);
      await p.getByRole('button', { name: 'Schedule', exact: true }).click();
      await until(
        async () => (await api('GET', `/v1/broadcasts/${draftId}`)).localSendTime === `${tomorrow}T09:00:00`,
        'the local-time schedule',
      );
      await p.getByText('in each contact’s time zone.').first().waitFor();
      await check(p, 'timezones-schedule', 'Sunday letter');

      const m = await signedIn({ viewport: PHONE });
      await m.goto(`${fx.url}/app/broadcasts/${sendingId}`);
      await settled(m, 'Weekly digest');
      const table = m.getByRole('region', { name: 'Progress per time zone' }).getByRole('table');
      await table.waitFor();
      const rows = await table.locator('tbody tr').allInnerTexts();
      expect(rows[0]).toMatch(/Asia\/Tokyo[\s\S]*1 \/ 1/i);
      expect(rows.join('\n')).toMatch(/Europe\/Berlin[\s\S]*0 \/ 1/i);
      expect(rows.join('\n')).toMatch(/America\/New York[\s\S]*0 \/ 1/i);
      await check(m, 'timezones-progress-390', 'Weekly digest');
      await m.context().close();
      await p.context().close();
      expect(fx.errors).toEqual([]);
      expect(fx.csp).toEqual([]);
    },
    120_000,
  );
});
