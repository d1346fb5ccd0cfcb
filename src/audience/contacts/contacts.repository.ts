import { PostgresAdapter, sql, type SqlBool } from 'kysely';
import { databaseNow } from '../../db/clock.js';
import { UNICODE_LOWER, type Dialect, type Executor } from '../../db/connection.js';
import type { ContactImportsTable, ContactStatus, ContactsTable } from '../../db/schema.js';
import { fromJsonColumn, toJsonColumn } from '../../lib/json.js';
import { toIso } from '../../lib/time.js';
import { EVALUATION_LIMIT_MS, type IdRange, MAX_SLICE_ROWS, contactSlices, inRange } from './contacts.slices.js';
import type { Topic } from '../topics/topics.repository.js';
import { subscribedTo } from './contacts.subscriptions.js';
import { hasTagSql, tagKey } from './contacts.tags.js';
import type { ImportJob } from './contacts.schemas.js';

/** A contact row as the rest of the service sees it (topic subscriptions are read separately). */
export interface ContactRecord {
  id: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  properties: Record<string, unknown>;
  status: ContactStatus;
  /** The contact's IANA time zone; null: the workspace's settings.timezone (docs/contacts.md). */
  timezone: string | null;
  createdAt: string;
  updatedAt: string;
}

export const CONTACT_COLUMNS = [
  'id',
  'email',
  'first_name',
  'last_name',
  'properties',
  'status',
  'timezone',
  'created_at',
  'updated_at',
] as const;

export function toContactRecord(r: {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  properties: string;
  status: ContactStatus;
  timezone: string | null;
  created_at: string;
  updated_at: string;
}): ContactRecord {
  return {
    id: r.id,
    email: r.email,
    firstName: r.first_name,
    lastName: r.last_name,
    properties: fromJsonColumn<Record<string, unknown>>(r.properties) ?? {},
    status: r.status,
    timezone: r.timezone,
    createdAt: toIso(r.created_at),
    updatedAt: toIso(r.updated_at),
  };
}

