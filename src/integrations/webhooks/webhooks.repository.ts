import { sql, type SelectQueryBuilder } from 'kysely';
import { onPostgres } from '../../db/batch-sql.js';
import type { Dialect, Executor } from '../../db/connection.js';
import { lockListenersExclusive } from '../../db/listeners-lock.js';
import type {
  Database,
  WebhookDeliveriesTable,
  WebhookDeliveryStatus,
  WebhookEndpointsTable,
} from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import { toIso } from '../../lib/time.js';
import { webhookStatusesFor, webhookTransition } from './webhooks.state.js';

/**
 * Queries of webhooks (CONTEXT.md). Everything an API call reads or changes names its workspace; the fan-out and
 * the dispatcher serve every workspace, so their claims look across workspaces by design.
 */

// ---- endpoints ------------------------------------------------------------------------------------

export type EndpointRow = Pick<
  WebhookEndpointsTable,
  | 'id'
  | 'workspace_id'
  | 'url'
  | 'event_types'
  | 'description'
  | 'enabled'
  | 'disabled_reason'
  | 'secret'
  | 'previous_secret'
  | 'previous_secret_until'
  | 'failing_since'
  | 'created_at'
  | 'updated_at'
>;

const ENDPOINT_COLUMNS = [
  'id',
  'workspace_id',
  'url',
  'event_types',
  'description',
  'enabled',
  'disabled_reason',
  'secret',
  'previous_secret',
  'previous_secret_until',
  'failing_since',
  'created_at',
  'updated_at',
] as const;

/** Event writers that read "no endpoint" commit first (db/listeners-lock.ts); in the caller's transaction. */
export async function insertEndpoint(db: Executor, row: EndpointRow): Promise<void> {
  if (Number(row.enabled) === 1 && onPostgres(db)) await lockListenersExclusive(db, row.workspace_id);
  await db.insertInto('webhook_endpoints').values(row).execute();
}

export async function getEndpoint(db: Executor, workspaceId: string, id: string): Promise<EndpointRow | undefined> {
  return db
    .selectFrom('webhook_endpoints')
    .select(ENDPOINT_COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The workspace's endpoint of this URL (the oldest, if several), for an automation's webhook step. */
export async function endpointByUrl(db: Executor, workspaceId: string, url: string): Promise<string | undefined> {
  return (
    await db
      .selectFrom('webhook_endpoints')
      .select('id')
      .where('workspace_id', '=', workspaceId)
      .where('url', '=', url)
      .orderBy('id')
      .limit(1)
      .executeTakeFirst()
  )?.id;
}

export async function listEndpoints(
  db: Executor,
  workspaceId: string,
  opts: { limit: number; beforeId?: string },
): Promise<EndpointRow[]> {
  let q = db.selectFrom('webhook_endpoints').select(ENDPOINT_COLUMNS).where('workspace_id', '=', workspaceId);
  if (opts.beforeId) q = q.where('id', '<', opts.beforeId);
  return q.orderBy('id', 'desc').limit(opts.limit).execute();
}

export async function updateEndpoint(
  db: Executor,
  workspaceId: string,
  id: string,
  set: Partial<Omit<EndpointRow, 'id' | 'workspace_id' | 'created_at'>>,
): Promise<EndpointRow | undefined> {
  // Enabling it: as insertEndpoint.
  if (Number(set.enabled) === 1 && onPostgres(db)) await lockListenersExclusive(db, workspaceId);
  return db
    .updateTable('webhook_endpoints')
    .set(set)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .returning(ENDPOINT_COLUMNS)
    .executeTakeFirst();
}

export async function deleteEndpoint(db: Executor, workspaceId: string, id: string): Promise<boolean> {
  const res = await db
    .deleteFrom('webhook_endpoints')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** The enabled endpoints of these workspaces, with their subscriptions (the fan-out). */
export async function enabledEndpointsOf(
  db: Executor,
  workspaceIds: readonly string[],
): Promise<{ id: string; workspaceId: string; eventTypes: string[] }[]> {
  if (!workspaceIds.length) return [];
  const rows = await db
    .selectFrom('webhook_endpoints')
    .select(['id', 'workspace_id', 'event_types'])
    .where('workspace_id', 'in', [...workspaceIds])
    .where('enabled', '=', 1)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    workspaceId: r.workspace_id,
    eventTypes: JSON.parse(r.event_types) as string[],
  }));
}

