/**
 * API throughput benchmark (`npm run bench:api`): `PUT /v1/forms/{id}` on the real Formcast server
 * against a bare Fastify + better-sqlite3 baseline doing one UPDATE per request (bench/baseline-server.ts).
 *
 * Both run as child processes on loopback, each with a fresh SQLite file in a temp directory. autocannon
 * (in this process) drives them alternately, baseline then target, for --rounds rounds; each measured
 * run is preceded by a short warm-up whose figures are discarded. Reported: mean req/s and p99 latency
 * per run, their medians across rounds, and the target/baseline ratio of the median req/s.
 *
 * Goals (from the issue): target rate >= 0.6x the baseline's, and target p99 < 10 ms. They are printed as
 * PASS/MISS and do not change the exit code; the exit code is 1 only when something failed to run
 * (a child did not start, a setup request failed, a non-2xx response or a connection error).
 *
 * Options: --duration N (s, default 10), --rounds N (default 2), --warmup N (s, default 2),
 *          --connections N (default 50), --help.
 */
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { BenchError, HOST, alive, fmt, makeTempDir, parseCommandLine, positiveInt, runBench, startFormcast, startServer, table, type Server } from './harness.js';

const RATIO_GOAL = 0.6;
const P99_GOAL_MS = 10;
const UPDATE_BODY = JSON.stringify({ name: 'Bench form', seoTitle: 'Hello' });

function parseOptions() {
  const values = parseCommandLine({
    duration: { type: 'string' },
    rounds: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
  }, {
    example: 'npm run bench:api -- --duration 5',
    usage: [
      'usage: npm run bench:api -- [--duration N] [--rounds N] [--warmup N] [--connections N]',
      '  --duration N     seconds per measured run (default 10)',
      '  --rounds N       baseline/target pairs, run alternately (default 2)',
      '  --warmup N       seconds of discarded warm-up before each measured run (default 2; 0 skips it)',
      '  --connections N  concurrent connections (default 50)',
    ],
  });
  return {
    duration: positiveInt('duration', values.duration, 10),
    rounds: positiveInt('rounds', values.rounds, 2),
    warmup: values.warmup === '0' ? 0 : positiveInt('warmup', values.warmup, 2),
    connections: positiveInt('connections', values.connections, 50),
  };
}

// ---------------------------------------------------------------------------------------------------
// Setup of the two targets

interface Target {
  label: 'baseline' | 'formcast';
  server: Server;
  path: string;
  headers: Record<string, string>;
}

async function expectStatus(res: Response, status: number, what: string): Promise<string> {
  const text = await res.text();
  if (res.status !== status) throw new BenchError(`${what}: expected ${status}, got ${res.status}: ${text.slice(0, 500)}`);
  return text;
}

async function setupFormcast(): Promise<Target> {
  const { server, apiKey: key } = await startFormcast(makeTempDir('formcast'));

  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const form = JSON.parse(await expectStatus(await fetch(`${server.url}/v1/forms`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'Bench', type: 'SIGN_UP', fieldMapping: { email: 'email' } }),
  }), 201, 'POST /v1/forms')) as { id: string };

  const formPath = `/v1/forms/${form.id}`;
  const updated = JSON.parse(await expectStatus(await fetch(`${server.url}${formPath}`, { method: 'PUT', headers, body: UPDATE_BODY }), 200, `PUT ${formPath}`)) as { name?: string; seoTitle?: string };
  if (updated.name !== 'Bench form' || updated.seoTitle !== 'Hello') throw new BenchError(`PUT ${formPath} did not apply the update: ${JSON.stringify(updated)}`);
  return { label: 'formcast', server, path: formPath, headers };
}

async function setupBaseline(): Promise<Target> {
  const dir = makeTempDir('baseline');
  const formId = 'form_baseline';
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST, DATABASE_URL: path.join(dir, 'baseline.db'), BENCH_FORM_ID: formId };
  const server = await startServer('baseline server', ['--import', 'tsx', 'bench/baseline-server.ts'], env);
  const headers = { 'content-type': 'application/json' };
  const formPath = `/forms/${formId}`;
  await expectStatus(await fetch(`${server.url}${formPath}`, { method: 'PUT', headers, body: UPDATE_BODY }), 200, `baseline PUT ${formPath}`);
  return { label: 'baseline', server, path: formPath, headers };
}

// ---------------------------------------------------------------------------------------------------
// Measuring

interface Run {
  round: number;
  target: Target['label'];
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  warmupNon2xx: number;
  /** Non-2xx status codes seen (warm-up included) and how often, e.g. { "401": 12 }. */
  badStatuses: Record<string, number>;
}

function badStatuses(...results: (autocannon.Result | undefined)[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of results) {
    for (const [code, stat] of Object.entries(r?.statusCodeStats ?? {})) {
      if (code.startsWith('2') || !stat.count) continue;
      out[code] = (out[code] ?? 0) + stat.count;
    }
  }
  return out;
}

async function cannon(target: Target, connections: number, duration: number): Promise<autocannon.Result> {
  if (!alive(target.server.child)) throw new BenchError(`${target.server.name} is no longer running\n${target.server.output()}`);
  return autocannon({
    url: `${target.server.url}${target.path}`,
    method: 'PUT',
    headers: target.headers,
    body: UPDATE_BODY,
    connections,
    pipelining: 1,
    duration,
  });
}

