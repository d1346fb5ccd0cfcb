/**
 * Public submissions benchmark (`npm run bench:submit`): the spike after a form goes viral. `POST /f/{slug}` (the
 * hosted form's public submit) on the real Formcast server, under 50 connections, against a bare Fastify route
 * inserting one row into SQLite (bench/submit-baseline-server.ts).
 *
 * Every request is a new visitor: its own address (X-Forwarded-For, believed with TRUST_PROXY=loopback, so that the
 * per-IP limit, SUBMISSION_RATE_LIMIT, stays on at its default and is exercised as it would be) and its own email.
 * The form is a SIGN_UP form with double opt-in (email and first name): each submission creates a PENDING contact,
 * its `contact.created` event, a confirmation (the email is sent by the server's worker to an SMTP sink, as in
 * production), the submission, the form's counter and `form.submitted`. The request is what a browser sends from the
 * hosted page (form-encoded, Accept: text/html, Accept-Encoding: gzip, deflate, br; the answer is the success
 * page), or with --embed what the embed script sends (JSON; the answer is JSON).
 *
 * Both servers run as child processes on loopback, each on a fresh SQLite file; autocannon (in this process) sends
 * --requests requests to each in turn (baseline, formcast, the order turning each round) for --rounds rounds, after
 * --warmup requests whose figures are discarded. req/s is requests over the wall time to the last answer.
 *
 * Goals (issue 13): formcast req/s >= 0.5x the baseline's, formcast p99 < 20 ms (medians of the rounds), and every
 * accepted submission stored: after the runs, the rows in each database equal the 2xx/3xx answers counted (warm-ups
 * and setup requests included). PASS/MISS does not change the exit code; it is 1 only when something failed to run
 * (a child, a setup request, an answer other than 2xx/3xx, a connection error).
 *
 * Formcast answers a spike's submissions once they are stored as they came (SUBMISSION_INTAKE=auto) and makes them
 * into contacts moments later (submissions/CONTEXT.md): after each of its runs (warm-ups too) the benchmark waits until
 * the intake is empty, so that nothing of one run is left to slow the next, and reports that wait ("drain") and the CPU
 * per request with it.
 *
 * With --pg (issue 36, goal 6: what a sign-up costs each tier, docs/scaling.md): Formcast alone on a fresh PostgreSQL
 * database (the baseline is SQLite's, so it is not run), and besides the server's CPU per sign-up that of every
 * `postgres` process of the machine, from the first request of a run until its intake was drained.
 *
 * Options: --requests N (default 20000), --warmup N (default 3000), --rounds N (default 2), --connections N
 * (default 50), --embed, --single-opt-in, --intake auto|always|off, --cpu-prof DIR, --pg, --database-url URL, --help.
 */
import os from 'node:os';
import path from 'node:path';
import type autocannon from 'autocannon';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import {
  BenchError,
  HOST,
  alive,
  cannonAmount,
  cpuSeconds,
  expectStatus,
  fmt,
  freshPostgresDatabase,
  makeTempDir,
  median,
  memoryOf,
  parseCommandLine,
  positiveInt,
  postgresCpuSeconds,
  run,
  runBench,
  startFormcast,
  startServer,
  startSmtpSink,
  stopChild,
  table,
  type Server,
  type Sink,
  postgresUrlOf,
} from './harness.js';

type Label = 'baseline' | 'formcast';

const RATIO_GOAL = 0.5;
const P99_GOAL_MS = 20;
/** Issue 36, goal 5: formcast p99 at most this many times the baseline's (medians of the rounds). */
const P99_OVER_FLOOR_GOAL = 1.25;
const SLUG = 'viral';
const DOMAIN = 'acme.test';

