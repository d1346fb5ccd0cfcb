/**
 * Tracking benchmark (`npm run bench:track`): `GET /t/o/{token}` (the open pixel) and `GET /t/c/{token}` (a tracked
 * link) on the real server, against a bare Fastify route answering the same GIF / 302 with no work
 * (bench/track-baseline.ts), measured in the same run.
 *
 * Setup: `formcast workspace create`, `formcast domain add … --verified`, then `formcast serve` on a fresh SQLite
 * file with no SMTP_URL (messages go to an outbox directory in the temp dir). Recipients are imported (CSV), a
 * broadcast with three links is sent, and the tokens are read from the .eml files the worker wrote: one pixel
 * and three links per recipient. autocannon (in this process) sends a fixed number of requests per run, each to
 * the next token in turn, 50 connections; a fixed count (not a duration) so that every request is answered
 * before the run ends and the events can be counted exactly.
 *
 * A third server, the floor (bench/track-floor-server.ts, issue 36 goal 4), answers the same requests on Formcast's
 * database doing the work itself and nothing else: the same token verified, the same event rows written with the same
 * indexes, by group commit.
 *
 * Goals: formcast req/s >= 0.7x the baseline's for each endpoint and p99 < 10 ms (issue 13); formcast req/s >= 0.8x
 * the floor's and p99 <= 1.25x the floor's (issue 36); and every answered hit recorded: after each run the new
 * email.opened / email.clicked rows equal its 2xx / 3xx answers, for formcast and for the floor. Printed as PASS/MISS;
 * the exit code is 1 only when something did not run (a child failed, a setup step failed, an unexpected status or a
 * connection error).
 *
 * Without --rules the tokens of a few recipients are hit again and again, with Formcast's replay rules (the repeat
 * window, the per-address limit, the per-delivery cap: docs/tracking.md, "Replays and floods") off, so that every hit
 * is written. With --rules the rules stay at their defaults and every request to Formcast carries a token it has not
 * seen: the broadcast goes to rounds × (warm-up + requests) recipients.
 *
 * With --pg (issue 36, goal 6: what a hit costs each tier, docs/scaling.md): Formcast alone on a fresh PostgreSQL
 * database (the floor is SQLite's; the baseline does not change), its CPU per hit and that of every `postgres` process
 * of the machine over the same run, the rules on or off as without it.
 *
 * Options: --requests N (per measured run, default 40000; 20000 with --rules), --warmup N (requests, default 5000;
 *          2000 with --rules), --rounds N (default 1), --recipients N (default 300; with --rules, as many as needed),
 *          --connections N (default 50), --rules, --pg, --database-url URL, --help.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type autocannon from 'autocannon';
import SQLite from 'better-sqlite3';
import { simpleParser } from 'mailparser';
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
  median,
  makeTempDir,
  parseCommandLine,
  positiveInt,
  postgresCpuSeconds,
  postgresUrlOf,
  run,
  runBench,
  startServer,
  table,
  type Server,
} from './harness.js';

const RATIO_GOAL = 0.7;
const P99_GOAL_MS = 10;
/** Issue 36, goal 4: formcast against the floor. */
const FLOOR_RATIO_GOAL = 0.8;
const P99_OVER_FLOOR_GOAL = 1.25;

