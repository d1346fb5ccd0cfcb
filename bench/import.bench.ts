/**
 * Bulk import benchmark (`npm run bench:import`): streams a generated CSV of --rows rows (default 1,000,000)
 * to `POST /v1/contacts/imports` on the real Formcast server, and compares with a baseline process that
 * parses the same file with csv-parse and inserts the rows into a fresh better-sqlite3 file, 1000 rows per
 * transaction (bench/import-baseline.ts).
 *
 * Both run as child processes, one after the other (baseline first), each with a fresh SQLite file in a temp
 * directory. Reported: wall time, rows/s and peak RSS (VmHWM from /proc/<pid>/status) of each, the ratios
 * formcast/baseline, and one JSON line. Goal (from the issue): the server's peak RSS stays under 300 MB.
 * The exit code is 1 when something did not run properly (a child failed, the import did not COMPLETE, or
 * its counts are wrong); a missed goal is printed as MISS and does not change it.
 *
 * Options: --rows N (default 1000000), --keep (leave the temp directory, print its path), --help.
 */
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { BenchError, alive, fmt, makeTempDir, memoryOf, parseCommandLine, positiveInt, run, runBench, startFormcast, stopChild, table } from './harness.js';

const RSS_GOAL_MB = 300;

function parseOptions() {
  const values = parseCommandLine({ rows: { type: 'string' }, keep: { type: 'boolean' } }, {
    example: 'npm run bench:import -- --rows 100000',
    usage: [
      'usage: npm run bench:import -- [--rows N] [--keep]',
      '  --rows N   rows in the generated CSV (default 1000000)',
      '  --keep     keep the temp directory (CSV and databases) and print where it is',
    ],
  });
  return { rows: positiveInt('rows', values.rows, 1_000_000), keep: values.keep ?? false };
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
      hostname: url.hostname, port: url.port, path: url.pathname, method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv', 'content-length': String(size) },
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; });
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
  peakRssMb: number;
}

async function main(): Promise<number> {
  const opts = parseOptions();
  const dir = makeTempDir('import', { keep: opts.keep });
  const csv = path.join(dir, 'contacts.csv');

  process.stderr.write(`generating ${fmt(opts.rows)} rows ...`);
  const size = await generateCsv(csv, opts.rows);
  process.stderr.write(` ${fmt(size / 1024 / 1024, 1)} MB\n`);

  process.stderr.write('baseline (csv-parse + better-sqlite3, 1000-row transactions) ...');
  const baselineOut = JSON.parse((await run('import baseline', ['--import', 'tsx', 'bench/import-baseline.ts', csv, path.join(dir, 'baseline.db')], process.env)).trim().split('\n').pop()!) as { rows: number; ms: number; peakRssMb: number };
  if (baselineOut.rows !== opts.rows) throw new BenchError(`the baseline read ${baselineOut.rows} rows, expected ${opts.rows}`);
  const baseline: Figures = { rows: baselineOut.rows, seconds: baselineOut.ms / 1000, rowsPerSec: baselineOut.rows / (baselineOut.ms / 1000), peakRssMb: baselineOut.peakRssMb };
  process.stderr.write(` ${fmt(baseline.seconds, 1)} s\n`);

  const { server, apiKey } = await startFormcast(dir);
  const pid = server.child.pid!;
  const idle = memoryOf(pid);
  process.stderr.write(`formcast ${server.url} (pid ${pid}, ${idle.rssMb} MB RSS idle): POST /v1/contacts/imports ...`);
  const res = await upload(server.url, apiKey, csv, size);
  if (!alive(server.child)) throw new BenchError(`formcast serve died during the import\n${server.output()}`);
  const mem = memoryOf(pid);
  process.stderr.write(` ${res.status} in ${fmt(res.ms / 1000, 1)} s\n`);
  await stopChild(server.child);

  let job: { status?: string; total?: number; created?: number; skipped?: number; error?: string | null } = {};
  try {
    job = JSON.parse(res.body);
  } catch {
    // reported below
  }
  const ok = res.status === 201 && job.status === 'COMPLETED' && job.total === opts.rows && job.created === opts.rows && job.skipped === 0;
  const target: Figures = { rows: job.created ?? 0, seconds: res.ms / 1000, rowsPerSec: (job.created ?? 0) / (res.ms / 1000), peakRssMb: mem.peakRssMb };
  const timeRatio = target.seconds / baseline.seconds;
  const rssRatio = target.peakRssMb / baseline.peakRssMb;
  const rssPass = target.peakRssMb < RSS_GOAL_MB;

  const cols = ['target', 'rows', 'wall s', 'rows/s', 'peak RSS MB'];
  const rows = [
    ['baseline', fmt(baseline.rows), fmt(baseline.seconds, 1), fmt(baseline.rowsPerSec), String(baseline.peakRssMb)],
    ['formcast', fmt(target.rows), fmt(target.seconds, 1), fmt(target.rowsPerSec), String(target.peakRssMb)],
  ];
  process.stdout.write([
    '',
    `CSV import of ${fmt(opts.rows)} rows (${fmt(size / 1024 / 1024, 1)} MB): formcast POST /v1/contacts/imports vs csv-parse + better-sqlite3`,
    `node ${process.version}, ${os.cpus().length} CPU(s); SQLite; formcast idle RSS before the import ${idle.rssMb} MB`,
    '',
    ...table(cols, [rows], 1),
    '',
    `ratio formcast/baseline: time ${timeRatio.toFixed(2)}x, peak RSS ${rssRatio.toFixed(2)}x`,
    `formcast peak RSS: ${target.peakRssMb} MB   goal < ${RSS_GOAL_MB} MB   ${rssPass ? 'PASS' : 'MISS'}`,
    `import job: HTTP ${res.status}, ${job.status ?? '?'}, total ${job.total ?? '?'}, created ${job.created ?? '?'}, skipped ${job.skipped ?? '?'}   ${ok ? 'ok' : `FAILED${job.error ? `: ${job.error}` : ''}${res.status !== 201 ? `: ${res.body.slice(0, 300)}` : ''}`}`,
    ...(opts.keep ? [`temp directory kept: ${dir}`] : []),
    '',
  ].join('\n'));
  process.stdout.write(`${JSON.stringify({
    bench: 'import',
    node: process.version,
    cpus: os.cpus().length,
    rows: opts.rows,
    fileBytes: size,
    baseline: { seconds: round(baseline.seconds, 2), rowsPerSec: Math.round(baseline.rowsPerSec), peakRssMb: baseline.peakRssMb },
    target: { seconds: round(target.seconds, 2), rowsPerSec: Math.round(target.rowsPerSec), peakRssMb: target.peakRssMb, idleRssMb: idle.rssMb, httpStatus: res.status, job: { status: job.status, total: job.total, created: job.created, skipped: job.skipped } },
    ratios: { time: round(timeRatio, 3), peakRss: round(rssRatio, 3) },
    goals: { peakRssMb: { max: RSS_GOAL_MB, value: target.peakRssMb, pass: rssPass } },
    ok,
  })}\n`);
  return ok ? 0 : 1;
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

await runBench('bench:import', main);
