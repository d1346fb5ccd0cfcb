/**
 * What the benchmarks share (bench/api.bench.ts, bench/import.bench.ts, bench/send.bench.ts, bench/emails.bench.ts, …):
 * command-line parsing, temp directories and child processes that are cleaned up whatever happens, starting
 * `formcast serve` (or another child) and waiting until it says it is ready, running a command to completion,
 * checking a setup response, peak RSS and CPU time, the SMTP sink, table output, and the top-level runner that
 * turns a failure into a message and an exit code.
 *
 * Importing this module installs process-wide exit and SIGINT/SIGTERM handlers (see below): import it
 * from a benchmark's entry point, not from the child scripts it spawns.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import autocannon from 'autocannon';
import SQLite from 'better-sqlite3';

/** The repository root: every child runs with it as its working directory. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Servers listen on loopback only. */
export const HOST = '127.0.0.1';
const START_TIMEOUT_MS = 30_000;

/** A failure whose message says it all: printed without a stack trace. */
export class BenchError extends Error {}

// ---------------------------------------------------------------------------------------------------
// Options

type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

/**
 * Parses process.argv strictly (no positionals, no unknown options), with `--help`/`-h` added: on --help it
 * prints `usage` and exits 0. A parse error is a BenchError; when npm swallowed one of the string options
 * (`npm run bench:x --rows 5` without `--` leaves only the stray value `5`), it says to pass them after `--`.
 */