function parseOptions() {
  const values = parseCommandLine(
    {
      requests: { type: 'string' },
      warmup: { type: 'string' },
      rounds: { type: 'string' },
      connections: { type: 'string' },
      embed: { type: 'boolean' },
      'single-opt-in': { type: 'boolean' },
      intake: { type: 'string' },
      'cpu-prof': { type: 'string' },
      pg: { type: 'boolean' },
      'database-url': { type: 'string' },
    },
    {
      example: 'npm run bench:submit -- --requests 10000',
      usage: [
        'usage: npm run bench:submit -- [--requests N] [--warmup N] [--rounds N] [--connections N] [--embed] [--single-opt-in] [--intake MODE] [--cpu-prof DIR]',
        '  --requests N      measured requests per run (default 20000)',
        '  --warmup N        discarded requests before each measured run (default 3000; 0 skips it)',
        '  --rounds N        rounds of a baseline and a formcast run, the order turning each round (default 2)',
        '  --connections N   concurrent connections (default 50)',
        "  --embed           submit as the embed script does (JSON in, JSON out) instead of the hosted page's form post",
        '  --single-opt-in   the form without double opt-in (no confirmation, the contact SUBSCRIBED at once)',
        "  --intake MODE     formcast's SUBMISSION_INTAKE: auto (default), always, off (every sign-up written by its request)",
        '  --cpu-prof DIR    run formcast serve under node --cpu-prof, the profile written into DIR when it stops',
        '  --pg              formcast alone on a fresh PostgreSQL database (TEST_DATABASE_URL or --database-url), with the',
        "                    CPU of PostgreSQL's processes per sign-up (docs/scaling.md); the baseline is not run",
        '  --database-url URL  a PostgreSQL URL whose user may CREATE DATABASE (implies --pg)',
      ],
    },
  );
  const pgUrl = postgresUrlOf(values);
  return {
    pgUrl: pgUrl ?? null,
    requests: positiveInt('requests', values.requests, 20_000),
    warmup: values.warmup === '0' ? 0 : positiveInt('warmup', values.warmup, 3_000),
    rounds: positiveInt('rounds', values.rounds, 2),
    connections: positiveInt('connections', values.connections, 50),
    embed: values.embed ?? false,
    doubleOptIn: !(values['single-opt-in'] ?? false),
    intake: intakeMode(values.intake),
    cpuProfDir: values['cpu-prof'] ? path.resolve(values['cpu-prof']) : null,
  };
}
type Options = ReturnType<typeof parseOptions>;

function intakeMode(raw: string | undefined): 'auto' | 'always' | 'off' {
  if (raw === undefined) return 'auto';
  if (raw === 'auto' || raw === 'always' || raw === 'off') return raw;
  throw new BenchError(`--intake must be auto, always or off, got "${raw}"`);
}

// ---------------------------------------------------------------------------------------------------
// The requests: one visitor each

let visitor = 0;

/** The n-th visitor's address (10.x.y.z: 16 million of them) and form fields. */
function visitorOf(n: number): { ip: string; email: string } {
  return { ip: `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`, email: `visitor${n}@example.com` };
}

function requestFor(opts: Options, n: number): { headers: Record<string, string>; body: string } {
  const { ip, email } = visitorOf(n);
  if (opts.embed) {
    return {
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'x-forwarded-for': ip,
        origin: 'https://blog.example.com',
      },
      body: JSON.stringify({ email, first_name: 'Ada' }),
    };
  }
  return {
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'text/html,application/xhtml+xml',
      'accept-encoding': 'gzip, deflate, br',
      'x-forwarded-for': ip,
    },
    body: `email=${encodeURIComponent(email)}&first_name=Ada`,
  };
}

/** One request outside autocannon (setup checks); it counts as a visitor and, when accepted, as a stored row. */
async function submitOnce(server: Server, opts: Options, expected = 200): Promise<string> {
  const { headers, body } = requestFor(opts, visitor++);
  return expectStatus(
    await fetch(`${server.url}/f/${SLUG}`, { method: 'POST', headers, body, redirect: 'manual' }),
    expected,
    `${server.name}: POST /f/${SLUG}`,
  );
}

// ---------------------------------------------------------------------------------------------------
// Setup of the two targets

interface Target {
  label: Label;
  server: Server;
  /** A SQLite file, or with --pg Formcast's PostgreSQL URL. */
  databaseFile: string;
  /** 2xx and 3xx answers so far, setup requests and warm-ups included: each one a submission that must be stored. */
  accepted: number;
}