/** The endpoints of a claimed batch (the dispatcher: URL, secrets, enabled). */
export async function endpointsByIds(db: Executor, ids: readonly string[]): Promise<EndpointRow[]> {
  if (!ids.length) return [];
  return db
    .selectFrom('webhook_endpoints')
    .select(ENDPOINT_COLUMNS)
    .where('id', 'in', [...ids])
    .execute();
}

/** A success: the endpoint is no longer failing. */
export async function clearFailing(db: Executor, endpointIds: readonly string[]): Promise<void> {
  if (!endpointIds.length) return;
  await db
    .updateTable('webhook_endpoints')
    .set({ failing_since: null })
    .where('id', 'in', [...endpointIds])
    .where('failing_since', 'is not', null)
    .execute();
}

/** A failure: the endpoint is failing since now unless it already was; returns since when (null: the endpoint is gone). */
export async function markFailing(db: Executor, endpointId: string, now: string): Promise<string | null> {
  await db
    .updateTable('webhook_endpoints')
    .set({ failing_since: now })
    .where('id', '=', endpointId)
    .where('failing_since', 'is', null)
    .execute();
  const row = await db
    .selectFrom('webhook_endpoints')
    .select('failing_since')
    .where('id', '=', endpointId)
    .executeTakeFirst();
  return row?.failing_since ? toIso(row.failing_since) : null;
}