function parseOptions() {
  const values = parseCommandLine(
    {
      requests: { type: 'string' },
      warmup: { type: 'string' },
      rounds: { type: 'string' },
      recipients: { type: 'string' },
      connections: { type: 'string' },
      'cpu-prof': { type: 'string' },
      rules: { type: 'boolean' },
      pg: { type: 'boolean' },
      'database-url': { type: 'string' },
    },
    {
      example: 'npm run bench:track -- --requests 20000',
      usage: [
        'usage: npm run bench:track -- [--requests N] [--warmup N] [--rounds N] [--recipients N] [--connections N]',
        '  --requests N     requests per measured run (default 40000)',
        '  --warmup N       requests of discarded warm-up before each measured run (default 5000; 0 skips it)',
        '  --rounds N       rounds of baseline and formcast runs for both endpoints (default 1)',
        '  --recipients N   recipients of the broadcast whose tokens are used (default 300)',
        '  --connections N  concurrent connections (default 50)',
        '  --cpu-prof DIR   run formcast serve with node --cpu-prof, the profile written into DIR when it stops',
        "  --rules          Formcast's replay rules at their defaults, every request to it a token it has not seen",
        '  --pg             Formcast alone on a fresh PostgreSQL database (TEST_DATABASE_URL or --database-url), with the',
        "                   CPU of PostgreSQL's processes per hit (docs/scaling.md); no floor",
        '  --database-url URL  a PostgreSQL URL whose user may CREATE DATABASE (implies --pg)',
      ],
    },
  );
  const rules = Boolean(values.rules);
  const requests = positiveInt('requests', values.requests, rules ? 20_000 : 40_000);
  const warmup = values.warmup === '0' ? 0 : positiveInt('warmup', values.warmup, rules ? 2_000 : 5_000);
  const rounds = positiveInt('rounds', values.rounds, 1);
  if (rules && values.recipients !== undefined)
    throw new BenchError('--rules sends to as many recipients as the runs need: leave out --recipients');
  return {
    pgUrl: postgresUrlOf(values) ?? null,
    requests,
    warmup,
    rounds,
    // With the rules on, one open token a request of every Formcast run (each recipient has one pixel, three links),
    // and one more: the setup's check uses the first.
    recipients: rules ? rounds * (warmup + requests) + 1 : positiveInt('recipients', values.recipients, 300),
    connections: positiveInt('connections', values.connections, 50),
    cpuProf: values['cpu-prof'] ? path.resolve(values['cpu-prof']) : null,
    rules,
  };
}
type Options = ReturnType<typeof parseOptions>;

const HTML =
  '<html><body><p>Hi {{ contact.firstName }}, <a href="https://shop.example/sale?who={{ contact.firstName }}">the sale</a>,' +
  ' <a href="https://blog.example/post">the post</a>, <a href="https://docs.example/guide">the guide</a>.</p>' +
  // An image: a short HTML part without one gets no open pixel (docs/tracking.md, "Opens").
  '<p><img src="https://shop.example/logo.png" alt="Shop" width="120" height="40"></p></body></html>';

interface Formcast {
  server: Server;
  databaseFile: string;
  opens: string[];
  clicks: string[];
}

