import type { Kysely } from 'kysely';
import { holdConnection } from '../../db/held-connection.js';
import type { Database } from '../../db/schema.js';
import { audience } from '../../audience/index.js';
import { declareAudienceCursor, fetchAudienceCursor, type MaterializedRecipient } from './deliveries.batch-sql.js';
import type { MaterializationJob } from './store.js';

/** A batch of an audience: at most maxRows recipients; `next`, the cursor after them (null: the audience is done). */
export interface AudienceBatch {
  rows: MaterializedRecipient[];
  next: string | null;
}

export interface AudienceReaderOptions {
  /**
   * How long one read of the audience (one server-side cursor, so one snapshot) gives batches: older, the next batch
   * comes from a new read, from the position reached. So a long materialisation neither holds one snapshot (and with
   * it VACUUM's horizon) for its whole length nor takes recipients from a read much older than this.
   */
  maxReadMs: number;
  /** A read nobody has taken a batch from for this long is closed (its connection back in the pool). */
  idleMs: number;
}

export const DEFAULT_READER_OPTIONS: AudienceReaderOptions = { maxReadMs: 5_000, idleMs: 2_000 };

type Row = AudienceBatch['rows'][number];

/** One read of the audience: a transaction on a connection of its own, holding a cursor over the audience query. */
interface Read {
  openedAt: number;
  /** Resolves with the next FETCH's rows; each call is queued behind the one before. */
  fetch(): Promise<Row[]>;
  /** Closes the cursor and the transaction and gives the connection back; once, whatever is in flight. */
  end(): Promise<void>;
}

/**
 * PostgreSQL: the audience of one materialisation, read by one statement through a server-side cursor
 * (`DECLARE … CURSOR FOR <audience> ORDER BY id`, `FETCH maxRows`) on a connection of its own, outside the
 * transactions that write it. The next batch is fetched while the current one is written, so reading and writing
 * take the two cores at once. One pass over the contacts for the whole audience, as a hand-written query would make,
 * instead of one filtered statement per slice of contacts, which was slower (bench/README.md, "bench:segments").
 *
 * The cursor and its statements are deliveries.batch-sql.ts's (declareAudienceCursor,
 * fetchAudienceCursor), on a connection held for the read (db/held-connection.ts).
 *
 * A read gives batches for `maxReadMs` (then, after the batch it fetched ahead, the next batch opens a new one from the
 * position reached, with a snapshot of that moment: contacts that joined since are in it) and is closed after `idleMs`
 * without a batch taken (its batch fetched ahead kept for the next take(), see `ahead`), or by
 * close(): a reader dropped by its job (the lease lost, the job abandoned, an error) never holds a connection or a
 * snapshot for long. One FETCH over a sparse audience can itself take a while (it reads contacts until it has a
 * batch): the read, and close(), wait for it.
 *
 * A reader is good for one job in one process, from `position` on: the store makes a new one when the job's cursor
 * is not where the reader stands (a write that failed), and a worker that takes the job over reads anew from the
 * cursor.
 */
export class AudienceReader {
  private read: Read | null = null;
  /**
   * The next batch, fetched ahead by the current read, or by one since ended (aged or idle; its rows are kept for
   * maxReadMs from the FETCH: a send that writes its audience as it goes takes a batch every second or two, and would
   * otherwise throw away, and read again, every batch fetched ahead).
   */
  private ahead: { rows: Promise<Row[]>; at: number } | null = null;
  private idle: NodeJS.Timeout | null = null;
  private taking = false;
  private closed = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly job: MaterializationJob,
    readonly maxRows: number,
    public position: string | null,
    private readonly options: AudienceReaderOptions = DEFAULT_READER_OPTIONS,
  ) {}

  /**
   * The next batch; moves `position` to its `next`. One call at a time (the store awaits each batch before it asks for
   * the next): two at once would take the same batch.
   */
  async take(): Promise<AudienceBatch> {
    if (this.taking) throw new Error('AudienceReader.take() called while a take() is still running');
    if (this.closed) throw new Error('AudienceReader.take() called after close()');
    this.taking = true;
    try {
      return await this.next();
    } finally {
      this.taking = false;
    }
  }

  private async next(): Promise<AudienceBatch> {
    this.clearIdle();
    if (this.read && Date.now() - this.read.openedAt > this.options.maxReadMs) this.endRead(true);
    if (!this.read && this.ahead) {
      // A batch an ended read fetched ahead: taken if recent and full (a short one, the audience's end in that read's
      // snapshot, is read again: contacts may have joined since); the next take() opens a new read.
      const ahead = this.ahead;
      this.ahead = null;
      if (Date.now() - ahead.at <= this.options.maxReadMs) {
        const rows = await ahead.rows.catch(() => null);
        if (rows && rows.length === this.maxRows) {
          this.position = rows.at(-1)!.contactId;
          return { rows, next: this.position };
        }
      }
    }
    if (!this.read) {
      const opened = await this.open(this.position);
      // Closed while it opened: let it go at once.
      if (this.closed) {
        opened.end().catch(() => undefined);
        throw new Error('the audience reader was closed');
      }
      this.read = opened;
      this.ahead = null;
    }
    const read = this.read;
    let rows: Row[];
    try {
      rows = await (this.ahead?.rows ?? read.fetch());
    } catch (err) {
      this.endRead();
      throw err;
    }
    if (rows.length < this.maxRows) {
      // The end of the audience: nothing more to fetch.
      this.endRead();
      this.position = null;
      return { rows, next: null };
    }
    this.position = rows.at(-1)!.contactId;
    // Read on ahead, unless the read was ended meanwhile (close()): then the next take() reads anew from the position.
    if (this.read === read) {
      this.ahead = { rows: read.fetch(), at: Date.now() };
      // Awaited by the next take(), or never (the reader dropped): a failure is take()'s to report.
      this.ahead.rows.catch(() => undefined);
      this.idle = setTimeout(() => this.endRead(true), this.options.idleMs);
      this.idle.unref();
    }
    return { rows, next: this.position };
  }

  /**
   * Stops reading: the cursor, its transaction and its connection are let go (after the FETCH in flight, if any).
   * Resolves once the connection is back in the pool.
   */
  close(): Promise<void> {
    this.closed = true;
    this.clearIdle();
    return this.endRead();
  }

  private clearIdle(): void {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
  }

  /** `keepAhead`: the batch the read fetched ahead stays for the next take() (see `ahead`). */
  private endRead(keepAhead = false): Promise<void> {
    const read = this.read;
    this.read = null;
    if (!keepAhead) this.ahead = null;
    return read ? read.end().catch(() => undefined) : Promise.resolve();
  }

  /** A new read from `after`: a connection held until end(), a transaction, and the cursor declared in it. */
  private async open(after: string | null): Promise<Read> {
    const { query } = await audience(this.db, 'postgres', this.job.workspaceId, {
      segmentId: this.job.segmentId,
      topicId: this.job.topicId,
      resend: this.job.resend,
    });
    const held = await holdConnection(this.db);
    try {
      await held.run((conn) => declareAudienceCursor(conn, query, after));
    } catch (err) {
      await held.release();
      throw err;
    }
    return {
      openedAt: Date.now(),
      fetch: () => held.run((conn) => fetchAudienceCursor(conn, this.maxRows)),
      end: () => held.release(),
    };
  }
}
