/**
 * Webhooks benchmark (`npm run bench:webhooks`): events written to the database reach a local receiver through the
 * real server's fan-out and dispatcher (`formcast serve`, SQLite), against a bare loop POSTing the same bodies to
 * the same receiver with the same concurrency (the baseline).
 *
 * Setup: a fresh SQLite file in a temp dir, migrated; a workspace and one endpoint subscribed to contact.created,
 * pointing at the receiver (bench/webhook-receiver.ts, a process of its own, which answers 200 at once and records
 * each event's lag from its commit to its arrival). The server runs with WEBHOOKS_ALLOW_HTTP and
 * WEBHOOKS_ALLOW_PRIVATE (the receiver is http on loopback) and its default dispatcher settings.
 *
 * Runs, in order:
 * - baseline: `--backlog` bodies (the shape and size of the server's), each signed (HMAC-SHA256), POSTed over
 *   keep-alive connections, `--concurrency` in flight: what the receiver and the machine allow;
 * - paced (the goal's run): `--events` events written by this process into the server's database, in a transaction
 *   every 50 ms, at `--rate` events/s, as the features write them (occurred_at = the transaction's time);
 * - backlog: `--backlog` events written at once (batches of 5,000), while the server runs: its drain rate.
 *
 * Measured at the receiver: deliveries/s (count / (last arrival − first arrival)) and the lag from an event's commit
 * to its arrival (p50, p99, max). Goal (issue 11): paced lag p99 < 2 s while the receiver keeps up; PASS/MISS. The
 * exit code is 1 only when something failed to run or an event did not arrive (or arrived unsigned).
 *
 * Options: --events N (100000), --rate N (2000 events/s), --backlog N (20000; 0 skips it and the baseline),
 *          --concurrency N (16: the dispatcher's), --help.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import SQLite from 'better-sqlite3';
import { connect } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { loadServerSecret } from '../src/db/secrets.js';
import { createServices } from '../src/app.js';
import { newId } from '../src/lib/ids.js';
import { signatureHeader } from '../src/integrations/webhooks/webhooks.sender.js';
import {
  BenchError,
  HOST,
  fmt,
  ipcRequester,
  makeTempDir,
  memoryOf,
  parseCommandLine,
  positiveInt,
  runBench,
  startChild,
  startServer,
  table,
} from './harness.js';

const LAG_P99_GOAL_MS = 2000;
/** No new arrival for this long: the run is stuck. */
const STALL_MS = 60_000;
const TICK_MS = 50;

function parseOptions() {
  const values = parseCommandLine(
    {
      events: { type: 'string' },
      rate: { type: 'string' },
      backlog: { type: 'string' },
      concurrency: { type: 'string' },
    },
    {
      example: 'npm run bench:webhooks -- --events 20000',
      usage: [
        'usage: npm run bench:webhooks -- [--events N] [--rate N] [--backlog N] [--concurrency N]',
        '  --events N        events of the paced run (default 100000)',
        '  --rate N          events written per second in the paced run (default 2000)',
        '  --backlog N       events written at once after it, and POSTed by the baseline (default 20000; 0: neither)',
        "  --concurrency N   requests in flight of the baseline (default 16, the dispatcher's)",
      ],
    },
  );
  return {
    events: positiveInt('events', values.events, 100_000),
    rate: positiveInt('rate', values.rate, 2000),
    backlog: values.backlog === '0' ? 0 : positiveInt('backlog', values.backlog, 20_000),
    concurrency: positiveInt('concurrency', values.concurrency, 16),
  };
}

// ---------------------------------------------------------------------------------------------------
// The receiver

interface ReceiverStats {
  count: number;
  distinct: number;
  duplicates: number;
  unsigned: number;
  first: number | null;
  last: number | null;
  lag: { p50: number | null; p99: number | null; max: number | null };
}