async function setupFormcast(opts: Options, sink: Sink): Promise<Target> {
  const dir = makeTempDir('submit-formcast');
  // TRUST_PROXY: each request's X-Forwarded-For is its visitor's address; the per-IP limit keeps its default.
  // The visitors' generated addresses (visitor1@, visitor2@, … of one domain) are what the sign-up burst rules hold for
  // review (docs/bot-protection.md): off here, so every request takes the sign-up path that is measured.
  const env = {
    SMTP_URL: `smtp://${HOST}:${sink.port}`,
    TRUST_PROXY: 'loopback',
    SIGNUP_BURST_PATTERN: '0',
    SIGNUP_BURST_DOMAIN: '0',
    SUBMISSION_INTAKE: opts.intake,
  };
  const databaseFile = opts.pgUrl ? await freshPostgresDatabase(opts.pgUrl, 'submit') : path.join(dir, 'formcast.db');
  const { server, workspaceId, apiKey } = await startFormcast(dir, {
    env: { ...env, DATABASE_URL: databaseFile },
    nodeArgs: opts.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', opts.cpuProfDir] : [],
  });
  // A verified domain: double opt-in needs one to send the confirmations from.
  await run(
    'formcast domain add',
    ['bin/formcast', 'domain', 'add', DOMAIN, '--workspace', workspaceId, '--verified', '--json'],
    { ...process.env, DATABASE_URL: databaseFile },
  );
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const form = JSON.parse(
    await expectStatus(
      await fetch(`${server.url}/v1/forms`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          name: 'Join the waiting list',
          type: 'SIGN_UP',
          slug: SLUG,
          fieldMapping: { email: 'email', first_name: 'firstName' },
          settings: { doubleOptIn: opts.doubleOptIn },
        }),
      }),
      201,
      'POST /v1/forms',
    ),
  ) as { id: string };
  await expectStatus(
    await fetch(`${server.url}/v1/forms/${form.id}/publish`, { method: 'POST', headers }),
    200,
    `POST /v1/forms/${form.id}/publish`,
  );
  const target: Target = { label: 'formcast', server, databaseFile, accepted: 0 };
  // A hosted submission is answered 200 with its success page (contract §9; a Refresh header moves it to /thanks); an embed's with JSON.
  const answer = await submitOnce(server, opts, 200);
  target.accepted++;
  const page = opts.embed
    ? answer
    : await expectStatus(await fetch(`${server.url}/f/${SLUG}/thanks`), 200, `GET /f/${SLUG}/thanks`);
  if (!opts.embed && !page.includes('data-formcast-success'))
    throw new BenchError(`formcast: the answer to a submission is not the success page:\n${page.slice(0, 500)}`);
  return target;
}

async function setupBaseline(opts: Options): Promise<Target> {
  const dir = makeTempDir('submit-baseline');
  const databaseFile = path.join(dir, 'baseline.db');
  const server = await startServer('baseline server', ['--import', 'tsx', 'bench/submit-baseline-server.ts'], {
    ...process.env,
    PORT: '0',
    HOST,
    DATABASE_URL: databaseFile,
  });
  const target: Target = { label: 'baseline', server, databaseFile, accepted: 0 };
  await submitOnce(server, opts);
  target.accepted++;
  return target;
}

// ---------------------------------------------------------------------------------------------------
// Measuring

interface Run {
  round: number;
  target: Label;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** The server process's CPU time (user + system) per measured request, in µs: steadier than req/s on a busy machine. */
  cpuUsPerReq: number;
  requests: number;
  /** Answers other than 2xx/3xx (warm-up included), by status code. */
  badStatuses: Record<string, number>;
  errors: number;
  /** Formcast: seconds from the last answer until the intake was empty (every submission made into its contact). */
  drainS: number;
  /** Formcast: CPU per request including the drain: what a submission costs in all. */
  cpuUsPerReqMade: number;
  /** With --pg: PostgreSQL's processes' CPU per request, from the run's first request until the intake was drained. */
  pgCpuUsPerReqMade: number;
}

