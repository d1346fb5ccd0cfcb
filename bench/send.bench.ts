/**
 * Sending benchmark (`npm run bench:send`): one broadcast to N recipients through the real server, against
 * nodemailer's pooled transport pushing the same number of pre-rendered, DKIM-signed messages (the baseline,
 * bench/send-baseline.ts), both to the same SMTP sink (bench/smtp-sink.ts), which runs in a process of its own.
 *
 * Setup: a fresh SQLite database in a temp dir; `formcast workspace create` and `formcast domain add acme.test
 * --verified` (a real RSA-2048 DKIM key); N SUBSCRIBED contacts inserted directly (better-sqlite3, in batches).
 * Baseline first (sink counters reset), then the target: `formcast serve` (which runs the delivery worker
 * in-process) with SMTP_URL at the sink; a broadcast is created and sent over the API, with
 * `{{ contact.firstName }}` in its subject and HTML.
 *
 * Measured: messages per second at the sink (count / (last arrival − first arrival)); for the target, time to
 * first message (from the send request to the first arrival) and the server's peak RSS (VmHWM from
 * /proc/<pid>/status, read at the end; VmRSS is also sampled every second). Goals (issue 4): target rate
 * ≥ 0.8× the baseline's, peak RSS < 300 MB at 1,000,000 recipients; printed as PASS/MISS. The exit code is 1
 * only when something failed to run or messages went missing (fewer than N at the sink, or unsigned ones).
 *
 * Options: --rows N (default 100000), --million (N = 1,000,000), --connections N (SMTP pool size, default 5,
 *          the server's default), --skip-baseline, --baseline-key-object (the baseline signs with a parsed
 *          KeyObject, as Formcast does, instead of the PEM text), --cpu-prof DIR (profile the server), --help.
 */
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import SQLite from 'better-sqlite3';
import {
  BenchError, HOST, alive, expectStatus, fmt, makeTempDir, memoryOf, parseCommandLine, positiveInt, run, runBench, startServer, startSmtpSink, stopChild, table,
  type Sink, type SinkStats,
} from './harness.js';

