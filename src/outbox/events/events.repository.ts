import { CompiledQuery, sql } from 'kysely';
import { BatchSql, onPostgres, valueTuples } from '../../db/batch-sql.js';
import type { Executor } from '../../db/connection.js';
import { lockListenersShared } from '../../db/listeners-lock.js';
import type { EventsTable } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import { toIso } from '../../lib/time.js';
import { ROUTED_EVENT_TYPES, type EventRecord, type EventType, type NewEvent } from './events.types.js';

/**
 * The event stream's table (docs/events.md). Features write their events with `recordEvents`, inside the
 * transaction of the change they report (so an event exists exactly when its change does); the webhook
 * dispatcher fans new events out (`claimUndispatchedEvents`, `eventsByIds`); retention prunes old ones.
 */

/** The ids of transactional emails (lib/ids.ts `em`), whose events say `data.emailId` instead of a broadcastId. */
const EMAIL_ID_PREFIX = 'em_';

/** Rows per INSERT statement: SQLite allows 32,766 bound values, a row binds 12. */
const INSERT_CHUNK = 1000;
const EVENT_COLUMNS = [
  'id',
  'workspace_id',
  'type',
  'occurred_at',
  'contact_id',
  'broadcast_id',
  'delivery_id',
  'data',
  'machine',
  'url',
  'routed',
  'dispatched',
] as const;

/**
 * The events' multi-row INSERT, as SQL text made once per size (db/batch-sql.ts) rather than built through the
 * query builder for every batch. An import writes 2,000 events per batch of 1,000 contacts: building them with
 * Kysely cost more than a third of what SQLite takes to insert them (bench/README.md, bench:import). For the
 * tracking writer's batches of ~50 the two made no measurable difference (bench/README.md, bench:track).
 */
const insertSql = new BatchSql(
  (rows, p) =>
    `insert into "events" (${EVENT_COLUMNS.map((c) => `"${c}"`).join(', ')}) values ${valueTuples(rows, EVENT_COLUMNS.length, p)}`,
  8,
);

/** Writes events of one workspace, in the caller's transaction. */
export function recordEvents(
  db: Executor,
  workspaceId: string,
  events: readonly NewEvent[],
  now: string,
): Promise<void> {
  return insertEventRows(
    db,
    events.map((event) => ({ id: newId('evt'), workspaceId, event })),
    now,
  );
}

/** An open or a click of the tracking writer's batch, with the id it is written under. */
export interface TrackingEventRow {
  id: string;
  workspaceId: string;
  event: NewEvent;
}

/**
 * Opens and clicks of the tracking writer's batch (src/sending/tracking/tracking.writer.ts), of any workspaces, in the
 * caller's transaction: the rows recordEvents would write, under the ids the caller chose (`newId('evt')`; the
 * writer keeps them, to mark a click of a burst by its id later).
 *
 * The same INSERT as recordEvents'. For these batches (~50 events per transaction) how the statement is built makes
 * no measurable difference: ~40-50 µs per event either way on the migrated schema (2 loaded CPUs), SQLite's index
 * B-trees dominate (bench/README.md, bench:track).
 */
export function insertTrackingEvents(db: Executor, rows: readonly TrackingEventRow[], now: string): Promise<void> {
  return insertEventRows(db, rows, now);
}

/**
 * The workspaces of these rows whose events of the routed types the automation intake must read: those with an ACTIVE
 * automation now, read in the writing transaction (one index probe per call, none for opens, clicks and sends). A
 * workspace without one writes its events as routed: nothing would start from them (an automation activated later
 * starts from later events), and the runs of a PAUSED automation check their contact at their next step. Without
 * this an import wrote every contact.created and contact.subscribed into the intake's index, and the intake marked
 * each one, for nothing in most workspaces.
 *
 * The read is exact only on SQLite in a transaction: one writer at a time, so no automation is activated between the
 * read and the commit (webhook endpoints below have a lock of their own on PostgreSQL; automations, whose routed
 * events are a few types, not every email.sent, do not). On PostgreSQL, or without a transaction,
 * an automation activated meanwhile would miss events committed after it was: every workspace of the rows is routed
 * there (the intake marks what nothing wants).
 */
async function workspacesRouting(
  db: Executor,
  rows: readonly TrackingEventRow[],
  postgres: boolean,
): Promise<Set<string>> {
  const candidates = new Set<string>();
  for (const r of rows) if (ROUTED_EVENT_TYPES.has(r.event.type)) candidates.add(r.workspaceId);
  if (!candidates.size || postgres || !db.isTransaction) return candidates;
  const active = await db
    .selectFrom('automations')
    .select('workspace_id')
    .distinct()
    .where('status', '=', 'ACTIVE')
    .where('workspace_id', 'in', [...candidates])
    .execute();
  return new Set(active.map((r) => r.workspace_id));
}

