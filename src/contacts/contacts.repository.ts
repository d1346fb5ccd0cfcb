import { CompiledQuery, PostgresAdapter } from 'kysely';
import type { Executor } from '../db/connection.js';
import type { ContactImportsTable, ContactStatus, ContactsTable } from '../db/schema.js';
import { fromJsonColumn, toJsonColumn } from '../lib/json.js';
import { toIso } from '../lib/time.js';
import { subscribedTo, type Topic } from '../topics/topics.repository.js';
import type { ImportJob } from './contacts.schemas.js';

/** A contact row as the rest of the service sees it (topic subscriptions are read separately). */
export interface ContactRecord {
  id: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  properties: Record<string, unknown>;
  status: ContactStatus;
  createdAt: string;
  updatedAt: string;
}

export const CONTACT_COLUMNS = ['id', 'email', 'first_name', 'last_name', 'properties', 'status', 'created_at', 'updated_at'] as const;

export function toContactRecord(r: { id: string; email: string; first_name: string | null; last_name: string | null; properties: string; status: ContactStatus; created_at: string; updated_at: string }): ContactRecord {
  return {
    id: r.id, email: r.email, firstName: r.first_name, lastName: r.last_name,
    properties: fromJsonColumn<Record<string, unknown>>(r.properties) ?? {}, status: r.status,
    createdAt: toIso(r.created_at), updatedAt: toIso(r.updated_at),
  };
}

