import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TEST_PROCESS_DEFAULTS } from './formcast-process.js';

/**
 * `formcast worker` processes for the reliability tests (test/reliability): started with an environment of the
 * test's only, killed at will, all of them killed at the end (`workers`).
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface Worker {
  child: ChildProcessWithoutNullStreams;
  pid: number;
  output(): string;
  exited: Promise<void>;
}

export const workers = new Set<Worker>();

export function startWorker(env: Record<string, string>): Promise<Worker> {
  const base = { ...process.env };
  for (const name of [
    'PORT',
    'HOST',
    'DATABASE_URL',
    'SMTP_URL',
    'PUBLIC_URL',
    'LOG_LEVEL',
    'SMTP_MAX_CONNECTIONS',
    'SMTP_RATE_LIMIT',
    'PGAPPNAME',
  ])
    delete base[name];
  for (const name of Object.keys(base)) if (name.startsWith('WORKER_')) delete base[name];
  const child = spawn(process.execPath, ['bin/formcast', 'worker'], {
    cwd: ROOT,
    env: { ...base, ...TEST_PROCESS_DEFAULTS, ...env },
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out = (out + d).slice(-20_000)));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out = (out + d).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const worker: Worker = { child, pid: child.pid!, output: () => out, exited };
  workers.add(worker);
  void exited.then(() => workers.delete(worker));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start within 60 s:\n${out}`)), 60_000);
    const check = () => {
      if (/^worker started$/m.test(out)) {
        clearTimeout(timer);
        child.stdout.off('data', check);
        resolve(worker);
      }
    };
    child.stdout.on('data', check);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`worker exited before starting:\n${out}`));
    });
  });
}

export async function stopWorker(w: Worker, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (w.child.exitCode === null && w.child.signalCode === null) {
    w.child.kill(signal);
    const timer = setTimeout(() => w.child.kill('SIGKILL'), 10_000);
    await w.exited;
    clearTimeout(timer);
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitFor<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined> | T | undefined,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}
