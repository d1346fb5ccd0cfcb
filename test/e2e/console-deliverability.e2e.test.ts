/**
 * What the real world writes back, in the console (issue 32), end to end in headless Chromium against a real Formcast
 * (`node bin/formcast serve` on a temp SQLite file, with its inbound SMTP listener): DMARC aggregate reports of Google
 * (zip) and Microsoft (gzip) are mailed to `dmarc@bounces.acme.test`, and mail it cannot apply to postmaster@ and
 * dmarc@; a marketer signs in and sees, on the domain's page, which addresses send as the domain, how much fails and
 * why; and, under "Reports to review", what was kept and why, with the message itself. Every view: a screenshot in
 * test-output/e2e/deliverability-*.png in the light theme, the dark theme and at 390 px, axe-core (no serious or
 * critical violation) and no Content-Security-Policy violation.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { strToU8, zipSync } from 'fflate';
import nodemailer from 'nodemailer';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBrowser, launchBrowser } from '../helpers/browser.js';
import { startSmtpServer } from '../helpers/smtp.js';
import { cli, consoleUnavailable, freePort, serve } from '../helpers/formcast-process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHOTS = path.join(ROOT, 'test-output', 'e2e');
const AXE = fs.readFileSync(path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
const EMAIL = 'mia@acme.test';
const PASSWORD = 'correct horse battery staple 42';
const DOMAIN = 'acme.test';
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

/** A day `n` days before today (UTC), as Unix seconds at its start. */
const dayStart = (n: number) => {
  const d = new Date(Date.now() - n * 86_400_000);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) / 1000;
};

function report(org: string, id: string, begin: number, records: string): string {
  return `<?xml version="1.0" encoding="UTF-8" ?>
<feedback>
  <report_metadata><org_name>${org}</org_name><email>dmarc@${org}</email><report_id>${id}</report_id>
    <date_range><begin>${begin}</begin><end>${begin + 86399}</end></date_range></report_metadata>
  <policy_published><domain>${DOMAIN}</domain><adkim>r</adkim><aspf>r</aspf><p>quarantine</p><sp>quarantine</sp><pct>100</pct></policy_published>
  ${records}
</feedback>`;
}

const record = (ip: string, count: number, disposition: string, dkim: string, spf: string, auth: string) =>
  `<record><row><source_ip>${ip}</source_ip><count>${count}</count><policy_evaluated><disposition>${disposition}</disposition><dkim>${dkim}</dkim><spf>${spf}</spf></policy_evaluated></row><identifiers><header_from>${DOMAIN}</header_from></identifiers><auth_results>${auth}</auth_results></record>`;
const ours = `<dkim><domain>${DOMAIN}</domain><selector>fc1</selector><result>pass</result></dkim><spf><domain>bounces.${DOMAIN}</domain><result>pass</result></spf>`;
const crm =
  '<dkim><domain>crm-mailer.net</domain><selector>s1</selector><result>pass</result></dkim><spf><domain>crm-mailer.net</domain><result>pass</result></spf>';
const spoof = `<spf><domain>${DOMAIN}</domain><result>softfail</result></spf>`;

