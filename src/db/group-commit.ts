import { sql } from 'kysely';
import type { Db, Executor } from './connection.js';

interface Job {
  work: (trx: Executor) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for the short write transactions of concurrent requests (a public form's submissions during a spike).
 *
 * On SQLite the one connection runs one transaction at a time anyway, and a commit costs far more than a
 * submission's statements: every page the transaction dirtied goes to the WAL (about twenty for a sign-up: the
 * contact, the submission, the confirmation, the events and their indexes), and every thousand pages a checkpoint
 * copies them back. So the work of the requests that arrive while a transaction runs is done together, in the next
 * transaction, then one commit for all. A unit that fails is rolled back alone and its caller gets the error; the others
 * go on: the batch is written without savepoints first (they cost more than the units), and when a unit fails,
 * everything is rolled back and the batch written again with a savepoint per unit, so a unit's work may run twice
 * (it must do nothing but its writes through `trx`). A unit that arrives when nothing is being written waits only
 * for the end of the event loop's turn, no timer. Each caller is answered after the commit that holds its work, as with a
 * transaction of its own; if the transaction itself fails (a savepoint command, the commit), every caller of the
 * batch gets the error and none of its work is stored.
 *
 * On PostgreSQL each unit runs in a transaction of its own: there are several connections, and savepoints would
 * cost round trips.
 */
export class GroupCommit {
  private readonly queue: Job[] = [];
  private draining = false;

  constructor(
    private readonly db: Db,
    private readonly maxBatch = 64,
  ) {}

  /** Runs `work` in a transaction (shared with other units on SQLite); resolves once it is committed. */
  run<T>(work: (trx: Executor) => Promise<T>): Promise<T> {
    if (this.db.dialect !== 'sqlite') return this.db.kysely.transaction().execute(work);
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  /**
   * A batch starts once the current turn of the event loop has read what the network brought (setImmediate): SQLite's
   * statements are synchronous, so a transaction runs from BEGIN to COMMIT without letting one request in, and a batch
   * started at once would almost always be a batch of one.
   */
  private schedule(): void {
    if (this.draining) return;
    this.draining = true;
    setImmediate(() => {
      void this.write(this.queue.splice(0, this.maxBatch)).finally(() => {
        this.draining = false;
        if (this.queue.length) this.schedule();
      });
    });
  }

  private async write(batch: Job[]): Promise<void> {
    if (batch.length === 1) {
      const job = batch[0]!;
      await this.db.kysely.transaction().execute(job.work).then(job.resolve, job.reject);
      return;
    }
    // First without savepoints: a savepoint makes SQLite copy every page its unit then changes into a sub-journal (a
    // temporary file), which cost more than the units' statements (bench:emails, accept: 114 against 60 µs of CPU an
    // email). Units rarely fail; when one does, the whole transaction is rolled back, nothing was answered yet, and the
    // batch is written again with a savepoint per unit.
    if (!(await this.attempt(batch, false))) await this.attempt(batch, true);
  }

  /**
   * One transaction for the batch, then each caller answered. False (everything rolled back, nobody answered) when,
   * without savepoints, a unit failed.
   */
  private async attempt(batch: Job[], savepoints: boolean): Promise<boolean> {
    const outcomes: { ok: boolean; value: unknown }[] = [];
    const trx = await this.db.kysely
      .startTransaction()
      .execute()
      .catch((error: unknown) => {
        for (const job of batch) job.reject(error);
        return null;
      });
    if (!trx) return true;
    try {
      for (const job of batch) {
        if (!savepoints) {
          try {
            outcomes.push({ ok: true, value: await job.work(trx) });
          } catch {
            await trx.rollback().execute();
            return false;
          }
          continue;
        }
        await sql`savepoint "group_commit"`.execute(trx);
        try {
          outcomes.push({ ok: true, value: await job.work(trx) });
        } catch (error) {
          await sql`rollback to "group_commit"`.execute(trx);
          outcomes.push({ ok: false, value: error });
        }
        await sql`release "group_commit"`.execute(trx);
      }
      await trx.commit().execute();
    } catch (error) {
      await trx
        .rollback()
        .execute()
        .catch(() => {});
      for (const job of batch) job.reject(error);
      return true;
    }
    batch.forEach((job, i) => (outcomes[i]!.ok ? job.resolve(outcomes[i]!.value) : job.reject(outcomes[i]!.value)));
    return true;
  }
}
