/**
 * Forms that look like the sender's own (docs/forms.md), end to end in headless Chromium against a real Formcast
 * (`node bin/formcast serve` on a temp SQLite file): the hosted page in the light theme, the dark theme and a brand
 * colour (with a logo, served here by request interception: no network), both embeds on a page of another origin,
 * a survey filled in the browser (errors first, then answers) and its per-question summary, and the console's form
 * editor (appearance with its live preview, a select question) and Results tab. Every page gets axe-core (no serious
 * or critical violation) and a screenshot in test-output/e2e/forms-appearance-*.png (the ones in docs/screenshots/
 * are copies of these).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBrowser, launchBrowser, startSite, type Site } from '../helpers/browser.js';
import { apiCaller, cli, consoleUnavailable, serve } from '../helpers/formcast-process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHOTS = path.join(ROOT, 'test-output', 'e2e');
const AXE = fs.readFileSync(path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
const EMAIL = 'marketer@acme.test';
const PASSWORD = 'correct horse battery staple 42';
const LOGO_URL = 'https://assets.acme.test/logo.svg';
const LOGO =
  `<svg xmlns="http://www.w3.org/2000/svg" width="150" height="40" viewBox="0 0 150 40"><circle cx="20" cy="20" r="16" fill="#2f9e44"/>` +
  `<path d="M20 9c6 5 6 17 0 22c-6-5-6-17 0-22z" fill="#fff"/><text x="44" y="27" font-family="Georgia, serif" font-size="20" font-weight="700" fill="#2f9e44">Greenleaf</text></svg>`;
const XSS = '<img src=x onerror=window.__pwned=1>"><script>window.__pwned=1</script>';

const SURVEY_FIELDS = {
  email: { label: 'Your email', type: 'email', required: true, placeholder: 'you@example.com' },
  plot: {
    label: 'What do you grow?',
    type: 'select',
    options: ['Vegetables', 'Flowers', 'Fruit trees', 'A bit of everything'],
    required: true,
  },
  rating: {
    label: 'How useful is our newsletter?',
    type: 'radio',
    options: ['Not really', 'Somewhat', 'Very useful'],
    required: true,
  },
  topics: {
    label: 'What should we write about next?',
    type: 'checkbox',
    options: ['Composting', 'Seed saving', 'Pest control'],
  },
  beds: { label: 'How many beds do you tend?', type: 'number', placeholder: 'e.g. 4' },
  since: { label: 'Gardening since', type: 'date' },
  comment: { label: 'Anything else?', type: 'textarea', placeholder: 'Ideas, questions, a photo-worthy harvest…' },
};

describeBrowser('forms: appearance, embeds, surveys, console editor (formcast serve, headless Chromium)', () => {
  const unavailable = consoleUnavailable();
  let browser: Browser;
  let context: BrowserContext;
  let server: Awaited<ReturnType<typeof serve>>;
  let site: Site;
  let tmp: string;
  let key: string;
  const ids: Record<string, string> = {};
  const problems: string[] = [];

  const api = apiCaller(
    () => server.url,
    () => key,
  );

  async function publish(slug: string, config: Record<string, unknown>): Promise<void> {
    const form = await api('POST', '/v1/forms', {
      type: 'SIGN_UP',
      slug,
      fieldMapping: { email: 'email', first_name: 'firstName' },
      ...config,
    });
    await api('POST', `/v1/forms/${form.id}/publish`);
    ids[slug] = form.id;
  }

  /** axe-core over the DevTools protocol (the page's CSP does not govern it); axe reads open shadow roots too. */
  async function axe(p: Page | Frame, name: string): Promise<void> {
    await p.evaluate(AXE);
    const result = await p.evaluate(async () => {
      const r = await (window as any).axe.run(document, { resultTypes: ['violations'] });
      return r.violations.map((v: any) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.slice(0, 3).map((n: any) => JSON.stringify(n.target)),
      }));
    });
    const bad = result.filter((v: any) => v.impact === 'serious' || v.impact === 'critical');
    expect(bad, `axe on ${name}: ${JSON.stringify(bad, null, 2)}`).toEqual([]);
  }

  const shot = (p: Page, name: string, fullPage = true) =>
    p.screenshot({ path: path.join(SHOTS, `forms-appearance-${name}.png`), fullPage });

  async function newPage(
    viewport = { width: 960, height: 900 },
    colorScheme: 'light' | 'dark' = 'light',
  ): Promise<Page> {
    const p = await context.newPage();
    await p.setViewportSize(viewport);
    await p.emulateMedia({ colorScheme });
    p.on('pageerror', (e) => problems.push(`${p.url()}: ${String(e)}`));
    p.on('console', (m) => {
      if (/Content[ -]Security[ -]Policy/i.test(m.text())) problems.push(`${p.url()}: ${m.text().slice(0, 300)}`);
    });
    return p;
  }

  beforeAll(async () => {
    if (unavailable) return;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-look-e2e-'));
    fs.mkdirSync(SHOTS, { recursive: true });
    const env = {
      DATABASE_URL: path.join(tmp, 'formcast.db'),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      DNS_SERVERS: '127.0.0.1:9',
      SUBMISSION_RATE_LIMIT: '1000',
    };
    const created = await cli(['workspace', 'create', 'Greenleaf', '--json'], env);
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
    context = await browser.newContext();
    // The logo: an https address answered here, so nothing leaves the machine.
    await context.route('https://assets.acme.test/**', (route) =>
      route.fulfill({ status: 200, contentType: 'image/svg+xml', body: LOGO }),
    );

    const intro = 'Seasonal planting guides, one email a month.\nNo spam, unsubscribe with one click.';
    await Promise.all([
      publish('light', {
        name: 'Q3 newsletter list (internal)',
        display: 'POPUP',
        settings: {
          successAction: { type: 'MESSAGE', message: 'Thanks! Check your inbox for our welcome email.' },
          appearance: {
            heading: 'Grow with Greenleaf',
            intro,
            buttonLabel: 'Send me the guides',
            logoUrl: LOGO_URL,
            consentText: 'I agree to receive the Greenleaf newsletter and accept the privacy policy.',
          },
        },
      }),
      publish('dark', {
        name: 'Night owls list',
        display: 'INLINE_EMBED',
        settings: {
          fields: {
            first_name: { label: 'First name', type: 'text', placeholder: 'Ada' },
            email: { label: 'Email address', type: 'email', placeholder: 'ada@example.com' },
          },
          appearance: {
            heading: 'Late-night gardening notes',
            intro: 'Moon-phase planting tips, straight to your inbox.',
            buttonLabel: 'Subscribe',
            brandColor: '#a78bfa',
            theme: 'dark',
          },
        },
      }),
      publish('survey', {
        name: 'Reader survey 2026 (internal)',
        type: 'SURVEY',
        display: 'INLINE_EMBED',
        fieldMapping: { email: 'email' },
        settings: {
          successAction: { type: 'MESSAGE', message: 'Thank you, your answers help us write better guides.' },
          fields: SURVEY_FIELDS,
          appearance: {
            heading: 'Tell us about your garden',
            intro: 'Two minutes, seven questions. Every answer shapes next season’s guides.',
            buttonLabel: 'Send my answers',
            brandColor: '#ffd43b',
            logoUrl: LOGO_URL,
            consentText: 'Greenleaf may store my answers to improve the newsletter.',
            theme: 'light',
          },
        },
      }),
      publish('xss', {
        name: 'XSS',
        display: 'INLINE_EMBED',
        type: 'SURVEY',
        fieldMapping: {},
        settings: {
          fields: {
            q: { label: XSS, type: 'radio', options: [XSS, 'b'] },
            t: { label: XSS, type: 'text', placeholder: XSS },
          },
          appearance: { heading: XSS, intro: XSS, buttonLabel: 'Go', consentText: XSS },
        },
      }),
    ]);

    site = await startSite();
    const { pages } = site;
    const shell = (title: string, body: string, dark = false) =>
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title>` +
      `<style>body{margin:0;font:17px/1.6 Georgia,serif;background:${dark ? '#10141a' : '#fbfaf7'};color:${dark ? '#d8dee9' : '#2b2b2b'}}main{max-width:40rem;margin:0 auto;padding:2.5rem 1.25rem}` +
      `h1{font-size:2rem;line-height:1.2;margin:0 0 1rem}.nav{padding:1rem 1.25rem;border-bottom:1px solid ${dark ? '#2a313c' : '#e7e3da'};font-weight:700}a{color:${dark ? '#9ecbff' : '#1d6b34'}}</style></head>` +
      `<body><div class="nav">Greenleaf Journal</div><main>${body}</main></body></html>`;
    const script = (slug: string, attrs = '') => `<script src="${server.url}/f/${slug}/embed.js"${attrs}></script>`;
    pages.set(
      '/inline-survey',
      shell(
        'Reader survey',
        `<h1>Help us plan next season</h1><p>We read every answer. Here is our short reader survey:</p>${script('survey')}<p>Thanks for reading the Greenleaf Journal.</p>`,
      ),
    );
    pages.set(
      '/inline-dark',
      shell(
        'Night notes',
        `<h1>Planting by moonlight</h1><p>Some seeds are best sown at dusk. Get our late-night notes:</p>${script('dark')}<p>See you next full moon.</p>`,
        true,
      ),
    );
    pages.set(
      '/popup',
      shell(
        'Shop',
        `<h1>The Greenleaf shop</h1><p>Tools and seeds for every plot. <a href="#guides" data-formcast-open="light">Get the free planting guides</a>.</p>${script('light', ' data-formcast-delay="off"')}`,
      ),
    );
    pages.set('/xss', shell('XSS', `<h1>XSS</h1>${script('xss')}`));
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    if (server) {
      server.child.kill('SIGTERM');
      await new Promise((r) => server.child.once('close', r));
    }
    await site?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it.skipIf(unavailable)(
    'hosted page, light: public heading (never the name), logo, intro, consent, button; accessible',
    async () => {
      const p = await newPage();
      await p.goto(`${server.url}/f/light`);
      await expect(p.title()).resolves.toBe('Grow with Greenleaf');
      expect(await p.locator('h1').innerText()).toBe('Grow with Greenleaf');
      expect(await p.content()).not.toContain('Q3 newsletter list');
      expect(
        await p.locator('img.fc-logo').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0),
      ).toBe(true);
      expect(await p.locator('.fc-intro').innerHTML()).toContain('<br>');
      const button = p.getByRole('button', { name: 'Send me the guides' });
      const [bg, fg] = await button.evaluate((b) => [getComputedStyle(b).backgroundColor, getComputedStyle(b).color]);
      expect([bg, fg]).toEqual(['rgb(9, 105, 218)', 'rgb(255, 255, 255)']);
      await shot(p, 'hosted-light');
      await axe(p, 'hosted light');
      // Submitting without the consent box: the page again, 422, the error beside the box, the email kept.
      await p.getByLabel('Email').fill('ivy@example.com');
      const [res] = await Promise.all([p.waitForResponse((r) => r.request().method() === 'POST'), button.click()]);
      expect(res.status()).toBe(422);
      await expect(p.locator('[data-formcast-error="_fc_consent"]').innerText()).resolves.toContain('Tick the box');
      expect(await p.getByLabel('Email').inputValue()).toBe('ivy@example.com');
      await shot(p, 'hosted-consent-error');
      await axe(p, 'hosted light, errors');
      await p.getByRole('checkbox', { name: /I agree to receive/ }).check();
      await Promise.all([
        p.waitForURL(`${server.url}/f/light/thanks`),
        p.getByRole('button', { name: 'Send me the guides' }).click(),
      ]);
      await expect(p.locator('[data-formcast-success]').innerText()).resolves.toContain('Check your inbox');
      await shot(p, 'hosted-thanks');
      const subs = await api('GET', `/v1/forms/${ids.light}/submissions`);
      expect(subs.data[0].consent.text).toBe(
        'I agree to receive the Greenleaf newsletter and accept the privacy policy.',
      );
      expect(subs.data[0].userAgent).toMatch(/Chrome/);
      await p.close();
    },
  );

  it.skipIf(unavailable)(
    'hosted page, dark theme and a light brand colour: readable text on the button, accessible',
    async () => {
      const p = await newPage();
      await p.goto(`${server.url}/f/dark`);
      const [bodyBg, btnBg, btnFg] = await p.evaluate(() => {
        const b = document.querySelector('.fc-submit')!;
        return [
          getComputedStyle(document.body).backgroundColor,
          getComputedStyle(b).backgroundColor,
          getComputedStyle(b).color,
        ];
      });
      expect(bodyBg).toBe('rgb(13, 17, 23)');
      expect(btnBg).toBe('rgb(167, 139, 250)');
      expect(btnFg).toBe('rgb(0, 0, 0)');
      await p.getByLabel('First name').focus();
      await shot(p, 'hosted-dark');
      await axe(p, 'hosted dark');
      await p.close();
    },
  );

  it.skipIf(unavailable)(
    'a survey filled in the browser: errors beside the fields with values kept, then the answers and the summary',
    async () => {
      const p = await newPage({ width: 960, height: 1200 });
      await p.goto(`${server.url}/f/survey`);
      await shot(p, 'hosted-survey-brand');
      await axe(p, 'hosted survey');
      await p.getByLabel('Your email').fill('rose@example.com');
      await p.getByLabel('How many beds do you tend?').fill('lots');
      await p.getByLabel('Anything else?').fill('More about tomatoes, please.');
      const [res] = await Promise.all([
        p.waitForResponse((r) => r.request().method() === 'POST'),
        p.getByRole('button', { name: 'Send my answers' }).click(),
      ]);
      expect(res.status()).toBe(422);
      await expect(p.locator('[data-formcast-error="plot"]').innerText()).resolves.toBe('Choose an option.');
      await expect(p.locator('[data-formcast-error="rating"]').innerText()).resolves.toBe('Choose an option.');
      await expect(p.locator('[data-formcast-error="beds"]').innerText()).resolves.toBe('Enter a number.');
      expect(await p.getByLabel('Anything else?').inputValue()).toBe('More about tomatoes, please.');
      expect(await p.getByLabel('Your email').inputValue()).toBe('rose@example.com');
      await shot(p, 'hosted-survey-errors');
      await axe(p, 'hosted survey, errors');
      await p.getByLabel('What do you grow?').selectOption('Vegetables');
      await p.getByRole('radio', { name: 'Very useful' }).check();
      await p.getByRole('checkbox', { name: 'Composting' }).check();
      await p.getByRole('checkbox', { name: 'Pest control' }).check();
      await p.getByLabel('How many beds do you tend?').fill('6');
      await p.getByLabel('Gardening since').fill('2019-04-01');
      await p.getByRole('checkbox', { name: /may store my answers/ }).check();
      await Promise.all([
        p.waitForURL(`${server.url}/f/survey/thanks`),
        p.getByRole('button', { name: 'Send my answers' }).click(),
      ]);
      await expect(p.locator('[data-formcast-success]').innerText()).resolves.toContain('your answers help us');
      await p.close();

      const summary = await api('GET', `/v1/forms/${ids.survey}/submissions/summary`);
      expect(summary.total).toBe(1);
      const q = Object.fromEntries(summary.questions.map((x: any) => [x.field, x]));
      expect(q.plot.options.find((o: any) => o.value === 'Vegetables').count).toBe(1);
      expect(q.rating.options.find((o: any) => o.value === 'Very useful').count).toBe(1);
      expect(q.topics.options.map((o: any) => o.count)).toEqual([1, 0, 1]);
      expect(q.beds.answered).toBe(1);
      expect(q.since.answered).toBe(1);
      const [sub] = (await api('GET', `/v1/forms/${ids.survey}/submissions`)).data;
      expect(sub.answers.find((a: any) => a.field === 'beds').value).toBe('6');
      expect(sub.answers.find((a: any) => a.field === 'since').value).toBe('2019-04-01');
    },
  );

  it.skipIf(unavailable)(
    'the inline embed: the brand-coloured survey on another site, filled in and counted',
    async () => {
      const p = await newPage({ width: 960, height: 1000 });
      await p.goto(`${site.url}/inline-survey`);
      const host = p.locator('[data-formcast-embed="survey"]');
      await host.locator('form').waitFor();
      expect(
        await host
          .locator('.fc-submit')
          .evaluate((b) => [getComputedStyle(b).backgroundColor, getComputedStyle(b).color]),
      ).toEqual(['rgb(255, 212, 59)', 'rgb(0, 0, 0)']);
      await shot(p, 'embed-inline-survey');
      await axe(p, 'inline survey embed');
      await host.getByLabel('Your email').fill('fern@example.com');
      await host.getByLabel('What do you grow?').selectOption('Flowers');
      await host.getByRole('radio', { name: 'Somewhat' }).check();
      await host.getByRole('button', { name: 'Send my answers' }).click();
      await host.locator('[data-formcast-error="_fc_consent"]').getByText('Tick the box').waitFor();
      await host.getByRole('checkbox', { name: /may store my answers/ }).check();
      await host.getByRole('button', { name: 'Send my answers' }).click();
      await host.locator('[data-formcast-success]').getByText('your answers help us').waitFor();
      await shot(p, 'embed-inline-survey-done');
      const summary = await api('GET', `/v1/forms/${ids.survey}/submissions/summary`);
      expect(summary.total).toBe(2);
      expect(
        summary.questions.find((x: any) => x.field === 'plot').options.find((o: any) => o.value === 'Flowers').count,
      ).toBe(1);
      await p.close();
    },
  );

  it.skipIf(unavailable)('the inline embed in the dark theme, and the popup with logo and consent', async () => {
    const dark = await newPage({ width: 960, height: 900 });
    await dark.goto(`${site.url}/inline-dark`);
    await dark.locator('[data-formcast-embed="dark"] form').waitFor();
    await shot(dark, 'embed-inline-dark');
    await axe(dark, 'inline dark embed');
    await dark.close();

    const p = await newPage({ width: 960, height: 900 });
    await p.goto(`${site.url}/popup`);
    await p.getByRole('link', { name: 'Get the free planting guides' }).click();
    const dialog = p.getByRole('dialog', { name: 'Grow with Greenleaf' });
    await dialog.waitFor();
    expect(
      await p
        .locator('[data-formcast-popup="light"]')
        .locator('img.fc-logo')
        .evaluate((img: HTMLImageElement) => img.naturalWidth > 0),
    ).toBe(true);
    await shot(p, 'embed-popup', false);
    await axe(p, 'popup embed');
    await dialog.getByLabel('Email').fill('moss@example.com');
    await dialog.getByRole('checkbox', { name: /I agree/ }).check();
    await dialog.getByRole('button', { name: 'Send me the guides' }).click();
    await dialog.getByText('Check your inbox').waitFor();
    await p.close();
  });

  it.skipIf(unavailable)('XSS through every new field stays text on the hosted page and in the embed', async () => {
    const p = await newPage();
    await p.goto(`${server.url}/f/xss`);
    await p.goto(`${site.url}/xss`);
    await p.locator('[data-formcast-embed="xss"] form').waitFor();
    expect(await p.evaluate(() => (window as any).__pwned)).toBeUndefined();
    expect(await p.locator('[data-formcast-embed="xss"] h1').innerText()).toBe(XSS);
    await p.close();
    const hosted = await newPage();
    await hosted.goto(`${server.url}/f/xss`);
    expect(await hosted.evaluate(() => (window as any).__pwned)).toBeUndefined();
    expect(await hosted.locator('h1').innerText()).toBe(XSS);
    expect(await hosted.locator('legend').innerText()).toBe(XSS);
    await hosted.close();
  });

  it.skipIf(unavailable)(
    'the console: appearance with a live preview, a select question, then the Results tab',
    async () => {
      const draft = await api('POST', '/v1/forms', {
        name: 'Spring list (draft)',
        type: 'SIGN_UP',
        fieldMapping: { email: 'email' },
      });
      const p = await newPage({ width: 1400, height: 900 });
      await p.goto(`${server.url}/app/login?next=${encodeURIComponent(`/app/forms/${draft.id}`)}`);
      await p.locator('input[name="email"]').fill(EMAIL);
      await p.locator('input[name="password"]').fill(PASSWORD);
      await Promise.all([
        p.waitForURL(`${server.url}/app/forms/${draft.id}`),
        p.locator('input[name="password"]').press('Enter'),
      ]);
      await p.getByRole('heading', { level: 1, name: 'Spring list (draft)' }).waitFor();

      await p.getByRole('button', { name: 'Add question' }).click();
      const question = p.getByRole('listitem', { name: 'Question 1' });
      await question.getByLabel('Field name').fill('interest');
      await question.getByLabel('Label').fill('What are you planting this spring?');
      await question.getByLabel('Type').selectOption('select');
      await question.getByLabel('Options').fill('Tomatoes\nHerbs\nWildflowers');
      await question.getByLabel('Required').check();

      await p.getByLabel('Heading', { exact: true }).fill('Spring planting club');
      await p.getByLabel('Introduction').fill('Weekly tips from March to May.\nFree, and you can leave any time.');
      await p.getByLabel('Button label').fill('Join the club');
      await p.getByLabel('Brand colour', { exact: true }).fill('#2f9e44');
      await p.getByLabel('Logo URL').fill(LOGO_URL);
      await p.getByLabel('Consent text').fill('I agree to the privacy policy.');
      const preview = p.getByTestId('form-preview');
      // The preview is inert (a picture of the form): read through CSS, which reaches into its shadow root.
      await preview.locator('h1.fc-heading', { hasText: 'Spring planting club' }).waitFor();
      await preview.locator('label', { hasText: 'What are you planting this spring?' }).waitFor();
      expect(await preview.locator('select option').allInnerTexts()).toEqual([
        'Choose…',
        'Tomatoes',
        'Herbs',
        'Wildflowers',
      ]);
      expect(await preview.locator('.fc-submit').evaluate((b) => getComputedStyle(b).backgroundColor)).toBe(
        'rgb(47, 158, 68)',
      );
      await p.getByRole('button', { name: 'Save changes' }).click();
      await p.getByText('Form saved.').waitFor();
      const saved = await api('GET', `/v1/forms/${draft.id}`);
      expect(saved.settings.appearance).toEqual({
        heading: 'Spring planting club',
        intro: 'Weekly tips from March to May.\nFree, and you can leave any time.',
        buttonLabel: 'Join the club',
        consentText: 'I agree to the privacy policy.',
        brandColor: '#2f9e44',
        logoUrl: LOGO_URL,
      });
      expect(saved.settings.fields).toEqual({
        interest: {
          label: 'What are you planting this spring?',
          type: 'select',
          options: ['Tomatoes', 'Herbs', 'Wildflowers'],
          required: true,
        },
      });
      for (const b of await p.locator('.toast button').all()) await b.click();
      // Each part in the middle of a tall window, clear of the sticky top bar, then captured alone.
      await p.setViewportSize({ width: 1400, height: 1300 });
      for (const [group, file] of [
        ['Appearance', 'console-editor'],
        ['Questions', 'console-questions'],
      ] as const) {
        const part = p.getByRole('group', { name: group });
        await part.evaluate((el) => el.scrollIntoView({ block: 'center' }));
        await part.screenshot({ path: path.join(SHOTS, `forms-appearance-${file}.png`) });
      }
      await axe(p, 'console form editor');

      await p.goto(`${server.url}/app/forms/${ids.survey}?tab=results`);
      await p.getByRole('heading', { name: 'How useful is our newsletter?' }).waitFor();
      expect(await p.getByRole('region', { name: 'What do you grow?' }).innerText()).toMatch(/Vegetables\s*1 · 50%/);
      await shot(p, 'console-results');
      await axe(p, 'console results');
      await p.close();
      expect(problems).toEqual([]);
    },
  );
});
