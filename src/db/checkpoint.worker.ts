import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';

/**
 * The SQLite checkpointer's thread (db/checkpointer.ts): its own connection to the database file, which copies the
 * write-ahead log back into the file (`PRAGMA wal_checkpoint(PASSIVE)`, with the log's and the file's fsyncs) every
 * `everyMs`, so that the process's connection, on the event loop, does not. A passive checkpoint waits for no one
 * and no one waits for it: writers go on appending to the log, readers go on reading, and it copies what it can.
 */
export interface CheckpointWorkerData {
  file: string;
  everyMs: number;
}

const { file, everyMs } = workerData as CheckpointWorkerData;
const db = new SQLite(file, { fileMustExist: true });
// The checkpoint's fsyncs are the connection's `synchronous` (NORMAL: the log before copying, the file after);
// busy_timeout 0: a checkpoint another connection is running is skipped, not waited for.
db.pragma('synchronous = NORMAL');
db.pragma('busy_timeout = 0');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');

let timer: NodeJS.Timeout | null = null;
const tick = () => {
  try {
    const row = checkpoint.get() as { busy: number; log: number; checkpointed: number } | undefined;
    if (row && row.checkpointed > 0) parentPort?.postMessage({ kind: 'checkpointed', log: row.log, checkpointed: row.checkpointed });
  } catch (err) {
    // SQLITE_BUSY (another checkpoint, a writer resetting the log): the next tick tries again.
    if ((err as { code?: string }).code !== 'SQLITE_BUSY') parentPort?.postMessage({ kind: 'error', message: (err as Error).message });
  }
  timer = setTimeout(tick, everyMs);
};
timer = setTimeout(tick, 0);

parentPort?.on('message', (message: unknown) => {
  if (message !== 'stop') return;
  if (timer) clearTimeout(timer);
  db.close();
  parentPort?.close();
});