async function setupFormcast(opts: Options): Promise<Formcast> {
  const dir = makeTempDir('track');
  const outbox = path.join(dir, 'outbox');
  const databaseFile = opts.pgUrl ? await freshPostgresDatabase(opts.pgUrl, 'track') : path.join(dir, 'formcast.db');
  // The run hits each token again and again from one address, and checks that every answer left one event: the
  // repeat window and the per-address limit are off, the per-delivery cap out of reach (its count is still made and
  // measured, docs/tracking.md "Replays and floods").
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    HOST,
    LOG_LEVEL: 'warn',
    DATABASE_URL: databaseFile,
    OUTBOX_DIR: outbox,
    ...(opts.rules
      ? {}
      : {
          TRACKING_REPEAT_WINDOW_SECONDS: '0',
          TRACKING_RATE_LIMIT_PER_IP: '0',
          TRACKING_MAX_HITS_PER_DELIVERY: '1000000000',
        }),
  };
  if (opts.rules)
    for (const k of ['TRACKING_REPEAT_WINDOW_SECONDS', 'TRACKING_RATE_LIMIT_PER_IP', 'TRACKING_MAX_HITS_PER_DELIVERY'])
      delete env[k];
  delete env.PUBLIC_URL;
  delete env.SMTP_URL;
  const created = JSON.parse(
    await run('formcast workspace create', ['bin/formcast', 'workspace', 'create', 'bench', '--json'], env),
  ) as { workspace: { id: string }; apiKey: { key: string } };
  await run(
    'formcast domain add',
    ['bin/formcast', 'domain', 'add', 'bench.test', '--workspace', created.workspace.id, '--verified', '--json'],
    env,
  );
  const profile = opts.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProf}`] : [];
  const server = await startServer('formcast serve', [...profile, 'bin/formcast', 'serve'], env);
  const auth = { authorization: `Bearer ${created.apiKey.key}` };

  const csv = [
    'email,first_name',
    ...Array.from({ length: opts.recipients }, (_, i) => `reader${i}@example.com,R${i}`),
  ].join('\n');
  await expectStatus(
    await fetch(`${server.url}/v1/contacts/imports`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'text/csv' },
      body: csv,
    }),
    201,
    'POST /v1/contacts/imports',
  );
  const json = { ...auth, 'content-type': 'application/json' };
  const b = JSON.parse(
    await expectStatus(
      await fetch(`${server.url}/v1/broadcasts`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({
          name: 'Bench',
          from: 'news@bench.test',
          emailContent: { subject: 'Bench', html: HTML },
        }),
      }),
      201,
      'POST /v1/broadcasts',
    ),
  ) as { id: string; tracking: { opens: boolean; clicks: boolean } };
  if (!b.tracking.opens || !b.tracking.clicks)
    throw new BenchError(`the broadcast is not tracked: ${JSON.stringify(b.tracking)}`);
  await expectStatus(
    await fetch(`${server.url}/v1/broadcasts/${b.id}/send`, { method: 'POST', headers: auth }),
    202,
    'POST /v1/broadcasts/{id}/send',
  );
  for (let i = 0; ; i++) {
    const state = JSON.parse(
      await expectStatus(
        await fetch(`${server.url}/v1/broadcasts/${b.id}`, { headers: auth }),
        200,
        'GET /v1/broadcasts/{id}',
      ),
    ) as { status: string };
    if (state.status === 'SENT') break;
    if (i > 600 + opts.recipients / 10 || state.status === 'FAILED')
      throw new BenchError(`the broadcast did not send: ${state.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }

  const opens: string[] = [];
  const clicks: string[] = [];
  for (const file of fs.readdirSync(outbox).filter((f) => f.endsWith('.eml'))) {
    const html = String((await simpleParser(fs.readFileSync(path.join(outbox, file)))).html);
    for (const m of html.matchAll(/(?:src|href)="[^"]*?(\/t\/[oc]\/[A-Za-z0-9_-]+)"/g))
      (m[1]!.startsWith('/t/o/') ? opens : clicks).push(m[1]!);
  }
  if (opens.length !== opts.recipients || clicks.length !== 3 * opts.recipients) {
    throw new BenchError(
      `expected ${opts.recipients} pixels and ${3 * opts.recipients} links in the outbox, found ${opens.length} and ${clicks.length}`,
    );
  }
  await expectStatus(await fetch(`${server.url}${opens[0]}`), 200, 'GET /t/o/{token}');
  const first = await fetch(`${server.url}${clicks[0]}`, { redirect: 'manual' });
  if (first.status !== 302 || !first.headers.get('location')?.startsWith('https://shop.example/sale'))
    throw new BenchError(`GET /t/c/{token} answered ${first.status} ${first.headers.get('location')}`);
  return { server, databaseFile, opens, clicks };
}

// ---------------------------------------------------------------------------------------------------

type Endpoint = 'open' | 'click';
type Label = 'baseline' | 'floor' | 'formcast';

interface Run {
  round: number;
  target: Label;
  endpoint: Endpoint;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** The server process's CPU time (user + system) per measured request, in µs: steadier than req/s on a busy machine. */
  cpuUsPerReq: number;
  requests: number;
  /** Answers of the expected class (2xx for opens, 3xx for clicks), warm-up included. */
  expected: number;
  /** The rows of the endpoint's event type written during the run, warm-up included (null for the baseline). */
  recorded: number | null;
  unexpected: number;
  errors: number;
}

/** Sends `amount` requests, cycling through `paths` (harness.ts, cannonAmount). */
async function cannon(
  server: Server,
  paths: string[],
  amount: number,
  connections: number,
): Promise<{ result: autocannon.Result; seconds: number }> {
  if (!alive(server.child)) throw new BenchError(`${server.name} is no longer running\n${server.output()}`);
  let next = 0;
  return cannonAmount({
    url: server.url,
    connections,
    pipelining: 1,
    amount,
    requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: paths[next++ % paths.length]! }) }],
  });
}

