import type { Readable } from 'node:stream';
import type { Db, Executor } from '../../db/connection.js';
import type { ContactStatus } from '../../db/schema.js';
import { DomainError, payloadTooLarge } from '../../errors/errors.js';
import { newId } from '../../lib/ids.js';
import { nowIso } from '../../lib/time.js';
import { recordEvents } from '../../outbox/index.js';
import {
  BodyTooLarge,
  clip,
  csvItems,
  limitBytes,
  ndjsonItems,
  storableText,
  type ColumnMap,
  type ContactUpsert,
  type ImportItem,
} from './contacts.import.js';
import { updatedEvent } from './contacts.events.js';
import { upsertContacts, type ContactUpserts } from './contacts.lifecycle.js';
import { mergeTags } from './contacts.tags.js';
import * as repo from './contacts.repository.js';
import type { ImportFormat, ImportJob } from './contacts.schemas.js';

/**
 * The import engine (contacts/CONTEXT.md, docs/contacts.md): a CSV or NDJSON stream read by
 * contacts.import.ts becomes batches of upserts, one transaction each, with the job's counts written in the
 * same transaction. The contacts are written by the lifecycle's batch upsert (contacts.lifecycle.ts upsertContacts),
 * the one writer of a contact's status: a row cannot make a suppressed address SUBSCRIBED or PENDING; such rows keep
 * the contact's status and are counted as `suppressed`.
 */

/** Rows per transaction in an import. */
export const IMPORT_BATCH_SIZE = 1000;
/** Rejected rows listed in an import job; the others are only counted (errorsTruncated). */
export const MAX_IMPORT_ERRORS = 1000;
/** The largest import body, in bytes. */
export const IMPORT_BYTE_LIMIT = 1024 ** 3;
/** How often a running import says it is alive, and after how long without a word it counts as interrupted. */
export const IMPORT_HEARTBEAT_MS = 30_000;
export const IMPORT_SILENT_AFTER_MS = 5 * 60_000;
export const INTERRUPTED =
  'the import was interrupted (its server stopped); the rows committed before it stopped are kept';

/**
 * Streams `body` into the workspace's contacts, IMPORT_BATCH_SIZE rows per transaction, and returns the
 * finished job. A bad CSV header is a 422 before anything is written. A malformed stream (a broken CSV quote)
 * stops the import: the rows before it are kept and the job is FAILED, with `error`. A body over the byte
 * limit stops it the same way and is answered 413 (with the job's id).
 */
export async function runImport(
  db: Db,
  workspaceId: string,
  format: ImportFormat,
  body: Readable,
  opts: {
    byteLimit: number;
    heartbeatMs: number;
    declaredLength?: number;
    columns?: ColumnMap;
    onError?: (err: unknown) => void;
  },
): Promise<ImportJob> {
  const limit = opts.byteLimit;
  if (opts.declaredLength !== undefined && opts.declaredLength > limit)
    throw payloadTooLarge(`an import body may be at most ${limit} bytes`);
  const source = limitBytes(body, limit);
  const items = format === 'CSV' ? csvItems(source, opts.columns) : ndjsonItems(source);
  const run = new ImportRun(db, workspaceId, format, opts.heartbeatMs);
  try {
    for await (const item of items) {
      if (item.type === 'fatal') {
        await run.flush();
        return await run.finish('FAILED', item.message);
      }
      await run.add(item);
    }
    await run.flush();
    return await run.finish('COMPLETED', null);
  } catch (err) {
    if (err instanceof ImportInterrupted) return run.stored();
    if (!run.started)
      throw err instanceof BodyTooLarge ? payloadTooLarge(`an import body may be at most ${limit} bytes`) : err;
    let reason = 'the import failed unexpectedly (the error is logged); the rows committed before it stopped are kept';
    const unexpected = !(err instanceof BodyTooLarge || err instanceof DomainError || isStreamAbort(err));
    if (err instanceof BodyTooLarge) reason = `the body is larger than ${limit} bytes`;
    else if (err instanceof DomainError) reason = err.message;
    else if (isStreamAbort(err)) reason = 'the upload was interrupted';
    if (unexpected) opts.onError?.(err);
    const keptOnly = err instanceof BodyTooLarge || isStreamAbort(err);
    // The rows read before the stream stopped are complete rows; a database failure keeps what was committed.
    if (keptOnly) await run.flush().catch(() => {});
    // Never left RUNNING when the database still answers: if the job with its list of rejected rows cannot be
    // written, it is written without the list.
    const job = await run
      .finish('FAILED', reason)
      .catch(() =>
        run.finish('FAILED', `${reason}; its list of rejected rows could not be stored`, { withoutErrors: true }),
      )
      .catch(() => undefined);
    if (err instanceof BodyTooLarge) {
      throw payloadTooLarge(
        `an import body may be at most ${limit} bytes; the rows before the limit were imported`,
        job ? { importId: job.id } : undefined,
      );
    }
    // A failure of ours (the database refused a batch or the job) is the job's outcome, answered like a
    // malformed file: 201 with the FAILED job, which tells what was kept. Only when even that could not be
    // written is it a 500 (and the sweep fails the job once its heartbeat stops).
    if (unexpected && job?.status === 'FAILED') return job;
    throw err;
  } finally {
    run.stopHeartbeat();
  }
}

