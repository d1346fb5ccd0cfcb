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
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HOST = '127.0.0.1';
const RATIO_GOAL = 0.6;
const P99_GOAL_MS = 10;
const START_TIMEOUT_MS = 30_000;
const UPDATE_BODY = JSON.stringify({ name: 'Bench form', seoTitle: 'Hello' });

class BenchError extends Error {}

// ---------------------------------------------------------------------------------------------------
// Options

function positiveNumber(name: string, raw: string | undefined, fallback: number, integer: boolean): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new BenchError(`--${name} must be a positive ${integer ? 'integer' : 'number'}, got "${raw}"`);
  }
  return n;
}

function parseOptions() {
  let parsed;
  try {
    parsed = parseArgs({
      args: process.argv.slice(2),
      options: {
        duration: { type: 'string' },
        rounds: { type: 'string' },
        warmup: { type: 'string' },
        connections: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    });
  } catch (err) {
    // `npm run bench:api --duration 5` (no `--`) hands npm the option and the bench only the bare value.
    const npmAteIt = ['duration', 'rounds', 'warmup', 'connections'].some((o) => process.env[`npm_config_${o}`] !== undefined);
    throw new BenchError(`${(err as Error).message}${npmAteIt ? '; pass options after `--`: npm run bench:api -- --duration 5' : ' (see --help)'}`);
  }
  const { values } = parsed;
  if (values.help) {
    process.stdout.write([
      'usage: npm run bench:api -- [--duration N] [--rounds N] [--warmup N] [--connections N]',
      '  --duration N     seconds per measured run (default 10)',
      '  --rounds N       baseline/target pairs, run alternately (default 2)',
      '  --warmup N       seconds of discarded warm-up before each measured run (default 2; 0 skips it)',
      '  --connections N  concurrent connections (default 50)',
      '',
    ].join('\n'));
    process.exit(0);
  }
  return {
    duration: positiveNumber('duration', values.duration, 10, true),
    rounds: positiveNumber('rounds', values.rounds, 2, true),
    warmup: values.warmup === '0' ? 0 : positiveNumber('warmup', values.warmup, 2, true),
    connections: positiveNumber('connections', values.connections, 50, true),
  };
}

// ---------------------------------------------------------------------------------------------------
// Child processes and temp directories, cleaned up whatever happens

const children = new Set<ChildProcess>();
const tempDirs = new Set<string>();

function makeTempDir(label: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `formcast-bench-${label}-`));
  tempDirs.add(dir);
  return dir;
}

function removeTempDirs(): void {
  for (const dir of tempDirs) {
    try {
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // best effort
    }
    tempDirs.delete(dir);
  }
}

function alive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** SIGTERM (both servers shut down gracefully on it), then SIGKILL if it lingers. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (alive(child)) {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => { if (alive(child)) child.kill('SIGKILL'); }, 5_000);
    await exited;
    clearTimeout(timer);
  }
  children.delete(child);
}

async function cleanup(): Promise<void> {
  await Promise.all([...children].map(stopChild));
  removeTempDirs();
}

// Last resort, synchronous: nothing outlives this process, whatever the way out.
process.on('exit', () => {
  for (const child of children) if (alive(child)) child.kill('SIGKILL');
  removeTempDirs();
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    process.stderr.write(`\ninterrupted (${signal}), stopping the servers\n`);
    void cleanup().finally(() => process.exit(130));
  });
}

/** Keeps the last lines a child wrote, to show when it fails. */
function tail(child: ChildProcess, max = 40): () => string {
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (lines.length > max) lines.splice(0, lines.length - max);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => lines.map((l) => `    | ${l}`).join('\n');
}

interface Server {
  name: string;
  child: ChildProcess;
  url: string;
  output: () => string;
}

/** Spawns a server and waits for its `listening on http://HOST:PORT` line on stdout. */
function startServer(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<Server> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const output = tail(child);
  return new Promise<Server>((resolve, reject) => {
    let stdout = '';
    const fail = (why: string) => {
      clearTimeout(timer);
      reject(new BenchError(`${name} did not start: ${why}\n${output()}`));
    };
    const timer = setTimeout(() => fail(`no "listening on" line within ${START_TIMEOUT_MS / 1000} s`), START_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const m = /^listening on (http:\/\/\S+:\d+)\s*$/m.exec(stdout);
      if (!m) return;
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      child.off('error', onError);
      resolve({ name, child, url: m[1]!, output });
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => fail(`exited (${signal ?? `code ${code}`})`);
    const onError = (err: Error) => fail(err.message);
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
  });
}

/** Runs a command to completion; returns its stdout, throws with its output on a non-zero exit. */
function run(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => { stdout += c.toString('utf8'); });
  child.stderr.on('data', (c: Buffer) => { stderr += c.toString('utf8'); });
  return new Promise<string>((resolve, reject) => {
    child.once('error', (err) => reject(new BenchError(`${name} failed: ${err.message}`)));
    child.once('exit', (code, signal) => {
      children.delete(child);
      if (code === 0) resolve(stdout);
      else reject(new BenchError(`${name} failed (${signal ?? `exit code ${code}`}):\n${stderr}${stdout}`));
    });
  });
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
  const dir = makeTempDir('formcast');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    HOST,
    LOG_LEVEL: 'warn',
    DATABASE_URL: path.join(dir, 'formcast.db'),
  };
  delete env.PUBLIC_URL;

  const created = JSON.parse(await run('formcast workspace create', ['bin/formcast', 'workspace', 'create', 'bench', '--json'], env)) as {
    workspace: { id: string };
    apiKey: { key: string };
  };
  const key = created.apiKey.key;
  const server = await startServer('formcast serve', ['bin/formcast', 'serve'], env);

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

function fmt(n: number, digits: number): string {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
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
  const widths = cols.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const out = [
    '',
    `PUT /v1/forms/{id} (formcast) vs PUT /forms/:id (bare Fastify + better-sqlite3), loopback`,
    `${opts.connections} connections, ${opts.duration} s per run after ${opts.warmup} s warm-up, ${opts.rounds} round(s), alternating; node ${process.version}, ${os.cpus().length} CPU(s)`,
    '',
    line(cols),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.slice(0, runs.length).map(line),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.slice(runs.length).map(line),
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

let exitCode = 1;
try {
  exitCode = await main();
} catch (err) {
  process.stderr.write(`\nbench:api failed: ${err instanceof BenchError ? err.message : (err as Error).stack ?? String(err)}\n`);
} finally {
  await cleanup();
}
process.exit(exitCode);
