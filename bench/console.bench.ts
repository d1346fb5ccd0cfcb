/**
 * Console benchmark (`npm run bench:console`): how long each main page of the web console (/app) takes to be
 * usable on the local server with a realistic workspace, in headless Chromium (issue 12: "a page is
 * interactive within 1 s on the local server with 100,000 contacts and 50 broadcasts in the database").
 *
 * Setup: a fresh SQLite file in a temp dir, migrated; a workspace (`formcast workspace create`) and its owner
 * (`formcast user create … --password-stdin`); then, written straight into the database in batched transactions:
 * `--contacts` contacts (100,000) created over the last 60 days, each with its contact.created event; `--broadcasts`
 * broadcasts (50), half of them SENT to `--recipients` contacts each (2,000) with a delivery per recipient and the
 * email.sent, email.opened (40 %) and email.clicked (10 %) events the stats count, the others drafts; one published
 * form. Then `formcast serve` on that file, signed in through /app/login in headless Chromium (Debian's chromium,
 * playwright-core; test/helpers/browser.ts).
 *
 * Measured, for each page (dashboard, forms, contacts, broadcasts, domains, settings), `--runs` times (5): a full
 * navigation (page.goto, the browser's HTTP cache warm: assets are immutable), from navigation start (the
 * Performance API's time origin) to the moment the page's h1 and main content are shown, no skeleton or spinner is
 * left, and no fetch is in flight (fetch is counted by an init script); read in the page with performance.now() on
 * the animation frame where that first holds. The first load of all (an empty cache) is reported apart.
 * Goal: the median of every page < 1000 ms; PASS/MISS. The exit code is 1 only when something failed to run.
 *
 * Options: --contacts N (100000), --broadcasts N (50), --recipients N (2000), --runs N (5), --help.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import SQLite from 'better-sqlite3';
import type { Page, Request } from 'playwright-core';
import { encodeTime } from 'ulid';
import { browserUnavailable, launchBrowser } from '../test/helpers/browser.js';
import {
  BenchError,
  HOST,
  ROOT,
  expectStatus,
  fmt,
  makeTempDir,
  memoryOf,
  parseCommandLine,
  positiveInt,
  run,
  runBench,
  startServer,
  table,
} from './harness.js';

const GOAL_MS = 1000;
/** Issue 36, goal 8: the contacts search (`GET /v1/contacts?q=`) answers within this, at 1,000,000 contacts. */
const SEARCH_GOAL_MS = 300;

/**
 * What a marketer types into the contacts page's search: one person's address (an older contact: the list reads the
 * newest first), a first name, and a string nobody has, each typed into the contacts page's search box.
 */
function searches(contacts: number) {
  return [
    { name: 'an address', q: `person${Math.floor(contacts * 0.3)}@example.test` },
    { name: 'a first name', q: `First${contacts - 17}` },
    { name: 'no match', q: 'nobody-by-this-name' },
  ];
}
const EMAIL = 'owner@bench.test';
const PASSWORD = 'bench password that is long enough';

/** The pages measured: the address, the h1, and what shows the page's data (a row, a chart, a form…). */
const PAGES = [
  { name: 'dashboard', url: '/app', heading: 'Dashboard', content: '.chart canvas, .chart .u-wrap' },
  { name: 'forms', url: '/app/forms', heading: 'Forms', content: 'table tbody tr' },
  { name: 'contacts', url: '/app/contacts', heading: 'Contacts', content: 'table tbody tr' },
  { name: 'broadcasts', url: '/app/broadcasts', heading: 'Broadcasts', content: 'table tbody tr' },
  { name: 'domains', url: '/app/domains', heading: 'Domains', content: 'table tbody tr, .state' },
  { name: 'settings', url: '/app/settings', heading: 'Settings', content: 'form input' },
] as const;

