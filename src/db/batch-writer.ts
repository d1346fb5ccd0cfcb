import type { Db, Executor } from './connection.js';

/**
 * Writes of the same kind from concurrent callers, done together: those that arrive while a batch is being written
 * go into the next one, written by `write` in one transaction, one commit for all (the delivery pipeline's hand-offs
 * and "sent" outcomes: a commit, and the statement overhead around it, cost more than one row's change).
 *
 * Unlike GroupCommit (group-commit.ts) there are no savepoints: a unit here cannot fail on its own (an UPDATE with
 * conditions changes a row or does not; `write` says which in its result). `write` must be safe to run again: a
 * transaction that fails (a deadlock with another transaction on PostgreSQL, a busy database) is tried once more, then
 * each unit in a transaction of its own, so that a failure reaches only the units it concerns. A batch starts once the
 * current turn of the event loop is over (setImmediate), or after `lingerMs` to gather more, so that the units that
 * turn produced are in it; its callers are answered after the commit. On both databases.
 */
export class BatchWriter<T, R> {
  private queue: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  private writing = false;
  private timer: NodeJS.Timeout | null = null;

  /**
   * `lingerMs`: how long a batch waits for more units before it is written (0: until the end of the event loop's
   * turn); a full batch (`maxBatch`) is written at once.
   */
  constructor(
    private readonly db: Db,
    private readonly write: (trx: Executor, items: T[]) => Promise<R[]>,
    private readonly options: { maxBatch?: number; lingerMs?: number } = {},
  ) {}

  run(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    const max = this.options.maxBatch ?? 256;
    if (this.timer && this.queue.length >= max) {
      clearTimeout(this.timer);
      this.timer = null;
      this.flush(max);
      return;
    }
    if (this.writing) return;
    this.writing = true;
    const linger = this.options.lingerMs ?? 0;
    if (linger > 0 && this.queue.length < max) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.flush(max);
      }, linger);
      return;
    }
    setImmediate(() => this.flush(max));
  }

  private flush(max: number): void {
    const batch = this.queue.splice(0, max);
    void this.writeBatch(batch).finally(() => {
      this.writing = false;
      if (this.queue.length) this.schedule();
    });
  }

  private async writeBatch(batch: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[]): Promise<void> {
    const once = (units: typeof batch) =>
      this.db.kysely.transaction().execute((trx) =>
        this.write(
          trx,
          units.map((u) => u.item),
        ),
      );
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const results = await once(batch);
        batch.forEach((u, i) => u.resolve(results[i]!));
        return;
      } catch {
        // tried again, then unit by unit
      }
    }
    for (const u of batch) {
      try {
        u.resolve((await once([u]))[0]!);
      } catch (err) {
        u.reject(err);
      }
    }
  }
}
