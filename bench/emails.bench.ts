/**
 * Transactional email benchmark (`npm run bench:emails`, issue 35): `POST /v1/emails` of single-recipient messages
 * through the real server, in three parts, each against a figure measured in the same run.
 *
 * 1. accept: how fast Formcast accepts emails at --connections concurrent clients (default 50), with the delivery
 *    worker off in the measured server (SERVE_WORKER=false: only acceptance is measured), against a floor
 *    (bench/emails-floor-server.ts) on a copy of its SQLite file doing the same durable writes with prepared statements in
 *    one transaction. The floor's rows are checked against Formcast's, column for column, before the runs. Rounds of
 *    a warm-up and a measured run each, the order turning; medians. Goals: formcast req/s ≥ 0.8× the floor's, formcast
 *    p99 ≤ 1.25× the floor's (issue 36's rule for the floors).
 * 2. e2e: the same server with the worker on and SMTP_URL at the SMTP sink (bench/smtp-sink.ts, a process of its
 *    own): --emails N (default 5000) emails sent over the API at the same concurrency, each to its own address; the
 *    rate at the sink (distinct messages / (last − first arrival)). Then, on the same server and sink, one broadcast to
 *    N contacts (bench:send's message). Goal: the emails' rate ≥ 0.8× the broadcast's. Every message must arrive
 *    once (distinct Message-IDs), DKIM-signed, and the API must show no email still QUEUED.
 * 3. receipt: a broadcast to --big N contacts (default 100,000); once 1,000 of its messages are at the sink, --receipts
 *    (default 20) emails over the API, one every 250 ms, each marked with an `X-Bench-Mark` header the sink times;
 *    each one's latency from its request to its arrival at the sink. Goal: the slowest ≤ 2 s. Then the broadcast is
 *    canceled.
 *
 * Setup of each part: a fresh database (SQLite in a temp dir; with --pg a new PostgreSQL database for parts 2 and 3,
 * dropped at the end: the floor is SQLite only, so --pg skips part 1), `formcast workspace create` and
 * `formcast domain add acme.test --verified` (a real RSA-2048 DKIM key), contacts inserted directly. The servers run
 * with EMAILS_RATE_LIMIT=0 (the per-key email limit off) and RATE_LIMIT_PER_KEY out of reach (its hook measured, never
 * refusing), as bench:api does.
 *
 * Goals are printed as PASS/MISS with one JSON line at the end; the exit code is 1 only when something failed to run
 * (a non-2xx answer, a message missing, twice or unsigned, a receipt that never arrived).
 *
 * Options: --only accept,e2e,receipt (default all), --duration N, --rounds N, --warmup N, --connections N, --emails N,
 *          --big N, --receipts N, --smtp-connections N, --pg, --database-url URL, --cpu-prof DIR, --help.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import SQLite from 'better-sqlite3';
import {
  BenchError,
  HOST,
  NEWS_HTML,
  NEWS_SUBJECT,
  alive,
  cannonAmount,
  cpuSeconds,
  machineCpuSeconds,
  createSendingWorkspace,
  expectStatus,
  fmt,
  freshPostgresDatabase,
  makeTempDir,
  median,
  parseCommandLine,
  positiveInt,
  runBench,
  seedContacts,
  sendingEnv,
  startChild,
  startServer,
  startSmtpSink,
  stopChild,
  table,
  waitForSink,
  type Server,
  type Sink,
  type SinkStats,
  postgresUrlOf,
} from './harness.js';

const DOMAIN = 'acme.test';
const PUBLIC_URL = 'https://news.acme.test';
const FROM = `Acme <receipts@${DOMAIN}>`;
const ACCEPT_RATIO_GOAL = 0.8;
const P99_RATIO_GOAL = 1.25;
const E2E_RATIO_GOAL = 0.8;
const RECEIPT_GOAL_MS = 2000;
/** The receipts start once this many of the big broadcast's messages are at the sink. */
const RECEIPTS_AFTER = 1000;
const RECEIPT_EVERY_MS = 250;
/** How long a receipt may take before the run gives up on it. */
const RECEIPT_TIMEOUT_MS = 60_000;
/** accept: the pause after a measured run, before the other server's (see measureAccept). */
const SETTLE_MS = 2000;
const PARTS = ['accept', 'e2e', 'receipt'] as const;
type Part = (typeof PARTS)[number];

/** A receipt of the size applications send: a subject, a short HTML part and its text part. */
function emailBody(to: string, n: number, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    from: FROM,
    to: [to],
    subject: `Your receipt #${1000 + n}`,
    html: `<p>Hi,</p><p>Thank you for your order <b>#${1000 + n}</b>: 2 items, €42.00 in all.</p><p>It ships tomorrow; we will send its tracking link.</p><p>Acme</p>`,
    text: `Hi,\n\nThank you for your order #${1000 + n}: 2 items, €42.00 in all.\n\nIt ships tomorrow; we will send its tracking link.\n\nAcme\n`,
    ...extra,
  });
}

// ---------------------------------------------------------------------------------------------------
// Options

