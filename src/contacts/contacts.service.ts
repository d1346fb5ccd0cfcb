import type { Readable } from 'node:stream';
import type { Db, Executor } from '../db/connection.js';
import { isForeignKeyViolation, isUniqueViolation } from '../db/connection.js';
import type { ContactStatus } from '../db/schema.js';
import { DomainError, conflict, notFound, payloadTooLarge, unprocessable, validationFailed, type FieldError } from '../errors/errors.js';
import { newId } from '../lib/ids.js';
import { nowIso } from '../lib/time.js';
import { existingTopicIds, getTopic, listAllTopics } from '../topics/topics.repository.js';
import { contactEmail } from './contacts.email.js';
import { BodyTooLarge, csvItems, limitBytes, ndjsonItems, type ContactUpsert, type ImportItem } from './contacts.import.js';
import * as repo from './contacts.repository.js';
import type { ContactRecord } from './contacts.repository.js';
import type { Contact, ImportFormat, ImportJob, TopicChoice, UpdateContactInput, UpsertContactInput } from './contacts.schemas.js';

/** Rows per transaction in an import. */
export const IMPORT_BATCH_SIZE = 1000;
/** Rejected rows listed in an import job; the others are only counted (errorsTruncated). */
export const MAX_IMPORT_ERRORS = 1000;
/** The largest import body, in bytes. */
export const IMPORT_BYTE_LIMIT = 1024 ** 3;
/** How often a running import says it is alive, and after how long without a word it counts as interrupted. */
export const IMPORT_HEARTBEAT_MS = 30_000;
export const IMPORT_SILENT_AFTER_MS = 5 * 60_000;
const INTERRUPTED = 'the import was interrupted (its server stopped); the rows committed before it stopped are kept';

function emailOrFail(input: string, path: string): string {
  const email = contactEmail(input);
  if (email === null) throw validationFailed([{ path, message: 'must be a valid email address (addr@domain, without a display name)' }]);
  return email;
}

function checkChoicesUnique(choices: readonly TopicChoice[] | undefined): void {
  if (!choices) return;
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  choices.forEach((c, i) => {
    if (seen.has(c.id)) errors.push({ path: `/topics/${i}/id`, message: 'names a topic listed earlier' });
    seen.add(c.id);
  });
  if (errors.length) throw validationFailed(errors);
}

export class ContactsService {
  /** The import body limit; tests lower it. */
  importByteLimit = IMPORT_BYTE_LIMIT;
  /** The import heartbeat period; tests shorten it. */
  importHeartbeatMs = IMPORT_HEARTBEAT_MS;

  constructor(readonly db: Db) {}

  private tx<T>(fn: (trx: Executor) => Promise<T>): Promise<T> {
    return this.db.kysely.transaction().execute(fn);
  }

  /** The contacts as the API shows them: with every topic of the workspace and the effective subscription. */
  private async present(db: Executor, workspaceId: string, records: ContactRecord[]): Promise<Contact[]> {
    if (records.length === 0) return [];
    const topics = await listAllTopics(db, workspaceId);
    const choices = topics.length ? await repo.topicChoices(db, workspaceId, records.map((r) => r.id)) : new Map<string, Map<string, boolean>>();
    return records.map((r) => ({
      ...r,
      topics: topics.map((t) => ({ id: t.id, name: t.name, subscribed: choices.get(r.id)?.get(t.id) ?? t.defaultSubscription === 'OPT_IN' })),
    }));
  }

  private async checkTopics(db: Executor, workspaceId: string, choices: readonly TopicChoice[] | undefined): Promise<void> {
    if (!choices?.length) return;
    const known = await existingTopicIds(db, workspaceId, choices.map((c) => c.id));
    const errors = choices.flatMap((c, i) => (known.has(c.id) ? [] : [{ path: `/topics/${i}/id`, message: 'names no topic of this workspace' }]));
    if (errors.length) throw unprocessable('invalid_reference', `${errors.length === 1 ? 'a topic id names' : 'topic ids name'} no topic of this workspace`, errors);
  }

  async get(workspaceId: string, id: string): Promise<Contact> {
    const record = await repo.getContact(this.db.kysely, workspaceId, id);
    if (!record) throw notFound('contact');
    return (await this.present(this.db.kysely, workspaceId, [record]))[0]!;
  }