const DOMAIN = 'acme.test';
const PUBLIC_URL = 'https://news.acme.test';
const RATIO_GOAL = 0.8;
const RSS_GOAL_MB = 300;
const RSS_GOAL_ROWS = 1_000_000;
/** No new message at the sink for this long: the run is stuck. */
const STALL_MS = 60_000;
const SUBJECT = 'News for {{ contact.firstName }}: what changed this month';
const HTML = `<!doctype html>
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

// ---------------------------------------------------------------------------------------------------
// Options

function parseOptions() {
  const values = parseCommandLine({
    rows: { type: 'string' },
    million: { type: 'boolean' },
    connections: { type: 'string' },
    'skip-baseline': { type: 'boolean' },
    'baseline-key-object': { type: 'boolean' },
    'cpu-prof': { type: 'string' },
  }, {
    example: 'npm run bench:send -- --rows 10000',
    usage: [
      'usage: npm run bench:send -- [--rows N | --million] [--connections N] [--skip-baseline]',
      '  --rows N          recipients (default 100000)',
      '  --million         1,000,000 recipients',
      '  --connections N   SMTP pool size of both the server and the baseline (default 5)',
      '  --skip-baseline   measure the server only (no ratio)',
      '  --baseline-key-object  give the baseline a parsed KeyObject instead of the PEM text (as Formcast does)',
      '  --cpu-prof DIR    run the server with node --cpu-prof, writing the profile to DIR (open it in Chrome DevTools)',
    ],
  });
  if (values.million && values.rows !== undefined) throw new BenchError('give --rows or --million, not both');
  return {
    rows: values.million ? 1_000_000 : positiveInt('rows', values.rows, 100_000),
    connections: positiveInt('connections', values.connections, 5),
    skipBaseline: values['skip-baseline'] ?? false,
    baselineKeyObject: values['baseline-key-object'] ?? false,
    cpuProfDir: values['cpu-prof'] === undefined ? null : path.resolve(values['cpu-prof']),
  };
}

// ---------------------------------------------------------------------------------------------------
// The sink

// ---------------------------------------------------------------------------------------------------
// Setup

function insertContacts(dbFile: string, workspaceId: string, rows: number): void {
  const db = new SQLite(dbFile);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const insert = db.prepare(`insert into contacts (id, workspace_id, email, first_name, last_name, properties, status, created_at, updated_at)
    values (?, ?, ?, ?, ?, '{}', 'SUBSCRIBED', ?, ?)`);
  const now = new Date().toISOString();
  const batch = db.transaction((from: number, to: number) => {
    for (let n = from; n < to; n++) {
      // 'ct_' + 26 characters of [0-9A-Z], in insertion order
      insert.run(`ct_BENCH${n.toString(36).toUpperCase().padStart(21, '0')}`, workspaceId, `user${String(n).padStart(7, '0')}@example.test`, `First${n}`, 'Doe', now, now);
    }
  });
  for (let n = 0; n < rows; n += 20_000) batch(n, Math.min(rows, n + 20_000));
  db.close();
}

// ---------------------------------------------------------------------------------------------------
// Runs

interface Result {
  label: 'baseline' | 'formcast';
  messages: number;
  signed: number;
  bytes: number;
  seconds: number;
  perSec: number;
  timeToFirstMs: number | null;
  peakRssMb: number | null;
  missing: number;
}

function fromSink(label: Result['label'], s: SinkStats, expected: number, extra: Pick<Result, 'timeToFirstMs' | 'peakRssMb'>): Result {
  const seconds = s.first !== null && s.last !== null ? (s.last - s.first) / 1000 : 0;
  return {
    label, messages: s.count, signed: s.signed, bytes: s.bytes, seconds,
    perSec: seconds > 0 ? s.count / seconds : 0, missing: Math.max(0, expected - s.count), ...extra,
  };
}

/** Polls the sink until `expected` messages arrived; fails when nothing arrives for STALL_MS. */
async function waitForSink(sink: Sink, expected: number, label: string, check: () => void): Promise<SinkStats> {
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
    if (Date.now() - lastReport > 10_000 || s.count >= expected) {
      lastReport = Date.now();
      const rate = s.first !== null && s.last !== null && s.last > s.first ? ` (${Math.round(s.count / ((s.last - s.first) / 1000))}/s)` : '';
      process.stderr.write(`  ${label}: ${s.count.toLocaleString('en-US')} / ${expected.toLocaleString('en-US')}${rate}\n`);
    }
    if (s.count >= expected) return s;
    if (Date.now() - lastProgress > STALL_MS) throw new BenchError(`${label}: no message arrived for ${STALL_MS / 1000} s (${s.count} of ${expected})`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function runBaseline(sink: Sink, dbFile: string, workspaceId: string, rows: number, connections: number, concurrency: number, keyObject: boolean): Promise<Result> {
  await sink.reset();
  process.stderr.write(`baseline: nodemailer pool (${connections} connections, ${concurrency} in flight), ${rows.toLocaleString('en-US')} pre-rendered messages, DKIM key as ${keyObject ? 'KeyObject' : 'PEM'} ...\n`);
  const env: NodeJS.ProcessEnv = {
    ...process.env, BENCH_DB: dbFile, BENCH_WORKSPACE_ID: workspaceId, SMTP_URL: `smtp://${HOST}:${sink.port}`, BENCH_COUNT: String(rows),
    BENCH_MAX_CONNECTIONS: String(connections), BENCH_CONCURRENCY: String(concurrency), BENCH_SUBJECT: SUBJECT, BENCH_HTML: HTML, PUBLIC_URL, BENCH_KEY_OBJECT: keyObject ? '1' : '0',
  };
  const done = run('baseline', ['--import', 'tsx', 'bench/send-baseline.ts'], env);
  let failure: unknown = null;
  done.catch((err: unknown) => (failure = err));
  const s = await waitForSink(sink, rows, 'baseline', () => {
    if (failure) throw failure;
  });
  const out = JSON.parse((await done).trim().split('\n').at(-1)!) as { sent: number; failed: number; vmHwmKb: number };
  if (out.failed) throw new BenchError(`baseline: ${out.failed} messages failed`);
  return fromSink('baseline', await sink.stats().then((latest) => (latest.count > s.count ? latest : s)), rows, { timeToFirstMs: null, peakRssMb: out.vmHwmKb / 1024 });
}