function parseOptions() {
  const values = parseCommandLine(
    {
      only: { type: 'string' },
      duration: { type: 'string' },
      rounds: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      emails: { type: 'string' },
      big: { type: 'string' },
      receipts: { type: 'string' },
      'smtp-connections': { type: 'string' },
      'cpu-prof': { type: 'string' },
      'floor-commit': { type: 'string' },
      'worker-process': { type: 'boolean' },
      'accept-floor': { type: 'boolean' },
      pg: { type: 'boolean' },
      'database-url': { type: 'string' },
    },
    {
      example: 'npm run bench:emails -- --only e2e --emails 1000',
      usage: [
        'usage: npm run bench:emails -- [--only PARTS] [--duration N] [--rounds N] [--warmup N] [--connections N]',
        '                               [--emails N] [--big N] [--receipts N] [--smtp-connections N] [--pg]',
        '  --only PARTS          a comma-separated list of accept, e2e, receipt (default: all three)',
        '  --duration N          accept: seconds per measured run (default 10)',
        '  --rounds N            accept: rounds of floor and formcast runs, the order turning (default 2)',
        '  --warmup N            accept: seconds of discarded warm-up before each measured run (default 2; 0 skips it)',
        '  --connections N       concurrent API clients in accept and e2e (default 50)',
        '  --emails N            e2e: emails sent over the API, and contacts of the broadcast compared (default 5000)',
        '  --big N               receipt: contacts of the broadcast the receipts are sent during (default 100000)',
        '  --receipts N          receipt: how many, one every 250 ms (default 20)',
        '  --smtp-connections N  SMTP pool size of the server (default 5, its own default)',
        '  --pg                  PostgreSQL for e2e and receipt: a fresh database on the server of --database-url or',
        '                        TEST_DATABASE_URL, dropped afterwards (the floor is SQLite only: accept is skipped)',
        '  --database-url URL    a PostgreSQL URL whose user may CREATE DATABASE (implies --pg)',
        '  --cpu-prof DIR        run formcast serve with node --cpu-prof, its profiles (one per thread) in DIR/<part>',
        '  --floor-commit MODE   accept: the floor commits its requests in groups (group, the default, as Formcast does)',
        '                        or each in a transaction of its own (each, the floor before Formcast grouped them)',
        '  --worker-process      e2e: `formcast serve` without its worker (SERVE_WORKER=false) and `formcast worker` in a',
        '                        process of its own, on the same database (docs/deployment.md), for the emails and the broadcast',
        '  --accept-floor        e2e (SQLite, implies --worker-process): the emails are accepted by the floor of accept',
        "                        (bench/emails-floor-server.ts) on the same database, and sent by Formcast's worker: the",
        '                        ratio a bare acceptance would give, a bound on what any acceptance can reach on this machine',
      ],
    },
  );
  const only = new Set<Part>();
  for (const p of (values.only ?? PARTS.join(',')).split(',').map((s) => s.trim())) {
    if (!(PARTS as readonly string[]).includes(p))
      throw new BenchError(`--only takes ${PARTS.join(', ')} (comma-separated), got "${p}"`);
    only.add(p as Part);
  }
  const pgUrl = postgresUrlOf(values);
  if (values['accept-floor'] && pgUrl) throw new BenchError('--accept-floor: the floor is SQLite only');
  const floorCommit = values['floor-commit'] ?? 'group';
  if (floorCommit !== 'group' && floorCommit !== 'each')
    throw new BenchError(`--floor-commit takes group or each, got "${floorCommit}"`);
  return {
    only,
    floorCommit,
    pgUrl: pgUrl ?? null,
    duration: positiveInt('duration', values.duration, 10),
    rounds: positiveInt('rounds', values.rounds, 2),
    warmup: values.warmup === '0' ? 0 : positiveInt('warmup', values.warmup, 2),
    connections: positiveInt('connections', values.connections, 50),
    emails: positiveInt('emails', values.emails, 5000),
    big: positiveInt('big', values.big, 100_000),
    receipts: positiveInt('receipts', values.receipts, 20),
    smtpConnections: positiveInt('smtp-connections', values['smtp-connections'], 5),
    cpuProf: values['cpu-prof'] ? path.resolve(values['cpu-prof']) : null,
    workerProcess: Boolean(values['worker-process']) || Boolean(values['accept-floor']),
    acceptFloor: Boolean(values['accept-floor']),
  };
}
type Options = ReturnType<typeof parseOptions>;

// ---------------------------------------------------------------------------------------------------
// Shared

/** The servers' environment: bench:send's (harness.ts sendingEnv), the email limit off, the /v1 limit out of reach. */
function serverEnv(dir: string, database: string, opts: Options): NodeJS.ProcessEnv {
  return {
    ...sendingEnv(dir, database, PUBLIC_URL, opts.smtpConnections),
    EMAILS_RATE_LIMIT: '0',
    RATE_LIMIT_PER_KEY: '1000000000',
  };
}

