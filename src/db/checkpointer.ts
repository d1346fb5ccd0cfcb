import fs from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';
import { applyLeanHeap } from '../lib/lean-heap.js';
import { FROM_BUILD, programFile } from '../lib/paths.js';
import type { CheckpointWorkerData } from './checkpoint.worker.js';

/**
 * SQLite's checkpoints in a thread of their own (SQLITE_CHECKPOINTS=background, the default of `formcast serve`,
 * `worker` and `inbound`; docs/cli.md, "SQLite's checkpoints").
 *
 * In WAL mode a commit appends pages to the write-ahead log, and SQLite copies the log back into the database file
 * (a **checkpoint**, with two fsyncs) from the connection that commits, once the log holds 1,000 pages: on the event
 * loop, inside the commit of whatever request or batch crossed the line. A busy import spent ~8 % of its CPU there
 * (bench/README.md, "bench:import"). Here a thread with its own connection runs a passive checkpoint every
 * `everyMs` instead, which copies what it can without waiting for anyone or making anyone wait; the process's own
 * connection keeps its automatic checkpoint at `backstopPages` only, for a log the thread could not keep short (a
 * checkpoint can copy nothing a reader still needs, and the log starts over only when every page of it was copied).
 *
 * The thread starts when the log first holds `startAtBytes` (looked at every `watchMs`), so a process that writes
 * little, or a command that ends at once, never starts one. A thread that cannot start or fails gives the checkpoints
 * back to the connection (its automatic checkpoint at SQLite's default again), with a warning.
 */
export interface CheckpointerOptions {
  startAtBytes?: number;
  watchMs?: number;
  everyMs?: number;
  backstopPages?: number;
  log?: { warn(obj: object, msg: string): void };
  /** The thread's module (checkpoint.worker's build or source by default). */
  workerFile?: string;
}

export interface Checkpointer {
  /** True while the thread runs. */
  readonly running: boolean;
  /** True once the thread's module has run (every thread its start made has set V8's flags back; the lean heap, if any, is set again). */
  readonly online: boolean;
  /** Passes of the thread that copied pages, as it reported them. */
  readonly checkpoints: number;
  /** Starts the thread now, whatever the log's size (tests). */
  start(): void;
  close(): Promise<void>;
}

const SQLITE_DEFAULT_AUTOCHECKPOINT = 1000;

/**
 * What the thread runs: the module's file, or from the sources, a line that loads tsx in the thread first and then the
 * module. A thread given a .ts file, or `--import tsx` in its flags, fails on Node 20: the module is loaded before the
 * thread's tsx hooks are in place.
 */
function entry(workerFile: string): string | URL {
  if (FROM_BUILD || !workerFile.endsWith('.ts')) return pathToFileURL(workerFile);
  // tsx's ESM entry (its CommonJS one cannot register hooks in a thread), found beside the CommonJS one `require` finds.
  const cjs = createRequire(import.meta.url).resolve('tsx/esm/api');
  const tsx = pathToFileURL(cjs.replace(/\.cjs$/, '.mjs')).href;
  return `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(pathToFileURL(workerFile).href)}); })`;
}