async function startReceiver() {
  const { child, match } = await startChild(
    'webhook receiver',
    ['--import', 'tsx', 'bench/webhook-receiver.ts'],
    { ...process.env, PORT: '0' },
    /^receiver listening on (\d+)$/m,
    { ipc: true },
  );
  const request = ipcRequester(child, 'the receiver');
  return { port: Number(match[1]), stats: () => request<ReceiverStats>('stats'), reset: () => request<void>('reset') };
}
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** Waits until the receiver has `expected` distinct events; a BenchError when nothing new arrives for STALL_MS. */
async function waitForArrivals(
  receiver: Receiver,
  expected: number,
  server?: { child: { exitCode: number | null }; output(): string },
): Promise<ReceiverStats> {
  let seen = -1;
  let since = Date.now();
  for (;;) {
    const s = await receiver.stats();
    if (s.distinct >= expected) return s;
    if (server && server.child.exitCode !== null) throw new BenchError(`the server exited:\n${server.output()}`);
    if (s.count !== seen) {
      seen = s.count;
      since = Date.now();
    } else if (Date.now() - since > STALL_MS) {
      throw new BenchError(
        `stalled: ${s.distinct} of ${expected} events arrived, nothing new for ${STALL_MS / 1000} s${server ? `\n${server.output()}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

// ---------------------------------------------------------------------------------------------------
// Runs

interface Result {
  label: string;
  events: number;
  stats: ReceiverStats;
  perSec: number;
  seconds: number;
}

function result(label: string, events: number, stats: ReceiverStats): Result {
  const seconds = stats.first !== null && stats.last !== null ? (stats.last - stats.first) / 1000 : 0;
  return { label, events, stats, seconds, perSec: seconds > 0 ? stats.count / seconds : 0 };
}

/** The body the server would send for an event of this workspace, occurred now. */
function body(workspaceId: string, n: number): { id: string; body: string } {
  void workspaceId;
  const occurredAt = new Date().toISOString();
  const id = newId('evt');
  const data = {
    id,
    type: 'contact.created',
    occurredAt,
    contactId: `ct_${n}`,
    broadcastId: null,
    deliveryId: null,
    data: { email: `user${n}@example.test`, firstName: `First${n}` },
  };
  return { id: newId('whd'), body: JSON.stringify({ type: 'contact.created', timestamp: occurredAt, data }) };
}

async function runBaseline(
  receiver: Receiver,
  workspaceId: string,
  secret: string,
  count: number,
  concurrency: number,
): Promise<Result> {
  await receiver.reset();
  process.stderr.write(`baseline: ${fmt(count)} signed POSTs, ${concurrency} in flight ...\n`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  let next = 0;
  const post = () =>
    new Promise<void>((resolve, reject) => {
      const { id, body: text } = body(workspaceId, next);
      const ts = Math.floor(Date.now() / 1000);
      const buf = Buffer.from(text);
      const req = http.request(
        {
          host: HOST,
          port: receiver.port,
          path: '/hook',
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'content-length': buf.length,
            'webhook-id': id,
            'webhook-timestamp': String(ts),
            'webhook-signature': signatureHeader([secret], id, ts, text),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 200
              ? resolve()
              : reject(new BenchError(`baseline: the receiver answered ${res.statusCode}`)),
          );
        },
      );
      req.on('error', reject);
      req.end(buf);
    });
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next++;
        await post();
      }
    }),
  );
  agent.destroy();
  return result('baseline (bare loop)', count, await waitForArrivals(receiver, count));
}