function parseOptions() {
  const values = parseCommandLine(
    {
      contacts: { type: 'string' },
      broadcasts: { type: 'string' },
      recipients: { type: 'string' },
      runs: { type: 'string' },
      reuse: { type: 'string' },
    },
    {
      example: 'npm run bench:console -- --runs 3',
      usage: [
        'usage: npm run bench:console -- [--contacts N] [--broadcasts N] [--recipients N] [--runs N]',
        '  --contacts N     contacts in the workspace (default 100000)',
        '  --broadcasts N   broadcasts, half of them sent (default 50)',
        '  --recipients N   recipients of each sent broadcast (default 2000)',
        '  --runs N         loads of each page (default 5)',
        '  --reuse DIR      measure on a directory kept by an earlier run (BENCH_KEEP=1) instead of seeding',
      ],
    },
  );
  return {
    contacts: positiveInt('contacts', values.contacts, 100_000),
    broadcasts: positiveInt('broadcasts', values.broadcasts, 50),
    recipients: positiveInt('recipients', values.recipients, 2000),
    runs: positiveInt('runs', values.runs, 5),
    reuse: values.reuse,
  };
}

/** `node bin/formcast args…` with `stdin` written to it; its stdout. */
function cli(args: string[], env: NodeJS.ProcessEnv, stdin: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/formcast', ...args], { cwd: ROOT, env });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new BenchError(`formcast ${args[0]} ${args[1]} failed (${code}): ${err}`)),
    );
    child.stdin.end(stdin);
  });
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
let serial = 0;
/** A ULID of time `t` whose random part is a serial number: unique, sorted by time, and cheap (no crypto per id). */
function ulid(t: number): string {
  let n = serial++;
  let tail = '';
  for (let i = 0; i < 16; i++) {
    tail = CROCKFORD[n % 32] + tail;
    n = Math.floor(n / 32);
  }
  return encodeTime(t, 10) + tail;
}

/** The workspace's data, written as the features write it (ids are ULIDs of their creation time). */
function seed(
  file: string,
  workspaceId: string,
  opts: ReturnType<typeof parseOptions>,
): { seconds: number; events: number; deliveries: number } {
  const started = performance.now();
  const db = new SQLite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const now = Date.now();
  const DAY = 86_400_000;
  const iso = (t: number) => new Date(t).toISOString();
  const contactIds: string[] = [];
  const insertContact =
    db.prepare(`insert into contacts (id, workspace_id, email, first_name, last_name, properties, status, created_at, updated_at)
    values (?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const insertEvent =
    db.prepare(`insert into events (id, workspace_id, type, occurred_at, contact_id, broadcast_id, delivery_id, data, machine, url, dispatched)
    values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)`);
  let events = 0;
  const BATCH = 20_000;
  for (let from = 0; from < opts.contacts; from += BATCH) {
    db.transaction(() => {
      for (let i = from; i < Math.min(opts.contacts, from + BATCH); i++) {
        // Spread over 60 days, oldest first (ids sort by creation time).
        const t = now - 60 * DAY + Math.floor((i / opts.contacts) * 60 * DAY);
        const id = `ct_${ulid(t)}`;
        contactIds.push(id);
        const email = `person${i}@example.test`;
        const status = i % 50 === 0 ? 'UNSUBSCRIBED' : 'SUBSCRIBED';
        insertContact.run(
          id,
          workspaceId,
          email,
          `First${i}`,
          `Last${i}`,
          JSON.stringify({ plan: i % 3 === 0 ? 'pro' : 'free', city: `City ${i % 97}` }),
          status,
          iso(t),
          iso(t),
        );
        insertEvent.run(
          `evt_${ulid(t)}`,
          workspaceId,
          'contact.created',
          iso(t),
          id,
          null,
          null,
          JSON.stringify({ email, firstName: `First${i}` }),
          0,
          null,
        );
        events++;
      }
    })();
  }

  const insertBroadcast =
    db.prepare(`insert into broadcasts (id, workspace_id, name, status, from_address, reply_to, subject, html, text, preview_text, created_at, updated_at, sent_at, materialized_at)
    values (?, ?, ?, ?, ?, null, ?, ?, ?, null, ?, ?, ?, ?)`);
  const insertDelivery =
    db.prepare(`insert into deliveries (id, workspace_id, broadcast_id, contact_id, email, status, attempts, next_attempt_at, unsubscribe_token, created_at, updated_at, sent_at, message_id)
    values (?, ?, ?, ?, ?, 'SENT', 1, ?, ?, ?, ?, ?, ?)`);
  let deliveries = 0;
  const html = '<p>Hello {{ contact.firstName }},</p><p>Our <a href="https://example.com/news">news</a>.</p>';
  for (let b = 0; b < opts.broadcasts; b++) {
    const sent = b % 2 === 0;
    const t = now - (opts.broadcasts - b) * (DAY / 2);
    const id = `bc_${ulid(t)}`;
    db.transaction(() => {
      insertBroadcast.run(
        id,
        workspaceId,
        `Newsletter #${b + 1}`,
        sent ? 'SENT' : 'DRAFT',
        'News <news@bench.test>',
        `News of the week ${b + 1}`,
        html,
        'Hello, our news: https://example.com/news',
        iso(t),
        iso(t),
        sent ? iso(t + 600_000) : null,
        sent ? iso(t) : null,
      );
      if (!sent) return;
      const offset = (b * 7919) % Math.max(1, opts.contacts - opts.recipients);
      for (let r = 0; r < Math.min(opts.recipients, opts.contacts); r++) {
        const contactId = contactIds[offset + r]!;
        const at = t + 1000 + r * 100;
        const dlv = `dlv_${ulid(at)}`;
        insertDelivery.run(
          dlv,
          workspaceId,
          id,
          contactId,
          `person${offset + r}@example.test`,
          iso(at),
          `u${dlv}`,
          iso(at),
          iso(at),
          iso(at),
          `<${dlv}@bench.test>`,
        );
        deliveries++;
        insertEvent.run(`evt_${ulid(at)}`, workspaceId, 'email.sent', iso(at), contactId, id, dlv, '{}', 0, null);
        events++;
        if (r % 5 < 2) {
          insertEvent.run(
            `evt_${ulid(at + 3_600_000)}`,
            workspaceId,
            'email.opened',
            iso(at + 3_600_000),
            contactId,
            id,
            dlv,
            '{}',
            r % 25 === 0 ? 1 : 0,
            null,
          );
          events++;
        }
        if (r % 10 === 0) {
          insertEvent.run(
            `evt_${ulid(at + 3_700_000)}`,
            workspaceId,
            'email.clicked',
            iso(at + 3_700_000),
            contactId,
            id,
            dlv,
            '{}',
            0,
            'https://example.com/news',
          );
          events++;
        }
      }
    })();
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.exec('analyze');
  db.close();
  return { seconds: (performance.now() - started) / 1000, events, deliveries };
}

