import type { Readable } from 'node:stream';
import { encodeTime } from 'ulid';
import { type Db, type Executor, isForeignKeyViolation, isUniqueViolation } from '../../db/connection.js';
import { onPostgres } from '../../db/batch-sql.js';
import type { ContactStatus } from '../../db/schema.js';
import { conflict, notFound, unprocessable, validationFailed, type FieldError } from '../../errors/errors.js';
import { listEvents, recordEvents, type EventRecord, type EventType } from '../../outbox/index.js';
import { nowIso } from '../../lib/time.js';
import { suppressionsOf } from '../suppressions/suppressions.repository.js';
import {
  noMessageSources,
  withSources,
  type MessageSource,
  type MessageSources,
} from '../suppressions/suppressions.sources.js';
import { existingTopicIds, getTopic } from '../topics/topics.repository.js';
import { contactEmail } from './contacts.email.js';
import { contactCsvRow, csvHeader } from './contacts.export.js';
import { checkColumnMap, parseColumnMap, type ColumnMap } from './contacts.import.js';
import {
  IMPORT_BYTE_LIMIT,
  IMPORT_HEARTBEAT_MS,
  IMPORT_SILENT_AFTER_MS,
  INTERRUPTED,
  runImport,
} from './contacts.importer.js';
import { updatedEvent } from './contacts.events.js';
import { applyToContact, upsertContact } from './contacts.lifecycle.js';
import * as repo from './contacts.repository.js';
import type { ContactRecord } from './contacts.repository.js';
import type {
  Contact,
  ImportFormat,
  ImportJob,
  TopicChoice,
  UpdateContactInput,
  UpsertContactInput,
} from './contacts.schemas.js';
import { SET_OPERATION } from './contacts.state.js';
import { canonicalTimeZone } from '../../lib/zones.js';
import { setTopicChoices, topicsOfContacts } from './contacts.subscriptions.js';
import { normalizeTags, replaceTags, tagsOfContacts, workspaceTags } from './contacts.tags.js';

/** A contact's zone as given (undefined: unchanged, null: cleared), checked with Intl: 422 at /timezone otherwise. */
function zoneOrFail(input: string | null | undefined): string | null | undefined {
  if (input === undefined || input === null) return input;
  const zone = canonicalTimeZone(input);
  if (!zone)
    throw validationFailed([
      {
        path: '/timezone',
        message: 'must be an IANA time zone name, such as Europe/Berlin or America/New_York',
        keyword: 'timezone',
      },
    ]);
  return zone;
}

