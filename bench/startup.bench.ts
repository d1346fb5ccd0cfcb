/**
 * Start-up benchmark (`npm run bench:startup`): how long `formcast serve` takes from spawn to a ready answer, the
 * CPU it spends getting there, and its resident memory once idle, against a bare Fastify + better-sqlite3 server
 * (bench/startup-baseline.mjs) measured in the same run, the two alternating round by round.
 *
 * Each round spawns the server on a fresh SQLite file (migrations included for Formcast: a first start), polls
 * GET /readyz every 5 ms until it answers 200 (the start time), reads the process's CPU time at that moment
 * (/proc/<pid>/stat, user + system), lets it idle for --idle seconds (its jobs run meanwhile), and reads VmRSS.
 * Formcast runs as `npm start` runs it: `node bin/formcast serve`, which runs the build in dist/server (npm install
 * makes it; run `npm run build` after editing sources, or the sources run through tsx and the figures say so).
 *
 * Goals (issue 13): start < 1 s (median), idle RSS < 100 MB (median). The ratios to the baseline are printed too:
 * the machine's load moves the absolute figures, the ratios less. Options: --rounds N (default 5), --idle S (3).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  BenchError,
  HOST,
  ROOT,
  fmt,
  makeTempDir,
  memoryOf,
  parseCommandLine,
  positiveInt,
  runBench,
  stopChild,
  table,
} from './harness.js';

const START_GOAL_MS = 1000;
const RSS_GOAL_MB = 100;
const CLOCK_TICK_MS = 1000 / 100; // USER_HZ

interface Sample {
  startMs: number;
  cpuMs: number;
  rssMb: number;
}

function cpuMsOf(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_MS;
}

async function measure(label: string, args: string[], idleS: number): Promise<Sample> {
  const dir = makeTempDir(`startup-${label}`);
  const port = 20000 + Math.floor(Math.random() * 20000);
  const env = {
    ...process.env,
    PORT: String(port),
    HOST,
    LOG_LEVEL: 'warn',
    DATABASE_URL: path.join(dir, 'db.sqlite'),
    PUBLIC_URL: 'https://news.example.com',
  };
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new BenchError(`${label} exited: ${stderr}`);
      if (performance.now() - started > 60_000) throw new BenchError(`${label} not ready in 60 s: ${stderr}`);
      const ok = await fetch(`http://${HOST}:${port}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    const startMs = performance.now() - started;
    const cpuMs = cpuMsOf(child.pid!);
    await new Promise((r) => setTimeout(r, idleS * 1000));
    return { startMs, cpuMs, rssMb: memoryOf(child.pid!).rssMb };
  } finally {
    await stopChild(child);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

await runBench('bench:startup', async () => {
  const opts = parseCommandLine(
    { rounds: { type: 'string' }, idle: { type: 'string' } },
    {
      example: 'npm run bench:startup -- --rounds 5',
      usage: ['Usage: npm run bench:startup -- [--rounds N] [--idle SECONDS]'],
    },
  );
  const rounds = positiveInt('rounds', opts.rounds, 5);
  const idle = positiveInt('idle', opts.idle, 3);
  const built = fs.existsSync(path.join(ROOT, 'dist/server/cli/main.js'));
  if (!built)
    process.stdout.write('note: no build in dist/server (npm run build): Formcast runs from its sources through tsx\n');
  const load = os.loadavg()[0]!;
  const base: Sample[] = [];
  const ours: Sample[] = [];
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? ['base', 'ours'] : ['ours', 'base'];
    for (const which of order) {
      if (which === 'base') base.push(await measure('baseline', ['bench/startup-baseline.mjs'], idle));
      else ours.push(await measure('formcast', ['bin/formcast', 'serve'], idle));
    }
  }
  const m = (xs: Sample[], k: keyof Sample) => median(xs.map((x) => x[k]));
  const rows = [
    ['baseline', base],
    ['formcast', ours],
  ] as const;
  const lines = table(
    ['server', 'start ms (median)', 'CPU ms at ready', 'idle RSS MB'],
    [rows.map(([name, xs]) => [name, fmt(m(xs, 'startMs')), fmt(m(xs, 'cpuMs')), fmt(m(xs, 'rssMb'))])],
    1,
  );
  process.stdout.write(`${lines.join('\n')}\n\n`);
  const start = m(ours, 'startMs');
  const rss = m(ours, 'rssMb');
  const startPass = start < START_GOAL_MS;
  const rssPass = rss < RSS_GOAL_MB;
  process.stdout.write(
    `goal: start < ${START_GOAL_MS} ms: ${fmt(start)} ms (${fmt(start / m(base, 'startMs'), 2)}× the baseline's) ${startPass ? 'PASS' : 'MISS'}\n`,
  );
  process.stdout.write(
    `goal: idle RSS < ${RSS_GOAL_MB} MB: ${fmt(rss)} MB (${fmt(rss / m(base, 'rssMb'), 2)}× the baseline's) ${rssPass ? 'PASS' : 'MISS'}\n`,
  );
  process.stdout.write(
    `${JSON.stringify({
      bench: 'startup',
      rounds,
      idleSeconds: idle,
      loadAverage: Number(load.toFixed(2)),
      built,
      formcast: { startMs: Math.round(start), cpuMs: Math.round(m(ours, 'cpuMs')), idleRssMb: rss },
      baseline: {
        startMs: Math.round(m(base, 'startMs')),
        cpuMs: Math.round(m(base, 'cpuMs')),
        idleRssMb: m(base, 'rssMb'),
      },
      goals: { startMs: START_GOAL_MS, idleRssMb: RSS_GOAL_MB },
      pass: { start: startPass, idleRss: rssPass },
    })}\n`,
  );
  return 0;
});
