import { CompiledQuery } from 'kysely';
import { BatchSql, onPostgres, valueTuples } from '../../db/batch-sql.js';
import type { Executor } from '../../db/connection.js';
import type { ContactStatus } from '../../db/schema.js';

/**
 * The contacts' hand-written multi-row statements, in one place behind typed functions: an import batch's insert and
 * update, and the insert of any new contact. The SQL text is made once per dialect and row count (db/batch-sql.ts);
 * the values go in as one flat array, built here from columns. Callers hold a batch column by column (slot i of each
 * array is one contact), never as an object per contact: objects kept alive across an import's batch were promoted by
 * V8's young-generation GC, and the import's memory grew with the file (bench/README.md, bench:import).
 */

/** New contacts of one workspace, slots 0 … size - 1. */
export interface NewContacts {
  size: number;
  ids: readonly string[];
  emails: readonly string[];
  firstNames: readonly (string | null | undefined)[];
  lastNames: readonly (string | null | undefined)[];
  /** The properties as JSON text; undefined for none. */
  properties: readonly (string | undefined)[];
  statuses: readonly ContactStatus[];
}

/** Changes to contacts of one workspace, slots 0 … size - 1: an undefined field is left as it is (null clears a name). */
export interface ContactChanges {
  size: number;
  ids: readonly string[];
  firstNames: readonly (string | null | undefined)[];
  lastNames: readonly (string | null | undefined)[];
  /** The properties as JSON text, replacing the stored ones. */
  properties: readonly (string | undefined)[];
  statuses: readonly (ContactStatus | undefined)[];
}

const INSERT_COLUMNS = [
  'id',
  'workspace_id',
  'email',
  'first_name',
  'last_name',
  'properties',
  'status',
  'created_at',
  'updated_at',
] as const;

/** A multi-row `insert … on conflict do nothing returning`. */
const insertSql = new BatchSql(
  (rows, p) =>
    `insert into "contacts" (${INSERT_COLUMNS.map((c) => `"${c}"`).join(', ')}) values ${valueTuples(rows, INSERT_COLUMNS.length, p)}` +
    ' on conflict ("workspace_id", "email") do nothing returning "id", "email"',
);

/**
 * Inserts the contacts whose email is not taken in the workspace yet; the others are left alone (the unique
 * constraint decides, so concurrent writers cannot create a duplicate). `updatedAt` starts equal to `createdAt`.
 * Returns email → id of those inserted.
 */
export async function insertContactsIfNew(
  db: Executor,
  workspaceId: string,
  rows: NewContacts,
  createdAt: string,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (rows.size === 0) return out;
  const params: unknown[] = [];
  for (let i = 0; i < rows.size; i++) {
    params.push(
      rows.ids[i],
      workspaceId,
      rows.emails[i],
      rows.firstNames[i] ?? null,
      rows.lastNames[i] ?? null,
      rows.properties[i] ?? '{}',
      rows.statuses[i],
      createdAt,
      createdAt,
    );
  }
  const res = await db.executeQuery(
    CompiledQuery.raw(insertSql.text(onPostgres(db), rows.size), params) as CompiledQuery<{
      id: string;
      email: string;
    }>,
  );
  for (const r of res.rows) out.set(r.email, r.id);
  return out;
}

/** One new contact (insertContactsIfNew): its id if it was inserted, undefined when the email is taken. */
export async function insertContactIfNew(
  db: Executor,
  workspaceId: string,
  c: {
    id: string;
    email: string;
    firstName: string | null | undefined;
    lastName: string | null | undefined;
    propertiesJson: string | undefined;
    status: ContactStatus;
  },
  createdAt: string,
): Promise<string | undefined> {
  const inserted = await insertContactsIfNew(
    db,
    workspaceId,
    {
      size: 1,
      ids: [c.id],
      emails: [c.email],
      firstNames: [c.firstName],
      lastNames: [c.lastName],
      properties: [c.propertiesJson],
      statuses: [c.status],
    },
    createdAt,
  );
  return inserted.get(c.email);
}

const UPDATE_VALUES = [
  'id',
  'set_first',
  'first_name',
  'set_last',
  'last_name',
  'set_props',
  'properties',
  'status',
] as const;

/**
 * One `update … from (values …) returning id` for a batch of contacts. Each row says which fields it sets ('1'/'0'
 * flags, so that no parameter needs a type on PostgreSQL); status is set when given. One statement per batch instead
 * of one per contact: on PostgreSQL the round trips were most of an import's time when it updated contacts.
 */
const updateSql = new BatchSql((rows, p, postgres) => {
  const keep = (column: string, flag: string, cast = '') =>
    `"${column}" = case when "v"."${flag}" = '1' then "v"."${column}"${cast} else "contacts"."${column}" end`;
  return (
    `with "v" (${UPDATE_VALUES.map((c) => `"${c}"`).join(', ')}) as (values ${valueTuples(rows, UPDATE_VALUES.length, p)}) update "contacts" set ` +
    [
      keep('first_name', 'set_first'),
      keep('last_name', 'set_last'),
      keep('properties', 'set_props', postgres ? '::jsonb' : ''),
      '"status" = coalesce("v"."status", "contacts"."status")',
      `"updated_at" = ${p()}`,
    ].join(', ') +
    // SQLite: the unary + keeps the planner off the workspace indexes. With them it scanned the workspace's
    // contacts once per row of v (600 ms a batch at 20,000 contacts); without, it looks each row up by id.
    ` from "v" where ${postgres ? '' : '+'}"contacts"."workspace_id" = ${p()} and "contacts"."id" = "v"."id" returning "contacts"."id"`
  );
});

/** Applies the changes and refreshes updated_at; returns the ids of the contacts updated (those of the workspace that still exist). */
export async function updateContacts(
  db: Executor,
  workspaceId: string,
  changes: ContactChanges,
  updatedAt: string,
): Promise<Set<string>> {
  if (changes.size === 0) return new Set();
  const params: unknown[] = [];
  for (let i = 0; i < changes.size; i++) {
    const firstName = changes.firstNames[i];
    const lastName = changes.lastNames[i];
    const properties = changes.properties[i];
    params.push(
      changes.ids[i],
      firstName !== undefined ? '1' : '0',
      firstName ?? null,
      lastName !== undefined ? '1' : '0',
      lastName ?? null,
      properties !== undefined ? '1' : '0',
      properties ?? null,
      changes.statuses[i] ?? null,
    );
  }
  params.push(updatedAt, workspaceId);
  const res = await db.executeQuery(
    CompiledQuery.raw(updateSql.text(onPostgres(db), changes.size), params) as CompiledQuery<{ id: string }>,
  );
  return new Set(res.rows.map((r) => r.id));
}