export function parseCommandLine<const O extends OptionsConfig>(
  options: O,
  help: { example: string; usage: string[] },
) {
  const config = {
    args: process.argv.slice(2),
    options: { ...options, help: { type: 'boolean', short: 'h' } } as const,
    strict: true,
  } as const;
  let parsed;
  try {
    parsed = parseArgs(config);
  } catch (err) {
    const stringOptions = Object.entries(options)
      .filter(([, o]) => o.type === 'string')
      .map(([name]) => name);
    const npmAteIt = stringOptions.some((o) => process.env[`npm_config_${o}`] !== undefined);
    throw new BenchError(
      `${(err as Error).message}${npmAteIt ? `; pass options after \`--\`: ${help.example}` : ' (see --help)'}`,
    );
  }
  if ((parsed.values as { help?: boolean }).help) {
    process.stdout.write([...help.usage, ''].join('\n'));
    process.exit(0);
  }
  return parsed.values;
}

/** The options `postgresUrlOf` reads, for a benchmark's parseCommandLine. */
export const POSTGRES_OPTIONS = { pg: { type: 'boolean' }, 'database-url': { type: 'string' } } as const;

/**
 * The PostgreSQL server a benchmark's `--pg` / `--database-url URL` options name: URL, or with `--pg` alone
 * TEST_DATABASE_URL; undefined without either. A BenchError when `--pg` has neither.
 */
export function postgresUrlOf(values: { pg?: boolean; 'database-url'?: string }): string | undefined {
  const url = values['database-url'] ?? (values.pg ? process.env.TEST_DATABASE_URL : undefined);
  if ((values.pg || values['database-url']) && !url)
    throw new BenchError(
      '--pg needs --database-url or TEST_DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test)',
    );
  return url;
}

/** `raw` as a positive integer (`1_000` allowed), `fallback` when absent; anything else is a BenchError naming --`name`. */
export function positiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw.replace(/_/g, ''));
  if (!Number.isInteger(n) || n <= 0) throw new BenchError(`--${name} must be a positive integer, got "${raw}"`);
  return n;
}

// ---------------------------------------------------------------------------------------------------
// Child processes and temp directories. Invariant: nothing outlives this process. Every child spawned here
// is registered until it has exited, every temp directory until it is removed (unless made with `keep`),
// and all are stopped or removed on the way out: runBench's `finally`, a SIGINT/SIGTERM, or, as a last
// resort, the synchronous 'exit' handler (SIGKILL, since nothing can be awaited there).

const children = new Set<ChildProcess>();
const tempDirs = new Set<string>();

/** A fresh directory under the OS temp dir; removed on exit unless `keep` (then the caller prints where it is). */
export function makeTempDir(label: string, { keep = false } = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `formcast-bench-${label}-`));
  if (!keep) tempDirs.add(dir);
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

export function alive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** SIGTERM (the servers shut down gracefully on it), then SIGKILL if it lingers 5 s. Resolves once it exited. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (alive(child)) {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => {
      if (alive(child)) child.kill('SIGKILL');
    }, 5_000);
    await exited;
    clearTimeout(timer);
  }
  children.delete(child);
}

const cleanups: (() => Promise<void>)[] = [];

/** Runs `fn` at cleanup (after the children are stopped, last registered first), e.g. to drop a database. */
export function atCleanup(fn: () => Promise<void>): void {
  cleanups.push(fn);
}

async function cleanup(): Promise<void> {
  await Promise.all([...children].map(stopChild));
  for (const fn of cleanups.splice(0).reverse()) {
    try {
      await fn();
    } catch (err) {
      process.stderr.write(`cleanup: ${(err as Error).message}\n`);
    }
  }
  removeTempDirs();
}

process.on('exit', () => {
  for (const child of children) if (alive(child)) child.kill('SIGKILL');
  removeTempDirs();
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    process.stderr.write(`\ninterrupted (${signal}), stopping the child processes\n`);
    void cleanup().finally(() => process.exit(130));
  });
}

/** `node args…` from ROOT, stdout and stderr piped (and an IPC channel if asked), registered for cleanup. */
function spawnNode(args: string[], env: NodeJS.ProcessEnv, ipc = false) {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    // bin/formcast refuses to run from its sources (a source edited since `npm run build`): the figures are the build's.
    env: { ...env, FORMCAST_REQUIRE_BUILD: '1' },
    stdio: ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  return child;
}

/** Keeps the last `max` lines a child wrote (stdout and stderr), to show when it fails. */
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

export interface Server {
  name: string;
  child: ChildProcess;
  /** http://HOST:PORT, as the server printed it. */
  url: string;
  /** The last lines of its output, for error messages. */
  output: () => string;
}

/**
 * Spawns `node args…` and resolves once its stdout matches `ready`, with the match. Rejects with a BenchError
 * and the child's last output lines if it exits, fails to spawn, or prints no such line within 30 s; the
 * child is still stopped by the cleanup. `ipc` opens a message channel (child.send / 'message').
 */
export function startChild(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  { ipc = false } = {},
): Promise<{ child: ChildProcess; match: RegExpExecArray; output: () => string }> {
  const child = spawnNode(args, env, ipc);
  const output = tail(child);
  return new Promise((resolve, reject) => {
    let stdout = '';
    const fail = (why: string) => {
      clearTimeout(timer);
      reject(new BenchError(`${name} did not start: ${why}\n${output()}`));
    };
    const timer = setTimeout(() => fail(`no ready line within ${START_TIMEOUT_MS / 1000} s`), START_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const match = ready.exec(stdout);
      if (!match) return;
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      child.off('error', onError);
      resolve({ child, match, output });
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => fail(`exited (${signal ?? `code ${code}`})`);
    const onError = (err: Error) => fail(err.message);
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
  });
}

/** startChild for a server that says `listening on http://HOST:PORT` (`formcast serve` in its JSON log line's msg, the bare servers as a plain line). */
export async function startServer(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<Server> {
  const { child, match, output } = await startChild(
    name,
    args,
    env,
    /(?:^|"msg":")listening on (http:\/\/[^\s"]+:\d+)/m,
  );
  return { name, child, url: match[1]!, output };
}

/** Runs `node args…` to completion; returns its stdout, throws a BenchError with its output on a non-zero exit. */
export function run(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawnNode(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => {
    stdout += c.toString('utf8');
  });
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
  });
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
// The real server

/**
 * Starts the real server on a fresh SQLite file in `dir`: `formcast workspace create bench --json` (a
 * workspace and its admin API key), then `formcast serve` on HOST, port 0, LOG_LEVEL=warn, and PUBLIC_URL
 * unset whatever the caller's environment says. `nodeArgs` go to node before the script (`--cpu-prof`, …);
 * `env` adds to (or overrides) the environment.
 */
export async function startFormcast(
  dir: string,
  { nodeArgs = [] as string[], env: extra = {} as NodeJS.ProcessEnv } = {},
): Promise<{ server: Server; workspaceId: string; apiKey: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    HOST,
    LOG_LEVEL: 'warn',
    DATABASE_URL: path.join(dir, 'formcast.db'),
    ...extra,
  };
  delete env.PUBLIC_URL;
  const created = JSON.parse(
    await run('formcast workspace create', ['bin/formcast', 'workspace', 'create', 'bench', '--json'], env),
  ) as {
    workspace: { id: string };
    apiKey: { key: string };
  };
  const server = await startServer('formcast serve', [...nodeArgs, 'bin/formcast', 'serve'], env);
  return { server, workspaceId: created.workspace.id, apiKey: created.apiKey.key };
}