/** Waits until formcast's intake is empty (the baseline has none); returns the seconds it took. */
async function drained(target: Target): Promise<number> {
  if (target.label !== 'formcast') return 0;
  const start = performance.now();
  const db = await readerOf(target.databaseFile);
  try {
    for (;;) {
      const n = await db.count('select count(*) as n from submission_intake');
      if (n === 0) return (performance.now() - start) / 1000;
      if (performance.now() - start > 300_000)
        throw new BenchError(`formcast: ${n} submissions still in the intake after 300 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await db.close();
  }
}

/** Counts in a target's database, SQLite (read-only) or PostgreSQL. */
async function readerOf(database: string): Promise<{
  count: (sql: string) => Promise<number>;
  rows: <R>(sql: string) => Promise<R[]>;
  close: () => Promise<void>;
}> {
  if (database.startsWith('postgres')) {
    const client = new pg.Client({ connectionString: database });
    await client.connect();
    return {
      count: async (sql) => Number((await client.query<{ n: string }>(sql)).rows[0]!.n),
      rows: async <R>(sql: string) => (await client.query(sql)).rows as R[],
      close: () => client.end(),
    };
  }
  const db = new SQLite(database, { readonly: true });
  return {
    count: (sql) => Promise.resolve((db.prepare(sql).get() as { n: number }).n),
    rows: <R>(sql: string) => Promise.resolve(db.prepare(sql).all() as R[]),
    close: () => Promise.resolve(void db.close()),
  };
}

/** Sends `amount` requests, each a new visitor (harness.ts, cannonAmount); also counts the 2xx/3xx answers. */
async function cannon(
  target: Target,
  opts: Options,
  amount: number,
): Promise<{ result: autocannon.Result; seconds: number; accepted: number }> {
  if (!alive(target.server.child))
    throw new BenchError(`${target.server.name} is no longer running\n${target.server.output()}`);
  const { result, seconds, statuses } = await cannonAmount({
    url: target.server.url,
    connections: opts.connections,
    pipelining: 1,
    amount,
    requests: [
      { method: 'POST', path: `/f/${SLUG}`, setupRequest: (req) => ({ ...req, ...requestFor(opts, visitor++) }) },
    ],
  });
  let accepted = 0;
  for (const [status, n] of statuses) if (status >= 200 && status < 400) accepted += n;
  return { result, seconds, accepted };
}

function badStatuses(...results: (autocannon.Result | undefined)[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of results) {
    for (const [code, stat] of Object.entries(r?.statusCodeStats ?? {})) {
      if (code.startsWith('2') || code.startsWith('3') || !stat.count) continue;
      out[code] = (out[code] ?? 0) + stat.count;
    }
  }
  return out;
}

async function measure(target: Target, round: number, opts: Options): Promise<Run> {
  process.stderr.write(
    `round ${round}: ${target.label.padEnd(8)} ${opts.warmup ? `warm-up ${fmt(opts.warmup)} requests, ` : ''}measuring ${fmt(opts.requests)} requests ...`,
  );
  const warm = opts.warmup ? await cannon(target, opts, opts.warmup) : undefined;
  target.accepted += warm?.accepted ?? 0;
  if (warm) await drained(target);
  const pgCpu = () => (opts.pgUrl ? postgresCpuSeconds() : 0);
  const cpu0 = cpuSeconds(target.server.child.pid!);
  const pg0 = pgCpu();
  const { result: r, seconds, accepted } = await cannon(target, opts, opts.requests);
  const cpu = cpuSeconds(target.server.child.pid!) - cpu0;
  const drainS = await drained(target);
  const cpuMade = cpuSeconds(target.server.child.pid!) - cpu0;
  const pgMade = pgCpu() - pg0;
  target.accepted += accepted;
  const run: Run = {
    round,
    target: target.label,
    reqPerSec: r.requests.total / seconds,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    cpuUsPerReq: (cpu * 1e6) / r.requests.total,
    requests: r.requests.total,
    badStatuses: badStatuses(warm?.result, r),
    errors: r.errors + r.timeouts + (warm ? warm.result.errors + warm.result.timeouts : 0),
    drainS,
    cpuUsPerReqMade: (cpuMade * 1e6) / r.requests.total,
    pgCpuUsPerReqMade: (pgMade * 1e6) / r.requests.total,
  };
  process.stderr.write(
    ` ${fmt(run.reqPerSec)} req/s, p99 ${run.p99Ms} ms, ${fmt(run.cpuUsPerReq)} µs CPU/req${target.label === 'formcast' ? `; intake drained ${run.drainS.toFixed(2)} s after the last answer, ${fmt(run.cpuUsPerReqMade)} µs CPU/req with it` : ''}${opts.pgUrl ? `; PostgreSQL ${fmt(run.pgCpuUsPerReqMade)} µs CPU/req` : ''}\n`,
  );
  return run;
}

function summarize(runs: Run[], label: Label) {
  const mine = runs.filter((r) => r.target === label);
  return {
    reqPerSec: mine.map((r) => Math.round(r.reqPerSec)),
    p99Ms: mine.map((r) => r.p99Ms),
    medianReqPerSec: Math.round(median(mine.map((r) => r.reqPerSec))),
    medianP50Ms: median(mine.map((r) => r.p50Ms)),
    medianP99Ms: median(mine.map((r) => r.p99Ms)),
    medianCpuUsPerReq: Math.round(median(mine.map((r) => r.cpuUsPerReq))),
    medianDrainS: round2(median(mine.map((r) => r.drainS))),
    medianCpuUsPerReqMade: Math.round(median(mine.map((r) => r.cpuUsPerReqMade))),
    medianPgCpuUsPerReqMade: Math.round(median(mine.map((r) => r.pgCpuUsPerReqMade))),
    /** Requests over the time from the first request until every one was made (answers and drain). */
    medianMadePerSec: Math.round(median(mine.map((r) => r.requests / (r.requests / r.reqPerSec + r.drainS)))),
    errors: mine.reduce((a, r) => a + r.errors, 0),
    badStatuses: mine.reduce<Record<string, number>>((acc, r) => {
      for (const [code, n] of Object.entries(r.badStatuses)) acc[code] = (acc[code] ?? 0) + n;
      return acc;
    }, {}),
  };
}

// ---------------------------------------------------------------------------------------------------
// What was stored

interface Stored {
  /** Rows that stand for a submission: `submissions` (formcast) or the baseline's one table. */
  submissions: number;
  contacts?: number;
  confirmations?: number;
  events?: Record<string, number>;
}

async function countStored(target: Target): Promise<Stored> {
  const db = await readerOf(target.databaseFile);
  try {
    if (target.label === 'baseline') return { submissions: await db.count('select count(*) as n from submissions') };
    const events = Object.fromEntries(
      (await db.rows<{ type: string; n: number | string }>('select type, count(*) as n from events group by type')).map(
        (r) => [r.type, Number(r.n)],
      ),
    );
    return {
      submissions: await db.count('select count(*) as n from submissions'),
      contacts: await db.count('select count(*) as n from contacts'),
      confirmations: await db.count('select count(*) as n from confirmations'),
      events,
    };
  } finally {
    await db.close();
  }
}

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const opts = parseOptions();
  const loadBefore = os.loadavg()[0]!;
  const sink = await startSmtpSink();
  if (opts.pgUrl) return mainPostgres(opts, sink, loadBefore);
  const targets = [await setupBaseline(opts), await setupFormcast(opts, sink)];
  const formcast = targets[1]!;
  const idleRssMb = memoryOf(formcast.server.child.pid!).rssMb;

  const runs: Run[] = [];
  for (let round = 1; round <= opts.rounds; round++) {
    const order = round % 2 ? targets : [...targets].reverse();
    for (const target of order) runs.push(await measure(target, round, opts));
  }
  const peakRssMb = memoryOf(formcast.server.child.pid!).peakRssMb;
  const mailSent = (await sink.stats()).count;
  // Stopped (SIGTERM: in-flight requests finish) before the rows are counted.
  for (const t of targets) await stopChild(t.server.child);
  const loadAfter = os.loadavg()[0]!;

  const stored = Object.fromEntries(
    await Promise.all(targets.map(async (t) => [t.label, await countStored(t)] as const)),
  ) as Record<Label, Stored>;
  const base = summarize(runs, 'baseline');
  const fc = summarize(runs, 'formcast');
  const ratio = fc.medianReqPerSec / base.medianReqPerSec;
  const ratioPass = ratio >= RATIO_GOAL;
  const p99Pass = fc.medianP99Ms < P99_GOAL_MS;
  // Issue 36, goal 5: the p99 against the baseline's in the same run. The baseline stores the submission as one row
  // and answers, what Formcast's intake does before it answers (SUBMISSION_INTAKE=auto): this path's floor.
  const p99OverBase = base.medianP99Ms > 0 ? fc.medianP99Ms / base.medianP99Ms : Infinity;
  const p99BasePass = p99OverBase <= P99_OVER_FLOOR_GOAL;
  const storedPass = targets.every((t) => stored[t.label].submissions === t.accepted);
  const expectedPerSubmission = opts.doubleOptIn
    ? { contacts: formcast.accepted, confirmations: formcast.accepted }
    : { contacts: formcast.accepted, confirmations: 0 };
  const formcastRowsOk =
    stored.formcast.contacts === expectedPerSubmission.contacts &&
    stored.formcast.confirmations === expectedPerSubmission.confirmations &&
    stored.formcast.events?.['form.submitted'] === formcast.accepted &&
    stored.formcast.events?.['contact.created'] === formcast.accepted;

  const cols = [
    'round',
    'target',
    'req/s',
    'p50 ms',
    'p99 ms',
    'CPU µs/req',
    'requests',
    'drain s',
    'CPU µs/req with drain',
  ];
  const rows = runs.map((r) => [
    String(r.round),
    r.target,
    fmt(r.reqPerSec),
    fmt(r.p50Ms, 1),
    fmt(r.p99Ms, 1),
    fmt(r.cpuUsPerReq),
    fmt(r.requests),
    r.drainS.toFixed(2),
    fmt(r.cpuUsPerReqMade),
  ]);
  const medians = (['baseline', 'formcast'] as const).map((label) => {
    const s = label === 'baseline' ? base : fc;
    return [
      'median',
      label,
      fmt(s.medianReqPerSec),
      fmt(s.medianP50Ms, 1),
      fmt(s.medianP99Ms, 1),
      fmt(s.medianCpuUsPerReq),
      '',
      s.medianDrainS.toFixed(2),
      fmt(s.medianCpuUsPerReqMade),
    ];
  });
  const form = `SIGN_UP, ${opts.doubleOptIn ? 'double opt-in' : 'single opt-in'}, ${opts.embed ? 'embed (JSON)' : 'hosted page (form post, success page, br)'}`;
  process.stdout.write(
    [
      '',
      `POST /f/{slug}: formcast vs a bare Fastify route inserting one row; ${opts.connections} connections, ${fmt(opts.requests)} requests per run, each a new visitor (own IP, own email)`,
      `form: ${form}; SUBMISSION_RATE_LIMIT default (10 per IP per minute), TRUST_PROXY=loopback`,
      `node ${process.version}, ${os.cpus().length} CPU(s), SQLite; load average ${loadBefore.toFixed(2)} -> ${loadAfter.toFixed(2)}; formcast RSS idle ${idleRssMb} MB, peak ${peakRssMb} MB`,
      '',
      ...table(cols, [rows, medians], 2),
      '',
      `formcast / baseline req/s: ${ratio.toFixed(2)}x   goal >= ${RATIO_GOAL}x   ${ratioPass ? 'PASS' : 'MISS'}`,
      `formcast p99: ${fmt(fc.medianP99Ms, 1)} ms   goal < ${P99_GOAL_MS} ms   ${p99Pass ? 'PASS' : 'MISS'}`,
      `formcast p99 / the baseline's (one row stored, this path's floor): ${p99OverBase.toFixed(2)}x (${fmt(fc.medianP99Ms, 1)} / ${fmt(base.medianP99Ms, 1)} ms)   goal <= ${P99_OVER_FLOOR_GOAL}x   ${p99BasePass ? 'PASS' : 'MISS'}`,
      `stored: baseline ${fmt(stored.baseline.submissions)} rows for ${fmt(targets[0]!.accepted)} accepted; formcast ${fmt(stored.formcast.submissions)} submissions for ${fmt(formcast.accepted)} accepted   goal: every accepted submission stored   ${storedPass ? 'PASS' : 'MISS'}`,
      `formcast made every submission into its contact ${fc.medianDrainS.toFixed(2)} s after the last answer (median; SUBMISSION_INTAKE=${opts.intake}): ${fmt(fc.medianMadePerSec)} made/s from the first request to the last made, ${(fc.medianMadePerSec / base.medianReqPerSec).toFixed(2)}x the baseline's req/s (not a goal)`,
      `formcast also stored ${fmt(stored.formcast.contacts ?? 0)} contacts, ${fmt(stored.formcast.confirmations ?? 0)} confirmations, events ${JSON.stringify(stored.formcast.events)}${formcastRowsOk ? '' : '   UNEXPECTED'}; confirmation emails at the sink by the end: ${fmt(mailSent)}`,
      '',
    ].join('\n'),
  );
  const failures = [
    ...targets.flatMap((t) => {
      const s = summarize(runs, t.label);
      return [
        ...(Object.keys(s.badStatuses).length
          ? [`${t.label}: answers other than 2xx/3xx: ${JSON.stringify(s.badStatuses)}`]
          : []),
        ...(s.errors ? [`${t.label}: ${s.errors} connection errors or timeouts`] : []),
      ];
    }),
    ...(formcastRowsOk ? [] : ['formcast: the rows of a submission are not all there']),
  ];
  process.stdout.write(
    `${JSON.stringify({
      bench: 'submit',
      ...runFacts(opts, loadBefore, loadAfter),
      baseline: base,
      formcast: { ...fc, idleRssMb, peakRssMb, confirmationEmailsSent: mailSent },
      ratio: round2(ratio),
      stored: {
        baseline: { ...stored.baseline, accepted: targets[0]!.accepted },
        formcast: { ...stored.formcast, accepted: formcast.accepted },
      },
      goals: {
        ratio: { min: RATIO_GOAL, value: round2(ratio), pass: ratioPass },
        p99Ms: { max: P99_GOAL_MS, value: fc.medianP99Ms, pass: p99Pass },
        p99OverFloor: { max: P99_OVER_FLOOR_GOAL, value: round2(p99OverBase), pass: p99BasePass },
        everyAcceptedStored: { pass: storedPass },
      },
      ok: failures.length === 0,
    })}\n`,
  );
  if (failures.length) throw new BenchError(failures.join('\n'));
  return 0;
}

