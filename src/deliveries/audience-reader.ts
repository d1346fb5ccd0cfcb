import type { Kysely } from 'kysely';
import type { Dialect } from '../db/connection.js';
import type { Database } from '../db/schema.js';
import { audience } from '../segments/audience.js';
import { inRange, nextSlice, type IdRange } from '../segments/slices.js';
import type { MaterializationJob } from './store.js';

/** A batch of an audience: at most maxRows recipients of one slice; `next`, the cursor after them (null: the audience is done). */
export interface AudienceBatch {
  rows: { contactId: string; email: string }[];
  next: string | null;
}

/**
 * Reads read ahead are used only this soon after they were made (the pipeline goes on to send between rounds of
 * materialisation): older, a slice is read again, so that recipients are not taken from a read much further back
 * than a transaction's length. Sending re-checks each recipient anyway (SqlDeliveryStore.recipients).
 */
export const READ_AHEAD_MAX_AGE_MS = 1_000;
/**
 * Slices being read at once, the one of the next batch included. Two (the next slice read too while the current
 * one is) used more of the database's CPU than it hid on 2 shared cores: materialisation 0.84–0.97× the hand-written
 * SQL's speed against 0.93–1.03× with one, in the same runs (bench:segments' data, load 2.8–3.3); two only while
 * passing over slices without a recipient, 0.83× against 0.86× (load 3.3).
 */
const READ_AHEAD_SLICES = 1;
/**
 * Slices without a recipient one batch passes over before it is written (an empty batch that moves the cursor):
 * a segment narrowed to a part of the workspace cost a transaction per empty slice otherwise.
 */
const PASS_OVER_SLICES = 8;

type Row = AudienceBatch['rows'][number];

interface Pending {
  /** The slice; null past the workspace's last slice. */
  range: Promise<IdRange | null>;
  rows: Promise<Row[]>;
  at: number;
}

/**
 * PostgreSQL: the audience of one materialisation, read a slice at a time ahead of its writing, on the pool's
 * connections and outside the transactions that write it (each statement of PostgreSQL has its own snapshot, in a
 * transaction or not). Each statement still reads one slice (segments/slices.ts: a range of at most the filter's
 * slice rows, found by a walk of the id index), at most maxRows recipients of it. The next batch's slice is read
 * while the current batch is written, so the inserts (42 ms per 1,000 recipients: nine indexes, three foreign keys)
 * and the filtered reads (20–35 ms a slice) no longer take turns. After a full batch, the next one goes on within the
 * same slice instead of walking the index to a new slice's end from the last recipient. Measured in bench:segments
 * (bench/README.md).
 *
 * A reader is good for one job in one process, from `position` on: the store makes a new one when the job's cursor
 * is not where the reader stands (a write that failed), and a worker that takes the job over reads anew from the
 * cursor.
 */
export class AudienceReader {
  private readonly queue: Pending[] = [];
  private definition?: { at: number; query: Awaited<ReturnType<typeof audience>> };
  private definitionRead?: Promise<Awaited<ReturnType<typeof audience>>>;

  constructor(private readonly db: Kysely<Database>, private readonly dialect: Dialect, private readonly job: MaterializationJob, readonly maxRows: number, public position: string | null) {}

  /** The next batch; moves `position` to its `next`. */
  async take(): Promise<AudienceBatch> {
    for (let passed = 1; ; passed++) {
      this.fill();
      let head = this.queue[0]!;
      if (Date.now() - head.at > READ_AHEAD_MAX_AGE_MS) {
        head = { range: head.range, rows: this.read(head.range), at: Date.now() };
        this.queue[0] = head;
      }
      const range = await head.range;
      const rows = await head.rows;
      if (!range) throw new Error('the audience reader went past the last slice');
      if (rows.length >= this.maxRows) {
        const last = rows.at(-1)!.contactId;
        if (range.upTo === undefined) {
          // The last slice, open-ended: a new one walked from the last recipient (contacts may have come since).
          this.queue.length = 0;
          const rest = this.walk(last);
          this.queue.push({ range: rest, rows: this.read(rest), at: Date.now() });
        } else if (last !== range.upTo) {
          // Go on within the slice, after its last recipient (which is at most the slice's end: `!==`, not an order of strings).
          const rest = Promise.resolve({ after: last, upTo: range.upTo });
          this.queue[0] = { range: rest, rows: this.read(rest), at: Date.now() };
        } else {
          this.queue.shift();
        }
        this.position = last;
        this.fill();
        return { rows, next: last };
      }
      this.queue.shift();
      if (range.upTo === undefined) {
        this.position = null;
        return { rows, next: null };
      }
      this.position = range.upTo;
      if (rows.length || passed >= PASS_OVER_SLICES) {
        this.fill();
        return { rows, next: range.upTo };
      }
    }
  }

  /** Stops reading ahead (what is being read finishes; nobody looks at it). */
  close(): void {
    this.queue.length = 0;
  }

  /** Keeps READ_AHEAD_SLICES slices queued, each walked from the end of the one before. */
  private fill(): void {
    while (this.queue.length < READ_AHEAD_SLICES) {
      const before = this.queue.at(-1);
      const range: Promise<IdRange | null> = before
        ? before.range.then((r) => (r && r.upTo !== undefined ? this.walk(r.upTo) : null))
        : this.walk(this.position);
      range.catch(() => undefined);
      this.queue.push({ range, rows: this.read(range), at: Date.now() });
    }
  }

  private walk(after: string | null): Promise<IdRange> {
    const range = this.audience().then(({ sliceRows }) => nextSlice(this.db, this.job.workspaceId, { rows: sliceRows, order: 'asc', cursor: after ?? undefined }));
    range.catch(() => undefined);
    return range;
  }

  private read(range: Promise<IdRange | null>): Promise<Row[]> {
    const rows = range.then(async (r) => {
      if (!r) return [];
      const { query } = await this.audience();
      const found = await inRange(query, r).select(['contacts.id', 'contacts.email']).orderBy('contacts.id').limit(this.maxRows).execute();
      return found.map((x) => ({ contactId: x.id, email: x.email }));
    });
    // Awaited when its batch comes, or never (the job lost or abandoned): a failure is take()'s to report.
    rows.catch(() => undefined);
    return rows;
  }

  /**
   * The audience's query (the segment, the topic and their defaults: three queries to read), read again when older
   * than READ_AHEAD_MAX_AGE_MS: as recent as the reads ahead, not three queries per batch.
   */
  private audience(): Promise<Awaited<ReturnType<typeof audience>>> {
    if (this.definition && Date.now() - this.definition.at <= READ_AHEAD_MAX_AGE_MS) return Promise.resolve(this.definition.query);
    if (!this.definitionRead) {
      const at = Date.now();
      this.definitionRead = audience(this.db, this.dialect, this.job.workspaceId, { segmentId: this.job.segmentId, topicId: this.job.topicId })
        .then((query) => {
          this.definition = { at, query };
          return query;
        })
        .finally(() => { this.definitionRead = undefined; });
    }
    return this.definitionRead;
  }
}
