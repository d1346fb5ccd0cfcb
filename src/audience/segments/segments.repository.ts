import { sql } from 'kysely';
import type { Dialect, Executor } from '../../db/connection.js';
import type { ContactStatus } from '../../db/schema.js';
import { fromJsonColumn, toJsonColumn } from '../../lib/json.js';
import { toIso } from '../../lib/time.js';
import { toContactRecord, type ContactRecord } from '../contacts/contacts.repository.js';
import { suppressionOfContact } from '../suppressions/suppressions.repository.js';
import { topicDefaults } from '../topics/topics.repository.js';
import { compileFilter, topicReferences, type Filter } from './segments.filter.js';
import { EVALUATION_LIMIT_MS, contactSlices, inRange, sliceRows, type IdRange } from './slices.js';

export interface Segment {
  id: string;
  name: string;
  filter: Filter; // checked when saved (validateFilter); the grammar: segments/CONTEXT.md
  createdAt: string;
  updatedAt: string;
}

/** A contact as segment listings show it. */
export interface SegmentContact {
  id: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  status: ContactStatus;
}

const COLUMNS = ['id', 'name', 'filter', 'created_at', 'updated_at'] as const;

function toSegment(r: { id: string; name: string; filter: string; created_at: string; updated_at: string }): Segment {
  return {
    id: r.id,
    name: r.name,
    filter: fromJsonColumn(r.filter) as Filter,
    createdAt: toIso(r.created_at),
    updatedAt: toIso(r.updated_at),
  };
}

export async function getSegment(db: Executor, workspaceId: string, id: string): Promise<Segment | undefined> {
  const r = await db
    .selectFrom('segments')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return r ? toSegment(r) : undefined;
}

export async function insertSegment(
  db: Executor,
  workspaceId: string,
  s: { id: string; name: string; filter: Filter; createdAt: string },
): Promise<void> {
  await db
    .insertInto('segments')
    .values({
      id: s.id,
      workspace_id: workspaceId,
      name: s.name,
      filter: toJsonColumn(s.filter)!,
      created_at: s.createdAt,
      updated_at: s.createdAt,
    })
    .execute();
}

export async function listSegments(
  db: Executor,
  workspaceId: string,
  opts: { limit: number; beforeId?: string },
): Promise<Segment[]> {
  let q = db.selectFrom('segments').select(COLUMNS).where('workspace_id', '=', workspaceId);
  if (opts.beforeId) q = q.where('id', '<', opts.beforeId);
  return (await q.orderBy('id', 'desc').limit(opts.limit).execute()).map(toSegment);
}

/** Applies a partial update and refreshes updated_at; undefined when the segment is not in the workspace. */
export async function updateSegment(
  db: Executor,
  workspaceId: string,
  id: string,
  values: { name?: string; filter?: Filter },
  updatedAt: string,
): Promise<Segment | undefined> {
  const set: { name?: string; filter?: string; updated_at: string } = { updated_at: updatedAt };
  if (values.name !== undefined) set.name = values.name;
  if (values.filter !== undefined) set.filter = toJsonColumn(values.filter)!;
  const r = await db
    .updateTable('segments')
    .set(set)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .returning(COLUMNS)
    .executeTakeFirst();
  return r ? toSegment(r) : undefined;
}

