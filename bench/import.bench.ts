/**
 * Bulk import benchmark (`npm run bench:import`): streams a generated CSV of --rows rows (default 1,000,000)
 * to `POST /v1/contacts/imports` on the real Formcast server, and compares with a baseline process that
 * parses the same file with csv-parse and inserts the rows into a fresh, migrated better-sqlite3 file, 1000 rows
 * per transaction (bench/import-baseline.ts): each contact and its two events (the goal's baseline: the same
 * inserts as Formcast's), and, for comparison, the contacts alone.
 *
 * All run as child processes, one after the other (baselines first), each with a fresh SQLite file in a temp
 * directory. Reported: wall time, rows/s and peak RSS (VmHWM from /proc/<pid>/status) of each, the server's CPU
 * time, the ratios formcast/baseline, and one JSON line. Goals (issue 13): rows/s at least 0.8x the baseline's,
 * and the server's peak RSS under 300 MB. The exit code is 1 when something did not run properly (a child failed,
 * the import did not COMPLETE, or its counts, or the rows stored, are wrong); a missed goal is printed as MISS and
 * does not change it.
 *
 * Options: --rows N (default 1000000), --keep (leave the temp directory, print its path), --cpu-prof DIR (profile
 * the server), --help.
 */
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { connect } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import {
  BenchError,
  alive,
  cpuSeconds,
  fmt,
  makeTempDir,
  memoryOf,
  parseCommandLine,
  positiveInt,
  run,
  runBench,
  startFormcast,
  stopChild,
  table,
} from './harness.js';

const RSS_GOAL_MB = 300;
/** Issue 13: formcast's rows/s at least 0.8x the baseline's (the baseline making the same inserts). */
const RATIO_GOAL = 0.8;

function parseOptions() {
  const values = parseCommandLine(
    { rows: { type: 'string' }, keep: { type: 'boolean' }, 'cpu-prof': { type: 'string' } },
    {
      example: 'npm run bench:import -- --rows 100000',
      usage: [
        'usage: npm run bench:import -- [--rows N] [--keep] [--cpu-prof DIR]',
        '  --rows N          rows in the generated CSV (default 1000000)',
        '  --keep            keep the temp directory (CSV and databases) and print where it is',
        '  --cpu-prof DIR    run the server with node --cpu-prof, writing the profile to DIR (open it in Chrome DevTools)',
      ],
    },
  );
  const cpuProf = values['cpu-prof'];
  return {
    rows: positiveInt('rows', values.rows, 1_000_000),
    keep: values.keep ?? false,
    cpuProfDir: cpuProf === undefined ? null : path.resolve(cpuProf),
  };
}

// ---------------------------------------------------------------------------------------------------
// The file and the upload

/** Writes the CSV (email, firstName, lastName and two property columns), respecting backpressure. */
async function generateCsv(file: string, rows: number): Promise<number> {
  const out = fs.createWriteStream(file);
  const plans = ['free', 'pro', 'team'];
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  await write('email,firstName,lastName,company,plan\n');
  const CHUNK = 5000;
  for (let start = 0; start < rows; start += CHUNK) {
    const lines: string[] = [];
    for (let i = start; i < Math.min(rows, start + CHUNK); i++) {
      // Mixed case: the server stores emails normalised (lower-case); the baseline lower-cases too.
      lines.push(`User.${i}@Example-${i % 97}.com,First${i},Last${i},Company ${i % 5000},${plans[i % 3]}`);
    }
    await write(`${lines.join('\n')}\n`);
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return fs.statSync(file).size;
}

interface Upload {
  status: number;
  body: string;
  ms: number;
}

/** POSTs the file as the request body, streamed from disk (http.request + a piped read stream). */
function upload(baseUrl: string, key: string, file: string, size: number): Promise<Upload> {
  const url = new URL('/v1/contacts/imports', baseUrl);
  const started = performance.now();
  return new Promise<Upload>((resolve, reject) => {
    const req = http.request({
      hostname: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv', 'content-length': String(size) },
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ms: performance.now() - started }));
      res.on('error', reject);
    });
    req.on('error', reject);
    fs.createReadStream(file).pipe(req);
  });
}

// ---------------------------------------------------------------------------------------------------