async function measure(
  label: Label,
  server: Server,
  endpoint: Endpoint,
  paths: { warmup: string[]; measured: string[] },
  round: number,
  opts: Options,
  countEvents: ((endpoint: Endpoint) => number) | null,
): Promise<Run> {
  process.stderr.write(
    `round ${round}: ${label.padEnd(8)} ${endpoint.padEnd(5)} ${opts.warmup ? `warm-up ${opts.warmup} requests, ` : ''}measuring ${opts.requests} requests ...`,
  );
  const rows0 = countEvents?.(endpoint) ?? 0;
  const warm = opts.warmup ? (await cannon(server, paths.warmup, opts.warmup, opts.connections)).result : undefined;
  const cpu0 = cpuSeconds(server.child.pid!);
  const { result: r, seconds } = await cannon(server, paths.measured, opts.requests, opts.connections);
  const cpu = cpuSeconds(server.child.pid!) - cpu0;
  // Every answer was given after its hit committed: the rows are all there now.
  const recorded = countEvents ? countEvents(endpoint) - rows0 : null;
  const cls = endpoint === 'open' ? '2xx' : '3xx';
  const count = (x: autocannon.Result | undefined, k: '1xx' | '2xx' | '3xx' | '4xx' | '5xx') => (x ? x[k] : 0);
  const all = (x: autocannon.Result | undefined) =>
    (['1xx', '2xx', '3xx', '4xx', '5xx'] as const).reduce((n, k) => n + count(x, k), 0);
  const expected = count(warm, cls) + count(r, cls);
  const result: Run = {
    round,
    target: label,
    endpoint,
    reqPerSec: r.requests.total / Math.max(seconds, 0.001),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    requests: r.requests.total,
    cpuUsPerReq: Math.round((cpu * 1e6) / Math.max(r.requests.total, 1)),
    expected,
    recorded,
    unexpected: all(warm) + all(r) - expected,
    errors: r.errors + (warm?.errors ?? 0) + r.timeouts + (warm?.timeouts ?? 0),
  };
  process.stderr.write(
    ` ${fmt(result.reqPerSec, 0)} req/s, p99 ${result.p99Ms} ms, server CPU ${result.cpuUsPerReq} µs/req\n`,
  );
  return result;
}

function summarize(runs: Run[], target: Label, endpoint: Endpoint) {
  const mine = runs.filter((r) => r.target === target && r.endpoint === endpoint);
  return {
    reqPerSec: mine.map((r) => Math.round(r.reqPerSec)),
    medianReqPerSec: Math.round(median(mine.map((r) => r.reqPerSec))),
    medianP99Ms: median(mine.map((r) => r.p99Ms)),
    medianCpuUsPerReq: median(mine.map((r) => r.cpuUsPerReq)),
    answered: mine.reduce((n, r) => n + r.expected, 0),
    recorded: mine.reduce((n, r) => n + (r.recorded ?? 0), 0),
    unexpected: mine.reduce((n, r) => n + r.unexpected, 0),
    errors: mine.reduce((n, r) => n + r.errors, 0),
  };
}

