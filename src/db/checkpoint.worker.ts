import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { applyLeanHeap } from '../lib/lean-heap.js';

// A thread's start sets V8's process-wide flags back to Node's, for every thread of the process: the lean heap is set
// again (lib/lean-heap.ts), as the send threads do (the checkpointer sets it again too once this thread is online).
applyLeanHeap();

/**
 * The SQLite checkpointer's thread (db/checkpointer.ts): its own connection to the database file, which copies the
 * write-ahead log back into the file (`PRAGMA wal_checkpoint(PASSIVE)`, with the log's and the file's fsyncs) every
 * `everyMs` while the log grows (every 4 × `everyMs`, at most a second, while it does not), so that the process's
 * connection, on the event loop, does not. A passive checkpoint waits for no one
 * and no one waits for it: writers go on appending to the log, readers go on reading, and it copies what it can.
 */
export interface CheckpointWorkerData {
  file: string;
  everyMs: number;
}

const { file, everyMs } = workerData as CheckpointWorkerData;
const db = new SQLite(file, { fileMustExist: true });
// The checkpoint's fsyncs are the connection's `synchronous` (NORMAL: the log before copying, the file after);
// busy_timeout 0: nothing in this thread waits on a lock (a passive checkpoint calls no busy handler anyway; one that
// finds another checkpoint running says so in its row, `busy`, and the next pass tries again).
db.pragma('synchronous = NORMAL');
db.pragma('busy_timeout = 0');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');

/** What the last checkpoint saw: `checkpointed` is the log's frames copied so far, not this pass's. */
let last = { log: -1, checkpointed: -1 };
/**
 * A log with nothing new is looked at every 4 × everyMs, at least IDLE_MIN_MS (100 ms with the default 10 ms) and at
 * most IDLE_MS apart: an idle server's thread mostly sleeps.
 */
const IDLE_MS = 1000;
const IDLE_MIN_MS = 100;

let timer: NodeJS.Timeout | null = null;
const tick = () => {
  let copied = false;
  try {
    const row = checkpoint.get() as { busy: number; log: number; checkpointed: number } | undefined;
    // A pass that found another checkpoint running (busy, its figures -1) neither copied nor moves `last`.
    if (row && row.busy === 0 && row.log >= 0 && (row.log !== last.log || row.checkpointed !== last.checkpointed)) {
      copied = row.checkpointed > 0 && row.checkpointed !== last.checkpointed;
      last = { log: row.log, checkpointed: row.checkpointed };
      if (copied) parentPort?.postMessage({ kind: 'checkpointed', log: row.log, checkpointed: row.checkpointed });
    }
  } catch (err) {
    // SQLITE_BUSY (the log being reset by a writer, a lock held): the next tick tries again. Anything else is said.
    if ((err as { code?: string }).code !== 'SQLITE_BUSY')
      parentPort?.postMessage({ kind: 'error', message: (err as Error).message });
  }
  timer = setTimeout(tick, copied ? everyMs : Math.max(everyMs, Math.min(IDLE_MS, Math.max(everyMs * 4, IDLE_MIN_MS))));
};
timer = setTimeout(tick, 0);
// The module has run: run from the sources, loading it (tsx's loader) started a thread of its own, which set V8's
// process-wide flags back again after 'online' (db/checkpointer.ts sets the lean heap again on this).
parentPort?.postMessage({ kind: 'ready' });

parentPort?.on('message', (message: unknown) => {
  if (message !== 'stop') return;
  if (timer) clearTimeout(timer);
  db.close();
  parentPort?.close();
});