/** A batch found its job failed by the sweep (see failInterruptedImports). */
class ImportInterrupted extends Error {}

function isStreamAbort(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    code === 'ECONNRESET' ||
    code === 'ERR_STREAM_PREMATURE_CLOSE' ||
    (err instanceof Error && err.message === 'aborted')
  );
}

/**
 * The current batch of an import, column by column (the lifecycle's ContactUpserts). Later rows with an email already
 * in the batch are merged into its slot (present fields replace). Only strings and numbers are kept from one row to the
 * next, in arrays reused from batch to batch: contacts.batch-sql.ts says why no object per row.
 */
class Batch implements ContactUpserts {
  readonly slotOf = new Map<string, number>();
  readonly emails: string[] = [];
  readonly firstNames: (string | null | undefined)[] = [];
  readonly lastNames: (string | null | undefined)[] = [];
  readonly statuses: (ContactStatus | undefined)[] = [];
  readonly properties: (string | undefined)[] = [];
  /** The slots with tags (most rows have none): slot → tags to add. */
  readonly tags = new Map<number, string[]>();
  /** Each slot's time zone, set beside the upsert (ImportRun.flush); undefined: unchanged. */
  readonly timezones: (string | undefined)[] = [];
  /** How many rows of the file a slot stands for: the first creates or updates, the others update. */
  readonly rows: number[] = [];
  size = 0;
  /** Rows of the file in the batch, duplicates included. */
  rowCount = 0;

  add(row: ContactUpsert): void {
    this.rowCount++;
    const json = row.properties === undefined ? undefined : JSON.stringify(row.properties);
    const slot = this.slotOf.get(row.email);
    if (slot !== undefined) {
      if (row.firstName !== undefined) this.firstNames[slot] = row.firstName;
      if (row.lastName !== undefined) this.lastNames[slot] = row.lastName;
      if (row.status !== undefined) this.statuses[slot] = row.status;
      if (json !== undefined) this.properties[slot] = json;
      if (row.tags?.length) this.tags.set(slot, [...(this.tags.get(slot) ?? []), ...row.tags]);
      if (row.timezone !== undefined) this.timezones[slot] = row.timezone;
      this.rows[slot]!++;
      return;
    }
    const i = this.size++;
    if (row.tags?.length) this.tags.set(i, row.tags);
    this.slotOf.set(row.email, i);
    this.emails[i] = row.email;
    this.firstNames[i] = row.firstName;
    this.lastNames[i] = row.lastName;
    this.statuses[i] = row.status;
    this.properties[i] = json;
    this.timezones[i] = row.timezone;
    this.rows[i] = 1;
  }

  clear(): void {
    this.slotOf.clear();
    this.tags.clear();
    this.size = 0;
    this.rowCount = 0;
  }
}

/**
 * The batch's tags added to its contacts (contacts.tags.ts mergeTags), with a contact.updated event ("tags") for each
 * contact that existed before the batch and whose tags changed (a new contact's contact.created says it all).
 */
async function addImportedTags(
  trx: Executor,
  workspaceId: string,
  b: Batch,
  created: readonly boolean[],
  now: string,
): Promise<void> {
  const slots = [...b.tags.keys()];
  const ids = await repo.contactIdsByEmail(
    trx,
    workspaceId,
    slots.map((i) => b.emails[i]!),
  );
  const adds = new Map<string, string[]>();
  const slotOfId = new Map<string, number>();
  for (const i of slots) {
    const id = ids.get(b.emails[i]!);
    if (id === undefined) continue;
    adds.set(id, b.tags.get(i)!);
    slotOfId.set(id, i);
  }
  const { changed } = await mergeTags(trx, workspaceId, adds, now);
  const events = [...changed]
    .filter((id) => !created[slotOfId.get(id)!])
    .map((id) => updatedEvent(id, b.emails[slotOfId.get(id)!]!, ['tags'], 'import'));
  if (events.length) await recordEvents(trx, workspaceId, events, now);
}