/** `node` options that write CPU profiles of the part's server into DIR/<part> when it stops (--cpu-prof). */
function profiling(opts: Options, part: Part): string[] {
  return opts.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${path.join(opts.cpuProf, part)}`] : [];
}

const nowMs = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (n: number | null, d = 1) => (n === null ? null : Math.round(n * 10 ** d) / 10 ** d);

function checkAlive(server: Server): void {
  if (!alive(server.child)) throw new BenchError(`${server.name} exited\n${server.output()}`);
}

/** Sends one email; its id. */
async function sendOne(url: string, headers: Record<string, string>, body: string, what: string): Promise<string> {
  const res = await fetch(`${url}/v1/emails`, { method: 'POST', headers, body });
  return (JSON.parse(await expectStatus(res, 202, `${what} POST /v1/emails`)) as { id: string }).id;
}

/** Creates a broadcast of bench:send's message to every contact and sends it; its id. */
async function sendBroadcast(server: Server, headers: Record<string, string>): Promise<string> {
  const created = JSON.parse(
    await expectStatus(
      await fetch(`${server.url}/v1/broadcasts`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          name: 'Bench broadcast',
          from: `Acme <news@${DOMAIN}>`,
          emailContent: { subject: NEWS_SUBJECT, html: NEWS_HTML },
        }),
      }),
      201,
      'POST /v1/broadcasts',
    ),
  ) as { id: string };
  await expectStatus(
    await fetch(`${server.url}/v1/broadcasts/${created.id}/send`, { method: 'POST', headers }),
    202,
    'POST /v1/broadcasts/{id}/send',
  );
  return created.id;
}

/** Messages per second at the sink: distinct messages over the time from the first arrival to the last. */
function sinkRate(s: SinkStats): { seconds: number; perSec: number } {
  const seconds = s.first !== null && s.last !== null ? (s.last - s.first) / 1000 : 0;
  return { seconds, perSec: seconds > 0 ? s.unique / seconds : 0 };
}

// ---------------------------------------------------------------------------------------------------
// 1. accept

type AcceptLabel = 'floor' | 'formcast';

interface AcceptTarget {
  label: AcceptLabel;
  server: Server;
  headers: Record<string, string>;
}

interface AcceptRun {
  round: number;
  target: AcceptLabel;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  cpuUsPerReq: number;
  non2xx: number;
  errors: number;
  badStatuses: Record<string, number>;
}

/**
 * The rows the floor wrote for `floorId` are Formcast's for `formcastId` (the same request), but for the ids, the
 * times, the hidden broadcast's name (it holds the id) and the delivery's unsubscribe token: a BenchError otherwise.
 */
function compareRows(formcast: { database: string; id: string }, floor: { database: string; id: string }): void {
  const masked = new Set([
    'id',
    'broadcast_id',
    'email_id',
    'name',
    'created_at',
    'updated_at',
    'materialized_at',
    'next_attempt_at',
    'unsubscribe_token',
  ]);
  const rowsOf = ({ database, id }: { database: string; id: string }) => {
    const db = new SQLite(database, { readonly: true });
    const read = (sql: string) =>
      (db.prepare(sql).all(id) as Record<string, unknown>[]).map((r) =>
        Object.fromEntries(Object.entries(r).map(([k, v]) => [k, masked.has(k) ? typeof v : v])),
      );
    try {
      return {
        emails: read('select * from emails where id = ?'),
        broadcasts: read('select * from broadcasts where id = ?'),
        deliveries: read('select * from deliveries where broadcast_id = ?'),
        attachments: read('select * from email_attachments where email_id = ?'),
      };
    } finally {
      db.close();
    }
  };
  const mine = rowsOf(formcast);
  const theirs = rowsOf(floor);
  if (mine.emails.length !== 1 || mine.broadcasts.length !== 1 || mine.deliveries.length !== 1)
    throw new BenchError(`Formcast did not write one email, broadcast and delivery: ${JSON.stringify(mine)}`);
  for (const name of Object.keys(mine) as (keyof typeof mine)[]) {
    if (JSON.stringify(mine[name]) !== JSON.stringify(theirs[name]))
      throw new BenchError(
        `the floor does not write what Formcast writes (${name}):\nformcast ${JSON.stringify(mine[name])}\nfloor    ${JSON.stringify(theirs[name])}`,
      );
  }
}

function badStatuses(...results: (autocannon.Result | undefined)[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of results)
    for (const [code, stat] of Object.entries(r?.statusCodeStats ?? {})) {
      if (code.startsWith('2') || !stat.count) continue;
      out[code] = (out[code] ?? 0) + stat.count;
    }
  return out;
}

async function acceptCannon(target: AcceptTarget, opts: Options, duration: number): Promise<autocannon.Result> {
  checkAlive(target.server);
  return autocannon({
    url: `${target.server.url}/v1/emails`,
    method: 'POST',
    headers: target.headers,
    // The same message each time: the server's work does not depend on the address, and the client does no work per
    // request (it shares the machine's two cores with the server).
    body: emailBody('ada@example.test', 1),
    connections: opts.connections,
    pipelining: 1,
    duration,
  });
}

async function measureAccept(target: AcceptTarget, roundNo: number, opts: Options): Promise<AcceptRun> {
  process.stderr.write(
    `accept round ${roundNo}: ${target.label.padEnd(8)} ${opts.warmup ? `warm-up ${opts.warmup} s, ` : ''}measuring ${opts.duration} s ...`,
  );
  const warm = opts.warmup ? await acceptCannon(target, opts, opts.warmup) : undefined;
  const cpu0 = cpuSeconds(target.server.child.pid!);
  const r = await acceptCannon(target, opts, opts.duration);
  const cpu = cpuSeconds(target.server.child.pid!) - cpu0;
  // autocannon does not wait for the requests in flight when its time is up: the server answers them (and commits
  // their emails) after. Let it finish before the other server starts writing to the same file.
  await sleep(SETTLE_MS);
  const run: AcceptRun = {
    round: roundNo,
    target: target.label,
    reqPerSec: r.requests.mean,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    requests: r.requests.total,
    cpuUsPerReq: Math.round((cpu * 1e6) / Math.max(r.requests.total, 1)),
    non2xx: r.non2xx + (warm?.non2xx ?? 0),
    errors: r.errors + (warm?.errors ?? 0),
    badStatuses: badStatuses(warm, r),
  };
  process.stderr.write(` ${fmt(run.reqPerSec, 0)} req/s, p99 ${run.p99Ms} ms, server CPU ${run.cpuUsPerReq} µs/req\n`);
  if (run.non2xx || run.errors)
    process.stderr.write(
      `  ${run.non2xx} non-2xx (${JSON.stringify(run.badStatuses)}), ${run.errors} errors; ${target.server.name} said:\n${target.server.output()}\n`,
    );
  return run;
}

function summarizeAccept(runs: AcceptRun[], label: AcceptLabel) {
  const mine = runs.filter((r) => r.target === label);
  return {
    reqPerSec: mine.map((r) => round(r.reqPerSec)!),
    p99Ms: mine.map((r) => r.p99Ms),
    medianReqPerSec: round(median(mine.map((r) => r.reqPerSec)))!,
    medianP50Ms: median(mine.map((r) => r.p50Ms)),
    medianP99Ms: median(mine.map((r) => r.p99Ms)),
    medianCpuUsPerReq: median(mine.map((r) => r.cpuUsPerReq)),
    requests: mine.reduce((a, r) => a + r.requests, 0),
    non2xx: mine.reduce((a, r) => a + r.non2xx, 0),
    errors: mine.reduce((a, r) => a + r.errors, 0),
    badStatuses: mine.reduce<Record<string, number>>((acc, r) => {
      for (const [code, n] of Object.entries(r.badStatuses)) acc[code] = (acc[code] ?? 0) + n;
      return acc;
    }, {}),
  };
}

async function runAccept(opts: Options) {
  const dir = makeTempDir('emails-accept');
  const database = path.join(dir, 'formcast.db');
  const env = { ...serverEnv(dir, database, opts), SERVE_WORKER: 'false' };
  process.stderr.write(`accept: workspace, verified domain ${DOMAIN}, formcast (worker off) and the floor ...\n`);
  const { apiKey } = await createSendingWorkspace(env, DOMAIN);
  // The floor writes into a copy of the database (the same workspace, key and domain, the same indexes), as
  // bench:track's does: on the same file, Formcast's checkpoint thread (src/db/checkpointer.ts), idle during the
  // floor's runs, checkpointed the floor's writes in Formcast's process, so the floor did not pay for its own; and
  // whoever ran second found the file larger.
  const floorDatabase = path.join(dir, 'floor', 'formcast.db');
  fs.mkdirSync(path.dirname(floorDatabase));
  const source = new SQLite(database, { readonly: true });
  await source.backup(floorDatabase);
  source.close();
  const formcast = await startServer('formcast serve', [...profiling(opts, 'accept'), 'bin/formcast', 'serve'], env);
  const floor = await startServer('emails floor server', ['--import', 'tsx', 'bench/emails-floor-server.ts'], {
    ...process.env,
    PORT: '0',
    HOST,
    DATABASE_URL: floorDatabase,
    FLOOR_COMMIT: opts.floorCommit,
  });
  try {
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const body = emailBody('ada@example.test', 1);
    compareRows(
      { database, id: await sendOne(formcast.url, headers, body, 'formcast') },
      { database: floorDatabase, id: await sendOne(floor.url, headers, body, 'floor') },
    );
    const targets: AcceptTarget[] = [
      { label: 'floor', server: floor, headers },
      { label: 'formcast', server: formcast, headers },
    ];
    // The order turns each round: the two files share the disk and its cache.
    const runs: AcceptRun[] = [];
    for (let r = 1; r <= opts.rounds; r++)
      for (let i = 0; i < targets.length; i++)
        runs.push(await measureAccept(targets[(i + r - 1) % targets.length]!, r, opts));
    const f = summarizeAccept(runs, 'floor');
    const t = summarizeAccept(runs, 'formcast');
    const ratio = f.medianReqPerSec > 0 ? t.medianReqPerSec / f.medianReqPerSec : 0;
    const p99Ratio = f.medianP99Ms > 0 ? t.medianP99Ms / f.medianP99Ms : 0;
    const cpuRatio = f.medianCpuUsPerReq > 0 ? t.medianCpuUsPerReq / f.medianCpuUsPerReq : 0;
    return {
      runs,
      floorCommit: opts.floorCommit,
      floor: f,
      formcast: t,
      ratio,
      p99Ratio,
      cpuRatio,
      ok: f.non2xx + f.errors + t.non2xx + t.errors === 0,
      loadAvg1m: os.loadavg()[0]!,
    };
  } finally {
    await Promise.all([formcast.child, floor.child].map(stopChild));
  }
}
type AcceptResult = Awaited<ReturnType<typeof runAccept>>;

// ---------------------------------------------------------------------------------------------------
// 2. e2e

interface SinkRun {
  messages: number;
  signed: number;
  duplicates: number;
  missing: number;
  seconds: number;
  perSec: number;
}

function sinkRun(s: SinkStats, expected: number): SinkRun {
  return {
    messages: s.unique,
    signed: s.signed,
    duplicates: s.count - s.unique,
    missing: Math.max(0, expected - s.unique),
    ...sinkRate(s),
  };
}

interface CpuSnapshot {
  serve: number;
  worker: number;
  sink: number;
  bench: number;
  machine: number;
  at: number;
}

/** CPU milliseconds a message by part (`workerMs` with --worker-process only), and the busy cores meanwhile. */
interface CpuPerMessage {
  formcastMs: number;
  workerMs: number | null;
  sinkMs: number;
  clientsMs: number;
  machineMs: number;
  cores: number;
}

/** Until the API shows no email QUEUED (every delivery recorded as sent), at most 60 s; false if some still are. */
async function noneQueued(server: Server, headers: Record<string, string>): Promise<boolean> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const page = JSON.parse(
      await expectStatus(
        await fetch(`${server.url}/v1/emails?status=QUEUED&limit=1`, { headers }),
        200,
        'GET /v1/emails?status=QUEUED',
      ),
    ) as { data: unknown[] };
    if (!page.data.length) return true;
    if (Date.now() > deadline) return false;
    await sleep(250);
  }
}

async function runE2e(opts: Options, sink: Sink) {
  const n = opts.emails;
  const dir = makeTempDir('emails-e2e');
  const database = opts.pgUrl ? await freshPostgresDatabase(opts.pgUrl, 'emails_e2e') : path.join(dir, 'formcast.db');
  const env = { ...serverEnv(dir, database, opts), SMTP_URL: `smtp://${HOST}:${sink.port}` };
  process.stderr.write(
    `e2e: workspace, verified domain ${DOMAIN}, ${fmt(n)} contacts (${opts.pgUrl ? 'PostgreSQL' : 'SQLite'}), formcast (worker on) ...\n`,
  );
  const { workspaceId, apiKey } = await createSendingWorkspace(env, DOMAIN);
  await seedContacts(database, workspaceId, n);
  // --worker-process: the API in one process, the worker in another (each its own main thread).
  const server = await startServer(
    'formcast serve',
    [...profiling(opts, 'e2e'), 'bin/formcast', 'serve'],
    opts.workerProcess ? { ...env, SERVE_WORKER: 'false' } : env,
  );
  // On SQLite `formcast worker` runs only beside a server without its own (both SERVE_WORKER=false).
  const worker = opts.workerProcess
    ? (
        await startChild(
          'formcast worker',
          [...profiling(opts, 'e2e'), 'bin/formcast', 'worker'],
          { ...env, SERVE_WORKER: 'false' },
          /worker started/,
        )
      ).child
    : null;
  // --accept-floor: the floor accepts the emails, into the same SQLite file, with the same key (its rows are Formcast's:
  // the accept part checks them column for column); serve answers the polling and the broadcast.
  const floor = opts.acceptFloor
    ? await startServer('emails floor server', ['--import', 'tsx', 'bench/emails-floor-server.ts'], {
        ...process.env,
        DATABASE_URL: database,
        FLOOR_COMMIT: opts.floorCommit,
        PORT: '0',
        HOST,
      })
    : null;
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  // The CPU seconds of each part of the machine's load, to read per message between two snapshots: Formcast's
  // processes, the SMTP sink's, this process's (the autocannon clients and the polling) and the machine's in all.
  const snapshot = () => {
    const own = process.cpuUsage();
    return {
      // The acceptor's: serve's, and with --accept-floor the floor's too.
      serve: cpuSeconds(server.child.pid!) + (floor ? cpuSeconds(floor.child.pid!) : 0),
      worker: worker ? cpuSeconds(worker.pid!) : 0,
      sink: cpuSeconds(sink.pid),
      bench: (own.user + own.system) / 1e6,
      machine: machineCpuSeconds(),
      at: nowMs(),
    };
  };
  const perMessage = (a: CpuSnapshot, b: CpuSnapshot): CpuPerMessage => {
    const ms = (k: keyof CpuSnapshot) => ((b[k] - a[k]) * 1000) / n;
    return {
      formcastMs: ms('serve') + ms('worker'),
      workerMs: worker ? ms('worker') : null,
      sinkMs: ms('sink'),
      clientsMs: ms('bench'),
      machineMs: ms('machine'),
      /** The machine's busy cores meanwhile (2 on two cores: the CPU is the limit). */
      cores: (b.machine - a.machine) / ((b.at - a.at) / 1000),
    };
  };
  try {
    // The emails: N requests at --connections clients, each to its own address.
    await sink.reset();
    process.stderr.write(
      `e2e: ${fmt(n)} emails over the API, ${opts.connections} connections, each to its own address ...\n`,
    );
    let next = 0;
    const cpuEmails0 = snapshot();
    const start = nowMs();
    const { result, seconds, statuses } = await cannonAmount({
      url: (floor ?? server).url,
      headers,
      connections: opts.connections,
      pipelining: 1,
      amount: n,
      requests: [
        {
          method: 'POST',
          path: '/v1/emails',
          setupRequest: (req) => {
            const i = next++;
            return { ...req, body: emailBody(`rcpt${String(i).padStart(7, '0')}@example.test`, i) };
          },
        },
      ],
    });
    // What had arrived when the last email was accepted: the rest is the pipeline's own pace, the API quiet.
    const acceptedAt = nowMs();
    const atAccepted = await sink.stats();
    const accepted = statuses.get(202) ?? 0;
    if (accepted !== n || result.errors)
      throw new BenchError(
        `e2e: ${accepted} of ${n} emails accepted (statuses ${JSON.stringify(Object.fromEntries(statuses))}, ${result.errors} connection errors)`,
      );
    const emailsStats = await waitForSink(sink, n, 'emails', () => checkAlive(server));
    const emailsLatest = await sink.stats();
    const recorded = await noneQueued(server, headers);
    const cpuEmails = perMessage(cpuEmails0, snapshot());
    const emails = {
      ...sinkRun(emailsLatest.count > emailsStats.count ? emailsLatest : emailsStats, n),
      acceptSeconds: seconds,
      acceptPerSec: n / seconds,
      acceptP99Ms: result.latency.p99,
      /** From the first request to the last message at the sink. */
      totalSeconds: (emailsStats.last! - start) / 1000,
      /** Messages that arrived after the last email was accepted, and their rate (from then to the last arrival). */
      afterAccept: emailsStats.unique - atAccepted.unique,
      afterAcceptPerSec:
        emailsStats.last! > acceptedAt
          ? (emailsStats.unique - atAccepted.unique) / ((emailsStats.last! - acceptedAt) / 1000)
          : null,
      allRecorded: recorded,
      /** The CPU a message, from the first request until none is QUEUED (acceptance and sending), by part. */
      cpu: cpuEmails,
    };

    // The broadcast: the same server and sink, N contacts.
    await sink.reset();
    process.stderr.write(`e2e: one broadcast to ${fmt(n)} contacts ...\n`);
    const cpuBroadcast0 = snapshot();
    const sentAt = nowMs();
    const broadcastId = await sendBroadcast(server, headers);
    const bStats = await waitForSink(sink, n, 'broadcast', () => checkAlive(server));
    let status = 'SENDING';
    const deadline = Date.now() + 60_000;
    while (status === 'SENDING' && Date.now() < deadline) {
      status = (
        JSON.parse(
          await expectStatus(
            await fetch(`${server.url}/v1/broadcasts/${broadcastId}`, { headers }),
            200,
            'GET /v1/broadcasts/{id}',
          ),
        ) as { status: string }
      ).status;
      if (status === 'SENDING') await sleep(250);
    }
    const cpuBroadcast = perMessage(cpuBroadcast0, snapshot());
    const bLatest = await sink.stats();
    const broadcast = {
      ...sinkRun(bLatest.count > bStats.count ? bLatest : bStats, n),
      totalSeconds: (bStats.last! - sentAt) / 1000,
      status,
      /** The CPU a message, from the send request until the broadcast is SENT, by part. */
      cpu: cpuBroadcast,
    };
    const ratio = broadcast.perSec > 0 ? emails.perSec / broadcast.perSec : 0;
    const complete = (r: SinkRun) => r.missing === 0 && r.duplicates === 0 && r.signed === r.messages;
    return {
      emails,
      broadcast,
      ratio,
      ok: complete(emails) && complete(broadcast) && recorded && status === 'SENT',
      loadAvg1m: os.loadavg()[0]!,
      workerProcess: opts.workerProcess,
    };
  } finally {
    if (floor) await stopChild(floor.child);
    if (worker) await stopChild(worker);
    await stopChild(server.child);
  }
}
type E2eResult = Awaited<ReturnType<typeof runE2e>>;