function emailOrFail(input: string, path: string): string {
  const email = contactEmail(input);
  if (email === null)
    throw validationFailed([
      {
        path,
        message: 'must be a valid email address (addr@domain, without a display name)',
        keyword: 'format',
        params: { format: 'email' },
      },
    ]);
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

/**
 * An automation's `update` or `topic` step (src/integrations/automations), in the run's transaction: properties merged (a null
 * removes one), topic choices set, with the events the API's changes write (source `automation`). False when the
 * contact is gone.
 */
export async function changeByAutomation(
  trx: Executor,
  workspaceId: string,
  contactId: string,
  change: { properties?: Record<string, unknown>; topics?: { id: string; subscribed: boolean }[] },
  now: string,
  cause?: { automationId: string; runId: string },
): Promise<boolean> {
  // Runs of several automations may change one contact at once (PostgreSQL walks runs in parallel): the row is
  // locked before it is read, so no merge of properties overwrites another's. SQLite has one writer.
  if (onPostgres(trx))
    await trx
      .selectFrom('contacts')
      .select('id')
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', contactId)
      .forUpdate()
      .execute();
  const current = await repo.getContact(trx, workspaceId, contactId);
  if (!current) return false;
  if (change.properties) {
    const merged: Record<string, unknown> = { ...current.properties };
    for (const [k, v] of Object.entries(change.properties)) {
      if (v === null) delete merged[k];
      else merged[k] = v;
    }
    await repo.updateContact(trx, workspaceId, contactId, { properties: merged }, now);
    // The run that made the change rides along in the event: the automation intake follows it (its loop guard).
    await recordEvents(
      trx,
      workspaceId,
      [updatedEvent(contactId, current.email, ['properties'], 'automation', cause ?? {})],
      now,
    );
  }
  if (change.topics?.length) {
    const known = await existingTopicIds(
      trx,
      workspaceId,
      change.topics.map((t) => t.id),
    );
    await setTopicChoices(
      trx,
      workspaceId,
      contactId,
      change.topics.filter((t) => known.has(t.id)),
      now,
      'automation',
      cause ?? {},
    );
  }
  return true;
}

/** The contact of an id or a normalised address in the workspace, if there is one (the outbox's ContactLookup port). */
export async function contactIdOf(
  db: Executor,
  workspaceId: string,
  ref: { contactId: string } | { email: string },
): Promise<string | undefined> {
  if ('email' in ref) return (await repo.contactIdsByEmail(db, workspaceId, [ref.email])).get(ref.email);
  return (await repo.getContact(db, workspaceId, ref.contactId))?.id;
}

/**
 * The contacts a segment matches (every contact without a segment), whatever their status, oldest first, a page at a
 * time, each with whether its address is suppressed; 404 `not_found` (segment) before anything is read when the
 * segment is not in the workspace. A port: segments, which sit above contacts (a filter speaks of contacts' fields,
 * statuses and topics), answer it (segments.service.ts contactPagesOf), wired by the composition root.
 */
export type ContactPages = (
  workspaceId: string,
  segmentId: string | undefined,
) => Promise<AsyncIterable<(ContactRecord & { suppressed: boolean })[]>>;

/** The filters of GET /v1/contacts and GET /v1/contacts/count. */
export interface ContactListFilter {
  email?: string;
  status?: ContactStatus;
  topicId?: string;
  tag?: string;
  q?: string;
}

/** The tags of a request body made a contact's list (normalizeTags); 422 with a pointer per bad tag. */
function tagsOrFail(tags: readonly string[] | undefined): string[] | undefined {
  if (tags === undefined) return undefined;
  const { tags: list, errors } = normalizeTags(tags);
  if (errors.length) throw validationFailed(errors);
  return list;
}

/**
 * Deletes a contact of the workspace with its `contact.deleted` event, in the caller's transaction (DELETE
 * /v1/contacts/{id} and the bulk action `delete`); false when there is no such contact.
 */
export async function deleteContactWithEvent(
  trx: Executor,
  workspaceId: string,
  id: string,
  now: string,
): Promise<boolean> {
  const current = await repo.getContact(trx, workspaceId, id);
  if (!current || !(await repo.deleteContact(trx, workspaceId, id))) return false;
  await recordEvents(
    trx,
    workspaceId,
    [{ type: 'contact.deleted', contactId: id, data: { email: current.email, status: current.status } }],
    now,
  );
  return true;
}

export class ContactsService {
  /** The import body limit; tests lower it. */
  importByteLimit = IMPORT_BYTE_LIMIT;
  /** The import heartbeat period; tests shorten it. */
  importHeartbeatMs = IMPORT_HEARTBEAT_MS;

  constructor(
    readonly db: Db,
    private readonly ports: { contactPages: ContactPages; messageSources?: MessageSources },
  ) {}

  private tx<T>(fn: (trx: Executor) => Promise<T>): Promise<T> {
    return this.db.kysely.transaction().execute(fn);
  }

  /** The contacts as the API shows them: with every topic of the workspace (the effective subscription) and whether the address is suppressed. */
  private async present(db: Executor, workspaceId: string, records: ContactRecord[]): Promise<Contact[]> {
    if (records.length === 0) return [];
    const topics = await topicsOfContacts(
      db,
      workspaceId,
      records.map((r) => r.id),
    );
    const suppressed = await suppressionsOf(
      db,
      workspaceId,
      records.map((r) => r.email),
    );
    const tags = await tagsOfContacts(
      db,
      workspaceId,
      records.map((r) => r.id),
    );
    return records.map((r) => ({
      ...r,
      suppressed: suppressed.has(r.email),
      topics: topics.get(r.id) ?? [],
      tags: tags.get(r.id) ?? [],
    }));
  }

  private async checkTopics(
    db: Executor,
    workspaceId: string,
    choices: readonly TopicChoice[] | undefined,
  ): Promise<void> {
    if (!choices?.length) return;
    const known = await existingTopicIds(
      db,
      workspaceId,
      choices.map((c) => c.id),
    );
    const errors = choices.flatMap((c, i) =>
      known.has(c.id) ? [] : [{ path: `/topics/${i}/id`, message: 'names no topic of this workspace' }],
    );
    if (errors.length)
      throw unprocessable(
        'invalid_reference',
        `${errors.length === 1 ? 'a topic id names' : 'topic ids name'} no topic of this workspace`,
        errors,
      );
  }

  async get(workspaceId: string, id: string): Promise<Contact> {
    const record = await repo.getContact(this.db.kysely, workspaceId, id);
    if (!record) throw notFound('contact');
    return (await this.present(this.db.kysely, workspaceId, [record]))[0]!;
  }

  /**
   * Contacts created per UTC hour over the last `days` days (GET /v1/stats/contacts, the console dashboard's chart,
   * which folds the hours into the viewer's local days), from the first whole UTC hour `days` days ago.
   */
  async growth(
    workspaceId: string,
    days: number,
    now = Date.now(),
  ): Promise<{ since: string; until: string; total: number; hours: { hour: string; created: number }[] }> {
    const since = Math.floor((now - days * 86_400_000) / 3_600_000) * 3_600_000;
    const sinceIso = new Date(since).toISOString();
    const hours = await repo.contactsCreatedPerHour(
      this.db.kysely,
      workspaceId,
      sinceIso,
      `ct_${encodeTime(since, 10)}`,
    );
    return {
      since: sinceIso,
      until: new Date(now).toISOString(),
      total: hours.reduce((a, h) => a + h.created, 0),
      hours,
    };
  }

  /** The contact's events, newest first (docs/events.md); 404 for a contact that is not (or no longer) in the workspace. */
  async activity(
    workspaceId: string,
    id: string,
    opts: { type?: EventType; limit: number; beforeId?: string },
  ): Promise<(EventRecord & { source: MessageSource | null })[]> {
    if (!(await repo.getContact(this.db.kysely, workspaceId, id))) throw notFound('contact');
    const events = await listEvents(this.db.kysely, workspaceId, { ...opts, contactId: id });
    // An automation's email names a broadcast row the broadcasts API hides: `source` says which automation sent it.
    return withSources(this.ports.messageSources ?? noMessageSources, workspaceId, events);
  }

  async list(workspaceId: string, opts: ContactListFilter & { limit: number; beforeId?: string }): Promise<Contact[]> {
    const db = this.db.kysely;
    const records = await repo.listContacts(db, workspaceId, {
      ...(await this.listFilter(workspaceId, opts)),
      limit: opts.limit,
      beforeId: opts.beforeId,
    });
    return this.present(db, workspaceId, records);
  }

  /** GET /v1/contacts/count: how many contacts the list has with these filters, over all its pages. */
  async count(workspaceId: string, opts: ContactListFilter): Promise<{ count: number }> {
    const filter = await this.listFilter(workspaceId, opts);
    return { count: await repo.countContacts(this.db.kysely, this.db.dialect, workspaceId, filter) };
  }

  /** The list's filters checked: the email normalised (422 when it is not one), the topic found (422 when not). */
  private async listFilter(workspaceId: string, opts: ContactListFilter) {
    const email = opts.email !== undefined ? emailOrFail(opts.email, '/query/email') : undefined;
    let topic;
    if (opts.topicId !== undefined) {
      topic = await getTopic(this.db.kysely, workspaceId, opts.topicId);
      if (!topic)
        throw unprocessable('invalid_reference', 'topicId names no topic of this workspace', [
          { path: '/query/topicId', message: 'names no topic of this workspace' },
        ]);
    }
    const tag = opts.tag?.trim();
    return { email, status: opts.status, topic, tag: tag || undefined, q: opts.q };
  }

  /** GET /v1/tags: the workspace's tags with how many contacts have each, most used first. */
  async tags(workspaceId: string, limit: number): Promise<{ data: { tag: string; contacts: number }[] }> {
    return { data: await workspaceTags(this.db.kysely, workspaceId, limit) };
  }

  /**
   * POST /v1/contacts: creates the contact, or updates the one with that email. Race-safe: the insert
   * does nothing when the email exists (the unique constraint decides, also against a concurrent insert),
   * and the existing contact is then updated. Everything happens in one transaction, so a rejected request
   * (unknown topic) changes nothing.
   */
  async upsert(workspaceId: string, input: UpsertContactInput): Promise<{ contact: Contact; created: boolean }> {
    const email = emailOrFail(input.email, '/email');
    const timezone = zoneOrFail(input.timezone);
    checkChoicesUnique(input.topics);
    const tags = tagsOrFail(input.tags);
    const result = await this.tx(async (trx) => {
      await this.checkTopics(trx, workspaceId, input.topics);
      const now = nowIso();
      const { topics, tags: _tags, timezone: _zone, ...fields } = input;
      const saved = await upsertContact(trx, workspaceId, { ...fields, email }, now);
      if (tags && (await replaceTags(trx, workspaceId, saved.id, tags, now)) && !saved.created)
        await recordEvents(trx, workspaceId, [updatedEvent(saved.id, email, ['tags'], 'api')], now);
      // The zone beside the lifecycle's upsert (which knows names and status only), in its transaction.
      if (timezone !== undefined) await repo.updateContact(trx, workspaceId, saved.id, { timezone }, now);
      if (topics) await setTopicChoices(trx, workspaceId, saved.id, topics, now);
      return saved;
    });
    return { contact: await this.get(workspaceId, result.id), created: result.created };
  }

  /**
   * PUT: partial (omitted unchanged, present replaced whole, null clears a name); 409 contact_exists for a
   * taken email. A status is applied by the lifecycle's rule: a suppressed address is not made SUBSCRIBED or
   * PENDING (the contact keeps its status and says `suppressed: true`).
   */
  async update(workspaceId: string, id: string, input: UpdateContactInput): Promise<Contact> {
    if (input.id !== undefined && input.id !== id)
      throw validationFailed([{ path: '/id', message: 'must equal the contact id in the path' }]);
    const email = input.email !== undefined ? emailOrFail(input.email, '/email') : undefined;
    const timezone = zoneOrFail(input.timezone);
    checkChoicesUnique(input.topics);
    const tags = tagsOrFail(input.tags);
    try {
      await this.tx(async (trx) => {
        const current = await repo.getContact(trx, workspaceId, id);
        if (!current) throw notFound('contact');
        await this.checkTopics(trx, workspaceId, input.topics);
        const now = nowIso();
        const { topics, id: _id, status, tags: _tags, timezone: _zone, ...given } = input;
        const fields = { ...given, ...(timezone !== undefined ? { timezone } : {}) };
        await repo.updateContact(trx, workspaceId, id, { ...fields, email }, now);
        const changed = Object.keys(fields).filter((f) => (fields as Record<string, unknown>)[f] !== undefined);
        if (email !== undefined) changed.unshift('email');
        if (tags && (await replaceTags(trx, workspaceId, id, tags, now))) changed.push('tags');
        if (changed.length)
          await recordEvents(
            trx,
            workspaceId,
            [updatedEvent(id, email ?? current.email, [...new Set(changed)], 'api')],
            now,
          );
        if (status !== undefined) await applyToContact(trx, workspaceId, id, SET_OPERATION[status], {}, now);
        if (topics) await setTopicChoices(trx, workspaceId, id, topics, now);
      });
    } catch (err) {
      if (!isUniqueViolation(err) || email === undefined) throw err;
      const other = (await repo.contactIdsByEmail(this.db.kysely, workspaceId, [email])).get(email);
      throw conflict(
        'contact_exists',
        `another contact of this workspace has the email ${email}`,
        other ? { contactId: other } : undefined,
      );
    }
    return this.get(workspaceId, id);
  }

  /** Deletes the contact; its `contact.deleted` event is written with the deletion. */
  async remove(workspaceId: string, id: string): Promise<void> {
    let deleted: boolean;
    try {
      deleted = await this.tx((trx) => deleteContactWithEvent(trx, workspaceId, id, nowIso()));
    } catch (err) {
      if (isForeignKeyViolation(err))
        throw conflict('resource_in_use', 'the contact is still referenced and cannot be deleted');
      throw err;
    }
    if (!deleted) throw notFound('contact');
  }

  /**
   * GET /v1/contacts/export: the segment's contacts (every contact without a segment), whatever their status,
   * as CSV text chunks, oldest first. The segment is looked up before anything is streamed (404 for one that
   * is not in the workspace); the rows are then read a page at a time as the consumer asks for them, so memory
   * stays flat whatever the segment's size.
   */
  async exportCsv(
    workspaceId: string,
    segmentId: string | undefined,
  ): Promise<{ filename: string; chunks: AsyncIterable<string> }> {
    const pages = await this.ports.contactPages(workspaceId, segmentId);
    const db = this.db.kysely;
    async function* chunks(): AsyncGenerator<string> {
      yield csvHeader();
      for await (const page of pages) {
        // The page's tags in one query (contact_tags_pk).
        const tags = await tagsOfContacts(
          db,
          workspaceId,
          page.map((c) => c.id),
        );
        let text = '';
        for (const c of page) text += contactCsvRow(c, c.suppressed, tags.get(c.id));
        yield text;
      }
    }
    const day = nowIso().slice(0, 10);
    return { filename: `contacts-${segmentId ?? 'all'}-${day}.csv`, chunks: chunks() };
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
  /** Streams a CSV or NDJSON body into the workspace's contacts (contacts.importer.ts). */
  importContacts(
    workspaceId: string,
    format: ImportFormat,
    body: Readable,
    declaredLength?: number,
    options: { columns?: ColumnMap | string; onError?: (err: unknown) => void } = {},
  ): Promise<ImportJob> {
    const columns =
      typeof options.columns === 'string'
        ? parseColumnMap(options.columns)
        : options.columns && checkColumnMap(options.columns);
    return runImport(this.db, workspaceId, format, body, {
      byteLimit: this.importByteLimit,
      heartbeatMs: this.importHeartbeatMs,
      declaredLength,
      columns,
      onError: options.onError,
    });
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