interface Figures {
  rows: number;
  seconds: number;
  rowsPerSec: number;
  /** User + system CPU time of the process over the import. */
  cpuSeconds: number;
  peakRssMb: number;
}

type BaselineMode = 'events' | 'contacts';

/** Runs bench/import-baseline.ts on a freshly migrated database file (the migrations are not timed). */
async function runBaseline(dir: string, csv: string, mode: BaselineMode, rows: number): Promise<Figures> {
  const file = path.join(dir, `baseline-${mode}.db`);
  const db = connect(file);
  await migrateToLatest(db);
  await db.close();
  const out = JSON.parse(
    (
      await run(
        `import baseline (${mode})`,
        ['--import', 'tsx', 'bench/import-baseline.ts', csv, file, mode],
        process.env,
      )
    )
      .trim()
      .split('\n')
      .pop()!,
  ) as { rows: number; ms: number; cpuMs: number; peakRssMb: number };
  if (out.rows !== rows) throw new BenchError(`the baseline (${mode}) read ${out.rows} rows, expected ${rows}`);
  const written = countRows(file);
  const events = mode === 'events' ? 2 * rows : 0;
  if (written.contacts !== rows || written.events !== events)
    throw new BenchError(
      `the baseline (${mode}) wrote ${written.contacts} contacts and ${written.events} events, expected ${rows} and ${events}`,
    );
  return {
    rows: out.rows,
    seconds: out.ms / 1000,
    rowsPerSec: out.rows / (out.ms / 1000),
    cpuSeconds: out.cpuMs / 1000,
    peakRssMb: out.peakRssMb,
  };
}