/**
 * Loads `url` and answers the time from navigation start to the first animation frame where the page is
 * usable: its h1 says `heading`, `content` is on the page, no skeleton or spinner, no fetch in flight.
 */
async function load(page: Page, base: string, p: (typeof PAGES)[number], api?: Map<string, number[]>): Promise<number> {
  // The API requests the page makes, each with its time from request start to its answer's end.
  const onDone = (req: Request) => {
    const url = new URL(req.url());
    if (!api || !url.pathname.startsWith('/v1/')) return;
    const t = req.timing();
    const key = `${req.method()} ${url.pathname.replace(/\/[a-z]+_[0-9A-Z]{26}/g, '/{id}')}${url.searchParams.has('q') ? '?q=…' : ''}`;
    api.set(key, [...(api.get(key) ?? []), t.responseEnd]);
  };
  page.on('requestfinished', onDone);
  await page.goto(`${base}${p.url}`, { waitUntil: 'commit' });
  const handle = await page.waitForFunction(
    ({ heading, content }) => {
      const h1 = document.querySelector('main h1');
      const w = window as unknown as { __inflight?: number };
      if (!h1 || h1.textContent?.trim() !== heading) return false;
      if (!document.querySelector(content)) return false;
      if (document.querySelector('.skeleton, .spinner')) return false;
      if ((w.__inflight ?? 0) > 0) return false;
      return performance.now();
    },
    { heading: p.heading, content: p.content },
    { polling: 'raf', timeout: 30_000 },
  );
  const ms = (await handle.jsonValue()) as number;
  page.off('requestfinished', onDone);
  return ms;
}