/** The body of a setup request's response; a BenchError unless its status is `status`. */
export async function expectStatus(res: Response, status: number, what: string): Promise<string> {
  const text = await res.text();
  if (res.status !== status)
    throw new BenchError(`${what}: expected ${status}, got ${res.status}: ${text.slice(0, 500)}`);
  return text;
}

/** What the SMTP sink (bench/smtp-sink.ts) counted: messages, those DKIM-signed, bytes, first and last arrival (ms). */
export interface SinkStats {
  count: number;
  /** Distinct Message-IDs: `count - unique` messages arrived twice. */
  unique: number;
  signed: number;
  bytes: number;
  first: number | null;
  last: number | null;
  /** Messages by the wall-clock second they arrived in (`Math.floor(ms / 1000)` → count): the rate over time. */
  perSecond: Record<string, number>;
}

export interface Sink {
  port: number;
  /** The sink's process (its CPU is read by the benchmarks that account for the whole machine's). */
  pid: number;
  stats(): Promise<SinkStats>;
  reset(): Promise<void>;
  /**
   * When each message carrying an `X-Bench-Mark` header arrived (wall-clock ms, as SinkStats' first/last), by the
   * header's value: the first arrival of each value (bench:emails times its receipts with it). Reset with the counters.
   */
  marks(): Promise<Record<string, number>>;
}

/**
 * Asks a child started with an IPC channel: sends `{ cmd }` and resolves with its first message of type `type`
 * (default: the command's name). Rejects at once when the child no longer runs, when it exits before answering, or
 * when no answer comes within 30 s, with its last output lines (`output`) when given: a sink that died mid-run used to
 * leave bench:send waiting for an answer for ever, without a word.
 */
export function ipcRequester(
  child: ChildProcess,
  name: string,
  output?: () => string,
): <T>(cmd: string, type?: string) => Promise<T> {
  const why = (what: string) => new BenchError(`${name} ${what}${output ? `\n${output()}` : ''}`);
  return <T>(cmd: string, type = cmd) =>
    new Promise<T>((resolve, reject) => {
      if (!alive(child)) return reject(why('is no longer running'));
      const done = () => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
      };
      const onMessage = (msg: { type?: string }) => {
        if (msg?.type !== type) return;
        done();
        resolve(msg as T);
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        done();
        reject(why(`exited (${signal ?? `code ${code}`}) before answering ${cmd}`));
      };
      const timer = setTimeout(() => {
        done();
        reject(why(`did not answer ${cmd} within 30 s`));
      }, 30_000);
      child.on('message', onMessage);
      child.once('exit', onExit);
      child.send({ cmd });
    });
}