export async function getContact(db: Executor, workspaceId: string, id: string): Promise<ContactRecord | undefined> {
  const r = await db.selectFrom('contacts').select(CONTACT_COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
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
}

const INSERT_COLUMNS = ['id', 'workspace_id', 'email', 'first_name', 'last_name', 'properties', 'status', 'created_at', 'updated_at'] as const;
const insertSqlCache = new Map<string, string>();

/**
 * The text of a multi-row `insert … on conflict do nothing returning` for `rows` rows. Imports insert up to
 * 1000 rows at a time; rather than build that through Kysely's query builder for every batch (an AST of some
 * 20,000 nodes, compiled each time), the text is made once per size and dialect (a few recent ones are
 * kept) and run as a compiled query, the values as parameters.
 */
function insertSql(postgres: boolean, rows: number): string {
  const key = `${postgres ? 'pg' : 'sqlite'}:${rows}`;
  let text = insertSqlCache.get(key);
  if (text === undefined) {
    let n = 0;
    const tuple = () => `(${INSERT_COLUMNS.map(() => (postgres ? `$${++n}` : '?')).join(', ')})`;
    text = `insert into "contacts" (${INSERT_COLUMNS.map((c) => `"${c}"`).join(', ')}) values ${Array.from({ length: rows }, tuple).join(', ')}`
      + ' on conflict ("workspace_id", "email") do nothing returning "id", "email"';
    if (insertSqlCache.size >= 4) insertSqlCache.delete(insertSqlCache.keys().next().value!);
    insertSqlCache.set(key, text);
  }
  return text;
}

/**
 * Appends one new contact's values to `params`, in the order insertContactParamsIfNew expects. Imports build one
 * flat array per batch this way rather than an object per row: objects kept alive across a batch are what
 * V8's young-generation GC promotes (and, when they survive often enough, starts allocating in the old
 * generation), which made an import's memory grow with the file.
 */
export function pushNewContact(
  params: unknown[], workspaceId: string, id: string, email: string, firstName: string | null, lastName: string | null,
  propertiesJson: string, status: ContactStatus, createdAt: string,
): void {
  params.push(id, workspaceId, email, firstName, lastName, propertiesJson, status, createdAt, createdAt);
}

/** A contact to insert: `updatedAt` starts equal to `createdAt`. */
export type NewContact = Omit<ContactRecord, 'updatedAt'>;

/**
 * Inserts the contacts whose email is not taken in the workspace yet; the others are left alone (the unique
 * constraint decides, so concurrent writers cannot create a duplicate). Returns email → id of those inserted.
 */
export function insertContactsIfNew(db: Executor, workspaceId: string, rows: readonly NewContact[]): Promise<Map<string, string>> {
  const params: unknown[] = [];
  for (const c of rows) pushNewContact(params, workspaceId, c.id, c.email, c.firstName, c.lastName, toJsonColumn(c.properties)!, c.status, c.createdAt);
  return insertContactParamsIfNew(db, params);
}

/** insertContactsIfNew for values laid out by pushNewContact. */
export async function insertContactParamsIfNew(db: Executor, params: unknown[]): Promise<Map<string, string>> {
  const rows = params.length / INSERT_COLUMNS.length;
  const out = new Map<string, string>();
  if (rows === 0) return out;
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const res = await db.executeQuery(CompiledQuery.raw(insertSql(postgres, rows), params) as CompiledQuery<{ id: string; email: string }>);
  for (const r of res.rows) out.set(r.email, r.id);
  return out;
}

/** email → id for those of `emails` (normalised) that a contact of the workspace has. */
export async function contactIdsByEmail(db: Executor, workspaceId: string, emails: readonly string[]): Promise<Map<string, string>> {
  if (emails.length === 0) return new Map();
  const rows = await db.selectFrom('contacts').select(['id', 'email']).where('workspace_id', '=', workspaceId).where('email', 'in', [...emails]).execute();
  return new Map(rows.map((r) => [r.email, r.id]));
}

/** Applies the present fields and refreshes updated_at; false if there is no such contact. */
export async function updateContact(db: Executor, workspaceId: string, id: string, v: ContactValues, updatedAt: string): Promise<boolean> {
  const set: Partial<ContactsTable> = { updated_at: updatedAt };
  if (v.email !== undefined) set.email = v.email;
  if (v.firstName !== undefined) set.first_name = v.firstName;
  if (v.lastName !== undefined) set.last_name = v.lastName;
  if (v.propertiesJson !== undefined) set.properties = v.propertiesJson;
  else if (v.properties !== undefined) set.properties = toJsonColumn(v.properties)!;
  if (v.status !== undefined) set.status = v.status;
  const res = await db.updateTable('contacts').set(set).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function deleteContact(db: Executor, workspaceId: string, id: string): Promise<boolean> {
  const res = await db.deleteFrom('contacts').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

export interface ContactFilter {
  email?: string;
  status?: ContactStatus;
  /** Only the contacts effectively subscribed to this topic. */
  topic?: Pick<Topic, 'id' | 'defaultSubscription'>;
  limit: number;
  beforeId?: string;
}

export async function listContacts(db: Executor, workspaceId: string, f: ContactFilter): Promise<ContactRecord[]> {
  let q = db.selectFrom('contacts').select(CONTACT_COLUMNS).where('workspace_id', '=', workspaceId);
  if (f.email !== undefined) q = q.where('email', '=', f.email);
  if (f.status !== undefined) q = q.where('status', '=', f.status);
  if (f.topic !== undefined) q = q.where(subscribedTo(f.topic));
  if (f.beforeId !== undefined) q = q.where('id', '<', f.beforeId);
  const rows = await q.orderBy('id', 'desc').limit(f.limit).execute();
  return rows.map(toContactRecord);
}

/** The explicit topic choices of these contacts: contact id → topic id → subscribed. */
export async function topicChoices(db: Executor, workspaceId: string, contactIds: readonly string[]): Promise<Map<string, Map<string, boolean>>> {
  const out = new Map<string, Map<string, boolean>>();
  if (contactIds.length === 0) return out;
  const rows = await db.selectFrom('contact_topics').select(['contact_id', 'topic_id', 'subscribed'])
    .where('workspace_id', '=', workspaceId).where('contact_id', 'in', [...contactIds]).execute();
  for (const r of rows) {
    let m = out.get(r.contact_id);
    if (!m) out.set(r.contact_id, (m = new Map()));
    m.set(r.topic_id, Number(r.subscribed) === 1);
  }
  return out;
}

/** Records the contact's explicit choices (insert or replace, one row per topic). */
export async function setTopicChoices(db: Executor, workspaceId: string, contactId: string, choices: readonly { id: string; subscribed: boolean }[], at: string): Promise<void> {
  if (choices.length === 0) return;
  await db.insertInto('contact_topics')
    .values(choices.map((c) => ({ workspace_id: workspaceId, contact_id: contactId, topic_id: c.id, subscribed: c.subscribed ? 1 : 0, updated_at: at })))
    .onConflict((oc) => oc.columns(['contact_id', 'topic_id']).doUpdateSet((eb) => ({ subscribed: eb.ref('excluded.subscribed'), updated_at: eb.ref('excluded.updated_at') })))
    .execute();
}

// ---------------------------------------------------------------------------------------------------
// Import jobs

const IMPORT_COLUMNS = ['id', 'format', 'status', 'total', 'created', 'updated', 'skipped', 'errors', 'error', 'created_at', 'finished_at'] as const;

type ImportRow = Pick<ContactImportsTable, (typeof IMPORT_COLUMNS)[number]>;

function toImportJob(r: ImportRow): ImportJob {
  const errors = fromJsonColumn<ImportJob['errors']>(r.errors) ?? [];
  const skipped = Number(r.skipped);
  return {
    id: r.id, status: r.status, format: r.format,
    total: Number(r.total), created: Number(r.created), updated: Number(r.updated), skipped,
    errors,
    // Every skipped row has one error entry; those beyond the stored ones are the truncated ones.
    errorsTruncated: Math.max(0, skipped - errors.length),
    error: r.error,
    createdAt: toIso(r.created_at),
    finishedAt: toIso(r.finished_at),
  };
}

export async function insertImport(db: Executor, workspaceId: string, job: { id: string; format: ImportJob['format']; createdAt: string }): Promise<void> {
  await db.insertInto('contact_imports').values({
    id: job.id, workspace_id: workspaceId, format: job.format, status: 'RUNNING', total: 0, created: 0, updated: 0, skipped: 0,
    errors: '[]', error: null, created_at: job.createdAt, finished_at: null,
  }).execute();
}

export interface ImportProgress {
  total: number;
  created: number;
  updated: number;
  skipped: number;
}

/** The counts so far (written in each batch's transaction, so they always match what is committed). */
export async function updateImportProgress(db: Executor, workspaceId: string, id: string, p: ImportProgress): Promise<void> {
  await db.updateTable('contact_imports').set({ total: p.total, created: p.created, updated: p.updated, skipped: p.skipped })
    .where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
}

export async function finishImport(db: Executor, workspaceId: string, id: string, f: ImportProgress & { status: 'COMPLETED' | 'FAILED'; errors: ImportJob['errors']; error: string | null; finishedAt: string }): Promise<void> {
  await db.updateTable('contact_imports').set({
    status: f.status, total: f.total, created: f.created, updated: f.updated, skipped: f.skipped,
    errors: toJsonColumn(f.errors)!, error: f.error, finished_at: f.finishedAt,
  }).where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
}

export async function getImport(db: Executor, workspaceId: string, id: string): Promise<ImportJob | undefined> {
  const r = await db.selectFrom('contact_imports').select(IMPORT_COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return r ? toImportJob(r) : undefined;
}

export async function listImports(db: Executor, workspaceId: string, opts: { limit: number; beforeId?: string }): Promise<ImportJob[]> {
  let q = db.selectFrom('contact_imports').select(IMPORT_COLUMNS).where('workspace_id', '=', workspaceId);
  if (opts.beforeId) q = q.where('id', '<', opts.beforeId);
  return (await q.orderBy('id', 'desc').limit(opts.limit).execute()).map(toImportJob);
}
