import type { Executor } from '../db/connection.js';
import type { EventsTable } from '../db/schema.js';
import { newId } from '../lib/ids.js';
import { toIso } from '../lib/time.js';
import type { EventRecord, EventType, NewEvent } from './events.types.js';

/**
 * The event stream's table (docs/events.md). Features write their events with `recordEvents`, inside the
 * transaction of the change they report (so an event exists exactly when its change does); the webhook
 * dispatcher fans new events out (`undispatchedEvents`, `markDispatched`); retention prunes old ones.
 */

/** Rows per INSERT statement: SQLite allows 32,766 bound values, a row binds 11. */
const INSERT_CHUNK = 500;

/** Writes events of one workspace, in the caller's transaction. */
export function recordEvents(db: Executor, workspaceId: string, events: readonly NewEvent[], now: string): Promise<void> {
  return insertEventRows(db, events.map((event) => ({ id: newId('evt'), workspaceId, event })), now);
}

/** An open or a click of the tracking writer's batch, with the id it is written under. */
export interface TrackingEventRow {
  id: string;
  workspaceId: string;
  event: NewEvent;
}

/**
 * Opens and clicks of the tracking writer's batch (src/tracking/tracking.writer.ts), of any workspaces, in the
 * caller's transaction: the rows recordEvents would write, under the ids the caller chose (`newId('evt')`; the
 * writer keeps them, to mark a click of a burst by its id later).
 *
 * Written through the query builder. A SQLite variant running fixed-size INSERTs built once (powers of two up to 64
 * rows) was measured and not kept: one transaction per 50 events on the migrated schema, ~40-50 µs per event either
 * way (2 loaded CPUs); SQLite's index B-trees dominate, not building the statement (bench/README.md, bench:track).
 */
export function insertTrackingEvents(db: Executor, rows: readonly TrackingEventRow[], now: string): Promise<void> {
  return insertEventRows(db, rows, now);
}

/** The one mapping of an event to its row, and the chunked INSERT both writers use. */
async function insertEventRows(db: Executor, rows: readonly TrackingEventRow[], now: string): Promise<void> {
  if (!rows.length) return;
  const values = rows.map(({ id, workspaceId, event: e }) => ({
    id,
    workspace_id: workspaceId,
    type: e.type,
    occurred_at: e.occurredAt ?? now,
    contact_id: e.contactId ?? null,
    broadcast_id: e.broadcastId ?? null,
    delivery_id: e.deliveryId ?? null,
    data: JSON.stringify(e.data ?? {}),
    machine: e.machine ? 1 : 0,
    url: e.url ?? null,
  }));
  for (let i = 0; i < values.length; i += INSERT_CHUNK) await db.insertInto('events').values(values.slice(i, i + INSERT_CHUNK)).execute();
}

export function recordEvent(db: Executor, workspaceId: string, event: NewEvent, now: string): Promise<void> {
  return recordEvents(db, workspaceId, [event], now);
}

const COLUMNS = ['id', 'type', 'occurred_at', 'contact_id', 'broadcast_id', 'delivery_id', 'data'] as const;

export function toEventRecord(r: Pick<EventsTable, (typeof COLUMNS)[number]>): EventRecord {
  return {
    id: r.id, type: r.type as EventType, occurredAt: toIso(r.occurred_at), contactId: r.contact_id, broadcastId: r.broadcast_id,
    deliveryId: r.delivery_id, data: JSON.parse(r.data) as Record<string, unknown>,
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

/** Events not yet fanned out to webhooks, oldest first, of every workspace (the dispatcher's claim reads these). */
export async function undispatchedEvents(db: Executor, limit: number, opts: { skipLocked?: boolean } = {}): Promise<(EventRecord & { workspaceId: string })[]> {
  let q = db.selectFrom('events').select([...COLUMNS, 'workspace_id']).where('dispatched', '=', 0).orderBy('id').limit(limit);
  if (opts.skipLocked) q = q.forUpdate().skipLocked();
  return (await q.execute()).map((r) => ({ ...toEventRecord(r), workspaceId: r.workspace_id }));
}

export async function markDispatched(db: Executor, ids: readonly string[]): Promise<void> {
  if (!ids.length) return;
  await db.updateTable('events').set({ dispatched: 1 }).where('id', 'in', ids).execute();
}

/** Deletes up to `limit` events that occurred before `before`; returns how many (retention: a batch at a time). */
export async function pruneEvents(db: Executor, before: string, limit: number): Promise<number> {
  const ids = (await db.selectFrom('events').select('id').where('occurred_at', '<', before).orderBy('occurred_at').limit(limit).execute()).map((r) => r.id);
  if (!ids.length) return 0;
  const res = await db.deleteFrom('events').where('id', 'in', ids).executeTakeFirst();
  return Number(res.numDeletedRows);
}