/** Starts bench/smtp-sink.ts in a process of its own (stopped by the cleanup) and talks to it over IPC. */
export async function startSmtpSink(): Promise<Sink> {
  const { child, match, output } = await startChild(
    'SMTP sink',
    ['--import', 'tsx', 'bench/smtp-sink.ts'],
    { ...process.env, PORT: '0' },
    /^sink listening on (\d+)$/m,
    { ipc: true },
  );
  const request = ipcRequester(child, 'the SMTP sink', output);
  return {
    port: Number(match[1]),
    pid: child.pid!,
    stats: () => request<SinkStats>('stats', 'stats'),
    reset: () => request<void>('reset', 'reset'),
    marks: () => request<{ marks: Record<string, number> }>('marks', 'marks').then((m) => m.marks),
  };
}

/**
 * Whether the PostgreSQL server of the last freshPostgresDatabase runs autovacuum (null: not asked yet). A server
 * without it never removes the dead row versions a send leaves (each delivery is updated two or three times), so
 * every index walk over them grows slower as a long send goes on: not how PostgreSQL is deployed (autovacuum is on
 * by default). This machine's CI configuration turns it off (/etc/postgresql/15/main/conf.d/90-ci.conf), and the
 * PostgreSQL figures before 2026-12-01 were measured so (bench/README.md, "Autovacuum").
 */
export let postgresAutovacuum: boolean | null = null;