  async list(workspaceId: string, opts: { email?: string; status?: ContactStatus; topicId?: string; limit: number; beforeId?: string }): Promise<Contact[]> {
    const db = this.db.kysely;
    const email = opts.email !== undefined ? emailOrFail(opts.email, '/query/email') : undefined;
    let topic;
    if (opts.topicId !== undefined) {
      topic = await getTopic(db, workspaceId, opts.topicId);
      if (!topic) throw unprocessable('invalid_reference', 'topicId names no topic of this workspace', [{ path: '/query/topicId', message: 'names no topic of this workspace' }]);
    }
    const records = await repo.listContacts(db, workspaceId, { email, status: opts.status, topic, limit: opts.limit, beforeId: opts.beforeId });
    return this.present(db, workspaceId, records);
  }

  /**
   * POST /v1/contacts: creates the contact, or updates the one with that email. Race-safe: the insert
   * does nothing when the email exists (the unique constraint decides, also against a concurrent insert),
   * and the existing contact is then updated. Everything happens in one transaction, so a rejected request
   * (unknown topic) changes nothing.
   */
  async upsert(workspaceId: string, input: UpsertContactInput): Promise<{ contact: Contact; created: boolean }> {
    const email = emailOrFail(input.email, '/email');
    checkChoicesUnique(input.topics);
    const result = await this.tx(async (trx) => {
      await this.checkTopics(trx, workspaceId, input.topics);
      const now = nowIso();
      const saved = await upsertOne(trx, workspaceId, { ...input, email }, now);
      if (input.topics) await repo.setTopicChoices(trx, workspaceId, saved.id, input.topics, now);
      return saved;
    });
    return { contact: await this.get(workspaceId, result.id), created: result.created };
  }

  /** PUT: partial (omitted unchanged, present replaced whole, null clears a name); 409 contact_exists for a taken email. */
  async update(workspaceId: string, id: string, input: UpdateContactInput): Promise<Contact> {
    if (input.id !== undefined && input.id !== id) throw validationFailed([{ path: '/id', message: 'must equal the contact id in the path' }]);
    const email = input.email !== undefined ? emailOrFail(input.email, '/email') : undefined;
    checkChoicesUnique(input.topics);
    try {
      await this.tx(async (trx) => {
        if (!(await repo.getContact(trx, workspaceId, id))) throw notFound('contact');
        await this.checkTopics(trx, workspaceId, input.topics);
        const now = nowIso();
        const { topics, id: _id, ...fields } = input;
        await repo.updateContact(trx, workspaceId, id, { ...fields, email }, now);
        if (topics) await repo.setTopicChoices(trx, workspaceId, id, topics, now);
      });
    } catch (err) {
      if (!isUniqueViolation(err) || email === undefined) throw err;
      const other = (await repo.contactIdsByEmail(this.db.kysely, workspaceId, [email])).get(email);
      throw conflict('contact_exists', `another contact of this workspace has the email ${email}`, other ? { contactId: other } : undefined);
    }
    return this.get(workspaceId, id);
  }

  async remove(workspaceId: string, id: string): Promise<void> {
    let deleted: boolean;
    try {
      deleted = await repo.deleteContact(this.db.kysely, workspaceId, id);
    } catch (err) {
      if (isForeignKeyViolation(err)) throw conflict('resource_in_use', 'the contact is still referenced and cannot be deleted');
      throw err;
    }
    if (!deleted) throw notFound('contact');
  }

  // -------------------------------------------------------------------------------------------------
  // Bulk import

  async getImport(workspaceId: string, id: string): Promise<ImportJob> {
    const job = await repo.getImport(this.db.kysely, workspaceId, id);
    if (!job) throw notFound('import');
    return job;
  }

  listImports(workspaceId: string, opts: { limit: number; beforeId?: string }): Promise<ImportJob[]> {
    return repo.listImports(this.db.kysely, workspaceId, opts);
  }