async function runFormcast(sink: Sink, env: NodeJS.ProcessEnv, rows: number, apiKey: string, cpuProfDir: string | null): Promise<Result & { sentAfterMs: number; rssSamplesMaxMb: number }> {
  await sink.reset();
  process.stderr.write(`formcast: serve (worker in-process), one broadcast to ${rows.toLocaleString('en-US')} contacts ...\n`);
  const { child, url, output } = await startServer('formcast serve', [...(cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', cpuProfDir] : []), 'bin/formcast', 'serve'], { ...env, SMTP_URL: `smtp://${HOST}:${sink.port}` });
  const pid = child.pid!;
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const created = JSON.parse(await expectStatus(await fetch(`${url}/v1/broadcasts`, {
    method: 'POST', headers, body: JSON.stringify({ name: 'Bench broadcast', from: `Acme <news@${DOMAIN}>`, emailContent: { subject: SUBJECT, html: HTML } }),
  }), 201, 'POST /v1/broadcasts')) as { id: string };

  let rssMaxMb = 0;
  const sampler = setInterval(() => {
    try {
      rssMaxMb = Math.max(rssMaxMb, memoryOf(pid).rssMb);
    } catch {
      // exited meanwhile: waitForSink reports it
    }
  }, 1000);
  try {
    const sentAt = performance.timeOrigin + performance.now();
    await expectStatus(await fetch(`${url}/v1/broadcasts/${created.id}/send`, { method: 'POST', headers }), 202, 'POST /v1/broadcasts/{id}/send');
    const s = await waitForSink(sink, rows, 'formcast', () => {
      if (!alive(child)) throw new BenchError(`formcast serve exited\n${output()}`);
    });
    // The broadcast must end SENT with every delivery sent.
    let broadcast: { status: string; stats?: { sent: number; recipients: number } } = { status: 'SENDING' };
    const deadline = Date.now() + 60_000;
    while (broadcast.status === 'SENDING' && Date.now() < deadline) {
      broadcast = JSON.parse(await expectStatus(await fetch(`${url}/v1/broadcasts/${created.id}`, { headers }), 200, 'GET /v1/broadcasts/{id}'));
      if (broadcast.status === 'SENDING') await new Promise((r) => setTimeout(r, 250));
    }
    const sentAfterMs = (performance.timeOrigin + performance.now()) - sentAt;
    const { peakRssMb } = memoryOf(pid);
    if (broadcast.status !== 'SENT' || broadcast.stats?.sent !== rows) {
      throw new BenchError(`the broadcast ended ${broadcast.status} with stats ${JSON.stringify(broadcast.stats)} (expected SENT, ${rows} sent)\n${output()}`);
    }
    const latest = await sink.stats();
    return { ...fromSink('formcast', latest, rows, { timeToFirstMs: s.first! - sentAt, peakRssMb }), sentAfterMs, rssSamplesMaxMb: rssMaxMb };
  } finally {
    clearInterval(sampler);
    await stopChild(child);
  }
}

// ---------------------------------------------------------------------------------------------------
// Report

function report(opts: ReturnType<typeof parseOptions>, concurrency: number, results: Result[], target: Result & { sentAfterMs: number; rssSamplesMaxMb: number }): boolean {
  const baseline = results.find((r) => r.label === 'baseline');
  const ratio = baseline && baseline.perSec > 0 ? target.perSec / baseline.perSec : null;
  const ratioPass = ratio !== null && ratio >= RATIO_GOAL;
  const rssApplies = opts.rows >= RSS_GOAL_ROWS;
  const rssPass = (target.peakRssMb ?? Infinity) < RSS_GOAL_MB;
  const complete = results.every((r) => r.missing === 0 && r.signed === r.messages);

  const cols = ['run', 'messages', 'signed', 'seconds', 'msg/s', 'first msg ms', 'peak RSS MB', 'KB/msg'];
  const rows = results.map((r) => [r.label, fmt(r.messages), fmt(r.signed), fmt(r.seconds, 1), fmt(r.perSec, 0), fmt(r.timeToFirstMs), fmt(r.peakRssMb, 0), fmt(r.messages ? r.bytes / r.messages / 1024 : 0, 1)]);
  const out = [
    '',
    `one broadcast to ${fmt(opts.rows)} recipients (formcast serve, SQLite) vs nodemailer pooled transport (baseline), same SMTP sink`,
    `SMTP pool ${opts.connections} connections, ${concurrency} messages in flight, DKIM RSA-2048 (baseline key as ${opts.baselineKeyObject ? 'KeyObject' : 'PEM text'}); node ${process.version}, ${os.cpus().length} CPU(s), load average ${os.loadavg()[0]!.toFixed(1)}`,
    '',
    ...table(cols, [rows], 1),
    '',
    ratio === null
      ? 'ratio formcast/baseline (msg/s): not measured (--skip-baseline)'
      : `ratio formcast/baseline (msg/s):  ${ratio.toFixed(3)}x   goal >= ${RATIO_GOAL}x   ${ratioPass ? 'PASS' : 'MISS'}`,
    `formcast time to first message:   ${fmt(target.timeToFirstMs)} ms (send request to first arrival); broadcast SENT after ${fmt(target.sentAfterMs / 1000, 1)} s`,
    `formcast peak RSS (VmHWM):        ${fmt(target.peakRssMb, 0)} MB (max sampled VmRSS ${fmt(target.rssSamplesMaxMb, 0)} MB)   goal < ${RSS_GOAL_MB} MB at ${fmt(RSS_GOAL_ROWS)} recipients   ${rssApplies ? (rssPass ? 'PASS' : 'MISS') : `n/a at ${fmt(opts.rows)} (run --million)`}`,
    `all messages arrived, all signed: ${complete ? 'ok' : 'FAILED (the figures above are not valid)'}`,
    '',
  ];
  process.stdout.write(out.join('\n'));
  const round = (n: number | null, d = 1) => (n === null ? null : Math.round(n * 10 ** d) / 10 ** d);
  const json = (r: Result) => ({
    messages: r.messages, signed: r.signed, seconds: round(r.seconds, 2), perSec: round(r.perSec), timeToFirstMs: round(r.timeToFirstMs, 0), peakRssMb: round(r.peakRssMb), missing: r.missing,
  });
  process.stdout.write(`${JSON.stringify({
    bench: 'send',
    node: process.version,
    cpus: os.cpus().length,
    rows: opts.rows,
    connections: opts.connections,
    concurrency,
    baselineKey: opts.baselineKeyObject ? 'KeyObject' : 'PEM',
    loadAvg1m: round(os.loadavg()[0]!, 2),
    baseline: baseline ? json(baseline) : null,
    target: { ...json(target), sentAfterMs: round(target.sentAfterMs, 0), rssSamplesMaxMb: round(target.rssSamplesMaxMb) },
    ratio: round(ratio, 3),
    goals: {
      ratio: { min: RATIO_GOAL, value: round(ratio, 3), pass: ratioPass },
      peakRssMb: { max: RSS_GOAL_MB, atRows: RSS_GOAL_ROWS, value: round(target.peakRssMb), pass: rssApplies ? rssPass : null },
    },
    ok: complete,
  })}\n`);
  return complete;
}

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const opts = parseOptions();
  // The worker's own rule (src/jobs/jobs.ts): max(16, 2 × pool size) messages in flight.
  const concurrency = Math.max(16, opts.connections * 2);
  const dir = makeTempDir('send');
  const dbFile = path.join(dir, 'formcast.db');
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST, LOG_LEVEL: 'warn', DATABASE_URL: dbFile, PUBLIC_URL, SMTP_MAX_CONNECTIONS: String(opts.connections), OUTBOX_DIR: path.join(dir, 'outbox') };
  for (const name of Object.keys(env)) if (name.startsWith('WORKER_') || name === 'SMTP_RATE_LIMIT' || name === 'SMTP_URL') delete env[name];

  process.stderr.write(`setting up: workspace, verified domain ${DOMAIN}, ${opts.rows.toLocaleString('en-US')} contacts (SQLite in ${dir}) ...\n`);
  const created = JSON.parse(await run('formcast workspace create', ['bin/formcast', 'workspace', 'create', 'bench', '--json'], env)) as { workspace: { id: string }; apiKey: { key: string } };
  await run('formcast domain add', ['bin/formcast', 'domain', 'add', DOMAIN, '--workspace', created.workspace.id, '--verified', '--json'], env);
  const t = Date.now();
  insertContacts(dbFile, created.workspace.id, opts.rows);
  process.stderr.write(`  contacts inserted in ${((Date.now() - t) / 1000).toFixed(1)} s\n`);

  const sink = await startSmtpSink();
  const results: Result[] = [];
  if (!opts.skipBaseline) results.push(await runBaseline(sink, dbFile, created.workspace.id, opts.rows, opts.connections, concurrency, opts.baselineKeyObject));
  const target = await runFormcast(sink, env, opts.rows, created.apiKey.key, opts.cpuProfDir);
  results.push(target);
  return report(opts, concurrency, results, target) ? 0 : 1;
}

await runBench('bench:send', main);