/**
 * The workspaces of these rows whose events the webhook fan-out must take (`dispatched = 0`): those with an enabled
 * endpoint, read in the writing transaction. The read must be exact: an endpoint committed between this read and
 * this transaction's commit would otherwise miss events that happen after it was created (docs/webhooks.md). On
 * SQLite one writer at a time makes it so: this transaction holds (or, if it has written nothing yet, would fail to
 * take) the write lock, so no endpoint can be created or enabled between the read and the commit. On PostgreSQL the
 * workspace's listeners lock does (db/listeners-lock.ts: taken shared here, exclusive by whoever creates or enables an
 * endpoint). Outside a transaction every event is written undispatched. A workspace with no enabled endpoint writes
 * its events as dispatched, so the fan-out neither indexes nor marks them: an import wrote every contact's two events
 * into the fan-out's index, and the fan-out then claimed each one for nothing, ~8-11 µs of ~48 µs of server CPU per
 * imported row (bench/README.md, bench:import); on PostgreSQL a send's marking was the busiest statement.
 */
async function workspacesListening(
  db: Executor,
  rows: readonly TrackingEventRow[],
  postgres: boolean,
): Promise<Set<string> | 'all'> {
  // Outside a transaction the read and the insert are two statements, and another transaction may run between them.
  if (!db.isTransaction) return 'all';
  const candidates = new Set<string>();
  for (const r of rows) candidates.add(r.workspaceId);
  if (postgres) await lockListenersShared(db, candidates);
  const listening = await db
    .selectFrom('webhook_endpoints')
    .select('workspace_id')
    .distinct()
    .where('enabled', '=', 1)
    .where('workspace_id', 'in', [...candidates])
    .execute();
  return new Set(listening.map((r) => r.workspace_id));
}

/** The one mapping of an event to its row, and the chunked INSERT both writers use. */
async function insertEventRows(db: Executor, rows: readonly TrackingEventRow[], now: string): Promise<void> {
  if (!rows.length) return;
  const postgres = onPostgres(db);
  const routing = await workspacesRouting(db, rows, postgres);
  const listening = await workspacesListening(db, rows, postgres);
  for (let start = 0; start < rows.length; start += INSERT_CHUNK) {
    const end = Math.min(rows.length, start + INSERT_CHUNK);
    const params: unknown[] = [];
    for (let i = start; i < end; i++) {
      const { id, workspaceId, event: e } = rows[i]!;
      // A transactional email's message (docs/emails.md): its hidden broadcast's id is the email's (`em_…`); the event
      // carries it as `data.emailId`, with no broadcastId (there is no broadcast to look up).
      const emailId = e.broadcastId?.startsWith(EMAIL_ID_PREFIX) ? e.broadcastId : null;
      params.push(
        id,
        workspaceId,
        e.type,
        e.occurredAt ?? now,
        e.contactId ?? null,
        emailId ? null : (e.broadcastId ?? null),
        e.deliveryId ?? null,
        JSON.stringify(emailId ? { ...e.data, emailId } : (e.data ?? {})),
        e.machine ? 1 : 0,
        e.url ?? null,
        ROUTED_EVENT_TYPES.has(e.type) && routing.has(workspaceId) ? 0 : 1,
        listening === 'all' || listening.has(workspaceId) ? 0 : 1,
      );
    }
    await db.executeQuery(CompiledQuery.raw(insertSql.text(postgres, end - start), params));
  }
}

export function recordEvent(db: Executor, workspaceId: string, event: NewEvent, now: string): Promise<void> {
  return recordEvents(db, workspaceId, [event], now);
}

const COLUMNS = ['id', 'type', 'occurred_at', 'contact_id', 'broadcast_id', 'delivery_id', 'data'] as const;

export function toEventRecord(r: Pick<EventsTable, (typeof COLUMNS)[number]>): EventRecord {
  return {
    id: r.id,
    type: r.type as EventType,
    occurredAt: toIso(r.occurred_at),
    contactId: r.contact_id,
    broadcastId: r.broadcast_id,
    deliveryId: r.delivery_id,
    data: JSON.parse(r.data) as Record<string, unknown>,
  };
}

export interface EventFilter {
  type?: EventType;
  contactId?: string;
  broadcastId?: string;
  /** Events that occurred at or after this time. */
  since?: string;
  limit: number;
  beforeId?: string;
}