async function main(): Promise<number> {
  const opts = parseOptions();
  process.stderr.write(
    `setting up: formcast (workspace, domain, ${opts.recipients} recipients, a sent broadcast) and the baseline ...\n`,
  );
  const formcast = await setupFormcast(opts);
  if (opts.pgUrl) return mainPostgres(opts, formcast);
  const baseline = await startServer('baseline server', ['--import', 'tsx', 'bench/track-baseline.ts'], {
    ...process.env,
    PORT: '0',
    HOST,
  });
  // The floor writes into a copy of Formcast's database (the same rows, the same indexes), beside a copy of its key: on
  // the same file, Formcast's checkpoint thread (src/db/checkpointer.ts), idle otherwise, checkpointed the floor's
  // writes during the floor's runs (5-7% of a core, in Formcast's process), so the floor did not pay for its own.
  const floorFile = path.join(path.dirname(formcast.databaseFile), 'floor', 'formcast.db');
  fs.mkdirSync(path.dirname(floorFile));
  fs.copyFileSync(
    path.join(path.dirname(formcast.databaseFile), 'secret.key'),
    path.join(path.dirname(floorFile), 'secret.key'),
  );
  const source = new SQLite(formcast.databaseFile, { readonly: true });
  await source.backup(floorFile);
  source.close();
  const floor = await startServer('floor server', ['--import', 'tsx', 'bench/track-floor-server.ts'], {
    ...process.env,
    PORT: '0',
    HOST,
    DATABASE_URL: floorFile,
  });
  const servers: Record<Label, Server> = { baseline, floor, formcast: formcast.server };
  const db = new SQLite(formcast.databaseFile, { readonly: true });
  const floorDb = new SQLite(floorFile, { readonly: true });
  const counter = (d: SQLite.Database) => {
    const countOf = d.prepare<[string], { n: number }>('select count(*) as n from events where type = ?');
    return (e: Endpoint) => countOf.get(e === 'open' ? 'email.opened' : 'email.clicked')!.n;
  };
  const countEvents = { formcast: counter(db), floor: counter(floorDb) };

  const runs: Run[] = [];
  const LABELS: Label[] = ['baseline', 'floor', 'formcast'];
  for (let round = 1; round <= opts.rounds; round++) {
    for (const endpoint of ['open', 'click'] as const) {
      const all = endpoint === 'open' ? formcast.opens : formcast.clicks;
      // With the rules on, each Formcast run takes tokens of its own (the setup's first ones were used by its checks).
      const fresh = (n: number, from: number) => {
        const out = all.slice(1 + from, 1 + from + n);
        if (out.length < n) throw new BenchError(`${n} fresh ${endpoint} tokens wanted, ${out.length} left`);
        return out;
      };
      const start = (round - 1) * (opts.warmup + opts.requests);
      const paths = (label: Label) =>
        opts.rules && label === 'formcast'
          ? { warmup: fresh(opts.warmup, start), measured: fresh(opts.requests, start + opts.warmup) }
          : { warmup: all, measured: all };
      // The order turns each round, so that no server always follows the same one.
      const order = LABELS.map((_, i) => LABELS[(i + round - 1) % LABELS.length]!);
      for (const label of order)
        runs.push(
          await measure(
            label,
            servers[label],
            endpoint,
            paths(label),
            round,
            opts,
            label === 'baseline' ? null : countEvents[label],
          ),
        );
    }
  }
  const machine = (
    db
      .prepare("select count(*) as n from events where type in ('email.opened', 'email.clicked') and machine = 1")
      .get() as { n: number }
  ).n;
  db.close();
  floorDb.close();

  const of = (e: Endpoint) => ({
    baseline: summarize(runs, 'baseline', e),
    floor: summarize(runs, 'floor', e),
    formcast: summarize(runs, 'formcast', e),
  });
  const s = { open: of('open'), click: of('click') };
  const r3 = (n: number) => Math.round(n * 1000) / 1000;
  const goalsOf = (e: Endpoint) => {
    const x = s[e];
    const overBase = x.baseline.medianReqPerSec ? x.formcast.medianReqPerSec / x.baseline.medianReqPerSec : 0;
    const overFloor = x.floor.medianReqPerSec ? x.formcast.medianReqPerSec / x.floor.medianReqPerSec : 0;
    const p99OverFloor = x.floor.medianP99Ms > 0 ? x.formcast.medianP99Ms / x.floor.medianP99Ms : Infinity;
    return {
      ratio: { min: RATIO_GOAL, value: r3(overBase), pass: overBase >= RATIO_GOAL },
      p99Ms: { max: P99_GOAL_MS, value: x.formcast.medianP99Ms, pass: x.formcast.medianP99Ms < P99_GOAL_MS },
      overFloor: { min: FLOOR_RATIO_GOAL, value: r3(overFloor), pass: overFloor >= FLOOR_RATIO_GOAL },
      p99OverFloor: { max: P99_OVER_FLOOR_GOAL, value: r3(p99OverFloor), pass: p99OverFloor <= P99_OVER_FLOOR_GOAL },
      events: {
        answered: x.formcast.answered,
        recorded: x.formcast.recorded,
        floorAnswered: x.floor.answered,
        floorRecorded: x.floor.recorded,
        pass: x.formcast.recorded === x.formcast.answered && x.floor.recorded === x.floor.answered,
      },
    };
  };
  const goals = { open: goalsOf('open'), click: goalsOf('click') };
  const bad = runs.reduce((n, r) => n + r.unexpected + r.errors, 0);
  const ok = bad === 0;
  const pf = (p: boolean) => (p ? 'PASS' : 'MISS');

  const cols = [
    'round',
    'target',
    'endpoint',
    'req/s',
    'p50 ms',
    'p99 ms',
    'CPU µs/req',
    'requests',
    'unexpected',
    'errors',
  ];
  const rows = runs.map((r) => [
    String(r.round),
    r.target,
    r.endpoint,
    fmt(r.reqPerSec, 0),
    String(r.p50Ms),
    String(r.p99Ms),
    String(r.cpuUsPerReq),
    String(r.requests),
    String(r.unexpected),
    String(r.errors),
  ]);
  const out = [
    '',
    `GET /t/o/{token} (the pixel) and GET /t/c/{token} (a tracked link): formcast serve on SQLite, ${opts.rules ? 'its replay rules on and a token it has not seen in every request' : 'the replay rules off and the tokens of a sent broadcast in turn'},`,
    'vs the floor (the token verified, the same rows written by group commit, nothing else) and a bare route answering the same GIF / 302 with no work; loopback',
    `${opts.connections} connections, ${opts.requests} requests per run after ${opts.warmup} warm-up, ${opts.rounds} round(s); node ${process.version}, ${os.cpus().length} CPU(s)`,
    '',
    ...table(cols, [rows], 3),
    '',
    ...(['open', 'click'] as const).flatMap((e) => {
      const g = goals[e];
      const name = e.padEnd(5);
      return [
        `${name} formcast/baseline (median req/s): ${g.ratio.value.toFixed(3)}x   goal >= ${RATIO_GOAL}x   ${pf(g.ratio.pass)}`,
        `${name} formcast p99 (median of rounds):  ${g.p99Ms.value} ms   goal < ${P99_GOAL_MS} ms   ${pf(g.p99Ms.pass)}`,
        `${name} formcast/floor (median req/s):    ${g.overFloor.value.toFixed(3)}x   goal >= ${FLOOR_RATIO_GOAL}x   ${pf(g.overFloor.pass)}`,
        `${name} formcast p99 / the floor's:       ${g.p99OverFloor.value.toFixed(3)}x (${s[e].formcast.medianP99Ms} / ${s[e].floor.medianP99Ms} ms)   goal <= ${P99_OVER_FLOOR_GOAL}x   ${pf(g.p99OverFloor.pass)}`,
        `${name} answered and recorded:           formcast ${g.events.answered} / ${g.events.recorded}, floor ${g.events.floorAnswered} / ${g.events.floorRecorded}   ${pf(g.events.pass)}`,
      ];
    }),
    `(of Formcast's recorded events, ${machine} are marked machine: these clicks come seconds after sending, and every link of a message in a burst)`,
    `unexpected statuses / connection errors: ${runs.reduce((n, r) => n + r.unexpected, 0)} / ${runs.reduce((n, r) => n + r.errors, 0)}   ${ok ? 'ok' : 'FAILED (must be 0; the figures above are not valid)'}`,
    '',
  ];
  process.stdout.write(out.join('\n'));
  process.stdout.write(
    `${JSON.stringify({
      bench: 'track',
      node: process.version,
      cpus: os.cpus().length,
      connections: opts.connections,
      requests: opts.requests,
      warmup: opts.warmup,
      rounds: opts.rounds,
      recipients: opts.recipients,
      rules: opts.rules,
      open: s.open,
      click: s.click,
      machineEvents: machine,
      goals,
      ok,
    })}\n`,
  );
  return ok ? 0 : 1;
}

