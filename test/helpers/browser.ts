/**
 * Headless Chromium for the end-to-end suites: Debian's `chromium` package driven by playwright-core
 * (no browser download). `.ci/run` installs the package when it is missing; where it still is missing,
 * the suites are declared skipped with the reason in their title and on stderr, so the report shows it.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { describe, expect } from 'vitest';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // Chromium 15x's headless mode is the whole browser: every launch started the address bar's WebUI popups (the
  // omnibox's and its "AI mode" one) in a renderer of their own, ~1 s of CPU that no test uses.
  //
  // IsolateSandboxedIframes: Chromium 15x puts every `sandbox` iframe without allow-same-origin (the email editor's
  // preview) in a process of its own, and such a frame made after a test's page.route answered a request was at times
  // never laid out: its document stayed 0×0 (every element "hidden") until the iframe's size changed, while a probe
  // frame added beside it was laid out at once. It failed the editor's preview tests one run in two on one checkout.
  // Not seen without request interception (the preview failing on bad Liquid and coming back, 8 times of 8), nor in a
  // page built to reproduce it. With the feature off the frame runs in the page's process; the sandbox (no script, an
  // opaque origin) is the same.
  '--disable-features=WebUIOmniboxPopup,PreloadTopChromeWebUI,OmniboxAimPopup,AiModeOmniboxEntryPoint,WebUIOmniboxAimPopup,IsolateSandboxedIframes',
];

/** The three looks a public page is checked and photographed in: light, dark, and a 390 px phone. */
export const PAGE_MODES = [
  { name: 'light', viewport: { width: 1100, height: 820 }, colorScheme: 'light' as const },
  { name: 'dark', viewport: { width: 1100, height: 820 }, colorScheme: 'dark' as const },
  { name: 'phone', viewport: { width: 390, height: 844 }, colorScheme: 'light' as const },
];

/** Why the browser suites cannot run here, or null when they can. */
export function browserUnavailable(): string | null {
  try {
    fs.accessSync(CHROMIUM_PATH, fs.constants.X_OK);
    return null;
  } catch {
    return `${CHROMIUM_PATH} not found: install Debian's chromium package (.ci/run does)`;
  }
}

/** `describe`, or `describe.skip` with the reason in the title when Chromium is not installed. */
export function describeBrowser(title: string, suite: () => void): void {
  const reason = browserUnavailable();
  if (reason) {
    // The default reporter collapses a skipped file to a count: say why where it shows.
    console.warn(`e2e suite "${title}" skipped: ${reason}`);
    describe.skip(`${title} [skipped: ${reason}]`, suite);
  } else describe(title, suite);
}

/**
 * Whether the suites write their screenshots (test-output/e2e, and the pictures under docs/images some of them keep
 * current): only with `SCREENSHOTS=1` (`npm run screenshots`, README "Screenshots") or `DOCS_SCREENSHOTS=1`. They are
 * for people to look at; `npm test` (and so CI) skips them: taking and encoding them was a sixth of the end-to-end
 * suites' time, on a machine they keep busy. Everything else a suite checks on the page runs either way.
 */
export const SCREENSHOTS = process.env.SCREENSHOTS === '1' || process.env.DOCS_SCREENSHOTS === '1';

let screenshotsOff = false;

/** Without SCREENSHOTS, `page.screenshot` and `locator.screenshot` answer an empty buffer and write nothing. */
async function skipScreenshots(browser: Browser): Promise<void> {
  if (SCREENSHOTS || screenshotsOff) return;
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  for (const proto of [Object.getPrototypeOf(page), Object.getPrototypeOf(page.locator('body'))])
    proto.screenshot = async () => Buffer.alloc(0);
  await ctx.close();
  screenshotsOff = true;
}

/**
 * Launches headless Chromium. Every launch runs on a fresh temporary profile (user-data dir) that
 * playwright removes on close, so no state (localStorage, cookies) carries over between suites.
 */
export async function launchBrowser(): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ARGS, timeout: 60_000 });
  await skipScreenshots(browser);
  return browser;
}

/** A customer's site on another origin (another port on 127.0.0.1): serves `pages` by path, 404 otherwise. */
export interface Site {
  url: string;
  pages: Map<string, string>;
  close(): Promise<void>;
}

export async function startSite(): Promise<Site> {
  const pages = new Map<string, string>();
  const server = http.createServer((req, res) => {
    const body = pages.get(req.url ?? '');
    if (body === undefined) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  });
  const url = await new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
  return { url, pages, close: () => new Promise((r) => server.close(() => r())) };
}

let axeSource: string | undefined;

/** The axe rules whose result depends on the colours: all a page in another theme (the same markup) can break. */
const COLOR_RULES = ['color-contrast', 'link-in-text-block'];

/**
 * axe-core on the page as it is: no serious or critical violation (the first three nodes of each are named).
 * `colorsOnly`: only the rules about colours, for a page already checked whole in another theme.
 */
export async function expectNoSeriousAxe(p: Page, name: string, opts: { colorsOnly?: boolean } = {}): Promise<void> {
  axeSource ??= fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await p.evaluate(axeSource);
  const rules = opts.colorsOnly ? COLOR_RULES : null;
  const result = await p.evaluate(async (only) => {
    const r = await (window as any).axe.run(document, {
      resultTypes: ['violations'],
      ...(only ? { runOnly: { type: 'rule', values: only } } : {}),
    });
    return r.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 3).map((n: any) => n.target.join(' ')),
    }));
  }, rules);
  const bad = result.filter((v: any) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad, `axe on ${name}: ${JSON.stringify(bad, null, 2)}`).toEqual([]);
}

/**
 * Every page of a context reports Content-Security-Policy violations (from every frame, sandboxed previews included)
 * into `csp`, and uncaught errors into `errors`.
 */
export async function watchPages(ctx: BrowserContext, csp: string[], errors: string[]): Promise<void> {
  await ctx.exposeBinding('__formcastCsp', ({ frame }, text: string) => {
    csp.push(`${frame.url()}: ${text}`);
  });
  await ctx.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      (window as unknown as { __formcastCsp(t: string): void }).__formcastCsp(
        `${e.effectiveDirective} refused ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber} ${e.sample}`,
      );
    });
  });
  ctx.on('page', (p) => {
    p.on('console', (m) => {
      if (/Content[ -]Security[ -]Policy/i.test(m.text())) csp.push(`${p.url()}: ${m.text().slice(0, 300)}`);
    });
    p.on('pageerror', (e) => errors.push(`${p.url()}: ${String(e)}`));
  });
}
