/**
 * Automations benchmark (`npm run bench:automations`, issue 14): "100,000 runs due at once; steps processed per
 * second and peak RSS, against the broadcast pipeline's rate for the same messages (goal ≥ 0.8×)."
 *
 * Setup, as bench:send: a fresh database (SQLite in a temp dir, or with --pg a new PostgreSQL database, dropped at
 * the end); `formcast workspace create` and `formcast domain add acme.test --verified` (a real RSA-2048 DKIM key);
 * N SUBSCRIBED contacts inserted directly, in batches; the SMTP sink of bench:send (bench/smtp-sink.ts) in a process
 * of its own.
 *
 * 1. **Baseline**: `formcast serve` (the delivery worker in-process) sends one broadcast to the N contacts, created
 *    and sent over the API. Over the same API, this server also creates the automation of step 2 (api trigger, one
 *    send step with the broadcast's from, subject and HTML) and activates it, so its message is written as the
 *    product writes it; it has no run yet. The server is stopped once the broadcast is SENT.
 * 2. **Measured**: N runs of the automation are inserted directly in SQL, all due now, with the shape
 *    `insertRun` (src/integrations/automations/automations.repository.ts) writes: ACTIVE, at the first step, no lease. Then a
 *    fresh `formcast serve` (same settings) starts and does everything: the runs job claims them, each send step
 *    inserts its delivery, the delivery pipeline sends them to the sink.
 *
 * Measured, for both: messages per second at the sink (distinct messages / (last arrival − first arrival)), the
 * server's CPU time per message, its peak RSS (VmHWM, read at the end; VmRSS sampled every second too), the longest
 * GET /healthz took (asked every 500 ms: how long the event loop was held). For the
 * automation also: runs completed per second (steps processed per second: one step a run), from the first run's
 * finished_at to the last one's, and the time from the server's start to the last run completed and to the last
 * message. Goal (issue 14): automation msg/s ≥ 0.8× the broadcast's, printed as PASS/MISS; the exit code is 1 only
 * when something failed to run, a message is missing, or a run did not end COMPLETED.
 *
 * Options: --contacts N (default 100000), --connections N (SMTP pool size, default 5), --pg, --database-url URL,
 *          --threads N (SEND_THREADS), --skip-baseline, --help.
 */
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { monotonicFactory } from 'ulid';
import {
  BenchError,
  HOST,
  alive,
  cpuSeconds,
  expectStatus,
  fmt,
  freshPostgresDatabase,
  makeTempDir,
  memoryOf,
  parseCommandLine,
  positiveInt,
  run,
  runBench,
  startServer,
  startSmtpSink,
  stopChild,
  table,
  type Server,
  type Sink,
  type SinkStats,
  NEWS_HTML,
  NEWS_SUBJECT,
  waitForSink,
  postgresUrlOf,
} from './harness.js';

const DOMAIN = 'acme.test';
const FROM = `Acme <news@${DOMAIN}>`;
const PUBLIC_URL = 'https://news.acme.test';
const RATIO_GOAL = 0.8;
const STEP_ID = 'send';
const SUBJECT = NEWS_SUBJECT;
const HTML = NEWS_HTML;

// ---------------------------------------------------------------------------------------------------
// Options

function parseOptions() {
  const values = parseCommandLine(
    {
      contacts: { type: 'string' },
      connections: { type: 'string' },
      pg: { type: 'boolean' },
      'database-url': { type: 'string' },
      threads: { type: 'string' },
      'skip-baseline': { type: 'boolean' },
    },
    {
      example: 'npm run bench:automations -- --contacts 20000',
      usage: [
        'usage: npm run bench:automations -- [--contacts N] [--connections N] [--pg] [--threads N] [--skip-baseline]',
        "  --contacts N      contacts: the broadcast's recipients and the runs due at once (default 100000)",
        '  --connections N   SMTP pool size of the server (default 5, its default)',
        '  --pg              PostgreSQL: a fresh database on the server of --database-url or TEST_DATABASE_URL, dropped afterwards',
        '  --database-url URL  a PostgreSQL URL whose user may CREATE DATABASE (implies --pg)',
        '  --threads N       SEND_THREADS of the server (default: its own)',
        '  --skip-baseline   measure the automation only (no ratio)',
      ],
    },
  );
  const pgUrl = postgresUrlOf(values);
  return {
    pgUrl: pgUrl ?? null,
    contacts: positiveInt('contacts', values.contacts, 100_000),
    connections: positiveInt('connections', values.connections, 5),
    threads: values.threads === undefined ? null : Number(values.threads),
    skipBaseline: values['skip-baseline'] ?? false,
  };
}