/** Writes events the way the features do (an INSERT per event in a transaction; occurred_at = the transaction's time). */
function eventWriter(dbFile: string, workspaceId: string) {
  const db = new SQLite(dbFile);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  const insert =
    db.prepare(`insert into events (id, workspace_id, type, occurred_at, contact_id, broadcast_id, delivery_id, data, machine, url)
    values (?, ?, 'contact.created', ?, ?, null, null, ?, 0, null)`);
  let n = 0;
  const batch = db.transaction((count: number) => {
    const at = new Date().toISOString();
    for (let i = 0; i < count; i++, n++)
      insert.run(
        newId('evt'),
        workspaceId,
        at,
        `ct_${n}`,
        JSON.stringify({ email: `user${n}@example.test`, firstName: `First${n}` }),
      );
  });
  /** Where the lag of the events so far went, from the server's own timestamps: commit → fan-out, fan-out → delivered. */
  const split = () => {
    const rows = db
      .prepare(
        `select (julianday(d.created_at) - julianday(e.occurred_at)) * 86400000 as fan, (julianday(d.delivered_at) - julianday(d.created_at)) * 86400000 as send
      from webhook_deliveries d join events e on e.id = d.event_id where d.delivered_at is not null`,
      )
      .all() as { fan: number; send: number }[];
    const p = (xs: number[], q: number) => xs.sort((x, y) => x - y)[Math.max(0, Math.ceil(q * xs.length) - 1)] ?? null;
    return {
      fanOutP50: p(
        rows.map((r) => r.fan),
        0.5,
      ),
      fanOutP99: p(
        rows.map((r) => r.fan),
        0.99,
      ),
      sendP50: p(
        rows.map((r) => r.send),
        0.5,
      ),
      sendP99: p(
        rows.map((r) => r.send),
        0.99,
      ),
    };
  };
  return { write: (count: number) => batch(count), split, close: () => db.close() };
}

// ---------------------------------------------------------------------------------------------------

function report(opts: ReturnType<typeof parseOptions>, results: Result[], serverPeakRssMb: number | null): boolean {
  const paced = results.find((r) => r.label.startsWith('formcast paced'))!;
  const baseline = results.find((r) => r.label.startsWith('baseline'));
  const backlog = results.find((r) => r.label.startsWith('formcast backlog'));
  const ratio = baseline && backlog && baseline.perSec > 0 ? backlog.perSec / baseline.perSec : null;
  const p99 = paced.stats.lag.p99;
  const pass = p99 !== null && p99 < LAG_P99_GOAL_MS;
  const complete = results.every((r) => r.stats.distinct === r.events && r.stats.unsigned === 0);
  const cols = [
    'run',
    'events',
    'arrived',
    'duplicates',
    'seconds',
    'deliveries/s',
    'lag p50 ms',
    'lag p99 ms',
    'lag max ms',
  ];
  const rows = results.map((r) => [
    r.label,
    fmt(r.events),
    fmt(r.stats.distinct),
    fmt(r.stats.duplicates),
    fmt(r.seconds, 1),
    fmt(r.perSec),
    fmt(r.stats.lag.p50),
    fmt(r.stats.lag.p99),
    fmt(r.stats.lag.max),
  ]);
  process.stdout.write(
    [
      '',
      `webhooks: events → formcast serve (SQLite; fan-out + dispatcher, default settings) → a receiver on loopback; baseline: a bare loop POSTing signed bodies, ${opts.concurrency} in flight`,
      `paced run: ${fmt(opts.events)} events at ${fmt(opts.rate)}/s (a transaction every ${TICK_MS} ms); node ${process.version}, ${os.cpus().length} CPU(s), load average ${os.loadavg()[0]!.toFixed(1)}`,
      '',
      ...table(cols, [rows], 1),
      '',
      `formcast lag p99 (paced):           ${fmt(p99)} ms   goal < ${fmt(LAG_P99_GOAL_MS)} ms   ${pass ? 'PASS' : 'MISS'}`,
      ratio === null
        ? 'ratio backlog drain / baseline:     not measured (--backlog 0)'
        : `ratio backlog drain / baseline:     ${ratio.toFixed(3)}x (deliveries/s)`,
      `formcast peak RSS (VmHWM):          ${fmt(serverPeakRssMb)} MB`,
      `every event arrived, signed:        ${complete ? 'ok' : 'FAILED (the figures above are not valid)'}`,
      '',
    ].join('\n'),
  );
  const round = (x: number | null, d = 1) => (x === null ? null : Math.round(x * 10 ** d) / 10 ** d);
  const json = (r: Result) => ({
    events: r.events,
    arrived: r.stats.distinct,
    duplicates: r.stats.duplicates,
    seconds: round(r.seconds, 2),
    perSec: round(r.perSec),
    lagMs: { p50: round(r.stats.lag.p50), p99: round(r.stats.lag.p99), max: round(r.stats.lag.max) },
  });
  process.stdout.write(
    `${JSON.stringify({
      bench: 'webhooks',
      node: process.version,
      cpus: os.cpus().length,
      loadAvg1m: round(os.loadavg()[0]!, 2),
      events: opts.events,
      rate: opts.rate,
      backlog: opts.backlog,
      concurrency: opts.concurrency,
      baseline: baseline ? json(baseline) : null,
      paced: json(paced),
      backlogDrain: backlog ? json(backlog) : null,
      ratio: round(ratio, 3),
      serverPeakRssMb,
      goals: { lagP99Ms: { max: LAG_P99_GOAL_MS, value: round(p99), pass } },
      ok: complete,
    })}\n`,
  );
  return complete;
}