/**
 * --pg: Formcast alone on PostgreSQL (issue 36, goal 6). Per endpoint and round: req/s, p99, the server's CPU per hit
 * and PostgreSQL's processes' CPU per hit over the same measured run (every answer is given after its hit committed,
 * so the work of the run is done when its last answer comes); every answered hit recorded.
 */
async function mainPostgres(opts: Options, formcast: Formcast): Promise<number> {
  const client = new pg.Client({ connectionString: formcast.databaseFile });
  await client.connect();
  const countEvents = async (e: Endpoint) =>
    Number(
      (
        await client.query<{ n: string }>('select count(*) as n from events where type = $1', [
          e === 'open' ? 'email.opened' : 'email.clicked',
        ])
      ).rows[0]!.n,
    );
  const pid = formcast.server.child.pid!;
  const rows: string[][] = [];
  const out: {
    endpoint: Endpoint;
    round: number;
    reqPerSec: number;
    p99Ms: number;
    serveUs: number;
    pgUs: number;
    answered: number;
    recorded: number;
  }[] = [];
  try {
    for (let round = 1; round <= opts.rounds; round++) {
      for (const endpoint of ['open', 'click'] as const) {
        const all = endpoint === 'open' ? formcast.opens : formcast.clicks;
        const start = 1 + (round - 1) * (opts.warmup + opts.requests);
        const warmPaths = opts.rules ? all.slice(start, start + opts.warmup) : all;
        const paths = opts.rules ? all.slice(start + opts.warmup, start + opts.warmup + opts.requests) : all;
        process.stderr.write(`round ${round}: formcast ${endpoint.padEnd(5)} measuring ${opts.requests} requests ...`);
        const rows0 = await countEvents(endpoint);
        const warm = opts.warmup
          ? (await cannon(formcast.server, warmPaths, opts.warmup, opts.connections)).result
          : undefined;
        const cpu0 = cpuSeconds(pid);
        const pg0 = postgresCpuSeconds();
        const { result: r, seconds } = await cannon(formcast.server, paths, opts.requests, opts.connections);
        const serveUs = ((cpuSeconds(pid) - cpu0) * 1e6) / r.requests.total;
        const pgUs = ((postgresCpuSeconds() - pg0) * 1e6) / r.requests.total;
        const cls = endpoint === 'open' ? '2xx' : '3xx';
        const answered = (warm?.[cls] ?? 0) + r[cls];
        const recorded = (await countEvents(endpoint)) - rows0;
        const reqPerSec = r.requests.total / Math.max(seconds, 0.001);
        if (r.errors || r.timeouts || r.requests.total !== r[cls])
          throw new BenchError(
            `formcast ${endpoint}: ${r.errors} errors, ${r.timeouts} timeouts, ${r.requests.total - r[cls]} other answers`,
          );
        out.push({ endpoint, round, reqPerSec, p99Ms: r.latency.p99, serveUs, pgUs, answered, recorded });
        rows.push([
          String(round),
          endpoint,
          fmt(reqPerSec),
          fmt(r.latency.p50, 1),
          fmt(r.latency.p99, 1),
          fmt(serveUs),
          fmt(pgUs),
          `${answered} / ${recorded}`,
        ]);
        process.stderr.write(
          ` ${fmt(reqPerSec)} req/s, p99 ${r.latency.p99} ms, serve ${fmt(serveUs)} µs/hit, PostgreSQL ${fmt(pgUs)} µs/hit\n`,
        );
      }
    }
  } finally {
    await client.end();
  }
  const of = (e: Endpoint) => {
    const mine = out.filter((x) => x.endpoint === e);
    return {
      medianReqPerSec: Math.round(median(mine.map((x) => x.reqPerSec))),
      medianP99Ms: median(mine.map((x) => x.p99Ms)),
      serveUsPerHit: Math.round(median(mine.map((x) => x.serveUs))),
      postgresUsPerHit: Math.round(median(mine.map((x) => x.pgUs))),
      answered: mine.reduce((n, x) => n + x.answered, 0),
      recorded: mine.reduce((n, x) => n + x.recorded, 0),
    };
  };
  const s = { open: of('open'), click: of('click') };
  const recordedPass = s.open.answered === s.open.recorded && s.click.answered === s.click.recorded;
  process.stdout.write(
    [
      '',
      `GET /t/o/{token} and GET /t/c/{token}: formcast serve on PostgreSQL, ${opts.rules ? 'its replay rules on, a token it has not seen in every request' : 'the replay rules off'}; ${opts.connections} connections, ${fmt(opts.requests)} requests per run`,
      `node ${process.version}, ${os.cpus().length} CPU(s); CPU per hit by tier: serve (every thread) and every postgres process of the machine, over each measured run`,
      '',
      ...table(
        ['round', 'endpoint', 'req/s', 'p50 ms', 'p99 ms', 'serve µs/hit', 'PostgreSQL µs/hit', 'answered / recorded'],
        [rows],
        2,
      ),
      '',
      `CPU per hit by tier (medians): open: serve ${fmt(s.open.serveUsPerHit)} µs, PostgreSQL ${fmt(s.open.postgresUsPerHit)} µs; click: serve ${fmt(s.click.serveUsPerHit)} µs, PostgreSQL ${fmt(s.click.postgresUsPerHit)} µs`,
      `answered and recorded: open ${s.open.answered} / ${s.open.recorded}, click ${s.click.answered} / ${s.click.recorded}   ${recordedPass ? 'PASS' : 'MISS'}`,
      '',
    ].join('\n'),
  );
  process.stdout.write(
    `${JSON.stringify({ bench: 'track', database: 'postgres', node: process.version, cpus: os.cpus().length, rules: opts.rules, connections: opts.connections, requests: opts.requests, rounds: opts.rounds, open: s.open, click: s.click, goals: { everyAnsweredRecorded: { pass: recordedPass } }, ok: recordedPass })}\n`,
  );
  if (!recordedPass) throw new BenchError('answered hits are missing from the events');
  return 0;
}

await runBench('bench:track', main);