// ---------------------------------------------------------------------------------------------------
// The database, read and written directly (seeding, the runs, the checks): `?` placeholders on both.

interface Sql {
  query<T>(text: string, params?: unknown[]): Promise<T[]>;
  /** Runs `fn` in one transaction. */
  transaction(fn: () => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

async function openSql(database: string): Promise<Sql> {
  if (database.startsWith('postgres')) {
    const client = new pg.Client({ connectionString: database });
    await client.connect();
    const query = async <T>(text: string, params: unknown[] = []) => {
      let n = 0;
      return (
        await client.query(
          text.replace(/\?/g, () => `$${++n}`),
          params,
        )
      ).rows as T[];
    };
    return {
      query,
      async transaction(fn) {
        await client.query('begin');
        try {
          await fn();
          await client.query('commit');
        } catch (err) {
          await client.query('rollback');
          throw err;
        }
      },
      close: () => client.end(),
    };
  }
  const db = new SQLite(database);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  return {
    query: async <T>(text: string, params: unknown[] = []) => {
      const stmt = db.prepare(text);
      if (stmt.reader) return stmt.all(...params) as T[];
      stmt.run(...params);
      return [];
    },
    async transaction(fn) {
      db.exec('begin immediate');
      try {
        await fn();
        db.exec('commit');
      } catch (err) {
        db.exec('rollback');
        throw err;
      }
    },
    close: async () => void db.close(),
  };
}

/** Rows of `width` values per statement, in batches: one multi-row INSERT each. */
async function insertMany(
  sql: Sql,
  table: string,
  columns: string[],
  count: number,
  row: (n: number) => unknown[],
): Promise<void> {
  const perStatement = Math.floor(30_000 / columns.length);
  await sql.transaction(async () => {
    for (let from = 0; from < count; from += perStatement) {
      const to = Math.min(count, from + perStatement);
      const params: unknown[] = [];
      for (let n = from; n < to; n++) params.push(...row(n));
      const tuple = `(${columns.map(() => '?').join(', ')})`;
      await sql.query(
        `insert into ${table} (${columns.join(', ')}) values ${Array.from({ length: to - from }, () => tuple).join(', ')}`,
        params,
      );
    }
  });
}

const contactId = (n: number) => `ct_BENCH${n.toString(36).toUpperCase().padStart(21, '0')}`; // 'ct_' + 26 of [0-9A-Z], in order
const contactEmail = (n: number) => `user${String(n).padStart(7, '0')}@example.test`;

async function seedContacts(sql: Sql, workspaceId: string, count: number): Promise<void> {
  const now = new Date().toISOString();
  await insertMany(
    sql,
    'contacts',
    ['id', 'workspace_id', 'email', 'first_name', 'last_name', 'properties', 'status', 'created_at', 'updated_at'],
    count,
    (n) => [contactId(n), workspaceId, contactEmail(n), `First${n}`, 'Doe', '{}', 'SUBSCRIBED', now, now],
  );
}

/** N runs due now at the automation's first step: the row insertRun writes (ACTIVE, no lease, entered now). */
async function insertRuns(
  sql: Sql,
  workspaceId: string,
  automationId: string,
  version: number,
  count: number,
): Promise<void> {
  const now = new Date().toISOString();
  const ulid = monotonicFactory();
  await insertMany(
    sql,
    'automation_runs',
    [
      'id',
      'workspace_id',
      'automation_id',
      'version',
      'contact_id',
      'status',
      'step_id',
      'step_started_at',
      'due_at',
      'lease_owner',
      'lease_expires_at',
      'trigger_event_id',
      'entered_at',
      'updated_at',
      'finished_at',
      'exit_reason',
    ],
    count,
    (n) => [
      `run_${ulid()}`,
      workspaceId,
      automationId,
      version,
      contactId(n),
      'ACTIVE',
      STEP_ID,
      null,
      now,
      null,
      null,
      null,
      now,
      now,
      null,
      null,
    ],
  );
}

/** The deliveries of the workspace by status and last error, and the server's last lines: why messages are missing. */
async function explainMissing(database: string, server: Server): Promise<string> {
  const sql = await openSql(database);
  try {
    const rows = await sql.query<{ status: string; last_error: string | null; n: number | string }>(
      'select status, last_error, count(*) as n from deliveries group by status, last_error order by count(*) desc limit 10',
    );
    return `deliveries: ${rows.map((r) => `${r.status}${r.last_error ? ` (${r.last_error})` : ''} ${Number(r.n)}`).join('; ')}\n${server.output()}`;
  } finally {
    await sql.close();
  }
}

const ms = (v: unknown) => (v instanceof Date ? v.getTime() : Date.parse(String(v)));

// ---------------------------------------------------------------------------------------------------
// Runs

interface Result {
  label: 'broadcast' | 'automation';
  messages: number;
  signed: number;
  seconds: number;
  perSec: number;
  cpuMsPerMessage: number;
  /** From the send request (broadcast) or the server's start (automation) to the first arrival. */
  timeToFirstMs: number;
  /** From the same point to the last arrival. */
  toLastMs: number;
  peakRssMb: number;
  rssSamplesMaxMb: number;
  /** The longest GET /healthz took during the run. */
  healthzMaxMs: number;
  missing: number;
  duplicates: number;
}

interface AutomationResult extends Result {
  runsCompleted: number;
  /** First to last finished_at of the runs. */
  runsSeconds: number;
  runsPerSec: number;
  /** From the server's start to the last run completed. */
  runsDoneAfterMs: number;
}

/** VmRSS of the server sampled every second; its VmHWM and the samples' maximum at the end. */
function memorySampler(server: Server) {
  let max = 0;
  const timer = setInterval(() => {
    try {
      max = Math.max(max, memoryOf(server.child.pid!).rssMb);
    } catch {
      // exited meanwhile: the wait reports it
    }
  }, 1000);
  return {
    stop() {
      clearInterval(timer);
      return { peakRssMb: memoryOf(server.child.pid!).peakRssMb, rssSamplesMaxMb: max };
    },
  };
}

const now = () => performance.timeOrigin + performance.now();

/**
 * GET /healthz, one after the other every 500 ms while the run goes on: the longest answer says how long the
 * server's event loop was held (nothing else can answer meanwhile).
 */
function healthProbe(server: Server) {
  let max = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const t = now();
      try {
        await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(120_000) });
      } catch {
        // exited or stopped: the wait reports it
      }
      max = Math.max(max, now() - t);
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return max;
    },
  };
}