async function main(): Promise<number> {
  const opts = parseOptions();
  const dir = makeTempDir('webhooks');
  const dbFile = path.join(dir, 'formcast.db');
  const secretKey = crypto.randomBytes(32).toString('base64');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    HOST,
    LOG_LEVEL: 'warn',
    DATABASE_URL: dbFile,
    SECRET_KEY: secretKey,
    OUTBOX_DIR: path.join(dir, 'outbox'),
    WEBHOOKS_ALLOW_HTTP: 'true',
    WEBHOOKS_ALLOW_PRIVATE: 'true',
  };
  for (const name of Object.keys(env))
    if (name.startsWith('WORKER_') || name === 'SMTP_URL' || name === 'PUBLIC_URL') delete env[name];

  const receiver = await startReceiver();
  process.stderr.write(`setting up: a workspace and an endpoint at the receiver (SQLite in ${dir}) ...\n`);
  const setupDb = connect(dbFile);
  await migrateToLatest(setupDb);
  const services = createServices(setupDb, {
    logLevel: 'silent',
    publicUrl: 'http://localhost:3000',
    secret: await loadServerSecret(setupDb, { secretKey, secretKeyFile: null }),
    webhooks: { allowHttp: true, allowPrivate: true },
  });
  const { workspace } = await services.workspaces.createWithAdminKey('bench');
  const endpoint = await services.webhooks.create(workspace.id, {
    url: `http://${HOST}:${receiver.port}/hook`,
    eventTypes: ['contact.created'],
  });
  await setupDb.close();

  const results: Result[] = [];
  if (opts.backlog > 0)
    results.push(await runBaseline(receiver, workspace.id, endpoint.secret, opts.backlog, opts.concurrency));

  await receiver.reset();
  const server = await startServer('formcast serve', ['bin/formcast', 'serve'], env);
  const writer = eventWriter(dbFile, workspace.id);
  process.stderr.write(`paced: ${fmt(opts.events)} events at ${fmt(opts.rate)}/s ...\n`);
  const started = performance.now();
  let written = 0;
  while (written < opts.events) {
    const due = Math.min(
      opts.events,
      Math.floor(((performance.now() - started) / 1000) * opts.rate) + Math.ceil((opts.rate * TICK_MS) / 1000),
    );
    if (due > written) {
      writer.write(due - written);
      written = due;
    }
    await new Promise((r) => setTimeout(r, TICK_MS));
  }
  results.push(
    result(`formcast paced ${fmt(opts.rate)}/s`, opts.events, await waitForArrivals(receiver, opts.events, server)),
  );
  const split = writer.split();
  process.stderr.write(
    `  paced lag, from the server's timestamps: commit → fan-out p50 ${fmt(split.fanOutP50)} ms, p99 ${fmt(split.fanOutP99)} ms; fan-out → delivered p50 ${fmt(split.sendP50)} ms, p99 ${fmt(split.sendP99)} ms\n`,
  );

  if (opts.backlog > 0) {
    await receiver.reset();
    process.stderr.write(`backlog: ${fmt(opts.backlog)} events at once ...\n`);
    for (let i = 0; i < opts.backlog; i += 5000) writer.write(Math.min(5000, opts.backlog - i));
    results.push(result('formcast backlog drain', opts.backlog, await waitForArrivals(receiver, opts.backlog, server)));
  }
  writer.close();
  const peak = server.child.pid ? memoryOf(server.child.pid).peakRssMb : null;
  return report(opts, results, peak) ? 0 : 1;
}

await runBench('bench:webhooks', main);