// ---------------------------------------------------------------------------------------------------
// 3. receipt

interface Receipt {
  n: number;
  /** From the request to the answer (202). */
  answerMs: number;
  /** From the request to the arrival at the sink; null: not within RECEIPT_TIMEOUT_MS. */
  latencyMs: number | null;
}

async function runReceipt(opts: Options, sink: Sink) {
  const dir = makeTempDir('emails-receipt');
  const database = opts.pgUrl
    ? await freshPostgresDatabase(opts.pgUrl, 'emails_receipt')
    : path.join(dir, 'formcast.db');
  const env = { ...serverEnv(dir, database, opts), SMTP_URL: `smtp://${HOST}:${sink.port}` };
  process.stderr.write(
    `receipt: workspace, verified domain ${DOMAIN}, ${fmt(opts.big)} contacts (${opts.pgUrl ? 'PostgreSQL' : 'SQLite'}) ...\n`,
  );
  const { workspaceId, apiKey } = await createSendingWorkspace(env, DOMAIN);
  const t = Date.now();
  await seedContacts(database, workspaceId, opts.big);
  process.stderr.write(`  contacts inserted in ${((Date.now() - t) / 1000).toFixed(1)} s\n`);
  const server = await startServer('formcast serve', [...profiling(opts, 'receipt'), 'bin/formcast', 'serve'], env);
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  try {
    await sink.reset();
    process.stderr.write(`receipt: a broadcast to ${fmt(opts.big)} contacts ...\n`);
    const broadcastAt = nowMs();
    const broadcastId = await sendBroadcast(server, headers);
    // Until RECEIPTS_AFTER of its messages arrived.
    let s = await sink.stats();
    while (s.count < Math.min(RECEIPTS_AFTER, opts.big)) {
      checkAlive(server);
      if (nowMs() - broadcastAt > 120_000)
        throw new BenchError(`receipt: only ${s.count} broadcast messages at the sink after 120 s`);
      await sleep(50);
      s = await sink.stats();
    }
    const atStart = s;
    process.stderr.write(
      `receipt: ${fmt(s.count)} broadcast messages at the sink after ${fmt((nowMs() - broadcastAt) / 1000, 1)} s; ${opts.receipts} receipts, one every ${RECEIPT_EVERY_MS} ms ...\n`,
    );
    const sent: Promise<{ n: number; at: number; answerMs: number }>[] = [];
    const first = nowMs();
    for (let i = 0; i < opts.receipts; i++) {
      const wait = first + i * RECEIPT_EVERY_MS - nowMs();
      if (wait > 0) await sleep(wait);
      const at = nowMs();
      sent.push(
        sendOne(
          server.url,
          headers,
          emailBody(`receipt${i}@example.test`, i, { headers: { 'X-Bench-Mark': `receipt-${i}` } }),
          `receipt ${i}`,
        ).then(() => ({ n: i, at, answerMs: nowMs() - at })),
      );
    }
    const answered = await Promise.all(sent);
    const lastSent = Math.max(...answered.map((a) => a.at));
    let marks = await sink.marks();
    while (answered.some((a) => marks[`receipt-${a.n}`] === undefined) && nowMs() - lastSent < RECEIPT_TIMEOUT_MS) {
      checkAlive(server);
      await sleep(50);
      marks = await sink.marks();
    }
    const atEnd = await sink.stats();
    const receipts: Receipt[] = answered.map((a) => {
      const arrived = marks[`receipt-${a.n}`];
      return { n: a.n, answerMs: a.answerMs, latencyMs: arrived === undefined ? null : arrived - a.at };
    });
    // The broadcast's own pace meanwhile (the receipts are among the messages counted: a handful).
    const during =
      atEnd.last !== null && atStart.last !== null && atEnd.last > atStart.last
        ? (atEnd.count - atStart.count) / ((atEnd.last - atStart.last) / 1000)
        : 0;
    process.stderr.write(`receipt: canceling the broadcast ...\n`);
    // On PostgreSQL the cancel has answered 500 once: a deadlock with the pipeline's batch of outcomes (it updates the
    // broadcast's deliveries in another order). Tried again up to twice, and said in the report: the figures above are
    // measured by then.
    const cancelFailures: string[] = [];
    let canceled: { status: string } | null = null;
    while (!canceled) {
      const res = await fetch(`${server.url}/v1/broadcasts/${broadcastId}/cancel`, { method: 'POST', headers });
      const text = await res.text();
      if (res.status === 200) canceled = JSON.parse(text) as { status: string };
      else {
        const deadlock = /deadlock detected/.test(server.output());
        cancelFailures.push(`${res.status}${deadlock ? ' (deadlock detected, in the server log)' : ''}`);
        if (cancelFailures.length === 3)
          throw new BenchError(
            `POST /v1/broadcasts/{id}/cancel: expected 200, got ${res.status}: ${text.slice(0, 500)}\n${server.output()}`,
          );
        await sleep(250);
      }
    }
    const latencies = receipts.map((r) => r.latencyMs);
    const arrived = latencies.filter((l): l is number => l !== null);
    return {
      receipts,
      broadcastAtStart: atStart.count,
      broadcastAtEnd: atEnd.count,
      broadcastPerSecDuring: during,
      maxMs: arrived.length === receipts.length ? Math.max(...arrived) : null,
      medianMs: arrived.length ? median(arrived) : null,
      maxAnswerMs: Math.max(...receipts.map((r) => r.answerMs)),
      canceledStatus: canceled.status,
      cancelFailures,
      ok: arrived.length === receipts.length,
      loadAvg1m: os.loadavg()[0]!,
    };
  } finally {
    await stopChild(server.child);
  }
}
type ReceiptResult = Awaited<ReturnType<typeof runReceipt>>;