function fromSink(
  label: Result['label'],
  s: SinkStats,
  expected: number,
  t0: number,
  cpuMs: number,
  memory: { peakRssMb: number; rssSamplesMaxMb: number },
  healthzMaxMs: number,
): Result {
  const seconds = s.first !== null && s.last !== null ? (s.last - s.first) / 1000 : 0;
  return {
    label,
    messages: s.unique,
    signed: s.signed,
    seconds,
    perSec: seconds > 0 ? s.unique / seconds : 0,
    cpuMsPerMessage: cpuMs / Math.max(1, s.unique),
    timeToFirstMs: s.first! - t0,
    toLastMs: s.last! - t0,
    ...memory,
    healthzMaxMs,
    missing: Math.max(0, expected - s.unique),
    duplicates: s.count - s.unique,
  };
}

const startServe = (env: NodeJS.ProcessEnv) => startServer('formcast serve', ['bin/formcast', 'serve'], env);

/**
 * The baseline: a broadcast to every contact through `formcast serve`. The same server creates and activates the
 * automation (no runs yet), whose id it returns.
 */
async function runBroadcast(
  sink: Sink,
  env: NodeJS.ProcessEnv,
  contacts: number,
  apiKey: string,
  skip: boolean,
): Promise<{ result: Result | null; automationId: string; version: number }> {
  await sink.reset();
  process.stderr.write(
    skip
      ? 'formcast serve: creating the automation ...\n'
      : `broadcast: formcast serve, one broadcast to ${contacts.toLocaleString('en-US')} contacts ...\n`,
  );
  const server = await startServe(env);
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const emailContent = { subject: SUBJECT, html: HTML };
  try {
    const automation = JSON.parse(
      await expectStatus(
        await fetch(`${server.url}/v1/automations`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            name: 'Bench automation',
            trigger: { type: 'api' },
            steps: [{ id: STEP_ID, type: 'send', from: FROM, emailContent }],
          }),
        }),
        201,
        'POST /v1/automations',
      ),
    ) as { id: string };
    const active = JSON.parse(
      await expectStatus(
        await fetch(`${server.url}/v1/automations/${automation.id}/activate`, { method: 'POST', headers }),
        200,
        'POST /v1/automations/{id}/activate',
      ),
    ) as { version: number };
    if (skip) return { result: null, automationId: automation.id, version: active.version };

    const created = JSON.parse(
      await expectStatus(
        await fetch(`${server.url}/v1/broadcasts`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ name: 'Bench broadcast', from: FROM, emailContent }),
        }),
        201,
        'POST /v1/broadcasts',
      ),
    ) as { id: string };
    const memory = memorySampler(server);
    const probe = healthProbe(server);
    const cpuBefore = cpuSeconds(server.child.pid!);
    const t0 = now();
    await expectStatus(
      await fetch(`${server.url}/v1/broadcasts/${created.id}/send`, { method: 'POST', headers }),
      202,
      'POST /v1/broadcasts/{id}/send',
    );
    await waitForSink(
      sink,
      contacts,
      'broadcast',
      () => {
        if (!alive(server.child)) throw new BenchError(`formcast serve exited\n${server.output()}`);
      },
      () => explainMissing(env.DATABASE_URL!, server),
    );
    const cpuMs = (cpuSeconds(server.child.pid!) - cpuBefore) * 1000;
    const healthzMaxMs = await probe.stop();
    let broadcast: { status: string; stats?: { sent: number } } = { status: 'SENDING' };
    const deadline = Date.now() + 60_000;
    while (broadcast.status === 'SENDING' && Date.now() < deadline) {
      broadcast = JSON.parse(
        await expectStatus(
          await fetch(`${server.url}/v1/broadcasts/${created.id}`, { headers }),
          200,
          'GET /v1/broadcasts/{id}',
        ),
      );
      if (broadcast.status === 'SENDING') await new Promise((r) => setTimeout(r, 250));
    }
    if (broadcast.status !== 'SENT' || broadcast.stats?.sent !== contacts) {
      throw new BenchError(
        `the broadcast ended ${broadcast.status} with stats ${JSON.stringify(broadcast.stats)} (expected SENT, ${contacts} sent)\n${server.output()}`,
      );
    }
    return {
      result: fromSink('broadcast', await sink.stats(), contacts, t0, cpuMs, memory.stop(), healthzMaxMs),
      automationId: automation.id,
      version: active.version,
    };
  } finally {
    await stopChild(server.child);
  }
}