describeBrowser(
  "the console's DMARC reports and reports to review end to end (formcast serve with its inbound listener, headless Chromium)",
  () => {
    const unavailable = consoleUnavailable();
    if (unavailable) console.warn(`console deliverability e2e: skipped: ${unavailable}`);
    let browser: Browser;
    let server: Awaited<ReturnType<typeof serve>>;
    let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
    let tmp: string;
    let domainId: string;
    let quietDomainId: string;
    let inboundPort: number;
    const cspViolations: string[] = [];
    const pageErrors: string[] = [];

    async function axe(p: Page, name: string): Promise<void> {
      await p.evaluate(AXE);
      const result = await p.evaluate(async () => {
        const r = await (window as any).axe.run(document, { resultTypes: ['violations'] });
        return r.violations.map((v: any) => ({
          id: v.id,
          impact: v.impact,
          help: v.help,
          nodes: v.nodes.slice(0, 3).map((n: any) => n.target.join(' ')),
        }));
      });
      const bad = result.filter((v: any) => v.impact === 'serious' || v.impact === 'critical');
      expect(bad, `axe on ${name}: ${JSON.stringify(bad, null, 2)}`).toEqual([]);
    }

    async function settled(p: Page, heading: string | RegExp): Promise<void> {
      await p.getByRole('heading', { level: 1, name: heading }).waitFor();
      await p.waitForFunction(() => document.querySelectorAll('.skeleton, .spinner').length === 0, undefined, {
        timeout: 15_000,
      });
    }

    /**
     * A shot of one part of the page. The sticky top bar would cover the part's top (the shot scrolls to it): it scrolls
     * away meanwhile, set through the CSSOM (which the console's CSP allows, unlike an injected style sheet).
     */
    async function partShot(p: Page, part: ReturnType<Page['locator']>, name: string): Promise<void> {
      await p.evaluate(() => document.querySelector<HTMLElement>('.topbar')!.style.setProperty('position', 'static'));
      await part.screenshot({ path: path.join(SHOTS, `deliverability-${name}.png`) });
      await p.evaluate(() => document.querySelector<HTMLElement>('.topbar')!.style.removeProperty('position'));
    }

    async function check(p: Page, name: string, heading: string | RegExp): Promise<void> {
      await settled(p, heading);
      await p.screenshot({ path: path.join(SHOTS, `deliverability-${name}.png`), fullPage: true });
      await axe(p, name);
    }

    /** A signed-in page in a context of its own (the light theme at desktop width unless told). */
    async function signedIn(options: BrowserContextOptions = {}): Promise<Page> {
      const context = await browser.newContext({ viewport: DESKTOP, colorScheme: 'light', ...options });
      const page = await context.newPage();
      page.on('console', (m) => {
        if (/Content[ -]Security[ -]Policy/i.test(m.text())) cspViolations.push(`${page.url()}: ${m.text()}`);
      });
      page.on('pageerror', (e) => pageErrors.push(String(e)));
      await page.goto(`${server.url}/app/login?next=${encodeURIComponent('/app/domains')}`);
      await page.locator('input[name="email"]').fill(EMAIL);
      await page.locator('input[name="password"]').fill(PASSWORD);
      await Promise.all([
        page.waitForURL(`${server.url}/app/domains`),
        page.locator('input[name="password"]').press('Enter'),
      ]);
      return page;
    }

    /** Mail to the inbound listener, retried while it is still starting. */
    async function mailIn(to: string, raw: string): Promise<void> {
      const client = nodemailer.createTransport({
        host: '127.0.0.1',
        port: inboundPort,
        secure: false,
        ignoreTLS: true,
      });
      try {
        for (let i = 0; ; i++) {
          try {
            await client.sendMail({ envelope: { from: '', to: [to] }, raw });
            return;
          } catch (err) {
            if (i > 50 || (err as { responseCode?: number }).responseCode) throw err;
            await new Promise((r) => setTimeout(r, 200));
          }
        }
      } finally {
        client.close();
      }
    }

    const withAttachment = (from: string, subject: string, filename: string, type: string, data: Buffer) =>
      [
        `From: ${from}`,
        `To: dmarc@bounces.${DOMAIN}`,
        `Subject: ${subject}`,
        `Message-ID: <${filename}@reports.example>`,
        'MIME-Version: 1.0',
        'Content-Type: multipart/mixed; boundary="b1"',
        '',
        '--b1',
        'Content-Type: text/plain',
        '',
        'This is an aggregate report.',
        '--b1',
        `Content-Type: ${type}; name="${filename}"`,
        `Content-Disposition: attachment; filename="${filename}"`,
        'Content-Transfer-Encoding: base64',
        '',
        data.toString('base64').replace(/.{76}/g, '$&\r\n'),
        '--b1--',
        '',
      ].join('\r\n');

    beforeAll(async () => {
      if (unavailable) return;
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-deliverability-e2e-'));
      fs.mkdirSync(SHOTS, { recursive: true });
      smtp = await startSmtpServer();
      inboundPort = await freePort();
      const env = {
        DATABASE_URL: path.join(tmp, 'formcast.db'),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        DNS_SERVERS: '127.0.0.1:9',
        DNS_TIMEOUT_MS: '300',
        SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
        INBOUND_SMTP_PORT: String(inboundPort),
        INBOUND_SMTP_HOST: '127.0.0.1',
      };
      const created = await cli(['workspace', 'create', 'Acme', '--json'], env);
      const [, domain, started, launched] = await Promise.all([
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
        cli(['domain', 'add', DOMAIN, '--workspace', created.workspace.id, '--verified', '--json'], env),
        serve(env),
        launchBrowser(),
      ]);
      domainId = domain.id;
      // A domain no receiver has reported on yet: the card says what to publish.
      quietDomainId = (
        await cli(['domain', 'add', 'news.example', '--workspace', created.workspace.id, '--verified', '--json'], env)
      ).id;
      server = started;
      browser = launched;

      // Google's report of yesterday (zip), Microsoft's of ten days ago (gzip): our relay passes; a CRM set up
      // with its own domain's DKIM and Return-Path fails, and so does someone spoofing the domain.
      const google = report(
        'google.com',
        '7213394736510346331',
        dayStart(1),
        record('203.0.113.7', 1204, 'none', 'pass', 'pass', ours) +
          record('198.51.100.23', 48, 'quarantine', 'fail', 'fail', crm),
      );
      const microsoft = report(
        'Enterprise Outlook',
        'e2b1c7d4a9f04c3b8e6d5a1f2c3b4a59',
        dayStart(10),
        record('203.0.113.7', 806, 'none', 'pass', 'pass', ours) +
          record('198.51.100.23', 31, 'quarantine', 'fail', 'fail', crm) +
          record('192.0.2.66', 7, 'reject', 'fail', 'fail', spoof),
      );
      await mailIn(
        `dmarc@bounces.${DOMAIN}`,
        withAttachment(
          'noreply-dmarc-support@google.com',
          `Report domain: ${DOMAIN} Submitter: google.com`,
          `google.com!${DOMAIN}!1!2.zip`,
          'application/zip',
          Buffer.from(zipSync({ [`google.com!${DOMAIN}!1!2.xml`]: strToU8(google) })),
        ),
      );
      await mailIn(
        `dmarc@bounces.${DOMAIN}`,
        withAttachment(
          'dmarcreport@microsoft.com',
          `Report Domain: ${DOMAIN} Submitter: enterprise.protection.outlook.com`,
          `enterprise.protection.outlook.com!${DOMAIN}!1!2.xml.gz`,
          'application/gzip',
          zlib.gzipSync(microsoft),
        ),
      );
      // Mail that is kept for review: a person at postmaster@, a question at dmarc@.
      await mailIn(
        `postmaster@bounces.${DOMAIN}`,
        'From: IT Helpdesk <it@example.org>\r\nTo: postmaster@bounces.acme.test\r\nSubject: Please stop mailing our former employee\r\nMessage-ID: <q1@example.org>\r\n\r\nHello,\r\n\r\nann@example.org left in October. Please remove her.\r\n',
      );
      await mailIn(
        `dmarc@bounces.${DOMAIN}`,
        'From: Ops <ops@example.org>\r\nTo: dmarc@bounces.acme.test\r\nSubject: Who runs this mailbox?\r\nMessage-ID: <q2@example.org>\r\n\r\nHi!\r\n',
      );
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      server?.child.kill('SIGTERM');
      await smtp?.close();
      if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    });

    it.skipIf(unavailable)(
      "the domain's page: which addresses send as the domain, how much fails and why (light, dark, 390 px)",
      async () => {
        for (const [name, options] of [
          ['domain', {}],
          ['domain-dark', { colorScheme: 'dark' }],
          ['domain-phone', { viewport: PHONE }],
        ] as const) {
          const page = await signedIn(options);
          try {
            await page.goto(`${server.url}/app/domains/${domainId}`);
            const card = page.locator('section', { has: page.getByRole('heading', { name: 'DMARC reports' }) });
            await card.getByText('messages reported').waitFor();
            await check(page, name, DOMAIN);
            // Nothing wider than the screen: the sources table scrolls inside its own (focusable) region.
            expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
              'viewport' in options ? options.viewport.width : DESKTOP.width,
            );
            await partShot(page, card, `${name}-card`);
            // 2,096 messages, 86 failing, from three addresses; the CRM's and the spoofer's failures in words.
            await expect
              .poll(() => card.locator('.stat-value').allTextContents())
              .toEqual(['2,096', '95.9%', '86', '86', '3']);
            await card.getByText('86 messages from 2 addresses failed DMARC').waitFor();
            const crmRow = card.getByRole('row', { name: /198\.51\.100\.23/ });
            await crmRow
              .getByText(
                'DKIM signed by crm-mailer.net, not by acme.test; SPF passes for crm-mailer.net, not aligned with acme.test',
              )
              .waitFor();
            await card
              .getByRole('row', { name: /192\.0\.2\.66/ })
              .getByText('no DKIM signature; SPF softfail for acme.test')
              .waitFor();
            expect(await card.getByRole('row').count()).toBe(4);
            if (name === 'domain') {
              await page.goto(`${server.url}/app/domains/${quietDomainId}`);
              const empty = page.locator('section', { has: page.getByRole('heading', { name: 'DMARC reports' }) });
              await empty.getByText('No DMARC reports for this period').waitFor();
              await empty.getByText('v=DMARC1; p=none; rua=mailto:dmarc@bounces.news.example').waitFor();
              await check(page, 'domain-no-reports', 'news.example');
              await partShot(page, empty, 'domain-no-reports-card');
              await page.goto(`${server.url}/app/domains/${domainId}`);
              await card.getByText('messages reported').waitFor();
              // The last 7 days: Google's report of yesterday only (Microsoft's is ten days old).
              await card.getByLabel('Period').selectOption('7');
              await expect.poll(() => card.locator('.stat-value').first().textContent()).toBe('1,252');
              await card.getByText('48 messages from one address failed DMARC').waitFor();
              await partShot(page, card, 'domain-card-7-days');
            }
          } finally {
            await page.context().close();
          }
        }
      },
      180_000,
    );

    it.skipIf(unavailable)(
      'reports to review: what was kept and why, the message itself (light, dark, 390 px)',
      async () => {
        for (const [name, options] of [
          ['review', {}],
          ['review-dark', { colorScheme: 'dark' }],
          ['review-phone', { viewport: PHONE }],
        ] as const) {
          const page = await signedIn(options);
          try {
            if (name === 'review-phone') {
              await page.getByRole('button', { name: 'Menu', exact: true }).click();
              await page.waitForFunction(
                () => getComputedStyle(document.querySelector('.sidebar')!).transform === 'none',
              );
            }
            await page.getByRole('link', { name: 'Reports to review' }).click();
            await page.waitForURL(`${server.url}/app/inbound`);
            await check(page, name, 'Reports to review');
            expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
              'viewport' in options ? options.viewport.width : DESKTOP.width,
            );
            const rows = page.locator('table.table tbody tr');
            expect(await rows.count()).toBe(2);
            await rows
              .filter({ hasText: 'Who runs this mailbox?' })
              .getByText(/not a DMARC aggregate report for acme\.test/)
              .waitFor();
            await rows
              .filter({ hasText: 'Please stop mailing our former employee' })
              .getByText(/neither a delivery status notification/)
              .waitFor();
            await rows
              .filter({ hasText: 'Please stop mailing our former employee' })
              .getByRole('button', { name: /View/ })
              .click();
            const dialog = page.getByRole('dialog', { name: 'Please stop mailing our former employee' });
            await dialog.getByText('ann@example.org left in October').waitFor();
            await page.screenshot({ path: path.join(SHOTS, `deliverability-${name}-message.png`) });
            await axe(page, `${name}-message`);
            await dialog.getByRole('button', { name: 'Close' }).click();
          } finally {
            await page.context().close();
          }
        }
        expect(cspViolations).toEqual([]);
        expect(pageErrors).toEqual([]);
      },
      180_000,
    );
  },
);