export function startCheckpointer(
  sqlite: SQLite.Database,
  file: string,
  options: CheckpointerOptions = {},
): Checkpointer {
  const {
    startAtBytes = 2 * 1024 * 1024,
    watchMs = 1000,
    // Every 10 ms while the log grows: each pass's two fsyncs then flush little, and the writer's own fsync when the
    // log starts over (SQLite syncs the new header) waits for little. Every 100 ms, the tail latency of write-heavy
    // endpoints was 1.5-2.4x a floor's (bench:track, bench:emails accept), from stalls of the event loop in those
    // fsyncs (strace: 11 ms); every 300-1,000 ms it was worse; every 10 ms it was 0.9-1.1x (bench/README.md,
    // "Checkpoints every 10 ms").
    everyMs = 10,
    backstopPages = 10_000,
    log,
    workerFile = programFile('db/checkpoint.worker'),
  } = options;
  let worker: Worker | null = null;
  let closed = false;
  let failed = false;
  let checkpoints = 0;
  let online = false;
  /** When a failed checkpoint was last said: a failure that repeats (a full disk) is said once a minute, not 10 times a second. */
  let warnedAt = -Infinity;

  const wal = `${file}-wal`;
  // The log's size, looked at until the thread starts (`start` stops it).
  const watch = setInterval(() => {
    try {
      if (fs.statSync(wal).size >= startAtBytes) start();
    } catch {
      // No log yet.
    }
  }, watchMs);
  watch.unref();

  /** The connection checkpoints itself again at SQLite's default (never throws: called from the thread's events). */
  const restoreDefault = () => {
    try {
      if (sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT}`);
    } catch (err) {
      // The connection busy with a statement being iterated: its next commit still checkpoints at the backstop.
      log?.warn({ err }, "could not set SQLite's automatic checkpoint back to its default");
    }
  };

  const inline = (why: string, err?: unknown) => {
    worker = null;
    failed = true;
    restoreDefault();
    log?.warn({ err }, `SQLite's checkpoints run in the process's own thread again: ${why}`);
  };

  const start = () => {
    if (worker || closed || failed) return;
    clearInterval(watch);
    let w: Worker | undefined;
    try {
      const data: CheckpointWorkerData = { file, everyMs };
      w = new Worker(entry(workerFile), {
        eval: !FROM_BUILD && workerFile.endsWith('.ts'),
        workerData: data,
        // A connection and a timer: a small heap is plenty.
        resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 2 },
      });
      const self = w;
      // The thread's start set V8's process-wide flags back to Node's: a lean heap (LEAN_HEAP) is lean again. Without
      // this, a send that started the thread part-way let the main thread's young generation grow from 1 to 16 MB
      // semi-spaces (bench/README.md, bench:send: a million recipients peaked ~35 MB higher).
      w.once('online', () => applyLeanHeap(process.env));
      w.on('message', (m: { kind: string; message?: string }) => {
        if (m.kind === 'checkpointed') checkpoints++;
        else if (m.kind === 'ready') {
          applyLeanHeap(process.env);
          online = true;
        } else if (m.kind === 'error' && Date.now() - warnedAt >= 60_000) {
          warnedAt = Date.now();
          log?.warn(
            { err: m.message },
            'a background SQLite checkpoint failed; the next ones try again (said at most once a minute)',
          );
        }
      });
      w.on('error', (err) => {
        if (worker === self) inline('the checkpoint thread failed', err);
      });
      w.on('exit', (code) => {
        if (worker === self && !closed) inline(`the checkpoint thread exited (${code})`);
      });
      // The thread never keeps the process alive (close() holds it while it stops). After the listeners: adding a
      // 'message' listener refs the thread again.
      w.unref();
      sqlite.pragma(`wal_autocheckpoint = ${backstopPages}`);
      worker = w;
    } catch (err) {
      void w?.terminate();
      inline('the checkpoint thread could not start', err);
    }
  };

  let closing: Promise<void> | null = null;
  const stop = async () => {
    closed = true;
    clearInterval(watch);
    const w = worker;
    worker = null;
    if (!w) return;
    // Held while it stops: an unref'd thread and timer alone would let the process end before the 'exit' arrives,
    // and whatever awaits close() would never run.
    w.ref();
    const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
    w.postMessage('stop');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), 2000);
    });
    if ((await Promise.race([exited, timeout])) === 'late') await w.terminate();
    clearTimeout(timer);
    restoreDefault();
  };

  return {
    get running() {
      return worker !== null;
    },
    get online() {
      return worker !== null && online;
    },
    get checkpoints() {
      return checkpoints;
    },
    start,
    // Called twice, both wait for the one stop.
    close: () => (closing ??= stop()),
  };
}
