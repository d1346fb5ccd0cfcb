/**
 * Headless Chromium for the end-to-end suites: Debian's `chromium` package driven by playwright-core
 * (no browser download). `.ci/run` installs the package when it is missing; where it still is missing,
 * the suites are declared skipped with the reason in their title and on stderr, so the report shows it.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { describe } from 'vitest';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
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
 * Launches headless Chromium. Every launch runs on a fresh temporary profile (user-data dir) that
 * playwright removes on close, so no state (localStorage, cookies) carries over between suites.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ARGS, timeout: 60_000 });
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