/** A new PostgreSQL database on the server of `baseUrl` (dropped at cleanup unless `keep`); its URL. */
export async function freshPostgresDatabase(baseUrl: string, label: string, keep = false): Promise<string> {
  const { default: pg } = await import('pg');
  const name = `formcast_bench_${label}_${process.pid}_${crypto.randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  postgresAutovacuum = (await admin.query<{ autovacuum: string }>('show autovacuum')).rows[0]?.autovacuum === 'on';
  await admin.end();
  if (!postgresAutovacuum)
    process.stderr.write(
      "warning: this PostgreSQL server's autovacuum is off: dead row versions pile up for the whole run, unlike a " +
        "deployed server. To measure as deployed: psql -c 'alter system set autovacuum = on' -c 'select pg_reload_conf()'\n",
    );
  if (!keep)
    atCleanup(async () => {
      const c = new pg.Client({ connectionString: baseUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    });
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

// ---------------------------------------------------------------------------------------------------
// Sending (bench:send, bench:emails)

/** No new message at the sink for this long: the run is stuck. */
const STALL_MS = 60_000;

/**
 * The environment of a sending benchmark's Formcast processes: `database` (a SQLite file or a PostgreSQL URL), its
 * outbox and installation key in `dir`, PUBLIC_URL as given, SMTP_MAX_CONNECTIONS; none of the caller's worker,
 * sending, SMTP or SERVE_WORKER settings (each run sets its own), SECRET_KEY unset (the key file is made by the first
 * command).
 */
export function sendingEnv(dir: string, database: string, publicUrl: string, connections: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    HOST,
    LOG_LEVEL: 'warn',
    DATABASE_URL: database,
    PUBLIC_URL: publicUrl,
    SMTP_MAX_CONNECTIONS: String(connections),
    OUTBOX_DIR: path.join(dir, 'outbox'),
    SECRET_KEY_FILE: path.join(dir, 'secret.key'),
  };
  delete env.SECRET_KEY;
  for (const name of Object.keys(env))
    if (
      name.startsWith('WORKER_') ||
      name.startsWith('SEND_') ||
      name === 'SMTP_RATE_LIMIT' ||
      name === 'SMTP_URL' ||
      name === 'SERVE_WORKER'
    )
      delete env[name];
  return env;
}

/**
 * `formcast workspace create bench --json` and `formcast domain add <domain> --verified` (a real RSA-2048 DKIM key)
 * through the CLI, with `env`: the workspace's id and its admin API key.
 */
export async function createSendingWorkspace(
  env: NodeJS.ProcessEnv,
  domain: string,
): Promise<{ workspaceId: string; apiKey: string }> {
  const created = JSON.parse(
    await run('formcast workspace create', ['bin/formcast', 'workspace', 'create', 'bench', '--json'], env),
  ) as { workspace: { id: string }; apiKey: { key: string } };
  await run(
    'formcast domain add',
    ['bin/formcast', 'domain', 'add', domain, '--workspace', created.workspace.id, '--verified', '--json'],
    env,
  );
  return { workspaceId: created.workspace.id, apiKey: created.apiKey.key };
}

/** The benchmarks' contacts: ids that sort in insertion order, addresses at example.test (a name never looked up). */
export const contactId = (n: number) => `ct_BENCH${n.toString(36).toUpperCase().padStart(21, '0')}`; // 'ct_' + 26 of [0-9A-Z], in order
export const contactEmail = (n: number) => `user${String(n).padStart(7, '0')}@example.test`;

export interface DkimRow {
  id: string;
  name: string;
  dkim_selector: string;
  dkim_private_key: string;
}

/**
 * Inserts `rows` SUBSCRIBED contacts (contactId/contactEmail 0…rows−1, first name `First<n>`) straight into the
 * database, in batches, and reads the workspace's verified domain and its (sealed) signing key, on either database.
 */
export async function seedContacts(database: string, workspaceId: string, rows: number): Promise<DkimRow> {
  const now = new Date().toISOString();
  const keyQuery =
    "select id, name, dkim_selector, dkim_private_key from domains where workspace_id = $1 and status = 'VERIFIED' limit 1";
  if (database.startsWith('postgres')) {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: database });
    await client.connect();
    try {
      for (let from = 0; from < rows; from += 1000) {
        const to = Math.min(rows, from + 1000);
        const params: unknown[] = [];
        const tuples: string[] = [];
        for (let n = from; n < to; n++) {
          const b = params.length;
          params.push(contactId(n), workspaceId, contactEmail(n), `First${n}`, now);
          tuples.push(`($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, 'Doe', '{}', 'SUBSCRIBED', $${b + 5}, $${b + 5})`);
        }
        await client.query(
          `insert into contacts (id, workspace_id, email, first_name, last_name, properties, status, created_at, updated_at) values ${tuples.join(', ')}`,
          params,
        );
      }
      // What autovacuum does after a bulk load, before the send starts (a list's contacts are not all imported the
      // minute before its broadcast): without it, the first vacuum of the new contacts (setting their pages all
      // visible, hint bits) ran during a send's first minute when the server's autovacuum was on.
      await client.query('vacuum analyze contacts');
      const key = (await client.query<DkimRow>(keyQuery, [workspaceId])).rows[0];
      if (!key) throw new BenchError('no verified domain in the benchmark database');
      return key;
    } finally {
      await client.end();
    }
  }
  const db = new SQLite(database);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const insert =
    db.prepare(`insert into contacts (id, workspace_id, email, first_name, last_name, properties, status, created_at, updated_at)
    values (?, ?, ?, ?, ?, '{}', 'SUBSCRIBED', ?, ?)`);
  const batch = db.transaction((from: number, to: number) => {
    for (let n = from; n < to; n++)
      insert.run(contactId(n), workspaceId, contactEmail(n), `First${n}`, 'Doe', now, now);
  });
  for (let n = 0; n < rows; n += 20_000) batch(n, Math.min(rows, n + 20_000));
  const key = db.prepare(keyQuery.replace('$1', '?')).get(workspaceId) as DkimRow | undefined;
  db.close();
  if (!key) throw new BenchError('no verified domain in the benchmark database');
  return key;
}

/**
 * Polls the sink every 250 ms until `expected` distinct messages arrived, saying how far it got every 10 s; `check`
 * throws to stop early (a process died). Fails when nothing arrives for STALL_MS, with what `explain` finds then.
 */
export async function waitForSink(
  sink: Sink,
  expected: number,
  label: string,
  check: () => void,
  explain: () => Promise<string> = async () => '',
): Promise<SinkStats> {
  let lastCount = -1;
  let lastProgress = Date.now();
  let lastReport = 0;
  for (;;) {
    check();
    const s = await sink.stats();
    if (s.count !== lastCount) {
      lastCount = s.count;
      lastProgress = Date.now();
    }
    if (Date.now() - lastReport > 10_000 || s.unique >= expected) {
      lastReport = Date.now();
      const rate =
        s.first !== null && s.last !== null && s.last > s.first
          ? ` (${Math.round(s.count / ((s.last - s.first) / 1000))}/s)`
          : '';
      process.stderr.write(
        `  ${label}: ${s.count.toLocaleString('en-US')} / ${expected.toLocaleString('en-US')}${rate}\n`,
      );
    }
    if (s.unique >= expected) return s;
    if (Date.now() - lastProgress > STALL_MS)
      throw new BenchError(
        `${label}: no message arrived for ${STALL_MS / 1000} s (${s.count} of ${expected})\n${await explain()}`.trimEnd(),
      );
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** VmRSS and VmHWM (peak RSS) of a live process, in MB (Linux: /proc/<pid>/status). */
export function memoryOf(pid: number): { rssMb: number; peakRssMb: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
  return { rssMb: Math.round(kb('VmRSS') / 1024), peakRssMb: Math.round(kb('VmHWM') / 1024) };
}

/** User + system CPU time of a live process so far, in seconds (Linux: /proc/<pid>/stat, in clock ticks of 10 ms). */
export function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The busy CPU seconds of the whole machine, all cores (/proc/stat: all but idle and iowait). */
export function machineCpuSeconds(): number {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number) as number[];
  return (user! + nice! + system! + irq! + softirq! + steal!) / 100;
}

/**
 * User + system CPU seconds of every `postgres` process of this machine (the server's backends and helpers): the load
 * of any other database on that server counts too (run nothing else on it meanwhile), and a server on another host
 * reads 0.
 */
export function postgresCpuSeconds(): number {
  let total = 0;
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      total += cpuSeconds(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/**
 * Runs autocannon for a fixed number of requests (`options.amount`); resolves with its result, the wall time from
 * the start to the last response, and the responses by status code as they came. (With `amount`, autocannon ends a
 * run at its next one-second sample tick, and its `duration` with it: req/s from that duration would be rounded down
 * to requests per whole second, which understates a fast server most.)
 */
export async function cannonAmount(
  options: autocannon.Options & { amount: number },
): Promise<{ result: autocannon.Result; seconds: number; statuses: Map<number, number> }> {
  const start = performance.now();
  let last = start;
  const statuses = new Map<number, number>();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(options, (err, res) => (err ? reject(err) : resolve(res)));
    instance.on('response', (_client: unknown, statusCode: number) => {
      last = performance.now();
      statuses.set(statusCode, (statuses.get(statusCode) ?? 0) + 1);
    });
  });
  return { result, seconds: (last - start) / 1000, statuses };
}

/**
 * The host's speed during a run, for reading a dip: a process of its own does the same small piece of work every second
 * (SHA-256 of 1 MB and a JSON round trip of 140 KB, ~3 ms on a quiet 2-core machine here) and reports the CPU time it
 * took. Its CPU time does not count the time it waited for a core, so a busy machine alone does not move it; it rises
 * when the same instructions run slower: another tenant on the host sharing the core's other hyperthread, its caches
 * or its memory bandwidth, or a lower clock. A dip in a benchmark's rate that comes with a slower canary is the
 * host's; one without it is the benchmark's own. Costs ~0.3% of a core.
 */
export interface CanarySample {
  /** Date.now() when the work ended. */
  at: number;
  /** CPU time of the work (µs, user and system). */
  cpuUs: number;
}

const CANARY = `
const crypto = require('node:crypto');
const data = Buffer.alloc(1 << 20, 7);
const doc = { items: Array.from({ length: 2000 }, (_, i) => ({ id: 'dlv_' + i, email: 'r' + i + '@example.test', n: i, tags: ['a', 'b'] })) };
setInterval(() => {
  const before = process.cpuUsage();
  crypto.createHash('sha256').update(data).digest();
  JSON.parse(JSON.stringify(doc));
  const d = process.cpuUsage(before);
  process.stdout.write(JSON.stringify({ at: Date.now(), cpuUs: d.user + d.system }) + '\\n');
}, 1000);
`;

export function startCanary(): { stop(): Promise<CanarySample[]> } {
  const child = spawnNode(['-e', CANARY], {});
  const samples: CanarySample[] = [];
  let rest = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString('utf8')).split('\n');
    rest = lines.pop()!;
    for (const line of lines) if (line) samples.push(JSON.parse(line) as CanarySample);
  });
  return {
    async stop() {
      await stopChild(child);
      return samples;
    },
  };
}

/**
 * The canary's median CPU time (µs) in each window of `windowS` seconds from the second of `startMs` (as a rate
 * timeline's windows), null where it has no sample.
 */
export function canaryWindows(samples: CanarySample[], startMs: number, windows: number, windowS: number) {
  return inWindows(samples, startMs, windows, windowS).map((xs) => (xs.length ? median(xs.map((s) => s.cpuUs)) : null));
}

/**
 * Samples stamped with `at` (Date.now()) put into a rate timeline's windows: `windows` of `windowS` seconds from the
 * second of `startMs`; a sample outside them is left out.
 */
function inWindows<T extends { at: number }>(samples: T[], startMs: number, windows: number, windowS: number): T[][] {
  const start = Math.floor(startMs / 1000) * 1000;
  const by: T[][] = Array.from({ length: windows }, () => []);
  for (const s of samples) {
    const w = Math.floor((s.at - start) / 1000 / windowS);
    if (w >= 0 && w < windows) by[w]!.push(s);
  }
  return by;
}

/** Which tables PostgreSQL's autovacuum workers were at in the database of a run, once a second (startAutovacuumWatch). */
export interface AutovacuumSample {
  /** Date.now() when read. */
  at: number;
  /** What each autovacuum worker of that database was doing: `VACUUM public.deliveries`, `ANALYZE public.events`, … */
  work: string[];
}

/**
 * Reads once a second what the autovacuum workers of the database of `databaseUrl` are doing (pg_stat_activity's
 * `query` of a worker is its task), until stopped: a run's low windows set against the server's own maintenance
 * (bench/README.md, "Autovacuum and the host in the low windows"). One small query a second on its own connection.
 */
export function startAutovacuumWatch(databaseUrl: string): {
  stop(): Promise<AutovacuumSample[]>;
  /** Why the watching stopped early (a connection lost, a query refused), or null. */
  failure(): string | null;
} {
  const samples: AutovacuumSample[] = [];
  let running = true;
  let failure: string | null = null;
  // Never rejects: a watcher that fails stops watching and says why; the run it watches goes on.
  const done = (async () => {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: databaseUrl });
    // A connection ended by the server (the database dropped at cleanup, a restart) is an 'error' event: said, not thrown.
    client.on('error', (err: Error) => {
      failure ??= err.message;
      running = false;
    });
    try {
      await client.connect();
      while (running) {
        const { rows } = await client.query<{ query: string | null }>(
          "select query from pg_stat_activity where backend_type = 'autovacuum worker' and datname = current_database()",
        );
        samples.push({
          at: Date.now(),
          // A role without pg_read_all_stats sees other sessions' query as null: then nothing can be said.
          work: rows.map((r) => (r.query ?? '(not visible to this role)').replace(/^autovacuum:\s*/, '').trim()),
        });
        await new Promise((r) => setTimeout(r, 1000));
      }
    } catch (err) {
      failure ??= (err as Error).message;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      return samples;
    },
    failure: () => failure,
  };
}

/**
 * Each window's autovacuum (as canaryWindows' windows): for each task seen in it, the seconds it was seen (one sample
 * a second), e.g. `{ 'VACUUM public.deliveries': 6 }`; empty where none ran.
 */
export function autovacuumWindows(samples: AutovacuumSample[], startMs: number, windows: number, windowS: number) {
  return inWindows(samples, startMs, windows, windowS).map((xs) => {
    const seconds: Record<string, number> = {};
    for (const task of xs.flatMap((s) => s.work)) seconds[task] = (seconds[task] ?? 0) + 1;
    return seconds;
  });
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

// ---------------------------------------------------------------------------------------------------
// Output

/** `n` with thousands separators and exactly `digits` decimals (en-US); `-` for null (not measured). */
export function fmt(n: number | null, digits = 0): string {
  return n === null ? '-' : n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/**
 * A plain-text table as lines: the header, a rule, then each group of rows followed by a rule except the
 * last. Columns are two spaces apart, each as wide as its widest cell; the first `leftColumns` are
 * left-aligned, the others right-aligned (numbers).
 */
export function table(cols: string[], groups: string[][][], leftColumns: number): string[] {
  const rows = groups.flat();
  const widths = cols.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < leftColumns ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const rule = line(widths.map((w) => '-'.repeat(w)));
  return [line(cols), rule, ...groups.flatMap((g, i) => [...g.map(line), ...(i < groups.length - 1 ? [rule] : [])])];
}

// ---------------------------------------------------------------------------------------------------

/**
 * Runs a benchmark's main and exits with the code it returns, after the cleanup (children stopped, temp
 * directories removed). A throw exits 1 with `<name> failed: …` on stderr: the message alone for a
 * BenchError, the stack for anything else.
 */
export async function runBench(name: string, main: () => Promise<number>): Promise<never> {
  let exitCode = 1;
  try {
    exitCode = await main();
  } catch (err) {
    process.stderr.write(
      `\n${name} failed: ${err instanceof BenchError ? err.message : ((err as Error).stack ?? String(err))}\n`,
    );
  } finally {
    await cleanup();
  }
  process.exit(exitCode);
}

/** The message bench:send and bench:automations send: a name in the subject and the body, a tracked link, ~2.5 KB of HTML. */
export const NEWS_SUBJECT = 'News for {{ contact.firstName }}: what changed this month';
export const NEWS_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>Acme news</title></head>
<body style="margin:0;padding:0;background:#f4f4f4">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0"><tr><td align="center">
<table role="presentation" width="600" cellpadding="0" cellspacing="0" style="background:#ffffff;font-family:Arial,sans-serif">
<tr><td style="padding:24px"><h1 style="font-size:22px;color:#222">Hi {{ contact.firstName }},</h1>
<p style="font-size:15px;line-height:22px;color:#333">Here is what changed at Acme this month. We shipped faster exports, a new
dashboard for teams, and a long list of fixes you asked for. Thank you for the feedback that made them happen.</p>
<p style="font-size:15px;line-height:22px;color:#333">Faster exports: a report of a hundred thousand rows now arrives in seconds,
and you can schedule it to land in your inbox every Monday morning.</p>
<p style="font-size:15px;line-height:22px;color:#333">Team dashboards: everyone on your team sees the same numbers, with
filters that stay put between visits and links you can share.</p>
<p style="text-align:center;padding:16px"><a href="https://acme.test/changelog" style="background:#0b5fff;color:#fff;padding:12px 20px;text-decoration:none;border-radius:4px">Read the changelog</a></p>
<p style="font-size:13px;color:#666">You can reply to this email: a person reads every answer.</p>
</td></tr></table></td></tr></table>
</body></html>
`;