export async function deleteSegment(db: Executor, workspaceId: string, id: string): Promise<boolean> {
  const res = await db
    .deleteFrom('segments')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** Ids of broadcasts that point at the segment (they keep it from being deleted). */
export async function broadcastsUsingSegment(
  db: Executor,
  workspaceId: string,
  id: string,
  limit: number,
): Promise<string[]> {
  const rows = await db
    .selectFrom('broadcasts')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('segment_id', '=', id)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Which of these ids name a broadcast of the workspace (an engagement condition's broadcastId). The broadcasts table
 * is sending's, above this context; like broadcastsUsingSegment this is a read of ids only, no rule of sending's
 * (the broadcasts API's own messages; an automation's hidden messages are not broadcasts to it, nor here).
 */
export async function existingBroadcastIds(db: Executor, workspaceId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('broadcasts')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('id', 'in', [...new Set(ids)])
    .where('automation_id', 'is', null)
    .execute();
  return new Set(rows.map((r) => r.id));
}

/**
 * The filter compiled for the workspace (compileFilter), with the default subscription of the topics it names
 * read first: one query when it names any.
 */
export async function compiledFilter(db: Executor, dialect: Dialect, workspaceId: string, filter: Filter) {
  return (await compiledFilterWithin(db, dialect, workspaceId, filter))();
}

/**
 * compiledFilter as a function of the slice of contacts a statement is narrowed to (compileFilter's `within`): the
 * topics read once, the SQL made per slice.
 */
export async function compiledFilterWithin(db: Executor, dialect: Dialect, workspaceId: string, filter: Filter) {
  const topics = await topicDefaults(
    db,
    workspaceId,
    topicReferences(filter).map((r) => r.topic),
  );
  return (within?: IdRange) => compileFilter(filter, dialect, workspaceId, topics, within);
}

/** The statement over the workspace's contacts the filter matches, narrowed to one slice. */
async function matching(db: Executor, dialect: Dialect, workspaceId: string, filter: Filter) {
  const condition = await compiledFilterWithin(db, dialect, workspaceId, filter);
  const all = db.selectFrom('contacts').where('contacts.workspace_id', '=', workspaceId);
  return (range: IdRange) => inRange(all.where(condition(range)), range);
}

/** The workspace's contacts the filter matches, whatever their status, newest first (evaluated in slices). */
export async function listMatchingContacts(
  db: Executor,
  dialect: Dialect,
  workspaceId: string,
  filter: Filter,
  opts: { limit: number; beforeId?: string },
): Promise<SegmentContact[]> {
  const out: SegmentContact[] = [];
  const inSlice = await matching(db, dialect, workspaceId, filter);
  for await (const range of contactSlices(db, dialect, workspaceId, {
    rows: sliceRows(filter),
    order: 'desc',
    before: opts.beforeId,
    limitMs: EVALUATION_LIMIT_MS,
  })) {
    const rows = await inSlice(range)
      .select(['contacts.id', 'contacts.email', 'contacts.first_name', 'contacts.last_name', 'contacts.status'])
      .orderBy('contacts.id', 'desc')
      .limit(opts.limit - out.length)
      .execute();
    for (const r of rows)
      out.push({ id: r.id, email: r.email, firstName: r.first_name, lastName: r.last_name, status: r.status });
    if (out.length >= opts.limit) break;
  }
  return out;
}

/** How many contacts the filter matches, and how many of those are SUBSCRIBED (one query per slice). */
export async function countMatchingContacts(
  db: Executor,
  dialect: Dialect,
  workspaceId: string,
  filter: Filter,
): Promise<{ count: number; subscribed: number }> {
  const total = { count: 0, subscribed: 0 };
  const inSlice = await matching(db, dialect, workspaceId, filter);
  for await (const range of contactSlices(db, dialect, workspaceId, {
    rows: sliceRows(filter),
    order: 'asc',
    limitMs: EVALUATION_LIMIT_MS,
  })) {
    const row = await inSlice(range)
      .select((eb) => [
        eb.fn.countAll().as('count'),
        eb.fn
          .coalesce(eb.fn.sum(eb.case().when('contacts.status', '=', 'SUBSCRIBED').then(1).else(0).end()), eb.lit(0))
          .as('subscribed'),
      ])
      .executeTakeFirstOrThrow();
    total.count += Number(row.count);
    total.subscribed += Number(row.subscribed);
  }
  return total;
}

/** Whether one contact of the workspace matches the filter now (an automation's branch, trigger filter, segment entry). */
export async function contactMatches(
  db: Executor,
  dialect: Dialect,
  workspaceId: string,
  contactId: string,
  filter: Filter,
): Promise<boolean> {
  const row = await db
    .selectFrom('contacts')
    .select('contacts.id')
    .where('contacts.workspace_id', '=', workspaceId)
    .where('contacts.id', '=', contactId)
    .where(await compiledFilter(db, dialect, workspaceId, filter))
    .executeTakeFirst();
  return row !== undefined;
}

/** A contact that is not in the database (an automation's simulation of a made-up contact). */
export interface ImaginedContact {
  email: string;
  firstName: string | null;
  lastName: string | null;
  properties: Record<string, unknown>;
  status: ContactStatus;
  createdAt: string;
  /** Every topic of the workspace with the contact's choice (the default of the others does not apply: all are listed). */
  topics: { id: string; subscribed: boolean }[];
}

/**
 * Whether a made-up contact would match the filter: the very SQL the segment compiles to, run against a `contacts`
 * and a `contact_topics` of one contact that common table expressions put in place of the tables (their names
 * shadow the tables' in both databases), so its answer is the database's, not a second evaluator's. Reads nothing.
 */
export async function imaginedContactMatches(
  db: Executor,
  dialect: Dialect,
  workspaceId: string,
  c: ImaginedContact,
  filter: Filter,
): Promise<boolean> {
  const pg = dialect === 'postgres';
  const json = pg ? sql`cast(${JSON.stringify(c.properties)} as jsonb)` : sql`${JSON.stringify(c.properties)}`;
  const ts = pg ? sql`cast(${c.createdAt} as timestamptz)` : sql`${c.createdAt}`;
  const id = 'ct_imagined';
  const contact = sql`select cast(${id} as text) as id, cast(${workspaceId} as text) as workspace_id, cast(${c.email} as text) as email,
    cast(${c.firstName} as text) as first_name, cast(${c.lastName} as text) as last_name, ${json} as properties, cast(${c.status} as text) as status,
    ${ts} as created_at, ${ts} as updated_at`;
  const topicRows = c.topics.length
    ? sql.join(
        c.topics.map(
          (t) =>
            sql`select cast(${workspaceId} as text) as workspace_id, cast(${id} as text) as contact_id, cast(${t.id} as text) as topic_id, ${t.subscribed ? 1 : 0} as subscribed, ${ts} as updated_at`,
        ),
        sql` union all `,
      )
    : sql`select cast(null as text) as workspace_id, cast(null as text) as contact_id, cast(null as text) as topic_id, 0 as subscribed, ${ts} as updated_at where 1 = 0`;
  const where = await compiledFilter(db, dialect, workspaceId, filter);
  const r = await sql<{
    one: number;
  }>`with contacts as (${contact}), contact_topics as (${topicRows}) select 1 as one from contacts where ${where}`.execute(
    db,
  );
  return r.rows.length > 0;
}

/** Ids of the workspace's contacts the filter matches (a segment trigger's members at activation), in pages by id. */
export async function matchingContactIds(
  db: Executor,
  dialect: Dialect,
  workspaceId: string,
  filter: Filter,
  opts: { afterId?: string; limit: number },
): Promise<string[]> {
  // Not a slice: a page ends at its limit, so the broadcast conditions probe contact by contact (no `within`).
  let q = (await matching(db, dialect, workspaceId, filter))({}).select('contacts.id');
  if (opts.afterId) q = q.where('contacts.id', '>', opts.afterId);
  return (await q.orderBy('contacts.id').limit(opts.limit).execute()).map((r) => r.id);
}

/**
 * The contacts a filter matches (every contact when `filter` is null), whatever their status, oldest first,
 * `pageSize` at a time, each with whether its address is suppressed (the CSV export): each page is found by cursor
 * (ids after the last one yielded), evaluating the filter a slice of contacts at a time (slices.ts), so neither the
 * event loop nor memory holds more than a page. Without a filter a page is one index range of `pageSize` contacts and
 * needs no slices (finding a slice's end walks the index: 30 ms of each page at 1,000,000 contacts on SQLite).
 * Whether a contact is suppressed comes with it, by a left join probing the suppression list's index per contact: a
 * second query per page, or an EXISTS column, cost more on PostgreSQL (bench/README.md, bench:segments). The caller
 * consumes a page before the next is read.
 */
export async function* pagesOfMatchingContacts(
  db: Executor,
  dialect: Dialect,
  workspaceId: string,
  filter: Filter | null,
  pageSize = 500,
): AsyncGenerator<(ContactRecord & { suppressed: boolean })[]> {
  const condition = filter ? await compiledFilterWithin(db, dialect, workspaceId, filter) : null;
  const rowsPerSlice = sliceRows(filter);
  const whole = async function* (after: string | undefined): AsyncGenerator<IdRange> {
    yield { after };
  };
  let after: string | undefined;
  for (;;) {
    const rows: (Parameters<typeof toContactRecord>[0] & { suppression: string | null })[] = [];
    const ranges = condition
      ? contactSlices(db, dialect, workspaceId, { rows: rowsPerSlice, order: 'asc', after })
      : whole(after);
    for await (const range of ranges) {
      let q = db
        .selectFrom('contacts')
        .select([
          'contacts.id',
          'contacts.email',
          'contacts.first_name',
          'contacts.last_name',
          'contacts.properties',
          'contacts.status',
          'contacts.timezone',
          'contacts.created_at',
          'contacts.updated_at',
        ])
        .leftJoin('suppressions', suppressionOfContact)
        .select('suppressions.id as suppression')
        .where('contacts.workspace_id', '=', workspaceId);
      if (condition) q = q.where(condition(range));
      rows.push(
        ...(await inRange(q, range)
          .orderBy('contacts.id', 'asc')
          .limit(pageSize - rows.length)
          .execute()),
      );
      if (rows.length >= pageSize) break;
    }
    if (rows.length === 0) return;
    // Object.assign, not a spread: a copy of each record made V8 promote its pages, and the server grew with the
    // export (by 175 MB over 1,000,000 contacts on SQLite; bench/README.md, bench:segments).
    yield rows.map((r) => Object.assign(toContactRecord(r), { suppressed: r.suppression !== null }));
    if (rows.length < pageSize) return;
    after = rows[rows.length - 1]!.id;
  }
}