/** Types `q` into the loaded contacts page's search box; ms from then until its answer is shown (see main). */
async function search(page: Page, q: string, api: Map<string, number[]>): Promise<number> {
  const onDone = (req: Request) => {
    const url = new URL(req.url());
    if (!url.pathname.startsWith('/v1/contacts') || url.searchParams.get('q') !== q) return;
    const key = `${req.method()} ${url.pathname}?q=…`;
    api.set(key, [...(api.get(key) ?? []), req.timing().responseEnd]);
  };
  page.on('requestfinished', onDone);
  const t0 = (await page.evaluate(() => performance.now())) as number;
  await page.locator('.filter-search input[type="search"]').fill(q);
  const handle = await page.waitForFunction(
    (words) => {
      const w = window as unknown as { __inflight?: number; __answeredQ?: string | null };
      if (w.__answeredQ !== words || (w.__inflight ?? 0) > 0) return false;
      if (!document.querySelector('table tbody tr, .state h2')) return false;
      if (document.querySelector('.skeleton, .spinner')) return false;
      return performance.now();
    },
    q,
    { polling: 'raf', timeout: 30_000 },
  );
  const ms = ((await handle.jsonValue()) as number) - t0;
  page.off('requestfinished', onDone);
  return ms;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function main(): Promise<number> {
  const opts = parseOptions();
  const unavailable = browserUnavailable();
  if (unavailable) throw new BenchError(unavailable);
  // BENCH_KEEP=1 keeps the seeded file (its path printed) for looking into a slow page's queries afterwards, or for
  // measuring again on it with `--reuse DIR` (seeding 1,000,000 contacts takes ~6 minutes).
  const keep = Boolean(process.env.BENCH_KEEP) || opts.reuse !== undefined;
  const dir = opts.reuse ?? makeTempDir('console', { keep });
  if (keep) process.stderr.write(`keeping ${dir}\n`);
  const file = path.join(dir, 'formcast.db');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    HOST,
    LOG_LEVEL: 'warn',
    DATABASE_URL: file,
    DNS_SERVERS: '127.0.0.1:9',
    DNS_TIMEOUT_MS: '300',
  };
  for (const name of ['PUBLIC_URL', 'SMTP_URL']) delete env[name];
  const kept = path.join(dir, 'bench-console.json');
  let created: { workspace: { id: string }; apiKey: { key: string } };
  let seeded: ReturnType<typeof seed>;
  if (opts.reuse !== undefined) {
    if (!fs.existsSync(kept))
      throw new BenchError(`--reuse ${dir}: no bench-console.json there (run with BENCH_KEEP=1)`);
    ({ created, seeded } = JSON.parse(fs.readFileSync(kept, 'utf8')) as {
      created: typeof created;
      seeded: typeof seeded;
    });
    process.stderr.write(`reusing ${file} (not seeded again)\n`);
  } else {
    created = JSON.parse(
      await run('formcast workspace create', ['bin/formcast', 'workspace', 'create', 'Bench', '--json'], env),
    ) as typeof created;
    await cli(
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
        'Bench Owner',
        '--password-stdin',
        '--json',
      ],
      env,
      `${PASSWORD}\n`,
    );
    process.stderr.write(`seeding ${fmt(opts.contacts)} contacts and ${fmt(opts.broadcasts)} broadcasts ...\n`);
    seeded = seed(file, created.workspace.id, opts);
    process.stderr.write(
      `  ${fmt(seeded.events)} events, ${fmt(seeded.deliveries)} deliveries in ${fmt(seeded.seconds, 1)} s\n`,
    );
    if (keep) fs.writeFileSync(kept, JSON.stringify({ created, seeded }), { mode: 0o600 });
  }

  const server = await startServer('formcast serve', ['bin/formcast', 'serve'], env);
  // A published form, through the API.
  const auth = { authorization: `Bearer ${created.apiKey.key}`, 'content-type': 'application/json' };
  const form = JSON.parse(
    await expectStatus(
      await fetch(`${server.url}/v1/forms`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ name: 'Newsletter', type: 'SIGN_UP', fieldMapping: { email: 'email' } }),
      }),
      201,
      'POST /v1/forms',
    ),
  ) as { id: string };
  await expectStatus(
    await fetch(`${server.url}/v1/forms/${form.id}/publish`, { method: 'POST', headers: auth, body: '{}' }),
    200,
    'publish the form',
  );

  const browser = await launchBrowser();
  try {
    // Signed in once; the measuring context starts from that session with an empty HTTP cache.
    const login = await browser.newContext();
    const lp = await login.newPage();
    await lp.goto(`${server.url}/app/login?next=%2Fapp%2Fsettings`);
    await lp.locator('input[name="email"]').fill(EMAIL);
    await lp.locator('input[name="password"]').fill(PASSWORD);
    await Promise.all([
      lp.waitForURL(`${server.url}/app/settings`),
      lp.locator('input[name="password"]').press('Enter'),
    ]);
    const storageState = await login.storageState();
    await login.close();

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, storageState });
    await context.addInitScript(() => {
      const w = window as unknown as { __inflight: number; __answeredQ?: string | null };
      w.__inflight = 0;
      const original = window.fetch.bind(window);
      window.fetch = async (...args: Parameters<typeof fetch>) => {
        w.__inflight++;
        try {
          const res = await original(...args);
          // Counted until the body is read: a clone's body is read alongside the app's.
          await res
            .clone()
            .arrayBuffer()
            .catch(() => undefined);
          // The search a page of contacts answered (the search measure waits for its own).
          const url = new URL(args[0] instanceof Request ? args[0].url : String(args[0]), location.href);
          if (url.pathname === '/v1/contacts') w.__answeredQ = url.searchParams.get('q');
          return res;
        } finally {
          w.__inflight--;
        }
      };
    });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    // The first load of all: an empty HTTP cache.
    const cold = await load(page, server.url, PAGES[0]);
    if (process.env.BENCH_CONSOLE_TRACE) {
      const nav = await page.evaluate(() => {
        const n = (performance.getEntriesByType as (type: string) => PerformanceEntry[])(
          'navigation',
        )[0] as PerformanceNavigationTiming;
        return `document: request ${Math.round(n.requestStart)}, answer ${Math.round(n.responseEnd)}, DOMContentLoaded ${Math.round(n.domContentLoadedEventEnd)}`;
      });
      const entries = await page.evaluate(() =>
        (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).map(
          (e) => `${Math.round(e.startTime)}→${Math.round(e.responseEnd)} ${e.name.replace(location.origin, '')}`,
        ),
      );
      process.stderr.write(`  first load: ${fmt(cold)} ms; ${nav}\n    ${entries.join('\n    ')}\n`);
    }

    const results: { name: string; ms: number[]; api: string }[] = [];
    for (const p of PAGES) {
      const ms: number[] = [];
      const api = new Map<string, number[]>();
      for (let i = 0; i < opts.runs; i++) ms.push(await load(page, server.url, p, api));
      if (process.env.BENCH_CONSOLE_TRACE) {
        // What the last load fetched and when (ms from navigation start), for finding where the time goes.
        const entries = await page.evaluate(() =>
          (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).map(
            (e) => `${Math.round(e.startTime)}→${Math.round(e.responseEnd)} ${e.name.replace(location.origin, '')}`,
          ),
        );
        process.stderr.write(`    ${entries.join('\n    ')}\n`);
      }
      const calls = [...api].map(([k, v]) => `${k} ${fmt(median(v))}`).join(', ');
      results.push({ name: p.name, ms, api: calls });
      process.stderr.write(`  ${p.name}: ${ms.map((x) => fmt(x)).join(', ')} ms; API medians (ms): ${calls}\n`);
    }
    // The search (goal 8): on the contacts page, the words typed into its search box; from the moment they are typed
    // to the first frame where the page of contacts for them (or "no contact matches") is shown and every request
    // (the page, the matching count) has answered. The page waits for typing to pause 300 ms before it asks: that
    // pause is in the figure; the API's own time is reported apart and is what the goal (< 300 ms) is about.
    const found: SearchResult[] = [];
    const contactsPage = PAGES.find((p) => p.name === 'contacts')!;
    for (const s of searches(opts.contacts)) {
      const ms: number[] = [];
      const api = new Map<string, number[]>();
      for (let i = 0; i < opts.runs; i++) {
        await load(page, server.url, contactsPage);
        ms.push(await search(page, s.q, api));
      }
      const list = median(api.get('GET /v1/contacts?q=…') ?? [NaN]);
      const count = median(api.get('GET /v1/contacts/count?q=…') ?? [NaN]);
      found.push({ ...s, ms, listMs: list, countMs: count });
      process.stderr.write(
        `  search: ${s.name} (${s.q}): ${ms.map((x) => fmt(x)).join(', ')} ms typed → shown; GET /v1/contacts?q= ${fmt(list)} ms, count ${fmt(count)} ms\n`,
      );
    }
    if (errors.length) throw new BenchError(`page errors: ${errors.join('\n')}`);
    const peak = server.child.pid ? memoryOf(server.child.pid).peakRssMb : null;
    return report(opts, seeded, cold, results, found, peak);
  } finally {
    await browser.close();
  }
}