/** A workspace's events, newest first. */
export async function listEvents(db: Executor, workspaceId: string, f: EventFilter): Promise<EventRecord[]> {
  let q = db.selectFrom('events').select(COLUMNS).where('workspace_id', '=', workspaceId);
  if (f.type) q = q.where('type', '=', f.type);
  if (f.contactId) q = q.where('contact_id', '=', f.contactId);
  if (f.broadcastId) q = q.where('broadcast_id', '=', f.broadcastId);
  if (f.since) q = q.where('occurred_at', '>=', f.since);
  if (f.beforeId) q = q.where('id', '<', f.beforeId);
  return (await q.orderBy('id', 'desc').limit(f.limit).execute()).map(toEventRecord);
}

/**
 * The events of transactional emails' deliveries (docs/emails.md): they have a delivery and no broadcast, and the
 * partial index `events_email` (migration 0036) holds exactly them; its predicate is repeated here so that both
 * databases use it. Newest first, at most `limit`.
 */
export async function transactionalEventsOf(
  db: Executor,
  workspaceId: string,
  deliveryIds: readonly string[],
  limit: number,
): Promise<EventRecord[]> {
  if (!deliveryIds.length) return [];
  const rows = await db
    .selectFrom('events')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('broadcast_id', 'is', null)
    .where('delivery_id', 'is not', null)
    .where('delivery_id', 'in', [...deliveryIds])
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map(toEventRecord);
}

/** An event not yet fanned out, as far as the fan-out needs to know which endpoints want it. */
export interface UndispatchedEvent {
  id: string;
  workspaceId: string;
  type: EventType;
}

/**
 * Takes up to `limit` events not yet fanned out to webhooks, oldest first, of every workspace, and marks them
 * dispatched, in one statement (the fan-out's claim; its transaction makes the deliveries). Returns their id,
 * workspace and type, in id order. On PostgreSQL the events are taken FOR UPDATE SKIP LOCKED: concurrent workers
 * take other events.
 *
 * The fan-out reads the whole event (eventsByIds) only when an endpoint wants it: most events have none (every
 * imported contact writes two). A SELECT of whole events then an UPDATE … WHERE id IN (500 ids) cost ~7 µs per event
 * during an import, a quarter of the server's CPU (bench/README.md, bench:import).
 */
export async function claimUndispatchedEvents(
  db: Executor,
  limit: number,
  opts: { skipLocked?: boolean } = {},
): Promise<UndispatchedEvent[]> {
  const rows = await db
    .updateTable('events')
    .set({ dispatched: 1 })
    .where('id', 'in', (eb) => {
      const oldest = eb.selectFrom('events').select('id').where('dispatched', '=', 0).orderBy('id').limit(limit);
      return opts.skipLocked ? oldest.forUpdate().skipLocked() : oldest;
    })
    .returning(['id', 'workspace_id', 'type'])
    .execute();
  return rows
    .map((r) => ({ id: r.id, workspaceId: r.workspace_id, type: r.type as EventType }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Events by id (any workspace: the fan-out's, of ids it claimed), in no particular order. */
export async function eventsByIds(db: Executor, ids: readonly string[]): Promise<EventRecord[]> {
  const out: EventRecord[] = [];
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db
      .selectFrom('events')
      .select(COLUMNS)
      .where('id', 'in', ids.slice(i, i + 500))
      .execute();
    for (const r of rows) out.push(toEventRecord(r));
  }
  return out;
}

/** Deletes up to `limit` events that occurred before `before`; returns how many (retention: a batch at a time). */
export async function pruneEvents(db: Executor, before: string, limit: number): Promise<number> {
  const ids = (
    await db
      .selectFrom('events')
      .select('id')
      .where('occurred_at', '<', before)
      .orderBy('occurred_at')
      .limit(limit)
      .execute()
  ).map((r) => r.id);
  if (!ids.length) return 0;
  const res = await db.deleteFrom('events').where('id', 'in', ids).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/**
 * Adds one tracked event of `bytes` to the workspace's use of the current `minute` (`track_quota`; a new minute starts
 * the counters over) and returns the use, this event included. In the caller's transaction, the one that writes the
 * event: a refused event (rolled back) is not counted, and the upsert locks the workspace's row until the commit.
 */
export async function countTrackedEvent(
  db: Executor,
  workspaceId: string,
  minute: number,
  bytes: number,
): Promise<{ events: number; bytes: number }> {
  const row = await db
    .insertInto('track_quota')
    .values({ workspace_id: workspaceId, minute, events: 1, bytes })
    .onConflict((oc) =>
      oc.column('workspace_id').doUpdateSet({
        events: sql<number>`case when track_quota.minute = excluded.minute then track_quota.events + 1 else 1 end`,
        bytes: sql<number>`case when track_quota.minute = excluded.minute then track_quota.bytes + excluded.bytes else excluded.bytes end`,
        minute: sql<number>`excluded.minute`,
      }),
    )
    .returning(['events', 'bytes'])
    .executeTakeFirstOrThrow();
  return { events: Number(row.events), bytes: Number(row.bytes) };
}