/**
 * --pg: Formcast alone on PostgreSQL (issue 36, goal 6). Per sign-up: the server's CPU when answered and with the
 * intake drained, and PostgreSQL's processes' CPU over the same span; every accepted submission stored.
 */
async function mainPostgres(opts: Options, sink: Sink, loadBefore: number): Promise<number> {
  const formcast = await setupFormcast(opts, sink);
  const idleRssMb = memoryOf(formcast.server.child.pid!).rssMb;
  const runs: Run[] = [];
  for (let round = 1; round <= opts.rounds; round++) runs.push(await measure(formcast, round, opts));
  const peakRssMb = memoryOf(formcast.server.child.pid!).peakRssMb;
  await stopChild(formcast.server.child);
  const loadAfter = os.loadavg()[0]!;
  const stored = await countStored(formcast);
  const fc = summarize(runs, 'formcast');
  const storedPass = stored.submissions === formcast.accepted;
  const rowsOk =
    stored.contacts === formcast.accepted &&
    stored.confirmations === (opts.doubleOptIn ? formcast.accepted : 0) &&
    stored.events?.['form.submitted'] === formcast.accepted;
  const cols = ['round', 'req/s', 'p50 ms', 'p99 ms', 'serve CPU µs/req', 'drain s', 'serve with drain', 'PostgreSQL'];
  const rows = runs.map((r) => [
    String(r.round),
    fmt(r.reqPerSec),
    fmt(r.p50Ms, 1),
    fmt(r.p99Ms, 1),
    fmt(r.cpuUsPerReq),
    r.drainS.toFixed(2),
    fmt(r.cpuUsPerReqMade),
    fmt(r.pgCpuUsPerReqMade),
  ]);
  const medians = [
    [
      'median',
      fmt(fc.medianReqPerSec),
      fmt(fc.medianP50Ms, 1),
      fmt(fc.medianP99Ms, 1),
      fmt(fc.medianCpuUsPerReq),
      fc.medianDrainS.toFixed(2),
      fmt(fc.medianCpuUsPerReqMade),
      fmt(fc.medianPgCpuUsPerReqMade),
    ],
  ];
  process.stdout.write(
    [
      '',
      `POST /f/{slug} on formcast serve with PostgreSQL (the worker in the process: the confirmations are sent), ${opts.connections} connections, ${fmt(opts.requests)} requests per run, each a new visitor`,
      `form: SIGN_UP, ${opts.doubleOptIn ? 'double opt-in' : 'single opt-in'}; SUBMISSION_INTAKE=${opts.intake}; CPU per sign-up by tier: serve (every thread), and every postgres process of the machine from the run's first request until its intake was drained`,
      `node ${process.version}, ${os.cpus().length} CPU(s), PostgreSQL; load average ${loadBefore.toFixed(2)} -> ${loadAfter.toFixed(2)}; formcast RSS idle ${idleRssMb} MB, peak ${peakRssMb} MB`,
      '',
      ...table(cols, [rows, medians], 1),
      '',
      `CPU per sign-up by tier (medians): serve ${fmt(fc.medianCpuUsPerReqMade)} µs, PostgreSQL ${fmt(fc.medianPgCpuUsPerReqMade)} µs`,
      `stored: ${fmt(stored.submissions)} submissions for ${fmt(formcast.accepted)} accepted   ${storedPass ? 'PASS' : 'MISS'}; contacts ${fmt(stored.contacts ?? 0)}, confirmations ${fmt(stored.confirmations ?? 0)}${rowsOk ? '' : '   UNEXPECTED'}`,
      '',
    ].join('\n'),
  );
  process.stdout.write(
    `${JSON.stringify({
      bench: 'submit',
      database: 'postgres',
      ...runFacts(opts, loadBefore, loadAfter),
      formcast: { ...fc, idleRssMb, peakRssMb },
      cpuUsPerSignUpByTier: { serve: fc.medianCpuUsPerReqMade, postgres: fc.medianPgCpuUsPerReqMade },
      stored: { ...stored, accepted: formcast.accepted },
      goals: { everyAcceptedStored: { pass: storedPass } },
      ok: rowsOk && !fc.errors && !Object.keys(fc.badStatuses).length,
    })}\n`,
  );
  if (!rowsOk || fc.errors || Object.keys(fc.badStatuses).length)
    throw new BenchError(
      `formcast: ${fc.errors} errors, answers ${JSON.stringify(fc.badStatuses)}, rows ${rowsOk ? 'ok' : 'not all there'}`,
    );
  return 0;
}

/** What the JSON line says of the run itself, with or without --pg. */
function runFacts(opts: Options, loadBefore: number, loadAfter: number) {
  return {
    node: process.version,
    cpus: os.cpus().length,
    loadAvg1m: { before: round2(loadBefore), after: round2(loadAfter) },
    form: { type: 'SIGN_UP', doubleOptIn: opts.doubleOptIn, request: opts.embed ? 'embed' : 'hosted' },
    intake: opts.intake,
    connections: opts.connections,
    requests: opts.requests,
    rounds: opts.rounds,
  };
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

await runBench('bench:submit', main);