interface SearchResult {
  name: string;
  q: string;
  ms: number[];
  /** ms from typing to the answer shown (with the page's 300 ms pause); median ms of `GET /v1/contacts?q=` and its count. */
  listMs: number;
  countMs: number;
}

function report(
  opts: ReturnType<typeof parseOptions>,
  seeded: ReturnType<typeof seed>,
  cold: number,
  results: { name: string; ms: number[]; api: string }[],
  found: SearchResult[],
  serverPeakRssMb: number | null,
): number {
  const rows = results.map((r) => [
    r.name,
    fmt(median(r.ms)),
    fmt(Math.min(...r.ms)),
    fmt(Math.max(...r.ms)),
    median(r.ms) < GOAL_MS ? 'PASS' : 'MISS',
  ]);
  const pass = results.every((r) => median(r.ms) < GOAL_MS);
  const searchPass = found.every((f) => f.listMs < SEARCH_GOAL_MS);
  const searchRows = found.map((f) => [
    `${f.name} (${f.q})`,
    fmt(median(f.ms)),
    fmt(f.listMs),
    fmt(f.countMs),
    f.listMs < SEARCH_GOAL_MS ? 'PASS' : 'MISS',
  ]);
  const load1 = os.loadavg()[0]!;
  process.stdout.write(
    [
      '',
      `console: formcast serve (SQLite) with ${fmt(opts.contacts)} contacts, ${fmt(opts.broadcasts)} broadcasts (${fmt(Math.ceil(opts.broadcasts / 2))} sent to ${fmt(opts.recipients)} each: ${fmt(seeded.deliveries)} deliveries, ${fmt(seeded.events)} events); headless Chromium, 1280×800`,
      `each page loaded ${opts.runs} times (warm HTTP cache), navigation start → content shown, no skeleton, no fetch in flight; node ${process.version}, ${os.cpus().length} CPU(s), load average ${load1.toFixed(1)}`,
      '',
      ...table(['page', 'median ms', 'min ms', 'max ms', `goal < ${GOAL_MS} ms`], [rows], 1),
      '',
      'API requests of each page (median ms from request start to the end of its answer):',
      ...results.map((r) => `  ${r.name.padEnd(11)} ${r.api}`),
      '',
      ...table(
        [
          'contacts search',
          'typed → shown ms',
          'GET /v1/contacts?q= ms',
          'its count ms',
          `goal < ${SEARCH_GOAL_MS} ms`,
        ],
        [searchRows],
        1,
      ),
      '',
      `first load (empty cache, dashboard): ${fmt(cold)} ms`,
      `every page's median < ${GOAL_MS} ms:  ${pass ? 'PASS' : 'MISS'}`,
      `every search < ${SEARCH_GOAL_MS} ms:        ${searchPass ? 'PASS' : 'MISS'}`,
      `formcast peak RSS (VmHWM):          ${fmt(serverPeakRssMb)} MB`,
      '',
    ].join('\n'),
  );
  const round = (x: number) => Math.round(x);
  process.stdout.write(
    `${JSON.stringify({
      bench: 'console',
      node: process.version,
      cpus: os.cpus().length,
      loadAvg1m: Math.round(load1 * 100) / 100,
      contacts: opts.contacts,
      broadcasts: opts.broadcasts,
      recipients: opts.recipients,
      deliveries: seeded.deliveries,
      events: seeded.events,
      runs: opts.runs,
      coldMs: round(cold),
      pages: Object.fromEntries(
        results.map((r) => [
          r.name,
          { medianMs: round(median(r.ms)), minMs: round(Math.min(...r.ms)), maxMs: round(Math.max(...r.ms)) },
        ]),
      ),
      serverPeakRssMb,
      searches: found.map((f) => ({
        name: f.name,
        typedToShownMs: round(median(f.ms)),
        listMs: round(f.listMs),
        countMs: round(f.countMs),
      })),
      goals: {
        pageMedianMs: { max: GOAL_MS, value: round(Math.max(...results.map((r) => median(r.ms)))), pass },
        searchMs: { max: SEARCH_GOAL_MS, value: round(Math.max(...found.map((f) => f.listMs))), pass: searchPass },
      },
      ok: true,
    })}\n`,
  );
  return 0;
}

await runBench('bench:console', main);