  /**
   * Streams `body` (CSV or NDJSON) into the workspace's contacts, IMPORT_BATCH_SIZE rows per transaction,
   * and returns the finished job. A bad CSV header is a 422 before anything is written. A malformed stream
   * (a broken CSV quote) stops the import: the rows before it are kept and the job is FAILED, with `error`.
   * A body over the byte limit stops it the same way and is answered 413 (with the job's id).
   */
  async importContacts(workspaceId: string, format: ImportFormat, body: Readable, declaredLength?: number): Promise<ImportJob> {
    const limit = this.importByteLimit;
    if (declaredLength !== undefined && declaredLength > limit) throw payloadTooLarge(`an import body may be at most ${limit} bytes`);
    const source = limitBytes(body, limit);
    const items = format === 'CSV' ? csvItems(source) : ndjsonItems(source);
    const run = new ImportRun(this.db, workspaceId, format, this.importHeartbeatMs);
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
      if (!run.started) throw err instanceof BodyTooLarge ? payloadTooLarge(`an import body may be at most ${limit} bytes`) : err;
      let reason = 'the import failed unexpectedly; the rows committed before it stopped are kept';
      if (err instanceof BodyTooLarge) reason = `the body is larger than ${limit} bytes`;
      else if (err instanceof DomainError) reason = err.message;
      else if (isStreamAbort(err)) reason = 'the upload was interrupted';
      const keptOnly = err instanceof BodyTooLarge || isStreamAbort(err);
      // The rows read before the stream stopped are complete rows; a database failure keeps what was committed.
      if (keptOnly) await run.flush().catch(() => {});
      const job = await run.finish('FAILED', reason).catch(() => undefined);
      if (err instanceof BodyTooLarge) {
        throw payloadTooLarge(`an import body may be at most ${limit} bytes; the rows before the limit were imported`, job ? { importId: job.id } : undefined);
      }
      throw err;
    } finally {
      run.stopHeartbeat();
    }
  }

  /**
   * An import runs inside the request that uploads it, so a server that dies mid-import cannot finish its
   * job. Jobs still RUNNING whose heartbeat stopped IMPORT_SILENT_AFTER_MS ago are FAILED with a reason;
   * the worker calls this now and then. Returns how many were failed.
   */
  failInterruptedImports(): Promise<number> {
    return repo.failImportsSilentFor(this.db.kysely, IMPORT_SILENT_AFTER_MS / 1000, INTERRUPTED);
  }
}

/** A batch found its job failed by the sweep (see ContactsService.failInterruptedImports). */
class ImportInterrupted extends Error {}

function isStreamAbort(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || (err instanceof Error && err.message === 'aborted');
}

/** Creates the contact, or updates the one with that email (see ContactsService.upsert). */
async function upsertOne(trx: Executor, workspaceId: string, input: ContactUpsert, now: string): Promise<{ id: string; created: boolean }> {
  return upsertRow(trx, workspaceId, input.email, input.firstName, input.lastName, input.status,
    input.properties === undefined ? undefined : JSON.stringify(input.properties), now);
}

async function upsertRow(
  trx: Executor, workspaceId: string, email: string, firstName: string | null | undefined, lastName: string | null | undefined,
  status: ContactStatus | undefined, propertiesJson: string | undefined, now: string,
): Promise<{ id: string; created: boolean }> {
  // A contact deleted between the two statements makes the insert succeed on the next turn.
  for (let attempt = 0; attempt < 3; attempt++) {
    const params: unknown[] = [];
    repo.pushNewContact(params, workspaceId, newId('ct'), email, firstName ?? null, lastName ?? null, propertiesJson ?? '{}', status ?? 'SUBSCRIBED', now);
    const id = (await repo.insertContactParamsIfNew(trx, params)).get(email);
    if (id) return { id, created: true };
    const existing = (await repo.contactIdsByEmail(trx, workspaceId, [email])).get(email);
    if (existing && (await repo.updateContact(trx, workspaceId, existing, { firstName, lastName, status, propertiesJson }, now))) return { id: existing, created: false };
  }
  throw new Error('contact upsert did not settle after 3 attempts');
}

/**
 * The current batch of an import, column by column. Later rows with an email already in the batch are merged
 * into its slot (present fields replace). Only strings and numbers are kept from one row to the next, in
 * arrays reused from batch to batch: see repo.pushNewContact for why no object per row.
 */
class Batch {
  readonly slotOf = new Map<string, number>();
  readonly emails: string[] = [];
  readonly firstNames: (string | null | undefined)[] = [];
  readonly lastNames: (string | null | undefined)[] = [];
  readonly statuses: (ContactStatus | undefined)[] = [];
  readonly properties: (string | undefined)[] = [];
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
      this.rows[slot]!++;
      return;
    }
    const i = this.size++;
    this.slotOf.set(row.email, i);
    this.emails[i] = row.email;
    this.firstNames[i] = row.firstName;
    this.lastNames[i] = row.lastName;
    this.statuses[i] = row.status;
    this.properties[i] = json;
    this.rows[i] = 1;
  }

  clear(): void {
    this.slotOf.clear();
    this.size = 0;
    this.rowCount = 0;
  }
}

/** One import: the job row, the counts, the current batch. Only the current batch is held in memory. */
class ImportRun {
  private jobId: string | undefined;
  private readonly createdAt = nowIso();
  private readonly batch = new Batch();
  private readonly counts = { total: 0, created: 0, updated: 0, skipped: 0 };
  private readonly errors: ImportJob['errors'] = [];

