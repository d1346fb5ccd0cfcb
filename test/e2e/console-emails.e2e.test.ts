/**
 * Transactional email in the console (issue 35, contract §20), end to end in headless Chromium against a real
 * Formcast: emails sent through POST /v1/emails (one to an address a hard bounce suppressed) in the Emails log,
 * searched by recipient as it is typed; an email's page with each recipient's status and its content in the sandboxed
 * iframe; a template's alias and version; "Send a test" of a template from the Templates page, which links to the
 * email it made; an API key with the send:emails permission from the API keys page. Light, dark and
 * 390 px, no sideways scroll, axe, no CSP violation; screenshots in test-output/e2e/emails (docs/images/console with
 * UPDATE_SCREENSHOTS=1).
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

describeBrowser('transactional email in the console (formcast serve, Chromium)', () => {
  const unavailable = consoleUnavailable();
  if (unavailable) console.warn(`console emails e2e: skipped: ${unavailable}`);
  let fx: ConsoleFixture;
  let receiptId: string;
  let suppressedId: string;

  /** Three emails: a hard bounce (which suppresses gone@example.com), a receipt, and one to the suppressed address. */
  async function sendEmails(): Promise<void> {
    // gone@example.com bounces hard once: the service suppresses it, so the next email to it is not sent.
    fx.smtp.setPolicy((a) =>
      a === 'gone@example.com' ? { code: 550, message: '5.1.1 <' + a + '>: User unknown' } : null,
    );
    const status = async (id: string) => (await fx.api('GET', `/v1/emails/${id}`)).status as string;
    const bounced = (
      await fx.api('POST', '/v1/emails', {
        from: 'Acme <hello@acme.test>',
        to: ['gone@example.com'],
        subject: 'Your password reset',
        text: 'Reset it here.',
      })
    ).id as string;
    await until(async () => (await status(bounced)) === 'BOUNCED', 'the hard bounce');
    receiptId = (
      await fx.api('POST', '/v1/emails', {
        from: 'Acme Shop <shop@acme.test>',
        to: ['ada@example.com'],
        cc: ['books@example.com'],
        subject: 'Your receipt #1042',
        html: '<h1 style="color:#0a7">Thank you, Ada</h1><p>Order <b>#1042</b>: 2 books, €31.90.</p>',
        text: 'Thank you, Ada. Order #1042: 2 books, EUR 31.90.',
        tags: ['receipt', 'shop'],
        headers: { 'X-Order': '1042' },
        attachments: [{ filename: 'receipt-1042.txt', content: Buffer.from('Order 1042\n').toString('base64') }],
      })
    ).id as string;
    suppressedId = (
      await fx.api('POST', '/v1/emails', {
        from: 'Acme <hello@acme.test>',
        to: ['gone@example.com'],
        subject: 'Your password reset, again',
        text: 'Reset it here.',
      })
    ).id as string;
    await until(async () => (await status(receiptId)) === 'SENT', 'the receipt sent');
    expect(await status(suppressedId)).toBe('SUPPRESSED');
  }

  beforeAll(async () => {
    if (unavailable) return;
    fx = await startConsole({ shots: 'emails' });
    await fx.api('PUT', '/v1/workspace', { settings: { defaultFrom: 'Acme <hello@acme.test>' } });
    await fx.api('POST', '/v1/templates', {
      name: 'Order receipt',
      alias: 'order-receipt',
      subject: 'Receipt',
      text: 'x',
    });
    await fx.api('POST', '/v1/templates', {
      name: 'Welcome aboard',
      subject: 'Welcome, {{ name | default: "friend" }}',
      html: '<p>Hello {{ name | default: "friend" }}, glad you are here.</p>',
    });
  }, 180_000);

  afterAll(async () => {
    await fx?.close();
  });

  it.skipIf(unavailable)(
    'the log, searched by recipient; an email with its statuses and content; a template test from Templates',
    async () => {
      const p = await signedIn(fx);
      await p.getByRole('link', { name: 'Emails', exact: true }).click();
      await settled(p, 'Emails');
      // None yet: the page says how to send one.
      await p.getByRole('heading', { name: 'No emails sent yet' }).waitFor();
      const curl = p.getByLabel('A curl command that sends an email');
      await until(async () => (await curl.textContent())!.includes('"from":"Acme <hello@acme.test>"'), 'the sender');
      expect(await curl.textContent()).toContain(`${fx.url}/v1/emails`);
      await check(fx, p, 'emails-empty', 'Emails');
      await sendEmails();
      await p.reload();
      await settled(p, 'Emails');
      const rows = p.locator('table tbody tr');
      await until(async () => (await rows.count()) === 3, 'three emails listed');
      expect(await rows.first().textContent()).toContain('Your password reset, again');
      expect(await rows.first().textContent()).toContain('Suppressed');
      await check(fx, p, 'emails-log', 'Emails');

      // Search by recipient as it is typed: no button.
      await p.getByLabel('Recipient').fill('ada@example.com');
      await until(async () => (await rows.count()) === 1, 'the search');
      expect(p.url()).toContain('recipient=ada%40example.com');
      expect(await rows.first().textContent()).toContain('Your receipt #1042');
      await p.getByLabel('Recipient').fill('');
      await until(async () => (await rows.count()) === 3, 'the search cleared');
      await p.getByLabel('Status').selectOption('SUPPRESSED');
      await until(async () => (await rows.count()) === 1, 'the status filter');
      await p.getByLabel('Status').selectOption('');
      await until(async () => (await rows.count()) === 3, 'the status filter cleared');

      // The receipt's page: recipients and their statuses, details, the content as sent.
      await p.getByRole('link', { name: /ada@example\.com/ }).click();
      await settled(p, 'Your receipt #1042');
      const recipients = p.getByRole('region', { name: 'Recipients' });
      await recipients.getByText('books@example.com').waitFor();
      expect(await recipients.getByText('Sent', { exact: true }).count()).toBe(2);
      await p.getByText('receipt-1042.txt').waitFor();
      await p.getByText('X-Order').waitFor();
      const frame = p.frameLocator('iframe[title^="The email"]');
      await frame.getByRole('heading', { name: 'Thank you, Ada' }).waitFor();
      await check(fx, p, 'emails-detail', 'Your receipt #1042');
      await p.getByRole('tab', { name: 'Plain text' }).click();
      await p.getByText('Order #1042: 2 books, EUR 31.90.').waitFor();

      // The suppressed one (dark, 390 px): its recipient says why nothing was sent.
      const m = await signedIn(fx, { viewport: PHONE, dark: true });
      await m.goto(`${fx.url}/app/emails/${suppressedId}`);
      await settled(m, 'Your password reset, again');
      await m.getByText(/on the suppression list \(BOUNCED\)/).waitFor();
      await check(fx, m, 'emails-detail-suppressed-390-dark', 'Your password reset, again');
      await m.goto(`${fx.url}/app/emails`);
      await settled(m, 'Emails');
      await check(fx, m, 'emails-log-390-dark', 'Emails');
      await m.context().close();

      // A template's alias: a bad pattern is said as it is typed, a taken one when saving; the version shows.
      await p.goto(`${fx.url}/app/templates`);
      await settled(p, 'Templates');
      await p.getByRole('link', { name: 'Welcome aboard' }).click();
      await settled(p, 'Welcome aboard');
      await p.getByText('Version 1').first().waitFor();
      const alias = p.getByLabel('Alias (optional)');
      await alias.fill('Welcome Aboard');
      await p.getByText('Use lowercase letters and digits').first().waitFor();
      await alias.fill('order-receipt');
      await p.getByRole('button', { name: 'Save template' }).click();
      await p.getByText('Another template already uses this alias.').waitFor();
      await alias.fill('welcome');
      await p.getByRole('button', { name: 'Save template' }).click();
      await p.getByText('Template saved.').waitFor();
      expect(
        (await fx.api('GET', '/v1/templates?limit=10')).data.map((t: { alias: string }) => t.alias).sort(),
      ).toEqual(['order-receipt', 'welcome']);
      await check(fx, p, 'emails-template-alias', 'Welcome aboard');

      // Send a test of a template from the Templates page, to the signed-in owner's address (prefilled).
      await p.goto(`${fx.url}/app/templates`);
      await settled(p, 'Templates');
      await p.getByRole('button', { name: 'Send a test of Welcome aboard' }).click();
      const dialog = p.getByRole('dialog', { name: 'Send a test of Welcome aboard' });
      expect(await dialog.getByLabel('To').inputValue()).toBe(fx.owner);
      await until(async () => (await dialog.getByLabel('From').inputValue()) === 'Acme <hello@acme.test>', 'From');
      await dialog.getByLabel('Data (optional)').fill('{"name": "Mia"}');
      await check(fx, p, 'emails-template-test', 'Templates');
      await dialog.getByRole('button', { name: 'Send test' }).click();
      await dialog.getByRole('link', { name: 'Open the email' }).click();
      await settled(p, 'Welcome, Mia');
      await until(
        async () => (await p.getByRole('region', { name: 'Recipients' }).textContent())!.includes('Sent'),
        'sent',
      );
      await p.frameLocator('iframe[title^="The email"]').getByText('Hello Mia, glad you are here.').waitFor();
      await p.getByRole('link', { name: 'Welcome aboard (version 1)' }).waitFor();
      await until(
        async () => fx.smtp.received.some((x) => x.to === fx.owner && x.parsed.subject === 'Welcome, Mia'),
        'the test at the SMTP server',
      );

      // An API key that may send transactional email, from the API keys page.
      await p.goto(`${fx.url}/app/api-keys`);
      await settled(p, 'API keys');
      await p.getByRole('button', { name: 'Create API key' }).first().click();
      const keyDialog = p.getByRole('dialog', { name: 'Create an API key' });
      await keyDialog.getByLabel('Name').fill('Shop receipts');
      await keyDialog.getByLabel('Send transactional email').check();
      await keyDialog.getByRole('button', { name: 'Create key' }).click();
      await p.getByRole('dialog', { name: 'Your new API key' }).waitFor();
      const keys = (await fx.api('GET', '/v1/api-keys')).data as { name: string; scopes: string[] }[];
      expect(keys.find((k) => k.name === 'Shop receipts')?.scopes).toEqual(['send:emails']);
      await p.context().close();
      expect(fx.errors).toEqual([]);
      expect(fx.csp).toEqual([]);
    },
    120_000,
  );
});