export async function getContact(db: Executor, workspaceId: string, id: string): Promise<ContactRecord | undefined> {
  const r = await db
    .selectFrom('contacts')
    .select(CONTACT_COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return r ? toContactRecord(r) : undefined;
}

/** The writable fields; `undefined` means "leave as it is". `email` must already be normalised. */
export interface ContactValues {
  email?: string;
  firstName?: string | null;
  lastName?: string | null;
  properties?: Record<string, unknown>;
  /** The properties as JSON text already (imports keep them so); wins over `properties`. */
  propertiesJson?: string;
  status?: ContactStatus;
  /** An IANA zone already checked (lib/zones.ts canonicalTimeZone), or null to clear it. */
  timezone?: string | null;
}

/** The id of the workspace's contact with this email (normalised), if there is one. */
export async function contactIdByEmail(db: Executor, workspaceId: string, email: string): Promise<string | undefined> {
  return (
    await db
      .selectFrom('contacts')
      .select('id')
      .where('workspace_id', '=', workspaceId)
      .where('email', '=', email)
      .executeTakeFirst()
  )?.id;
}

/** email → id for those of `emails` (normalised) that a contact of the workspace has. */
export async function contactIdsByEmail(
  db: Executor,
  workspaceId: string,
  emails: readonly string[],
): Promise<Map<string, string>> {
  if (emails.length === 0) return new Map();
  const rows = await db
    .selectFrom('contacts')
    .select(['id', 'email'])
    .where('workspace_id', '=', workspaceId)
    .where('email', 'in', [...emails])
    .execute();
  return new Map(rows.map((r) => [r.email, r.id]));
}

/** email → id and status for those of `emails` (normalised) that a contact of the workspace has. */
export async function contactStatesByEmail(
  db: Executor,
  workspaceId: string,
  emails: readonly string[],
): Promise<Map<string, { id: string; status: ContactStatus }>> {
  if (emails.length === 0) return new Map();
  const rows = await db
    .selectFrom('contacts')
    .select(['id', 'email', 'status'])
    .where('workspace_id', '=', workspaceId)
    .where('email', 'in', [...emails])
    .execute();
  return new Map(rows.map((r) => [r.email, { id: r.id, status: r.status }]));
}

/** Applies the present fields and refreshes updated_at; false if there is no such contact. */
export async function updateContact(
  db: Executor,
  workspaceId: string,
  id: string,
  v: ContactValues,
  updatedAt: string,
): Promise<boolean> {
  const set: Partial<ContactsTable> = { updated_at: updatedAt };
  if (v.email !== undefined) set.email = v.email;
  if (v.firstName !== undefined) set.first_name = v.firstName;
  if (v.lastName !== undefined) set.last_name = v.lastName;
  if (v.propertiesJson !== undefined) set.properties = v.propertiesJson;
  else if (v.properties !== undefined) set.properties = toJsonColumn(v.properties)!;
  if (v.status !== undefined) set.status = v.status;
  if (v.timezone !== undefined) set.timezone = v.timezone;
  const res = await db
    .updateTable('contacts')
    .set(set)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * An import batch's time zones (docs/contacts.md, "Time zone"): one UPDATE per zone, over the batch's contacts of that
 * zone by email (normalised); in the batch's transaction, after its upsert.
 */
export async function setTimezonesByEmail(
  db: Executor,
  workspaceId: string,
  byZone: ReadonlyMap<string, readonly string[]>,
): Promise<void> {
  for (const [zone, emails] of byZone)
    await db
      .updateTable('contacts')
      .set({ timezone: zone })
      .where('workspace_id', '=', workspaceId)
      .where('email', 'in', [...emails])
      .execute();
}

/**
 * A sign-up's browser time zone (a form's `captureTimezone`, docs/forms.md): given to the contact only when it has
 * none, so a public form never overwrites a zone set by the contact's owner, an import or the API.
 */
export async function fillContactTimezone(
  db: Executor,
  workspaceId: string,
  contactId: string,
  timezone: string,
): Promise<void> {
  await db
    .updateTable('contacts')
    .set({ timezone })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', contactId)
    .where('timezone', 'is', null)
    .execute();
}

export async function deleteContact(db: Executor, workspaceId: string, id: string): Promise<boolean> {
  const res = await db
    .deleteFrom('contacts')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

export interface ContactFilter {
  email?: string;
  status?: ContactStatus;
  /** Only the contacts effectively subscribed to this topic. */
  topic?: Pick<Topic, 'id' | 'defaultSubscription'>;
  /** Only the contacts with this tag (any spelling). */
  tag?: string;
  /** A case-insensitive substring of the email, first name or last name (searchSql). */
  q?: string;
  limit: number;
  beforeId?: string;
}

/** `s` as a LIKE pattern matching itself: the wildcards and the escape character escaped (with `\`). */
export function likeLiteral(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * The contact list's search (`q`): a case-insensitive substring of the email, first or last name, as a condition on
 * `contacts`. The needle is lower-cased here and each column by the database; LIKE's wildcards in it match themselves.
 * PostgreSQL's lower() folds every letter. SQLite's folds ASCII letters only, which is enough for an ASCII needle (it
 * can only match ASCII letters) and fast; a needle with other letters ("élodie") is compared with the columns folded by
 * UNICODE_LOWER (JavaScript's toLowerCase, a function of the connection: slower, so only then). A trigram index narrows
 * it (migration 0037: searchCandidates on SQLite, pg_trgm's indexes on PostgreSQL); this is still what decides
 * (docs/contacts.md "Search").
 */
export function searchSql(q: string, dialect: Dialect) {
  const needle = q.toLowerCase();
  const pattern = `%${likeLiteral(needle)}%`;
  const lower =
    dialect === 'sqlite' && [...needle].some((c) => c.charCodeAt(0) > 0x7f) ? sql.raw(UNICODE_LOWER) : sql.raw('lower');
  const like = (col: string) => sql<SqlBool>`${lower}(${sql.ref(col)}) like ${pattern} escape '\\'`;
  return sql<SqlBool>`(${like('contacts.email')} or ${like('contacts.first_name')} or ${like('contacts.last_name')})`;
}

const dialectOf = (db: Executor): Dialect =>
  db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';

/**
 * The most candidates the search index may give for a search to read just those (more: the words are common, and
 * reading the workspace's contacts newest first fills a page sooner than reading thousands of candidates).
 */
const SEARCH_CANDIDATES = 5000;

/**
 * SQLite: the rowids of the contacts (of any workspace) whose email, first or last name hold every three-character
 * piece of `q` in a row (migration 0037's `contacts_search`, trigrams, letter case folded): a superset of what searchSql
 * matches, which still decides, with the workspace and the other filters. Null when the index cannot narrow the
 * search: fewer than three characters, more than SEARCH_CANDIDATES candidates, or PostgreSQL (its trigram indexes serve
 * searchSql's LIKE as it is).
 */
async function searchCandidates(db: Executor, q: string): Promise<number[] | null> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return null;
  // The needle as searchSql has it (lower-cased here): each of its characters is one the index folds alike.
  const needle = q.toLowerCase();
  if ([...needle].length < 3) return null;
  const phrase = `"${needle.replace(/"/g, '""')}"`;
  const { rows } = await sql<{ rowid: number }>`select rowid from contacts_search where contacts_search match ${phrase}
      limit ${SEARCH_CANDIDATES + 1}`.execute(db);
  return rows.length > SEARCH_CANDIDATES ? null : rows.map((r) => r.rowid);
}

/** Only the contacts of these rowids (searchCandidates'), read by rowid. */
function inCandidates(rowids: readonly number[]) {
  return sql<SqlBool>`contacts.rowid in (select value from json_each(${JSON.stringify(rowids)}))`;
}

/**
 * A page of GET /v1/contacts: keyset pagination (`id < cursor`, newest first), so a page at any depth is one range
 * of an index read from the cursor on: (workspace_id, id), or (workspace_id, status, id) with a status filter.
 * A page 900,000 contacts deep costs what page 1 does (bench/README.md, bench:segments); an OFFSET would walk the
 * 900,000 entries before it. test/db/contact-pages.test.ts holds the plans to it.
 */
export function contactsPageQuery(
  db: Executor,
  workspaceId: string,
  f: ContactFilter,
  /** searchCandidates' answer for `f.q`: only these rows are read. */
  candidates?: readonly number[] | null,
) {
  let q = db.selectFrom('contacts').select(CONTACT_COLUMNS);
  // With candidates, they are what is read (by rowid, then sorted: a few thousand at most); the unary `+` keeps SQLite
  // from walking the workspace's index instead, which it prefers for the order.
  q = candidates
    ? q.where(inCandidates(candidates)).where(sql<SqlBool>`+contacts.workspace_id = ${workspaceId}`)
    : q.where('workspace_id', '=', workspaceId);
  if (f.email !== undefined) q = q.where('email', '=', f.email);
  if (f.status !== undefined) q = q.where('status', '=', f.status);
  if (f.topic !== undefined) q = q.where(subscribedTo(f.topic));
  if (f.tag !== undefined) q = q.where(hasTagSql(workspaceId, f.tag, true));
  if (f.q !== undefined) q = q.where(searchSql(f.q, dialectOf(db)));
  if (f.beforeId !== undefined)
    q = candidates ? q.where(sql<SqlBool>`+contacts.id < ${f.beforeId}`) : q.where('id', '<', f.beforeId);
  return q.orderBy('id', 'desc').limit(f.limit);
}

/**
 * A page of the list. A search (`q`) reads only the contacts the search index names when it names few (SQLite;
 * searchCandidates): a rare word is then a few lookups, not a read of every contact (docs/contacts.md "Search").
 */
export async function listContacts(db: Executor, workspaceId: string, f: ContactFilter): Promise<ContactRecord[]> {
  const candidates = f.q !== undefined && f.email === undefined ? await searchCandidates(db, f.q) : null;
  return (await contactsPageQuery(db, workspaceId, f, candidates).execute()).map(toContactRecord);
}

/**
 * How many contacts GET /v1/contacts would list with these filters, over all its pages (GET /v1/contacts/count).
 * Exact, and read from indexes only: an email is one unique-index probe. Otherwise the count walks the
 * (workspace_id, id) or (workspace_id, status, id) index; a topic is counted from its choices that differ from its
 * default (contact_topics_topic: topic_id, subscribed, contact_id), which are what subscribedTo tests per contact:
 * an OPT_OUT topic has as many subscribers as opt-ins, an OPT_IN topic all the contacts but those who opted out (with a
 * status, those choices are joined to their contacts). No contact is tested one by one. On SQLite the count goes a
 * slice of contact ids at a time (contacts.slices.ts), so that no statement holds the event loop for more than about
 * SLICE_TARGET_MS (contacts.slices.ts). 1,000,000 contacts: bench/README.md (bench:contact-count).
 */
export async function countContacts(
  db: Executor,
  dialect: Dialect,
  workspaceId: string,
  f: Omit<ContactFilter, 'limit' | 'beforeId'>,
  /** Contacts in the first slice on SQLite (resized after each to take about SLICE_TARGET_MS); tests make it small. */
  firstSliceRows = MAX_SLICE_ROWS,
): Promise<number> {
  let contacts = db.selectFrom('contacts').where('contacts.workspace_id', '=', workspaceId);
  if (f.email !== undefined) contacts = contacts.where('contacts.email', '=', f.email);
  if (f.status !== undefined) contacts = contacts.where('contacts.status', '=', f.status);
  const n = sql<number | string>`count(*)`.as('n');
  const value = async (query: { executeTakeFirst(): Promise<{ n: number | string } | undefined> }) =>
    Number((await query.executeTakeFirst())?.n ?? 0);
  const count = (query: typeof contacts) => value(query.select(n));
  if (f.email !== undefined) {
    let one = f.topic ? contacts.where(subscribedTo(f.topic)) : contacts;
    if (f.tag !== undefined) one = one.where(hasTagSql(workspaceId, f.tag, true));
    if (f.q !== undefined) one = one.where(searchSql(f.q, dialect));
    return count(one);
  }
  // A tag alone: one range of contact_tags_key.
  if (f.tag !== undefined && f.status === undefined && f.topic === undefined && f.q === undefined)
    return value(
      db
        .selectFrom('contact_tags')
        .where('workspace_id', '=', workspaceId)
        .where('tag_key', '=', tagKey(f.tag))
        .select(n),
    );
  // Tags and the search are tested per contact, a slice of contacts at a time, with the topic's rule if any; a search
  // the index narrows to a few candidates tests just those, in one statement.
  if (f.tag !== undefined || f.q !== undefined) {
    let each = f.topic ? contacts.where(subscribedTo(f.topic)) : contacts;
    if (f.tag !== undefined) each = each.where(hasTagSql(workspaceId, f.tag, true));
    if (f.q !== undefined) each = each.where(searchSql(f.q, dialect));
    const candidates = f.q !== undefined ? await searchCandidates(db, f.q) : null;
    if (candidates) return count(each.where(inCandidates(candidates)));
    let matched = 0;
    for await (const range of contactSlices(db, dialect, workspaceId, {
      rows: firstSliceRows,
      order: 'asc',
      limitMs: EVALUATION_LIMIT_MS,
    }))
      matched += await count(inRange(each, range));
    return matched;
  }

  const topic = f.topic;
  const optIn = topic?.defaultSubscription === 'OPT_IN';
  // The choices that differ from the topic's default, of contacts in a range of ids (and of the status, if any).
  const overridden = (range: IdRange) => {
    let q = db
      .selectFrom('contact_topics')
      .where('contact_topics.topic_id', '=', topic!.id)
      .where('contact_topics.subscribed', '=', optIn ? 0 : 1);
    if (range.after !== undefined) q = q.where('contact_topics.contact_id', '>', range.after);
    if (range.upTo !== undefined) q = q.where('contact_topics.contact_id', '<=', range.upTo);
    if (f.status !== undefined)
      q = q
        .innerJoin('contacts', 'contacts.id', 'contact_topics.contact_id')
        .where('contacts.workspace_id', '=', workspaceId)
        .where('contacts.status', '=', f.status);
    return value(q.select(n));
  };
  let total = 0;
  for await (const range of contactSlices(db, dialect, workspaceId, {
    rows: firstSliceRows,
    order: 'asc',
    limitMs: EVALUATION_LIMIT_MS,
  })) {
    if (!topic) total += await count(inRange(contacts, range));
    else if (optIn) total += (await count(inRange(contacts, range))) - (await overridden(range));
    else total += await overridden(range);
  }
  return total;
}

// ---------------------------------------------------------------------------------------------------
// Import jobs

const IMPORT_COLUMNS = [
  'id',
  'format',
  'status',
  'total',
  'created',
  'updated',
  'skipped',
  'suppressed',
  'errors',
  'error',
  'created_at',
  'finished_at',
] as const;

type ImportRow = Omit<Pick<ContactImportsTable, (typeof IMPORT_COLUMNS)[number]>, 'suppressed'> & {
  suppressed: number;
};

function toImportJob(r: ImportRow): ImportJob {
  const errors = fromJsonColumn<ImportJob['errors']>(r.errors) ?? [];
  const skipped = Number(r.skipped);
  return {
    id: r.id,
    status: r.status,
    format: r.format,
    total: Number(r.total),
    created: Number(r.created),
    updated: Number(r.updated),
    skipped,
    suppressed: Number(r.suppressed),
    errors,
    // Every skipped row has one error entry; those beyond the stored ones are the truncated ones.
    errorsTruncated: Math.max(0, skipped - errors.length),
    error: r.error,
    createdAt: toIso(r.created_at),
    finishedAt: toIso(r.finished_at),
  };
}

export async function insertImport(
  db: Executor,
  workspaceId: string,
  job: { id: string; format: ImportJob['format']; createdAt: string },
): Promise<void> {
  await db
    .insertInto('contact_imports')
    .values({
      id: job.id,
      workspace_id: workspaceId,
      format: job.format,
      status: 'RUNNING',
      total: 0,
      created: 0,
      updated: 0,
      skipped: 0,
      suppressed: 0,
      errors: '[]',
      error: null,
      created_at: job.createdAt,
      finished_at: null,
      heartbeat_at: databaseNow(db),
    })
    .execute();
}

/**
 * The running import is alive (see failImportsSilentFor). Heartbeats are stamped by the database's clock,
 * which is what the sweep compares them with, whatever host each runs on.
 */
export async function touchImport(db: Executor, workspaceId: string, id: string): Promise<void> {
  await db
    .updateTable('contact_imports')
    .set({ heartbeat_at: databaseNow(db) })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('status', '=', 'RUNNING')
    .execute();
}

/**
 * Fails RUNNING imports whose heartbeat is more than `seconds` old: their server died mid-import. A
 * maintenance sweep over every workspace (run by the worker), like the delivery lease sweep.
 */
export async function failImportsSilentFor(db: Executor, seconds: number, error: string): Promise<number> {
  const now = databaseNow(db);
  const res = await db
    .updateTable('contact_imports')
    .set({ status: 'FAILED', error, finished_at: now, heartbeat_at: now })
    .where('status', '=', 'RUNNING')
    .where('heartbeat_at', '<', databaseNow(db, seconds))
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

export interface ImportProgress {
  total: number;
  created: number;
  updated: number;
  skipped: number;
  suppressed: number;
}

/**
 * The counts so far (written in each batch's transaction, so they always match what is committed). False
 * when the job is no longer RUNNING: the sweep took it for dead, and its FAILED stands.
 */
export async function updateImportProgress(
  db: Executor,
  workspaceId: string,
  id: string,
  p: ImportProgress,
): Promise<boolean> {
  const res = await db
    .updateTable('contact_imports')
    .set({
      total: p.total,
      created: p.created,
      updated: p.updated,
      skipped: p.skipped,
      suppressed: p.suppressed,
      heartbeat_at: databaseNow(db),
    })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('status', '=', 'RUNNING')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Ends a RUNNING job; a job already ended (failed by the sweep) keeps its end. */
export async function finishImport(
  db: Executor,
  workspaceId: string,
  id: string,
  f: ImportProgress & {
    status: 'COMPLETED' | 'FAILED';
    errors: ImportJob['errors'];
    error: string | null;
    finishedAt: string;
  },
): Promise<void> {
  await db
    .updateTable('contact_imports')
    .set({
      status: f.status,
      total: f.total,
      created: f.created,
      updated: f.updated,
      skipped: f.skipped,
      suppressed: f.suppressed,
      errors: toJsonColumn(f.errors)!,
      error: f.error,
      finished_at: f.finishedAt,
      heartbeat_at: f.finishedAt,
    })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('status', '=', 'RUNNING')
    .execute();
}

export async function getImport(db: Executor, workspaceId: string, id: string): Promise<ImportJob | undefined> {
  const r = await db
    .selectFrom('contact_imports')
    .select(IMPORT_COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return r ? toImportJob(r) : undefined;
}

export async function listImports(
  db: Executor,
  workspaceId: string,
  opts: { limit: number; beforeId?: string },
): Promise<ImportJob[]> {
  let q = db.selectFrom('contact_imports').select(IMPORT_COLUMNS).where('workspace_id', '=', workspaceId);
  if (opts.beforeId) q = q.where('id', '<', opts.beforeId);
  return (await q.orderBy('id', 'desc').limit(opts.limit).execute()).map(toImportJob);
}

/**
 * Contacts of the workspace created per UTC hour since `sinceIso`, counted by the database in one grouped query (the
 * console dashboard's chart). Read by the (workspace, id) index from `firstId`: ids are ULIDs, which sort by creation
 * time, so the scan covers the window's contacts only.
 */
export async function contactsCreatedPerHour(
  db: Executor,
  workspaceId: string,
  sinceIso: string,
  firstId: string,
): Promise<{ hour: string; created: number }[]> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const hour = postgres
    ? sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24')`
    : sql<string>`substr(created_at, 1, 13)`;
  const rows = await db
    .selectFrom('contacts')
    .select([hour.as('hour'), (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('workspace_id', '=', workspaceId)
    .where('id', '>=', firstId)
    .where('created_at', '>=', sinceIso)
    .groupBy(sql`1`)
    .orderBy(sql`1`)
    .execute();
  return rows.map((r) => ({ hour: `${r.hour}:00:00.000Z`, created: Number(r.n) }));
}