/** The measured run: N runs due at once (inserted while no server runs), then a fresh `formcast serve`. */
async function runAutomation(
  sink: Sink,
  env: NodeJS.ProcessEnv,
  database: string,
  workspaceId: string,
  automationId: string,
  version: number,
  contacts: number,
): Promise<AutomationResult> {
  const sql = await openSql(database);
  try {
    const t = Date.now();
    await insertRuns(sql, workspaceId, automationId, version, contacts);
    process.stderr.write(
      `automation: ${contacts.toLocaleString('en-US')} runs inserted, due now, in ${((Date.now() - t) / 1000).toFixed(1)} s; starting formcast serve ...\n`,
    );
    await sink.reset();
    const server = await startServe(env);
    try {
      // The runs were due before the server started: its clock starts with it (the cost of starting is not counted).
      const t0 = now();
      const memory = memorySampler(server);
      const probe = healthProbe(server);
      const cpuBefore = cpuSeconds(server.child.pid!);
      const check = () => {
        if (!alive(server.child)) throw new BenchError(`formcast serve exited\n${server.output()}`);
      };
      await waitForSink(sink, contacts, 'automation', check, () => explainMissing(database, server));
      const cpuMs = (cpuSeconds(server.child.pid!) - cpuBefore) * 1000;
      const healthzMaxMs = await probe.stop();
      // Every run over (COMPLETED), every delivery of the step SENT.
      const deadline = Date.now() + 60_000;
      let open = Infinity;
      while (open > 0 && Date.now() < deadline) {
        check();
        open = Number(
          (
            await sql.query<{ n: number | string }>(
              'select count(*) as n from automation_runs where automation_id = ? and finished_at is null',
              [automationId],
            )
          )[0]!.n,
        );
        if (open > 0) await new Promise((r) => setTimeout(r, 250));
      }
      const memoryAtEnd = memory.stop();
      const statuses = await sql.query<{ status: string; n: number | string; first: unknown; last: unknown }>(
        'select status, count(*) as n, min(finished_at) as first, max(finished_at) as last from automation_runs where automation_id = ? group by status',
        [automationId],
      );
      const completed = statuses.find((r) => r.status === 'COMPLETED');
      if (statuses.length !== 1 || !completed || Number(completed.n) !== contacts) {
        throw new BenchError(
          `the runs ended ${JSON.stringify(statuses.map((r) => ({ status: r.status, n: Number(r.n) })))} (expected ${contacts} COMPLETED)\n${server.output()}`,
        );
      }
      const sent = await sql.query<{ status: string; n: number | string }>(
        'select d.status, count(*) as n from deliveries d join broadcasts b on b.id = d.broadcast_id where b.automation_id = ? group by d.status',
        [automationId],
      );
      if (sent.length !== 1 || sent[0]!.status !== 'SENT' || Number(sent[0]!.n) !== contacts) {
        throw new BenchError(
          `the step's deliveries ended ${JSON.stringify(sent.map((r) => ({ status: r.status, n: Number(r.n) })))} (expected ${contacts} SENT)\n${server.output()}`,
        );
      }
      const runsSeconds = (ms(completed.last) - ms(completed.first)) / 1000;
      // finished_at is the server's clock (ms): the wall-clock time since t0.
      const runsDoneAfterMs = ms(completed.last) - t0;
      return {
        ...fromSink('automation', await sink.stats(), contacts, t0, cpuMs, memoryAtEnd, healthzMaxMs),
        runsCompleted: contacts,
        runsSeconds,
        runsPerSec: runsSeconds > 0 ? contacts / runsSeconds : 0,
        runsDoneAfterMs,
      };
    } finally {
      await stopChild(server.child);
    }
  } finally {
    await sql.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// Report

function report(
  opts: ReturnType<typeof parseOptions>,
  load: { before: string; after: string },
  broadcast: Result | null,
  automation: AutomationResult,
): boolean {
  const ratio = broadcast && broadcast.perSec > 0 ? automation.perSec / broadcast.perSec : null;
  const ratioPass = ratio !== null && ratio >= RATIO_GOAL;
  const results = [...(broadcast ? [broadcast] : []), automation];
  const complete = results.every((r) => r.missing === 0 && r.signed >= r.messages);

  const cols = [
    'run',
    'messages',
    'twice',
    'seconds',
    'msg/s',
    'CPU ms/msg',
    'first msg ms',
    'last msg ms',
    'peak RSS MB',
    'max /healthz ms',
  ];
  const rows = results.map((r) => [
    r.label,
    fmt(r.messages),
    fmt(r.duplicates),
    fmt(r.seconds, 1),
    fmt(r.perSec, 0),
    fmt(r.cpuMsPerMessage, 2),
    fmt(r.timeToFirstMs),
    fmt(r.toLastMs),
    fmt(r.peakRssMb, 0),
    fmt(r.healthzMaxMs),
  ]);
  const out = [
    '',
    `${fmt(opts.contacts)} automation runs due at once (one send step) vs one broadcast to the same ${fmt(opts.contacts)} contacts; formcast serve, ${opts.pgUrl ? 'PostgreSQL' : 'SQLite'}${opts.threads !== null ? `, SEND_THREADS=${opts.threads}` : ''}, SMTP pool ${opts.connections}, same SMTP sink`,
    `node ${process.version}, ${os.cpus().length} CPU(s), load average (1 min, /proc/loadavg) ${load.before} before, ${load.after} after`,
    "(broadcast: times from the send request; automation: from the server's start, the runs being due already)",
    '',
    ...table(cols, [rows], 1),
    '',
    `automation runs completed:         ${fmt(automation.runsCompleted)} COMPLETED in ${fmt(automation.runsSeconds, 1)} s (first to last finished_at): ${fmt(automation.runsPerSec, 0)} runs/s = steps/s; the last ${fmt(automation.runsDoneAfterMs)} ms after the start`,
    `automation peak RSS (VmHWM):       ${fmt(automation.peakRssMb, 0)} MB (max sampled VmRSS ${fmt(automation.rssSamplesMaxMb, 0)} MB)${broadcast ? `; broadcast ${fmt(broadcast.peakRssMb, 0)} MB` : ''}`,
    ratio === null
      ? 'ratio automation/broadcast (msg/s): not measured (--skip-baseline)'
      : `ratio automation/broadcast (msg/s): ${ratio.toFixed(3)}x   goal >= ${RATIO_GOAL}x   ${ratioPass ? 'PASS' : 'MISS'}`,
    ...(broadcast
      ? [
          `end to end (for information):       automation ${fmt(automation.toLastMs / 1000, 1)} s from the server's start to the last message, broadcast ${fmt(broadcast.toLastMs / 1000, 1)} s from the send request: ${(broadcast.toLastMs / automation.toLastMs).toFixed(3)}x`,
        ]
      : []),
    `all messages arrived, all signed:  ${complete ? 'ok' : 'FAILED (the figures above are not valid)'}`,
    '',
  ];
  process.stdout.write(out.join('\n'));
  const round = (n: number | null, d = 1) => (n === null ? null : Math.round(n * 10 ** d) / 10 ** d);
  const json = (r: Result) => ({
    messages: r.messages,
    duplicates: r.duplicates,
    seconds: round(r.seconds, 2),
    perSec: round(r.perSec),
    cpuMsPerMessage: round(r.cpuMsPerMessage, 3),
    timeToFirstMs: round(r.timeToFirstMs, 0),
    toLastMs: round(r.toLastMs, 0),
    peakRssMb: round(r.peakRssMb),
    rssSamplesMaxMb: round(r.rssSamplesMaxMb),
    healthzMaxMs: round(r.healthzMaxMs, 0),
    missing: r.missing,
  });
  process.stdout.write(
    `${JSON.stringify({
      bench: 'automations',
      node: process.version,
      cpus: os.cpus().length,
      contacts: opts.contacts,
      database: opts.pgUrl ? 'postgres' : 'sqlite',
      sendThreads: opts.threads,
      connections: opts.connections,
      loadAvg: load,
      broadcast: broadcast ? json(broadcast) : null,
      automation: {
        ...json(automation),
        runsCompleted: automation.runsCompleted,
        runsSeconds: round(automation.runsSeconds, 2),
        runsPerSec: round(automation.runsPerSec),
        runsDoneAfterMs: round(automation.runsDoneAfterMs, 0),
      },
      ratio: round(ratio, 3),
      endToEndRatio: broadcast ? round(broadcast.toLastMs / automation.toLastMs, 3) : null,
      goals: { ratio: { min: RATIO_GOAL, value: round(ratio, 3), pass: ratio === null ? null : ratioPass } },
      ok: complete,
    })}\n`,
  );
  return complete;
}

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const opts = parseOptions();
  const loadavg = async () =>
    (await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').trim().split(' ').slice(0, 3).join(' ');
  const loadBefore = await loadavg();
  const dir = makeTempDir('automations');
  const database = opts.pgUrl ? await freshPostgresDatabase(opts.pgUrl, 'automations') : path.join(dir, 'formcast.db');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    HOST,
    LOG_LEVEL: 'warn',
    DATABASE_URL: database,
    PUBLIC_URL,
    SMTP_MAX_CONNECTIONS: String(opts.connections),
    OUTBOX_DIR: path.join(dir, 'outbox'),
  };
  for (const name of Object.keys(env))
    if (
      name.startsWith('WORKER_') ||
      name.startsWith('SEND_') ||
      name === 'SMTP_RATE_LIMIT' ||
      name === 'SMTP_URL' ||
      name === 'SERVE_WORKER'
    )
      delete env[name];
  if (opts.threads !== null) env.SEND_THREADS = String(opts.threads);

  process.stderr.write(
    `setting up: workspace, verified domain ${DOMAIN}, ${opts.contacts.toLocaleString('en-US')} contacts (${opts.pgUrl ? 'PostgreSQL' : `SQLite in ${dir}`}) ...\n`,
  );
  const created = JSON.parse(
    await run('formcast workspace create', ['bin/formcast', 'workspace', 'create', 'bench', '--json'], env),
  ) as { workspace: { id: string }; apiKey: { key: string } };
  await run(
    'formcast domain add',
    ['bin/formcast', 'domain', 'add', DOMAIN, '--workspace', created.workspace.id, '--verified', '--json'],
    env,
  );
  const t = Date.now();
  const sql = await openSql(database);
  try {
    await seedContacts(sql, created.workspace.id, opts.contacts);
  } finally {
    await sql.close();
  }
  process.stderr.write(`  contacts inserted in ${((Date.now() - t) / 1000).toFixed(1)} s\n`);

  const sink = await startSmtpSink();
  const serveEnv = { ...env, SMTP_URL: `smtp://${HOST}:${sink.port}` };
  const {
    result: broadcast,
    automationId,
    version,
  } = await runBroadcast(sink, serveEnv, opts.contacts, created.apiKey.key, opts.skipBaseline);
  const automation = await runAutomation(
    sink,
    serveEnv,
    database,
    created.workspace.id,
    automationId,
    version,
    opts.contacts,
  );
  return report(opts, { before: loadBefore, after: await loadavg() }, broadcast, automation) ? 0 : 1;
}

await runBench('bench:automations', main);