/** One import: the job row, the counts, the current batch. Only the current batch is held in memory. */
class ImportRun {
  private jobId: string | undefined;
  private readonly createdAt = nowIso();
  private readonly batch = new Batch();
  private readonly counts = { total: 0, created: 0, updated: 0, skipped: 0, suppressed: 0 };
  private readonly errors: ImportJob['errors'] = [];

  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly workspaceId: string,
    private readonly format: ImportFormat,
    private readonly heartbeatMs: number,
  ) {}

  get started(): boolean {
    return this.jobId !== undefined;
  }

  async add(item: Exclude<ImportItem, { type: 'fatal' }>): Promise<void> {
    if (item.type === 'ready') {
      const jobId = newId('imp');
      this.jobId = jobId;
      await repo.insertImport(this.db.kysely, this.workspaceId, {
        id: jobId,
        format: this.format,
        createdAt: this.createdAt,
      });
      // Batches touch the heartbeat too, but a slow upload may take minutes to fill one.
      this.heartbeat = setInterval(() => {
        // A missed beat is harmless: the next one, or the batch's own write, tells more.
        repo.touchImport(this.db.kysely, this.workspaceId, jobId).catch(() => {});
      }, this.heartbeatMs).unref();
      return;
    }
    this.counts.total++;
    if (item.type === 'reject') {
      this.counts.skipped++;
      if (this.errors.length < MAX_IMPORT_ERRORS) this.errors.push({ line: item.line, reason: clip(item.reason) });
      return;
    }
    this.batch.add(item.row);
    if (this.batch.size >= IMPORT_BATCH_SIZE) await this.flush();
  }

  /**
   * Writes the batch in one transaction: the contacts by the lifecycle's batch upsert (contacts.lifecycle.ts
   * upsertContacts, with their events), and the job's counts. A slot stands for b.rows[i] rows of the file: the first
   * creates or updates, the others update.
   */
  async flush(): Promise<void> {
    const b = this.batch;
    if (!this.jobId || b.size === 0) return;
    const jobId = this.jobId;
    const ws = this.workspaceId;
    const delta = await this.db.kysely.transaction().execute(async (trx) => {
      const now = nowIso();
      const { created, held } = await upsertContacts(trx, ws, b, now);
      if (b.tags.size) await addImportedTags(trx, ws, b, created, now);
      // The rows' time zones (a `timezone` column), by zone, in the batch's transaction.
      const byZone = new Map<string, string[]>();
      for (let i = 0; i < b.size; i++) {
        const zone = b.timezones[i];
        if (zone === undefined) continue;
        const emails = byZone.get(zone);
        if (emails) emails.push(b.emails[i]!);
        else byZone.set(zone, [b.emails[i]!]);
      }
      if (byZone.size) await repo.setTimezonesByEmail(trx, ws, byZone);
      const d = { created: 0, updated: 0, suppressed: held };
      for (let i = 0; i < b.size; i++) {
        const c = created[i] ? 1 : 0;
        d.created += c;
        d.updated += b.rows[i]! - c;
      }
      const progress = {
        total: this.counts.total,
        skipped: this.counts.skipped,
        created: this.counts.created + d.created,
        updated: this.counts.updated + d.updated,
        suppressed: this.counts.suppressed + d.suppressed,
      };
      // Failed by the sweep meanwhile (this process looked dead): undo the batch and stop; FAILED stays final.
      if (!(await repo.updateImportProgress(trx, ws, jobId, progress))) throw new ImportInterrupted();
      return d;
    });
    this.counts.created += delta.created;
    this.counts.updated += delta.updated;
    this.counts.suppressed += delta.suppressed;
    b.clear();
  }

  stopHeartbeat(): void {
    clearInterval(this.heartbeat);
  }

  async finish(
    status: 'COMPLETED' | 'FAILED',
    error: string | null,
    opts: { withoutErrors?: boolean } = {},
  ): Promise<ImportJob> {
    this.stopHeartbeat();
    const jobId = this.jobId!;
    // A batch that could not be written is not counted: total = created + updated + skipped, always.
    const total = this.counts.total - this.batch.rowCount;
    const errors = opts.withoutErrors ? [] : this.errors;
    await repo.finishImport(this.db.kysely, this.workspaceId, jobId, {
      ...this.counts,
      total,
      status,
      errors,
      error: error === null ? null : storableText(error),
      finishedAt: nowIso(),
    });
    return this.stored();
  }

  /** The job as stored (after finish, or as the sweep left it). */
  async stored(): Promise<ImportJob> {
    return (await repo.getImport(this.db.kysely, this.workspaceId, this.jobId!))!;
  }
}