/** Disables the endpoint (if enabled) and fails what waits for it (the state table's `abandon`); true when it was enabled. */
export async function disableEndpoint(
  db: Executor,
  workspaceId: string,
  endpointId: string,
  reason: string,
  now: string,
): Promise<boolean> {
  const res = await db
    .updateTable('webhook_endpoints')
    .set({ enabled: 0, disabled_reason: reason, updated_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', endpointId)
    .where('enabled', '=', 1)
    .executeTakeFirst();
  await abandonDeliveries(db, workspaceId, endpointId, reason, now);
  return Number(res.numUpdatedRows) > 0;
}

export async function abandonDeliveries(
  db: Executor,
  workspaceId: string,
  endpointId: string,
  reason: string,
  now: string,
): Promise<number> {
  const res = await db
    .updateTable('webhook_deliveries')
    .set({
      status: webhookTransition('PENDING', 'abandon'),
      next_attempt_at: null,
      last_error: reason.slice(0, 500),
      updated_at: now,
    })
    .where('workspace_id', '=', workspaceId)
    .where('endpoint_id', '=', endpointId)
    .where('status', 'in', webhookStatusesFor('abandon'))
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

// ---- deliveries: writing --------------------------------------------------------------------------

export interface NewDelivery {
  id: string;
  workspaceId: string;
  endpointId: string;
  eventId: string | null;
  eventType: string;
  payload: string;
}

/** Rows per INSERT: SQLite allows 32,766 bound values, a row binds 17. */
const INSERT_CHUNK = 500;

/** New PENDING deliveries due now; a delivery of an (endpoint, event) already there is left alone. */
export async function insertDeliveries(db: Executor, deliveries: readonly NewDelivery[], now: string): Promise<void> {
  const rows = deliveries.map((d) => ({
    id: d.id,
    workspace_id: d.workspaceId,
    endpoint_id: d.endpointId,
    event_id: d.eventId,
    event_type: d.eventType,
    payload: d.payload,
    status: 'PENDING' as const,
    attempts: 0,
    next_attempt_at: now,
    lease_owner: null,
    lease_expires_at: null,
    last_status_code: null,
    last_duration_ms: null,
    last_error: null,
    created_at: now,
    updated_at: now,
    delivered_at: null,
  }));
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    await db
      .insertInto('webhook_deliveries')
      .values(rows.slice(i, i + INSERT_CHUNK))
      .onConflict((oc) => oc.columns(['endpoint_id', 'event_id']).doNothing())
      .execute();
  }
}

// ---- deliveries: the dispatcher -------------------------------------------------------------------

export interface ClaimedWebhookDelivery {
  id: string;
  workspaceId: string;
  endpointId: string;
  eventType: string;
  payload: string;
  /** Attempts made, this one included. */
  attempts: number;
}

if (webhookStatusesFor('claim').join() !== 'PENDING,SENDING')
  throw new Error('claimWebhookDeliveries assumes PENDING and SENDING are the claimable statuses');

export interface ClaimOptions {
  /** Deliveries claimed at most. */
  limit: number;
  /** Endpoints whose deliveries are not wanted now (the dispatcher holds as many of theirs as it may). */
  skipEndpoints: readonly string[];
  /** How many more deliveries of this endpoint the dispatcher may take now. */
  room: (endpointId: string) => number;
  /** How many more deliveries of this workspace's endpoints it may take now (so one workspace never fills the hold). */
  workspaceRoom?: (workspaceId: string) => number;
}

/**
 * Claims due deliveries with a lease, fairly: SENDING ones whose lease ran out first (their dispatcher died; they
 * may have arrived already: at least once), then PENDING ones whose time has come, oldest first, but none of the
 * endpoints in `skipEndpoints` and no more of an endpoint than its `room`. So an endpoint with thousands waiting
 * does not shadow the others: once the dispatcher holds its share of it, the claim looks past it (round robin); and
 * once a workspace's endpoints have taken its `workspaceRoom`, past all of them (many endpoints of one workspace).
 * The candidates are read and locked in the caller's transaction (PostgreSQL: FOR UPDATE SKIP LOCKED, so
 * concurrent dispatchers take different ones; SQLite has one writer), then the chosen ones are updated. Each read is a
 * range of the (status, next_attempt_at) index.
 */
export async function claimWebhookDeliveries(
  trx: Executor,
  dialect: Dialect,
  owner: string,
  now: string,
  leaseUntil: string,
  opts: ClaimOptions,
): Promise<ClaimedWebhookDelivery[]> {
  const taken = new Map<string, number>();
  const takenOf = new Map<string, number>();
  const chosen: string[] = [];
  const picked = new Set<string>();
  const skip = new Set(opts.skipEndpoints);
  const skipWorkspaces = new Set<string>();
  /** Reads candidates past the endpoints skipped; true when an endpoint filled up on the way and more may lie past it. */
  const candidates = async (
    base: () => SelectQueryBuilder<
      Database,
      'webhook_deliveries',
      { id: string; endpoint_id: string; workspace_id: string }
    >,
  ) => {
    let q = base();
    if (skip.size) q = q.where('endpoint_id', 'not in', [...skip]);
    if (skipWorkspaces.size) q = q.where('workspace_id', 'not in', [...skipWorkspaces]);
    // Rows an earlier pass picked are still claimable until the UPDATE (and SKIP LOCKED skips other transactions' locks only).
    if (picked.size) q = q.where('id', 'not in', [...picked]);
    const limit = opts.limit - chosen.length;
    q = q.limit(limit);
    if (dialect === 'postgres') q = q.forUpdate().skipLocked();
    const rows = await q.execute();
    let filled = false;
    for (const row of rows) {
      const m = takenOf.get(row.workspace_id) ?? 0;
      if (opts.workspaceRoom && m >= opts.workspaceRoom(row.workspace_id)) {
        skipWorkspaces.add(row.workspace_id);
        filled = true;
        continue;
      }
      const n = taken.get(row.endpoint_id) ?? 0;
      if (n >= opts.room(row.endpoint_id)) {
        skip.add(row.endpoint_id);
        filled = true;
        continue;
      }
      taken.set(row.endpoint_id, n + 1);
      takenOf.set(row.workspace_id, m + 1);
      picked.add(row.id);
      chosen.push(row.id);
    }
    return filled && rows.length === limit;
  };
  const expired = () =>
    trx
      .selectFrom('webhook_deliveries')
      .select(['id', 'endpoint_id', 'workspace_id'])
      .where('status', '=', 'SENDING')
      .where('lease_expires_at', '<', now)
      .orderBy('lease_expires_at');
  const due = () =>
    trx
      .selectFrom('webhook_deliveries')
      .select(['id', 'endpoint_id', 'workspace_id'])
      .where('status', '=', 'PENDING')
      .where('next_attempt_at', '<=', now)
      .orderBy('next_attempt_at');
  // Passes until no endpoint fills up on the way (64 at most): each skips the endpoints the previous one filled, so one
  // claim reaches every endpoint with due work (round robin) when the limit allows.
  for (const base of [expired, due]) {
    for (let pass = 0; pass < 64 && chosen.length < opts.limit; pass++) {
      if (!(await candidates(base))) break;
    }
  }
  if (!chosen.length) return [];
  const rows = await trx
    .updateTable('webhook_deliveries')
    .set({
      status: 'SENDING',
      lease_owner: owner,
      lease_expires_at: leaseUntil,
      attempts: sql`attempts + 1`,
      updated_at: now,
    })
    .where('id', 'in', chosen)
    // Still claimable (a concurrent claim on SQLite cannot happen; on PostgreSQL the rows are locked): belt and braces.
    .where((eb) =>
      eb.or([
        eb.and([eb('status', '=', 'PENDING'), eb('next_attempt_at', '<=', now)]),
        eb.and([eb('status', '=', 'SENDING'), eb('lease_expires_at', '<', now)]),
      ]),
    )
    .returning(['id', 'workspace_id', 'endpoint_id', 'event_type', 'payload', 'attempts'])
    .execute();
  const order = new Map(chosen.map((id, i) => [id, i]));
  return rows
    .sort((a, b) => order.get(a.id)! - order.get(b.id)!)
    .map((r) => ({
      id: r.id,
      workspaceId: r.workspace_id,
      endpointId: r.endpoint_id,
      eventType: r.event_type,
      payload: r.payload,
      attempts: Number(r.attempts),
    }));
}

/** Which of these deliveries still exist, locked until the transaction ends on PostgreSQL (recording outcomes). */
export async function lockDeliveries(trx: Executor, dialect: Dialect, ids: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (let i = 0; i < ids.length; i += INSERT_CHUNK) {
    let q = trx
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('id', 'in', ids.slice(i, i + INSERT_CHUNK));
    if (dialect === 'postgres') q = q.forUpdate();
    found.push(...(await q.execute()).map((r) => r.id));
  }
  return found;
}

/** Keeps this dispatcher's leases alive while it holds deliveries. */
export async function renewWebhookLeases(
  db: Executor,
  owner: string,
  ids: readonly string[],
  leaseUntil: string,
): Promise<void> {
  // Only the ones it still holds: what it let go (outcomes it could not record) must run out and be claimed again.
  for (let i = 0; i < ids.length; i += INSERT_CHUNK) {
    await db
      .updateTable('webhook_deliveries')
      .set({ lease_expires_at: leaseUntil })
      .where('id', 'in', ids.slice(i, i + INSERT_CHUNK))
      .where('lease_owner', '=', owner)
      .where('status', '=', 'SENDING')
      .execute();
  }
}

export interface AttemptRecord {
  deliveryId: string;
  workspaceId: string;
  attemptedAt: string;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

export async function insertAttempts(db: Executor, attempts: readonly AttemptRecord[]): Promise<void> {
  const rows = attempts.map((a) => ({
    id: newId('wha'),
    workspace_id: a.workspaceId,
    delivery_id: a.deliveryId,
    attempted_at: a.attemptedAt,
    status_code: a.statusCode,
    duration_ms: a.durationMs,
    error: a.error?.slice(0, 500) ?? null,
  }));
  for (let i = 0; i < rows.length; i += INSERT_CHUNK)
    await db
      .insertInto('webhook_attempts')
      .values(rows.slice(i, i + INSERT_CHUNK))
      .execute();
}

/**
 * Records successful attempts (the state table's `succeed`) in one statement: the deliveries still SENDING under
 * this dispatcher's lease become SUCCEEDED. Returns how many were recorded (a lease taken over records nothing).
 */
export async function recordSuccesses(
  db: Executor,
  owner: string,
  done: readonly AttemptRecord[],
  now: string,
): Promise<number> {
  if (!done.length) return 0;
  const ids = done.map((d) => d.deliveryId);
  const byId = (value: (d: AttemptRecord) => number | null) =>
    sql<number>`case ${sql.ref('id')} ${sql.join(
      done.map((d) => sql`when ${d.deliveryId} then cast(${value(d)} as integer)`),
      sql` `,
    )} end`;
  const res = await db
    .updateTable('webhook_deliveries')
    .set({
      status: webhookTransition('SENDING', 'succeed'),
      lease_owner: null,
      lease_expires_at: null,
      next_attempt_at: null,
      delivered_at: now,
      updated_at: now,
      last_error: null,
      last_status_code: byId((d) => d.statusCode),
      last_duration_ms: byId((d) => d.durationMs),
    })
    .where('id', 'in', ids)
    .where('status', 'in', webhookStatusesFor('succeed'))
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/** Records a failed attempt: PENDING again at `nextAttemptAt` (`retry`), or FAILED (`fail`) when null. */
export async function recordFailure(
  db: Executor,
  owner: string,
  a: AttemptRecord,
  nextAttemptAt: string | null,
  now: string,
): Promise<boolean> {
  const op = nextAttemptAt ? 'retry' : 'fail';
  const res = await db
    .updateTable('webhook_deliveries')
    .set({
      status: webhookTransition('SENDING', op),
      lease_owner: null,
      lease_expires_at: null,
      next_attempt_at: nextAttemptAt,
      updated_at: now,
      last_status_code: a.statusCode,
      last_duration_ms: a.durationMs,
      last_error: a.error?.slice(0, 500) ?? null,
    })
    .where('id', '=', a.deliveryId)
    .where('status', 'in', webhookStatusesFor(op))
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * Gives claimed deliveries back without an attempt (the state table's release): PENDING again, due at `dueAt`, the
 * claim's count of attempts undone. Only this owner's claims.
 */
export async function releaseDeliveries(
  db: Executor,
  owner: string,
  ids: readonly string[],
  dueAt: string,
  now: string,
): Promise<number> {
  if (!ids.length) return 0;
  const res = await db
    .updateTable('webhook_deliveries')
    .set({
      status: webhookTransition('SENDING', 'release'),
      lease_owner: null,
      lease_expires_at: null,
      next_attempt_at: dueAt,
      attempts: sql`attempts - 1`,
      updated_at: now,
    })
    .where('id', 'in', ids)
    .where('status', 'in', webhookStatusesFor('release'))
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/** Deletes up to `limit` deliveries (and their attempts) created before `before`; returns how many. */
export async function pruneDeliveries(db: Executor, before: string, limit: number): Promise<number> {
  const ids = (
    await db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('created_at', '<', before)
      .orderBy('created_at')
      .limit(limit)
      .execute()
  ).map((r) => r.id);
  if (!ids.length) return 0;
  await db.deleteFrom('webhook_attempts').where('delivery_id', 'in', ids).execute();
  const res = await db.deleteFrom('webhook_deliveries').where('id', 'in', ids).executeTakeFirst();
  return Number(res.numDeletedRows);
}

// ---- deliveries: the API --------------------------------------------------------------------------

const DELIVERY_COLUMNS = [
  'id',
  'endpoint_id',
  'event_id',
  'event_type',
  'status',
  'attempts',
  'next_attempt_at',
  'last_status_code',
  'last_duration_ms',
  'last_error',
  'created_at',
  'delivered_at',
] as const;

export interface WebhookDeliveryRecord {
  id: string;
  eventId: string | null;
  eventType: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastDurationMs: number | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
  attemptLog: { attemptedAt: string; statusCode: number | null; durationMs: number; error: string | null }[];
}

function toRecord(
  r: Pick<WebhookDeliveriesTable, (typeof DELIVERY_COLUMNS)[number]>,
  log: WebhookDeliveryRecord['attemptLog'],
): WebhookDeliveryRecord {
  return {
    id: r.id,
    eventId: r.event_id,
    eventType: r.event_type,
    status: r.status,
    attempts: Number(r.attempts),
    nextAttemptAt: r.status === 'PENDING' ? toIso(r.next_attempt_at) : null,
    lastStatusCode: r.last_status_code === null ? null : Number(r.last_status_code),
    lastDurationMs: r.last_duration_ms === null ? null : Number(r.last_duration_ms),
    lastError: r.last_error,
    createdAt: toIso(r.created_at),
    deliveredAt: toIso(r.delivered_at),
    attemptLog: log,
  };
}

async function withAttempts(
  db: Executor,
  workspaceId: string,
  rows: Pick<WebhookDeliveriesTable, (typeof DELIVERY_COLUMNS)[number]>[],
): Promise<WebhookDeliveryRecord[]> {
  const logs = new Map<string, WebhookDeliveryRecord['attemptLog']>(rows.map((r) => [r.id, []]));
  if (rows.length) {
    const attempts = await db
      .selectFrom('webhook_attempts')
      .select(['delivery_id', 'attempted_at', 'status_code', 'duration_ms', 'error'])
      .where('workspace_id', '=', workspaceId)
      .where(
        'delivery_id',
        'in',
        rows.map((r) => r.id),
      )
      .orderBy('delivery_id')
      .orderBy('id')
      .execute();
    for (const a of attempts) {
      logs.get(a.delivery_id)!.push({
        attemptedAt: toIso(a.attempted_at),
        statusCode: a.status_code === null ? null : Number(a.status_code),
        durationMs: Number(a.duration_ms),
        error: a.error,
      });
    }
  }
  return rows.map((r) => toRecord(r, logs.get(r.id)!));
}

export async function listDeliveries(
  db: Executor,
  workspaceId: string,
  endpointId: string,
  opts: { status?: WebhookDeliveryStatus; limit: number; beforeId?: string },
): Promise<WebhookDeliveryRecord[]> {
  let q = db
    .selectFrom('webhook_deliveries')
    .select(DELIVERY_COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('endpoint_id', '=', endpointId);
  if (opts.status) q = q.where('status', '=', opts.status);
  if (opts.beforeId) q = q.where('id', '<', opts.beforeId);
  return withAttempts(db, workspaceId, await q.orderBy('id', 'desc').limit(opts.limit).execute());
}

export async function getDelivery(
  db: Executor,
  workspaceId: string,
  endpointId: string,
  id: string,
): Promise<WebhookDeliveryRecord | undefined> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select(DELIVERY_COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('endpoint_id', '=', endpointId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? (await withAttempts(db, workspaceId, [row]))[0] : undefined;
}

/** A manual retry (`resend`): a finished delivery is PENDING again, due now, with a fresh round of attempts. */
export async function resendDelivery(
  db: Executor,
  workspaceId: string,
  endpointId: string,
  id: string,
  now: string,
): Promise<boolean> {
  const res = await db
    .updateTable('webhook_deliveries')
    .set({
      status: webhookTransition('FAILED', 'resend'),
      attempts: 0,
      next_attempt_at: now,
      lease_owner: null,
      lease_expires_at: null,
      updated_at: now,
    })
    .where('workspace_id', '=', workspaceId)
    .where('endpoint_id', '=', endpointId)
    .where('id', '=', id)
    .where('status', 'in', webhookStatusesFor('resend'))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function deliveryStatus(
  db: Executor,
  workspaceId: string,
  endpointId: string,
  id: string,
): Promise<WebhookDeliveryStatus | undefined> {
  return (
    await db
      .selectFrom('webhook_deliveries')
      .select('status')
      .where('workspace_id', '=', workspaceId)
      .where('endpoint_id', '=', endpointId)
      .where('id', '=', id)
      .executeTakeFirst()
  )?.status;
}