async function measure(target: Target, round: number, opts: ReturnType<typeof parseOptions>): Promise<Run> {
  process.stderr.write(`round ${round}: ${target.label.padEnd(8)} ${opts.warmup ? `warm-up ${opts.warmup} s, ` : ''}measuring ${opts.duration} s ...`);
  const warm = opts.warmup ? await cannon(target, opts.connections, opts.warmup) : undefined;
  const r = await cannon(target, opts.connections, opts.duration);
  const result: Run = {
    round,
    target: target.label,
    reqPerSec: r.requests.mean,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    warmupNon2xx: warm?.non2xx ?? 0,
    badStatuses: badStatuses(warm, r),
  };
  process.stderr.write(` ${fmt(result.reqPerSec, 0)} req/s, p99 ${result.p99Ms} ms\n`);
  return result;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function summarize(runs: Run[], label: Target['label']) {
  const mine = runs.filter((r) => r.target === label);
  return {
    reqPerSec: mine.map((r) => Math.round(r.reqPerSec * 10) / 10),
    p99Ms: mine.map((r) => r.p99Ms),
    p50Ms: mine.map((r) => r.p50Ms),
    medianReqPerSec: Math.round(median(mine.map((r) => r.reqPerSec)) * 10) / 10,
    medianP99Ms: median(mine.map((r) => r.p99Ms)),
    requests: mine.reduce((a, r) => a + r.requests, 0),
    non2xx: mine.reduce((a, r) => a + r.non2xx + r.warmupNon2xx, 0),
    errors: mine.reduce((a, r) => a + r.errors, 0),
    timeouts: mine.reduce((a, r) => a + r.timeouts, 0),
    badStatuses: mine.reduce<Record<string, number>>((acc, r) => {
      for (const [code, n] of Object.entries(r.badStatuses)) acc[code] = (acc[code] ?? 0) + n;
      return acc;
    }, {}),
  };
}

function report(runs: Run[], opts: ReturnType<typeof parseOptions>): boolean {
  const baseline = summarize(runs, 'baseline');
  const target = summarize(runs, 'formcast');
  const ratio = baseline.medianReqPerSec > 0 ? target.medianReqPerSec / baseline.medianReqPerSec : 0;
  const ratioPass = ratio >= RATIO_GOAL;
  const p99Pass = target.medianP99Ms < P99_GOAL_MS;
  const ranClean = baseline.non2xx + target.non2xx + baseline.errors + target.errors === 0;

  const cols = ['round', 'target', 'req/s (mean)', 'p50 ms', 'p99 ms', 'requests', 'non-2xx', 'errors'];
  const rows: string[][] = runs.map((r) => [
    String(r.round), r.target, fmt(r.reqPerSec, 1), String(r.p50Ms), String(r.p99Ms), String(r.requests), String(r.non2xx + r.warmupNon2xx), String(r.errors),
  ]);
  for (const [label, s] of [['baseline', baseline], ['formcast', target]] as const) {
    rows.push(['median', label, fmt(s.medianReqPerSec, 1), '', String(s.medianP99Ms), String(s.requests), String(s.non2xx), String(s.errors)]);
  }
  const out = [
    '',
    `PUT /v1/forms/{id} (formcast) vs PUT /forms/:id (bare Fastify + better-sqlite3), loopback`,
    `${opts.connections} connections, ${opts.duration} s per run after ${opts.warmup} s warm-up, ${opts.rounds} round(s), alternating; node ${process.version}, ${os.cpus().length} CPU(s)`,
    '',
    ...table(cols, [rows.slice(0, runs.length), rows.slice(runs.length)], 2),
    '',
    `ratio formcast/baseline (median req/s): ${ratio.toFixed(3)}x   goal >= ${RATIO_GOAL}x   ${ratioPass ? 'PASS' : 'MISS'}`,
    `formcast p99 (median of rounds):        ${target.medianP99Ms} ms   goal < ${P99_GOAL_MS} ms   ${p99Pass ? 'PASS' : 'MISS'}`,
    `non-2xx responses / connection errors:  ${baseline.non2xx + target.non2xx} / ${baseline.errors + target.errors}   ${ranClean ? 'ok' : 'FAILED (must be 0; the figures above are not valid)'}`,
    ...(ranClean ? [] : [`  status codes: baseline ${JSON.stringify(baseline.badStatuses)}, formcast ${JSON.stringify(target.badStatuses)}; timeouts: ${baseline.timeouts + target.timeouts}`]),
    '',
  ];
  process.stdout.write(out.join('\n'));
  process.stdout.write(`${JSON.stringify({
    bench: 'api',
    endpoint: 'PUT /v1/forms/{id}',
    node: process.version,
    cpus: os.cpus().length,
    connections: opts.connections,
    durationSec: opts.duration,
    warmupSec: opts.warmup,
    rounds: opts.rounds,
    baseline,
    target,
    ratio: Math.round(ratio * 1000) / 1000,
    goals: {
      ratio: { min: RATIO_GOAL, value: Math.round(ratio * 1000) / 1000, pass: ratioPass },
      p99Ms: { max: P99_GOAL_MS, value: target.medianP99Ms, pass: p99Pass },
    },
    ok: ranClean,
  })}\n`);
  return ranClean;
}

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const opts = parseOptions();
  process.stderr.write('setting up: baseline server, formcast workspace + server + form ...\n');
  const baseline = await setupBaseline();
  const formcast = await setupFormcast();
  process.stderr.write(`baseline ${baseline.server.url}${baseline.path}\nformcast ${formcast.server.url}${formcast.path}\n`);

  const runs: Run[] = [];
  for (let round = 1; round <= opts.rounds; round++) {
    for (const target of [baseline, formcast]) {
      runs.push(await measure(target, round, opts));
    }
  }
  return report(runs, opts) ? 0 : 1;
}

await runBench('bench:api', main);