  private heartbeat: NodeJS.Timeout | undefined;

  constructor(private readonly db: Db, private readonly workspaceId: string, private readonly format: ImportFormat, private readonly heartbeatMs: number) {}

  get started(): boolean {
    return this.jobId !== undefined;
  }

  async add(item: Exclude<ImportItem, { type: 'fatal' }>): Promise<void> {
    if (item.type === 'ready') {
      const jobId = newId('imp');
      this.jobId = jobId;
      await repo.insertImport(this.db.kysely, this.workspaceId, { id: jobId, format: this.format, createdAt: this.createdAt });
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
      if (this.errors.length < MAX_IMPORT_ERRORS) this.errors.push({ line: item.line, reason: item.reason });
      return;
    }
    this.batch.add(item.row);
    if (this.batch.size >= IMPORT_BATCH_SIZE) await this.flush();
  }

  /**
   * Writes the batch in one transaction: one query finds which emails exist, one multi-row insert adds the
   * new ones (doing nothing for an email a concurrent writer just added), one multi-row update changes the
   * existing ones; those a concurrent writer added or deleted meanwhile are settled one by one. The job's
   * counts are updated in the same transaction.
   */
  async flush(): Promise<void> {
    const b = this.batch;
    if (!this.jobId || b.size === 0) return;
    const jobId = this.jobId;
    const ws = this.workspaceId;
    const delta = await this.db.kysely.transaction().execute(async (trx) => {
      const d = { created: 0, updated: 0 };
      const now = nowIso();
      const existing = await repo.contactIdsByEmail(trx, ws, b.emails.slice(0, b.size));
      const params: unknown[] = [];
      for (let i = 0; i < b.size; i++) {
        if (existing.has(b.emails[i]!)) continue;
        repo.pushNewContact(params, ws, newId('ct'), b.emails[i]!, b.firstNames[i] ?? null, b.lastNames[i] ?? null, b.properties[i] ?? '{}', b.statuses[i] ?? 'SUBSCRIBED', now);
      }
      const inserted = await repo.insertContactParamsIfNew(trx, params);
      const changes: unknown[] = [];
      const changed: number[] = [];
      const settle: number[] = [];
      for (let i = 0; i < b.size; i++) {
        const email = b.emails[i]!;
        if (inserted.has(email)) {
          d.created++;
          d.updated += b.rows[i]! - 1;
          continue;
        }
        const id = existing.get(email);
        if (id === undefined) {
          settle.push(i);
          continue;
        }
        repo.pushContactChange(changes, id, { firstName: b.firstNames[i], lastName: b.lastNames[i], status: b.statuses[i], propertiesJson: b.properties[i] });
        changed.push(i);
      }
      const updated = await repo.updateContactParams(trx, ws, changes, now);
      for (const i of changed) {
        if (updated.has(existing.get(b.emails[i]!)!)) d.updated += b.rows[i]!;
        else settle.push(i);
      }
      // Another writer created (or deleted) these contacts since the first query: settle each on its own.
      for (const i of settle) {
        const settled = await upsertRow(trx, ws, b.emails[i]!, b.firstNames[i], b.lastNames[i], b.statuses[i], b.properties[i], now);
        d.created += settled.created ? 1 : 0;
        d.updated += b.rows[i]! - (settled.created ? 1 : 0);
      }
      const progress = {
        total: this.counts.total, skipped: this.counts.skipped,
        created: this.counts.created + d.created, updated: this.counts.updated + d.updated,
      };
      // Failed by the sweep meanwhile (this process looked dead): undo the batch and stop; FAILED stays final.
      if (!(await repo.updateImportProgress(trx, ws, jobId, progress))) throw new ImportInterrupted();
      return d;
    });
    this.counts.created += delta.created;
    this.counts.updated += delta.updated;
    b.clear();
  }

  stopHeartbeat(): void {
    clearInterval(this.heartbeat);
  }

  async finish(status: 'COMPLETED' | 'FAILED', error: string | null): Promise<ImportJob> {
    this.stopHeartbeat();
    const jobId = this.jobId!;
    // A batch that could not be written is not counted: total = created + updated + skipped, always.
    const total = this.counts.total - this.batch.rowCount;
    await repo.finishImport(this.db.kysely, this.workspaceId, jobId, { ...this.counts, total, status, errors: this.errors, error, finishedAt: nowIso() });
    return this.stored();
  }

  /** The job as stored (after finish, or as the sweep left it). */
  async stored(): Promise<ImportJob> {
    return (await repo.getImport(this.db.kysely, this.workspaceId, this.jobId!))!;
  }
}