// ---------------------------------------------------------------------------------------------------
// Report

function report(
  opts: Options,
  accept: AcceptResult | null,
  e2e: E2eResult | null,
  receipt: ReceiptResult | null,
): boolean {
  const out: string[] = [''];
  const pass = (b: boolean) => (b ? 'PASS' : 'MISS');
  const db = opts.pgUrl ? 'PostgreSQL' : 'SQLite';
  out.push(
    `bench:emails; node ${process.version}, ${os.cpus().length} CPU(s), load average ${os.loadavg()[0]!.toFixed(1)} at the end`,
  );
  if (accept) {
    const rows = accept.runs.map((r) => [
      String(r.round),
      r.target,
      fmt(r.reqPerSec, 1),
      String(r.p50Ms),
      String(r.p99Ms),
      String(r.cpuUsPerReq),
      String(r.requests),
      String(r.non2xx),
      String(r.errors),
    ]);
    const medians = (['floor', 'formcast'] as const).map((label) => {
      const x = accept[label];
      return [
        'median',
        label,
        fmt(x.medianReqPerSec, 1),
        String(x.medianP50Ms),
        String(x.medianP99Ms),
        String(x.medianCpuUsPerReq),
        String(x.requests),
        String(x.non2xx),
        String(x.errors),
      ];
    });
    out.push(
      '',
      `1. accept: POST /v1/emails (one recipient, html + text) on formcast serve with its worker off (SERVE_WORKER=false),`,
      `   vs the floor (bench/emails-floor-server.ts: the same rows, prepared statements, ${accept.floorCommit === 'group' ? 'commits in groups as Formcast' : 'a transaction per request'}) on a copy of the SQLite file`,
      `   ${opts.connections} connections, ${opts.duration} s per run after ${opts.warmup} s warm-up, ${opts.rounds} round(s), in turn`,
      '',
      ...table(
        ['round', 'target', 'req/s (mean)', 'p50 ms', 'p99 ms', 'CPU µs/req', 'requests', 'non-2xx', 'errors'],
        [rows, medians],
        2,
      ).map((l) => `   ${l}`),
      '',
      `   ratio formcast/floor (median req/s):  ${accept.ratio.toFixed(3)}x   goal >= ${ACCEPT_RATIO_GOAL}x   ${pass(accept.ratio >= ACCEPT_RATIO_GOAL)}`,
      `   p99 formcast/floor (medians):         ${accept.p99Ratio.toFixed(3)}x (${accept.formcast.medianP99Ms} ms / ${accept.floor.medianP99Ms} ms)   goal <= ${P99_RATIO_GOAL}x   ${pass(accept.p99Ratio <= P99_RATIO_GOAL)}`,
      `   CPU per request formcast/floor:       ${accept.cpuRatio.toFixed(3)}x (${accept.formcast.medianCpuUsPerReq} µs / ${accept.floor.medianCpuUsPerReq} µs, medians; reference: steadier than the rates on a loaded machine)`,
      `   non-2xx responses / errors:           ${accept.floor.non2xx + accept.formcast.non2xx} / ${accept.floor.errors + accept.formcast.errors}   ${accept.ok ? 'ok' : `FAILED (must be 0): floor ${JSON.stringify(accept.floor.badStatuses)}, formcast ${JSON.stringify(accept.formcast.badStatuses)}`}`,
    );
  } else if (opts.only.has('accept')) {
    out.push('', '1. accept: skipped (--pg: the floor is SQLite only)');
  }
  if (e2e) {
    const row = (label: string, r: SinkRun & { totalSeconds: number }) => [
      label,
      fmt(r.messages),
      fmt(r.signed),
      fmt(r.duplicates),
      fmt(r.missing),
      fmt(r.seconds, 1),
      fmt(r.perSec, 0),
      fmt(r.totalSeconds, 1),
    ];
    out.push(
      '',
      `2. e2e: ${fmt(opts.emails)} emails over the API (${opts.connections} connections, each to its own address) vs one broadcast to ${fmt(opts.emails)} contacts${opts.workerProcess ? ' (formcast serve without its worker, and formcast worker in a process of its own)' : ''};`,
      ...(opts.acceptFloor
        ? [
            "   --accept-floor: the emails accepted by the floor (bench/emails-floor-server.ts, the same rows), sent by Formcast's worker",
          ]
        : []),
      `   formcast serve (${opts.workerProcess ? 'its worker in a process of its own' : 'worker in-process'}, ${db}, SMTP pool ${opts.smtpConnections}), the same server and SMTP sink`,
      '',
      ...table(
        ['run', 'messages', 'signed', 'twice', 'missing', 'sink s', 'msg/s at sink', 'first request to last msg s'],
        [[row('emails', e2e.emails), row('broadcast', e2e.broadcast)]],
        1,
      ).map((l) => `   ${l}`),
      '',
      `   emails accepted:                      ${fmt(e2e.emails.acceptPerSec, 0)}/s over ${fmt(e2e.emails.acceptSeconds, 1)} s, p99 ${e2e.emails.acceptP99Ms} ms (the worker sending meanwhile)`,
      `   emails sent after the last accept:    ${fmt(e2e.emails.afterAccept)} at ${fmt(e2e.emails.afterAcceptPerSec, 0)} msg/s (the API quiet)`,
      `   ratio emails/broadcast (msg/s):       ${e2e.ratio.toFixed(3)}x   goal >= ${E2E_RATIO_GOAL}x   ${pass(e2e.ratio >= E2E_RATIO_GOAL)}`,
      `   formcast's CPU a message:             emails ${fmt(e2e.emails.cpu.formcastMs, 3)} ms (accepted and sent), broadcast ${fmt(e2e.broadcast.cpu.formcastMs, 3)} ms: ${(e2e.emails.cpu.formcastMs / e2e.broadcast.cpu.formcastMs).toFixed(3)}x (a reading, not a goal: the emails run first, on a fresh server)`,
      ...(e2e.emails.cpu.workerMs !== null && e2e.broadcast.cpu.workerMs !== null
        ? [
            `   of it formcast worker's:              emails ${fmt(e2e.emails.cpu.workerMs, 3)} ms, broadcast ${fmt(e2e.broadcast.cpu.workerMs, 3)} ms (the rest is formcast serve's)`,
          ]
        : []),
      `   the sink's, the clients':             emails ${fmt(e2e.emails.cpu.sinkMs, 3)} and ${fmt(e2e.emails.cpu.clientsMs, 3)} ms, broadcast ${fmt(e2e.broadcast.cpu.sinkMs, 3)} and ${fmt(e2e.broadcast.cpu.clientsMs, 3)} ms (this process: autocannon and the polling)`,
      `   the machine's CPU a message:          emails ${fmt(e2e.emails.cpu.machineMs, 3)} ms (${fmt(e2e.emails.cpu.cores, 2)} cores busy), broadcast ${fmt(e2e.broadcast.cpu.machineMs, 3)} ms (${fmt(e2e.broadcast.cpu.cores, 2)} cores): ${(e2e.broadcast.cpu.machineMs / e2e.emails.cpu.machineMs).toFixed(3)}x inverted (what the ratio reads when the cores are the limit)`,
      `   all arrived once, signed; recorded:   ${e2e.ok ? 'ok' : `FAILED (emails none QUEUED: ${e2e.emails.allRecorded}, broadcast ${e2e.broadcast.status})`}`,
    );
  }
  if (receipt) {
    const lat = receipt.receipts.map((r) => (r.latencyMs === null ? 'lost' : fmt(r.latencyMs, 0)));
    out.push(
      '',
      `3. receipt: ${opts.receipts} emails, one every ${RECEIPT_EVERY_MS} ms, during a broadcast to ${fmt(opts.big)} contacts (${db}), from its ${fmt(RECEIPTS_AFTER)}th message`,
      `   latency request → SMTP sink (ms): ${lat.join(', ')}`,
      `   median ${fmt(receipt.medianMs, 0)} ms; API answer at most ${fmt(receipt.maxAnswerMs, 0)} ms; the broadcast meanwhile ${fmt(receipt.broadcastPerSecDuring, 0)} msg/s (${fmt(receipt.broadcastAtStart)} → ${fmt(receipt.broadcastAtEnd)} at the sink), then ${receipt.canceledStatus}${receipt.cancelFailures.length ? ` (the cancel answered ${receipt.cancelFailures.join(', ')} first)` : ''}`,
      `   slowest receipt:                      ${receipt.maxMs === null ? 'lost' : `${fmt(receipt.maxMs, 0)} ms`}   goal <= ${RECEIPT_GOAL_MS} ms   ${pass(receipt.maxMs !== null && receipt.maxMs <= RECEIPT_GOAL_MS)}`,
      `   every receipt arrived:                ${receipt.ok ? 'ok' : `FAILED (not within ${RECEIPT_TIMEOUT_MS / 1000} s)`}`,
    );
  }
  out.push('');
  process.stdout.write(out.join('\n'));
  const ok = (accept?.ok ?? true) && (e2e?.ok ?? true) && (receipt?.ok ?? true);
  const r3 = (n: number) => round(n, 3);
  const cpuJson = (c: CpuPerMessage) =>
    Object.fromEntries(Object.entries(c).map(([k, v]) => [k, v === null ? null : round(v, 3)]));
  const sinkJson = (r: SinkRun) => ({ ...r, seconds: round(r.seconds, 2), perSec: round(r.perSec) });
  process.stdout.write(
    `${JSON.stringify({
      bench: 'emails',
      node: process.version,
      cpus: os.cpus().length,
      database: opts.pgUrl ? 'postgres' : 'sqlite',
      connections: opts.connections,
      smtpConnections: opts.smtpConnections,
      accept: accept && {
        durationSec: opts.duration,
        warmupSec: opts.warmup,
        rounds: opts.rounds,
        floorCommit: accept.floorCommit,
        floor: accept.floor,
        formcast: accept.formcast,
        ratio: r3(accept.ratio),
        p99Ratio: r3(accept.p99Ratio),
        cpuRatio: r3(accept.cpuRatio),
        loadAvg1m: round(accept.loadAvg1m, 2),
      },
      e2e: e2e && {
        emailsCount: opts.emails,
        workerProcess: opts.workerProcess,
        acceptFloor: opts.acceptFloor,
        emails: {
          ...sinkJson(e2e.emails),
          acceptPerSec: round(e2e.emails.acceptPerSec),
          acceptP99Ms: e2e.emails.acceptP99Ms,
          afterAccept: e2e.emails.afterAccept,
          afterAcceptPerSec: round(e2e.emails.afterAcceptPerSec),
          totalSeconds: round(e2e.emails.totalSeconds, 2),
          cpu: cpuJson(e2e.emails.cpu),
        },
        broadcast: {
          ...sinkJson(e2e.broadcast),
          totalSeconds: round(e2e.broadcast.totalSeconds, 2),
          cpu: cpuJson(e2e.broadcast.cpu),
        },
        cpuRatio: r3(e2e.emails.cpu.formcastMs / e2e.broadcast.cpu.formcastMs),
        machineCpuRatio: r3(e2e.emails.cpu.machineMs / e2e.broadcast.cpu.machineMs),
        ratio: r3(e2e.ratio),
        loadAvg1m: round(e2e.loadAvg1m, 2),
      },
      receipt: receipt && {
        big: opts.big,
        latenciesMs: receipt.receipts.map((r) => round(r.latencyMs, 0)),
        answerMs: receipt.receipts.map((r) => round(r.answerMs, 0)),
        maxMs: round(receipt.maxMs, 0),
        medianMs: round(receipt.medianMs, 0),
        broadcastPerSecDuring: round(receipt.broadcastPerSecDuring),
        cancelFailures: receipt.cancelFailures,
        loadAvg1m: round(receipt.loadAvg1m, 2),
      },
      goals: {
        acceptRatio: accept && {
          min: ACCEPT_RATIO_GOAL,
          value: r3(accept.ratio),
          pass: accept.ratio >= ACCEPT_RATIO_GOAL,
        },
        acceptP99Ratio: accept && {
          max: P99_RATIO_GOAL,
          value: r3(accept.p99Ratio),
          pass: accept.p99Ratio <= P99_RATIO_GOAL,
        },
        e2eRatio: e2e && { min: E2E_RATIO_GOAL, value: r3(e2e.ratio), pass: e2e.ratio >= E2E_RATIO_GOAL },
        receiptMaxMs: receipt && {
          max: RECEIPT_GOAL_MS,
          value: round(receipt.maxMs, 0),
          pass: receipt.maxMs !== null && receipt.maxMs <= RECEIPT_GOAL_MS,
        },
      },
      ok,
    })}\n`,
  );
  return ok;
}

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const opts = parseOptions();
  const accept = opts.only.has('accept') && !opts.pgUrl ? await runAccept(opts) : null;
  let e2e: E2eResult | null = null;
  let receipt: ReceiptResult | null = null;
  if (opts.only.has('e2e') || opts.only.has('receipt')) {
    const sink = await startSmtpSink();
    if (opts.only.has('e2e')) e2e = await runE2e(opts, sink);
    if (opts.only.has('receipt')) receipt = await runReceipt(opts, sink);
  }
  return report(opts, accept, e2e, receipt) ? 0 : 1;
}

await runBench('bench:emails', main);