/** Contacts and events in a database file (read-only). */
function countRows(file: string): { contacts: number; events: number } {
  const db = new SQLite(file, { readonly: true });
  try {
    const count = (table: string) => (db.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
    return { contacts: count('contacts'), events: count('events') };
  } finally {
    db.close();
  }
}

async function main(): Promise<number> {
  const opts = parseOptions();
  const dir = makeTempDir('import', { keep: opts.keep });
  const csv = path.join(dir, 'contacts.csv');
  const loadBefore = os.loadavg()[0]!;

  process.stderr.write(`generating ${fmt(opts.rows)} rows ...`);
  const size = await generateCsv(csv, opts.rows);
  process.stderr.write(` ${fmt(size / 1024 / 1024, 1)} MB\n`);

  const baselines = {} as Record<BaselineMode, Figures>;
  for (const mode of ['events', 'contacts'] as const) {
    process.stderr.write(
      `baseline (csv-parse + better-sqlite3, 1000-row transactions, ${mode === 'events' ? 'contacts and their events' : 'contacts only'}) ...`,
    );
    baselines[mode] = await runBaseline(dir, csv, mode, opts.rows);
    process.stderr.write(` ${fmt(baselines[mode].seconds, 1)} s\n`);
  }
  const baseline = baselines.events;

  const { server, apiKey } = await startFormcast(dir, {
    nodeArgs: opts.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', opts.cpuProfDir] : [],
  });
  const pid = server.child.pid!;
  const idle = memoryOf(pid);
  process.stderr.write(`formcast ${server.url} (pid ${pid}, ${idle.rssMb} MB RSS idle): POST /v1/contacts/imports ...`);
  const cpu0 = cpuSeconds(pid);
  const res = await upload(server.url, apiKey, csv, size);
  if (!alive(server.child)) throw new BenchError(`formcast serve died during the import\n${server.output()}`);
  const serverCpu = cpuSeconds(pid) - cpu0;
  const mem = memoryOf(pid);
  process.stderr.write(` ${res.status} in ${fmt(res.ms / 1000, 1)} s\n`);
  await stopChild(server.child);
  const loadAfter = os.loadavg()[0]!;

  let job: { status?: string; total?: number; created?: number; skipped?: number; error?: string | null } = {};
  try {
    job = JSON.parse(res.body);
  } catch {
    // reported below
  }
  const written = countRows(path.join(dir, 'formcast.db'));
  const ok =
    res.status === 201 &&
    job.status === 'COMPLETED' &&
    job.total === opts.rows &&
    job.created === opts.rows &&
    job.skipped === 0 &&
    written.contacts === opts.rows &&
    written.events === 2 * opts.rows;
  const target: Figures = {
    rows: job.created ?? 0,
    seconds: res.ms / 1000,
    rowsPerSec: (job.created ?? 0) / (res.ms / 1000),
    cpuSeconds: serverCpu,
    peakRssMb: mem.peakRssMb,
  };
  const ratio = target.rowsPerSec / baseline.rowsPerSec;
  const ratioContactsOnly = target.rowsPerSec / baselines.contacts.rowsPerSec;
  const ratioPass = ratio >= RATIO_GOAL;
  const rssRatio = target.peakRssMb / baseline.peakRssMb;
  const rssPass = target.peakRssMb < RSS_GOAL_MB;

  const cols = ['target', 'rows', 'wall s', 'rows/s', 'CPU s', 'CPU µs/row', 'peak RSS MB'];
  const line = (name: string, f: Figures) => [
    name,
    fmt(f.rows),
    fmt(f.seconds, 1),
    fmt(f.rowsPerSec),
    fmt(f.cpuSeconds, 1),
    fmt((f.cpuSeconds * 1e6) / opts.rows, 1),
    String(f.peakRssMb),
  ];
  const rows = [
    line('baseline (contacts + events)', baseline),
    line('baseline (contacts only)', baselines.contacts),
    line('formcast', target),
  ];
  process.stdout.write(
    [
      '',
      `CSV import of ${fmt(opts.rows)} rows (${fmt(size / 1024 / 1024, 1)} MB): formcast POST /v1/contacts/imports vs csv-parse + better-sqlite3`,
      `node ${process.version}, ${os.cpus().length} CPU(s); SQLite; formcast idle RSS before the import ${idle.rssMb} MB; load average ${loadBefore.toFixed(2)} -> ${loadAfter.toFixed(2)}`,
      '',
      ...table(cols, [rows], 1),
      '',
      `formcast rows/s / baseline (contacts + events): ${ratio.toFixed(2)}x   goal >= ${RATIO_GOAL}x   ${ratioPass ? 'PASS' : 'MISS'}`,
      `formcast rows/s / baseline (contacts only, the issue's 0.54x): ${ratioContactsOnly.toFixed(2)}x`,
      `formcast peak RSS: ${target.peakRssMb} MB (${rssRatio.toFixed(2)}x the baseline's)   goal < ${RSS_GOAL_MB} MB   ${rssPass ? 'PASS' : 'MISS'}`,
      `import job: HTTP ${res.status}, ${job.status ?? '?'}, total ${job.total ?? '?'}, created ${job.created ?? '?'}, skipped ${job.skipped ?? '?'}; stored ${fmt(written.contacts)} contacts, ${fmt(written.events)} events   ${ok ? 'ok' : `FAILED${job.error ? `: ${job.error}` : ''}${res.status !== 201 ? `: ${res.body.slice(0, 300)}` : ''}`}`,
      ...(opts.keep ? [`temp directory kept: ${dir}`] : []),
      '',
    ].join('\n'),
  );
  const figures = (f: Figures) => ({
    seconds: round(f.seconds, 2),
    rowsPerSec: Math.round(f.rowsPerSec),
    cpuSeconds: round(f.cpuSeconds, 2),
    peakRssMb: f.peakRssMb,
  });
  process.stdout.write(
    `${JSON.stringify({
      bench: 'import',
      node: process.version,
      cpus: os.cpus().length,
      loadAvg1m: { before: round(loadBefore, 2), after: round(loadAfter, 2) },
      rows: opts.rows,
      fileBytes: size,
      baseline: figures(baseline),
      baselineContactsOnly: figures(baselines.contacts),
      target: {
        ...figures(target),
        idleRssMb: idle.rssMb,
        httpStatus: res.status,
        job: { status: job.status, total: job.total, created: job.created, skipped: job.skipped },
        stored: written,
      },
      ratios: {
        rowsPerSec: round(ratio, 3),
        rowsPerSecContactsOnly: round(ratioContactsOnly, 3),
        peakRss: round(rssRatio, 3),
      },
      goals: {
        rowsPerSecRatio: { min: RATIO_GOAL, value: round(ratio, 3), pass: ratioPass },
        peakRssMb: { max: RSS_GOAL_MB, value: target.peakRssMb, pass: rssPass },
      },
      ok,
    })}\n`,
  );
  return ok ? 0 : 1;
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

await runBench('bench:import', main);
