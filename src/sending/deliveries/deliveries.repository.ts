import crypto from 'node:crypto';
import { PostgresAdapter, sql, type ExpressionBuilder, type SelectQueryBuilder } from 'kysely';
import type { Dialect, Executor } from '../../db/connection.js';
import { Precompiled } from '../../db/precompiled.js';
import type { Database, DeliveriesTable, DeliveryStatus } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import { OUTBOX_RESPONSE } from '../../mail/transport.js';
import { toIso } from '../../lib/time.js';
import { recordBroadcastMove } from '../broadcasts/broadcasts.events.js';
import { broadcastStatusesFor, transition } from '../broadcasts/broadcasts.state.js';
import type { BounceClass } from '../../mail/classify.js';
import { OPEN_STATUSES, nextStatus, statusesFor } from './deliveries.state.js';
import type { ClaimedDelivery, MaterializationJob } from './store.js';

/**
 * Queries of the delivery pipeline. Workers serve every workspace, so claiming and the scheduler look
 * across workspaces by design; everything that reads or changes one broadcast's rows names its workspace.
 */

// ---- the scheduler ------------------------------------------------------------------------------

/**
 * Due SCHEDULED broadcasts start (the broadcast state table's `start`). One UPDATE: of several workers,
 * exactly one wins each.
 */
export async function startDueBroadcasts(db: Executor, now: string): Promise<{ id: string; workspaceId: string }[]> {
  const from = broadcastStatusesFor('start');
  const rows = await db.updateTable('broadcasts').set({ status: 'SENDING', updated_at: now })
    .where('status', 'in', from).where('send_at', '<=', now)
    .returning(['id', 'workspace_id', 'name']).execute();
  // Only SCHEDULED broadcasts start (asserted below); the caller's transaction holds the moves and their events.
  for (const r of rows) await recordBroadcastMove(db, r.workspace_id, r.id, 'SCHEDULED', 'SENDING', now, { name: r.name, started: 'by the scheduler' });
  return rows.map((r) => ({ id: r.id, workspaceId: r.workspace_id }));
}
if (broadcastStatusesFor('start').join() !== 'SCHEDULED' || transition('SCHEDULED', 'start') !== 'SENDING') throw new Error('startDueBroadcasts assumes start leads from SCHEDULED to SENDING');

// ---- materialising the audience -----------------------------------------------------------------

/** Takes the lease on one SENDING broadcast whose audience is not yet fully in the deliveries table. */
export async function claimMaterialization(db: Executor, owner: string, now: string, leaseUntil: string): Promise<MaterializationJob | undefined> {
  const free = (eb: ExpressionBuilder<Database, 'broadcasts'>) =>
    eb.and([eb('status', '=', 'SENDING'), eb('materialized_at', 'is', null), eb.or([eb('materialize_lease_until', 'is', null), eb('materialize_lease_until', '<', now)])]);
  const candidate = await db.selectFrom('broadcasts').select('id').where(free).orderBy('updated_at').limit(1).executeTakeFirst();
  if (!candidate) return undefined;
  const row = await db.updateTable('broadcasts').set({ materialize_owner: owner, materialize_lease_until: leaseUntil })
    .where('id', '=', candidate.id).where(free)
    .returning(['id', 'workspace_id', 'segment_id', 'topic_id', 'materialize_cursor']).executeTakeFirst();
  return row ? { broadcastId: row.id, workspaceId: row.workspace_id, segmentId: row.segment_id, topicId: row.topic_id, cursor: row.materialize_cursor } : undefined;
}

/** Extends the lease; false if it was lost or the broadcast is no longer SENDING (canceled): stop. */
export async function renewMaterialization(db: Executor, workspaceId: string, broadcastId: string, owner: string, leaseUntil: string): Promise<boolean> {
  const res = await db.updateTable('broadcasts').set({ materialize_lease_until: leaseUntil })
    .where('workspace_id', '=', workspaceId).where('id', '=', broadcastId).where('materialize_owner', '=', owner)
    .where('status', '=', 'SENDING').where('materialized_at', 'is', null).executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * `n` unsubscribe tokens: 24 bytes of the CSPRNG each (base64url), drawn in one call. A call of crypto.randomBytes
 * costs ~10 µs or more whatever its size (lib/random.ts): one per token was ~10 ms of CPU per batch of 1,000
 * (1.1 s of the CPU profile of five materialisations of 22,824 recipients, bench:segments on PostgreSQL).
 */
export function unsubscribeTokens(n: number): string[] {
  const bytes = crypto.randomBytes(24 * n);
  return Array.from({ length: n }, (_, i) => bytes.toString('base64url', 24 * i, 24 * (i + 1)));
}

/**
 * Inserts one batch of recipients (a recipient already there is left alone: the unique index decides). One statement
 * of constant text whatever the batch's size, its values in a few parameters: on PostgreSQL one array per column
 * (unnest), on SQLite one JSON array of rows (json_each). Built through the query builder, a 1,000-row insert of
 * every column (19,000 parameters) cost 8 ms of CPU to build and compile alone; the whole batch took 17–21 ms of
 * CPU in this process on SQLite (the database's own work included) and 16–19 ms on PostgreSQL, now 7–8 ms and
 * 7–10 ms (the benchmark's data, bench/segments.bench.ts).
 */
export async function insertDeliveries(db: Executor, workspaceId: string, broadcastId: string, recipients: { contactId: string; email: string }[], now: string): Promise<void> {
  if (!recipients.length) return;
  const ids = recipients.map(() => newId('dlv'));
  const tokens = unsubscribeTokens(recipients.length);
  const columns = sql`insert into deliveries (id, workspace_id, broadcast_id, contact_id, email, status, attempts, next_attempt_at, unsubscribe_token, created_at, updated_at)`;
  // The partial unique index of broadcasts' recipients (a run's messages, automation_run_id set, have their own).
  const onConflict = sql`on conflict (broadcast_id, contact_id) where automation_run_id is null do nothing`;
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`${columns}
      select i, ${workspaceId}, ${broadcastId}, c, e, 'QUEUED', 0, ${now}::timestamptz, t, ${now}::timestamptz, ${now}::timestamptz
      from unnest(${ids}::text[], ${recipients.map((r) => r.contactId)}::text[], ${recipients.map((r) => r.email)}::text[], ${tokens}::text[]) as x(i, c, e, t)
      ${onConflict}`.execute(db);
    return;
  }
  const rows = JSON.stringify(recipients.map((r, n) => [ids[n], r.contactId, r.email, tokens[n]]));
  await sql`${columns}
    select value ->> 0, ${workspaceId}, ${broadcastId}, value ->> 1, value ->> 2, 'QUEUED', 0, ${now}, value ->> 3, ${now}, ${now}
    from json_each(${rows}) where true
    ${onConflict}`.execute(db);
}

/**
 * PostgreSQL: one batch of a materialisation in one statement (so one transaction, without BEGIN and COMMIT round
 * trips): the lease check and its renewal, the cursor (and, when `done`, the broadcast marked materialised and its
 * lease released), and the recipients' insert, which happens only if the lease was this owner's. What
 * renewMaterialization + insertDeliveries + advanceMaterialization do in a transaction, five round trips in one:
 * BEGIN, the renewal, the cursor's update and COMMIT took 4.2 ms a batch besides the insert (bench:segments' 22,824
 * recipients on PostgreSQL, 40 transactions: 172 ms). False when the lease was lost (nothing written). The audience was
 * read ahead, outside this statement: a contact deleted since is left out (the delete's foreign key would otherwise
 * fail the batch; one deleted while this statement runs still can, and the caller reads the batch again).
 */
export async function writeMaterializationBatch(db: Executor, workspaceId: string, broadcastId: string, owner: string, leaseUntil: string, recipients: { contactId: string; email: string }[], cursor: string | null, done: boolean, now: string): Promise<boolean> {
  const ids = recipients.map(() => newId('dlv'));
  const tokens = unsubscribeTokens(recipients.length);
  const set = done ? sql`materialize_cursor = ${cursor}, materialized_at = ${now}::timestamptz, materialize_owner = null, materialize_lease_until = null`
    : sql`materialize_cursor = ${cursor}, materialize_lease_until = ${leaseUntil}::timestamptz`;
  const r = await sql<{ renewed: number }>`with lease as (
      update broadcasts set ${set}
      where workspace_id = ${workspaceId} and id = ${broadcastId} and materialize_owner = ${owner} and status = 'SENDING' and materialized_at is null
      returning id
    ), inserted as (
      insert into deliveries (id, workspace_id, broadcast_id, contact_id, email, status, attempts, next_attempt_at, unsubscribe_token, created_at, updated_at)
      select i, ${workspaceId}, ${broadcastId}, c, e, 'QUEUED', 0, ${now}::timestamptz, t, ${now}::timestamptz, ${now}::timestamptz
      from unnest(${ids}::text[], ${recipients.map((x) => x.contactId)}::text[], ${recipients.map((x) => x.email)}::text[], ${tokens}::text[]) as x(i, c, e, t)
      where exists (select 1 from lease) and exists (select 1 from contacts where contacts.workspace_id = ${workspaceId} and contacts.id = x.c)
      on conflict (broadcast_id, contact_id) where automation_run_id is null do nothing
    )
    select count(*)::int as renewed from lease`.execute(db);
  return Number(r.rows[0]?.renewed ?? 0) > 0;
}

/**
 * PostgreSQL, on a connection held for it (db/held-connection.ts): a read-only transaction and, in it, a cursor over the
 * audience's recipients in contact id order (audience-reader.ts). Planned as cursors are, for their first rows: an index
 * scan in id order whose first batch comes at once (bench/README.md, "bench:segments", 2026-11-28: 0.93-0.96x the
 * hand-written SQL, against 0.82x for a plan of all its rows, a scan and a sort).
 */
export async function declareAudienceCursor(conn: Executor, audience: SelectQueryBuilder<Database, 'contacts', object>, after: string | null): Promise<void> {
  let q = audience.select(['contacts.id', 'contacts.email']).orderBy('contacts.id');
  if (after !== null) q = q.where('contacts.id', '>', after);
  const compiled = q.compile();
  await sql`begin read only`.execute(conn);
  await conn.executeQuery({ ...compiled, sql: `declare audience no scroll cursor for ${compiled.sql}` });
}

/** The next `rows` recipients of the cursor declareAudienceCursor declared on this connection (fewer at its end). */
export async function fetchAudienceCursor(conn: Executor, rows: number): Promise<{ contactId: string; email: string }[]> {
  const r = await sql<{ id: string; email: string }>`fetch forward ${sql.lit(rows)} from audience`.execute(conn);
  return r.rows.map((x) => ({ contactId: x.id, email: x.email }));
}

/**
 * The message of an automation run's send step (docs/automations.md): one QUEUED delivery, due now, in the
 * caller's transaction (the run's step). The pipeline sends it as any other: suppression, pacing, tracking, DKIM,
 * VERP, the hand-off rule. Returns its id.
 */
export async function insertRunDelivery(db: Executor, workspaceId: string, broadcastId: string, runId: string, recipient: { contactId: string; email: string }, now: string): Promise<string> {
  const id = newId('dlv');
  await db.insertInto('deliveries').values({
    id, workspace_id: workspaceId, broadcast_id: broadcastId, contact_id: recipient.contactId, email: recipient.email, status: 'QUEUED', attempts: 0,
    next_attempt_at: now, unsubscribe_token: crypto.randomBytes(24).toString('base64url'), created_at: now, updated_at: now, automation_run_id: runId,
  } as never).execute();
  return id;
}

export async function advanceMaterialization(db: Executor, workspaceId: string, broadcastId: string, cursor: string | null, done: boolean, now: string): Promise<void> {
  await db.updateTable('broadcasts').set({ materialize_cursor: cursor, ...(done ? { materialized_at: now, materialize_owner: null, materialize_lease_until: null } : {}) })
    .where('workspace_id', '=', workspaceId).where('id', '=', broadcastId).execute();
}

// ---- claiming and sending -----------------------------------------------------------------------

if (statusesFor('claim').join() !== 'QUEUED,SENDING') throw new Error('claimDeliveries assumes QUEUED and SENDING are the claimable statuses');


/**
 * Claims up to `limit` due deliveries with a lease: SENDING ones whose lease expired first (their worker died;
 * they may have been sent already: at-least-once, see CONTEXT.md), then QUEUED ones whose time has come,
 * oldest first. PostgreSQL skips rows other workers are claiming (FOR UPDATE SKIP LOCKED); SQLite has one writer.
 * Two statements rather than one with an OR: each is a range of the (status, next_attempt_at) index, so a
 * claim costs the same with a million queued deliveries as with ten (the OR made both databases scan and
 * sort every due row on each claim).
 */
export async function claimDeliveries(db: Executor, dialect: Dialect, owner: string, now: string, leaseUntil: string, limit: number): Promise<ClaimedDelivery[]> {
  const claim = async (due: SelectQueryBuilder<Database, 'deliveries', { id: string }>) => {
    if (dialect === 'postgres') due = due.forUpdate().skipLocked();
    const rows = await db.updateTable('deliveries')
      .set({ status: 'SENDING', lease_owner: owner, lease_expires_at: leaseUntil, attempts: sql`attempts + 1`, handed_off_at: null, updated_at: now })
      // No status condition out here: the subquery has it (and on PostgreSQL re-checks it on the locked row).
      // One would make SQLite walk the whole status index instead of looking the ids up by primary key.
      .where('id', 'in', due)
      .returning(['id', 'workspace_id', 'broadcast_id', 'contact_id', 'email', 'attempts', 'unsubscribe_token', 'created_at'])
      .execute();
    return rows.map((r) => ({
      id: r.id, workspaceId: r.workspace_id, broadcastId: r.broadcast_id, contactId: r.contact_id, email: r.email,
      attempts: Number(r.attempts), unsubscribeToken: r.unsubscribe_token, createdAt: toIso(r.created_at),
    }));
  };
  // Both statuses are the claimable ones of the state machine (deliveries.state.ts).
  const expired = await claim(db.selectFrom('deliveries').select('id')
    .where('status', '=', 'SENDING').where('lease_expires_at', '<', now).orderBy('lease_expires_at').limit(limit));
  if (expired.length >= limit) return expired;
  const queued = await claim(db.selectFrom('deliveries').select('id')
    .where('status', '=', 'QUEUED').where('next_attempt_at', '<=', now).orderBy('next_attempt_at').limit(limit - expired.length));
  return [...expired, ...queued];
}

/**
 * Keeps this worker's leases alive while it is still working through its batch. On PostgreSQL the rows are locked in
 * id order and those locked right now are skipped (FOR UPDATE SKIP LOCKED): a row locked is one this worker's batch
 * writer is recording (a hand-off or an outcome, in id order), and the next renewal, a third of a lease later, takes
 * it if it is still SENDING. One UPDATE of every row in whatever order the table gave them deadlocked with the batch
 * writer's transaction (40P01); the renewals that failed let leases lapse, and another loop sent handed-off messages
 * again (bench:automations, test/reliability/automations.test.ts).
 */
export async function renewLeases(db: Executor, owner: string, leaseUntil: string): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await db.updateTable('deliveries').set({ lease_expires_at: leaseUntil })
      .where('id', 'in', (eb) => eb.selectFrom('deliveries').select('id').where('lease_owner', '=', owner).where('status', '=', 'SENDING').orderBy('id').forUpdate().skipLocked())
      .execute();
    return;
  }
  await db.updateTable('deliveries').set({ lease_expires_at: leaseUntil }).where('lease_owner', '=', owner).where('status', '=', 'SENDING').execute();
}

/**
 * The two statements every message runs, the hand-off and the "sent" outcome, built once (db/precompiled.ts): building
 * and compiling them with Kysely took ~60 µs of the pipeline thread's time per message (bench:send, 10,000 recipients:
 * 0.3 s in compileQuery, about as much in the builder), the thread that limits a send. RETURNING says whether the row
 * changed.
 */
// handOffMany and markSentMany (below) repeat these two rules for a batch on PostgreSQL: a change to one is a change to
// both (test/db/deliveries-batched.test.ts checks that they hand off and record exactly what these do, case by case).
const handOffQuery = new Precompiled((db, param) => db.updateTable('deliveries').set({ handed_off_at: param('now') })
  .where('workspace_id', '=', param('workspaceId')).where('id', '=', param('id')).where('status', '=', 'SENDING').where('lease_owner', '=', param('owner'))
  .where('attempts', '=', param<number>('attempts')).where('lease_expires_at', '>', param('now')).returning('id'));

const sentQuery = new Precompiled((db, param) => db.updateTable('deliveries')
  .set({ status: nextStatus('SENDING', 'sent')!, updated_at: param('now'), lease_owner: null, lease_expires_at: null, sent_at: param('now'), message_id: param('messageId'), smtp_response: param('response'), last_error: null })
  .where('workspace_id', '=', param('workspaceId')).where('id', '=', param('id')).where('status', 'in', statusesFor('sent')).returning('id'));

/**
 * The point of no return: marks the delivery as being handed to the transport. False when it was canceled
 * (or taken over) meanwhile, and then it must not be sent. Cancel leaves handed-off deliveries alone and
 * waits for them, so nothing is sent after a cancel returns. False too when this worker's lease has run out
 * (it stalled): another worker may be taking the delivery over right now, and only one of them may send it.
 * And false when the claim is no longer the one the caller made (`attempts`: each claim counts one): the batch
 * loops of one process share its lease owner, and a loop that re-claimed the delivery after the lease of
 * another loop's claim ran out is the one to send it.
 */
export async function handOff(db: Executor, workspaceId: string, id: string, owner: string, attempts: number, now: string): Promise<boolean> {
  return (await handOffQuery.execute(db, { workspaceId, id, owner, attempts, now })).length > 0;
}

/**
 * PostgreSQL: the hand-offs of a batch (sql-store.ts, the per-message writer) in one statement, with handOff's
 * conditions row by row. Returns `id:attempts` of each delivery handed off. One statement instead of one per delivery:
 * each of those was a round trip the writer waited for, and PostgreSQL's sending was bound by them (bench:send --pg,
 * 10,000, alternately: 810, 919, 784 msg/s row by row, 935, 1,007, 1,017 with this and markSentMany; bench/README.md). The rows are given in the order of their ids; PostgreSQL locks them in
 * that order when it plans a nested loop (the plan for a batch), not promised otherwise: a deadlock with another
 * transaction is rolled back and the batch written again (db/batch-writer.ts). A concurrent change to a row is seen:
 * PostgreSQL checks the WHERE again on the row's new version before updating it.
 */
export async function handOffMany(db: Executor, items: readonly { workspaceId: string; id: string; owner: string; attempts: number; now: string }[]): Promise<Set<string>> {
  const r = await sql<{ id: string; attempts: number }>`update deliveries d set handed_off_at = x.now
    from (select * from unnest(${items.map((i) => i.workspaceId)}::text[], ${items.map((i) => i.id)}::text[], ${items.map((i) => i.owner)}::text[],
          ${items.map((i) => i.attempts)}::int[], ${items.map((i) => i.now)}::timestamptz[]) as u(workspace_id, id, owner, attempts, now) order by id) x
    where d.workspace_id = x.workspace_id and d.id = x.id and d.status = 'SENDING' and d.lease_owner = x.owner
      and d.attempts = x.attempts and d.lease_expires_at > x.now
    returning d.id, d.attempts`.execute(db);
  return new Set(r.rows.map((row) => `${row.id}:${Number(row.attempts)}`));
}

/** PostgreSQL: the "sent" outcomes of a batch in one statement (recordOutcome's `sent`, row by row); returns the ids recorded. */
export async function markSentMany(db: Executor, items: readonly { workspaceId: string; id: string; now: string; messageId: string; response: string }[]): Promise<Set<string>> {
  const r = await sql<{ id: string }>`update deliveries d
    set status = ${nextStatus('SENDING', 'sent')!}, updated_at = x.now, lease_owner = null, lease_expires_at = null, sent_at = x.now,
        message_id = x.message_id, smtp_response = x.response, last_error = null
    from (select * from unnest(${items.map((i) => i.workspaceId)}::text[], ${items.map((i) => i.id)}::text[], ${items.map((i) => i.now)}::timestamptz[],
          ${items.map((i) => i.messageId)}::text[], ${items.map((i) => i.response.slice(0, 500))}::text[]) as u(workspace_id, id, now, message_id, response) order by id) x
    where d.workspace_id = x.workspace_id and d.id = x.id and d.status = any(${statusesFor('sent')}::text[])
    returning d.id`.execute(db);
  return new Set(r.rows.map((row) => row.id));
}

export type Outcome =
  | { op: 'hold' }
  | { op: 'sent'; messageId: string; response: string }
  | { op: 'retry'; error: string; nextAttemptAt: string }
  | { op: 'defer'; error: string | null; nextAttemptAt: string }
  | { op: 'fail' | 'bounce' | 'skip'; error: string; bounceClass?: BounceClass };

/** The outcome of an attempt (the state table's op of the same name); false if the delivery was no longer in a status it applies to. */
export async function recordOutcome(db: Executor, workspaceId: string, id: string, outcome: Outcome, now: string): Promise<boolean> {
  if (outcome.op === 'hold') {
    const res = await db.updateTable('deliveries').set({ status: nextStatus('SENDING', 'hold')!, updated_at: now, lease_owner: null, lease_expires_at: null, handed_off_at: null })
      .where('workspace_id', '=', workspaceId).where('id', '=', id).where('status', 'in', statusesFor('hold')).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }
  if (outcome.op === 'defer') {
    // Back in the queue until its destination has room, and the attempt the claim counted given back (pacing).
    const res = await db.updateTable('deliveries')
      .set({
        status: nextStatus('SENDING', 'defer')!, attempts: sql`attempts - 1`, next_attempt_at: outcome.nextAttemptAt, updated_at: now,
        lease_owner: null, lease_expires_at: null, handed_off_at: null, ...(outcome.error !== null ? { last_error: outcome.error.slice(0, 500) } : {}),
      })
      .where('workspace_id', '=', workspaceId).where('id', '=', id).where('status', 'in', statusesFor('defer')).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }
  if (outcome.op === 'sent') return (await sentQuery.execute(db, { workspaceId, id, now, messageId: outcome.messageId, response: outcome.response.slice(0, 500) })).length > 0;
  const set: Partial<DeliveriesTable> = { status: nextStatus('SENDING', outcome.op)!, updated_at: now, lease_owner: null, lease_expires_at: null, last_error: outcome.error.slice(0, 500), handed_off_at: null };
  if (outcome.op === 'retry') set.next_attempt_at = outcome.nextAttemptAt;
  if ((outcome.op === 'fail' || outcome.op === 'bounce') && outcome.bounceClass) {
    set.bounce_class = outcome.bounceClass;
    if (outcome.bounceClass === 'hard') set.bounced_at = now;
    if (outcome.bounceClass === 'soft') set.soft_bounced_at = now;
  }
  const res = await db.updateTable('deliveries').set(set)
    .where('workspace_id', '=', workspaceId).where('id', '=', id).where('status', 'in', statusesFor(outcome.op)).executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * A bounce or complaint reported after the message was sent (a DSN, an ARF report, a provider's event): a
 * hard bounce makes a SENT delivery BOUNCED (lateBounce), a block or another permanent failure FAILED
 * (lateReject); a soft bounce and a complaint are recorded on the delivery, whose status stays.
 */
export async function recordLateReport(db: Executor, workspaceId: string, id: string, report: { kind: BounceClass | 'complaint'; detail: string }, now: string): Promise<boolean> {
  const set: Partial<DeliveriesTable> = { updated_at: now };
  let q = db.updateTable('deliveries').where('workspace_id', '=', workspaceId).where('id', '=', id);
  if (report.kind === 'complaint') {
    set.complained_at = now;
  } else {
    set.bounce_class = report.kind;
    set.last_error = report.detail.slice(0, 500);
    if (report.kind === 'soft') set.soft_bounced_at = now;
    else {
      const op = report.kind === 'hard' ? 'lateBounce' : 'lateReject';
      set.status = nextStatus('SENT', op)!;
      if (report.kind === 'hard') set.bounced_at = now;
      q = q.where('status', 'in', statusesFor(op));
    }
  }
  const res = await q.set(set).executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** A delivery a bounce or complaint report names (by its id, from a VERP token or a Message-ID). */
export async function findDelivery(db: Executor, workspaceId: string, id: string): Promise<{ id: string; broadcastId: string; contactId: string | null; email: string; status: DeliveryStatus } | undefined> {
  const r = await db.selectFrom('deliveries').select(['id', 'broadcast_id', 'contact_id', 'email', 'status']).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return r ? { id: r.id, broadcastId: r.broadcast_id, contactId: r.contact_id, email: r.email, status: r.status } : undefined;
}

/** The workspace a delivery belongs to, for reports that name only the delivery (a provider's event, a Message-ID). */
export async function workspaceOfDelivery(db: Executor, id: string): Promise<string | undefined> {
  return (await db.selectFrom('deliveries').select('workspace_id').where('id', '=', id).executeTakeFirst())?.workspace_id;
}

/**
 * Whether the contact's last `limit` broadcasts all soft-bounced: its `limit` most recent final deliveries
 * each carry a soft bounce (the soft-bounce limit, docs/bounces.md). Derived from the deliveries, nothing counted by hand.
 */
export async function softBounceStreak(db: Executor, workspaceId: string, contactId: string, limit: number): Promise<boolean> {
  const rows = await db.selectFrom('deliveries').select(['soft_bounced_at'])
    .where('contact_id', '=', contactId).where('workspace_id', '=', workspaceId).where('status', 'in', ['SENT', 'FAILED', 'BOUNCED'])
    .orderBy('id', 'desc').limit(limit).execute();
  return rows.length >= limit && rows.every((r) => r.soft_bounced_at !== null);
}

/** Holds the broadcast's deliveries that are waiting or claimed but not yet handed to the transport (pause). */
export async function holdDeliveries(db: Executor, workspaceId: string, broadcastId: string, now: string): Promise<number> {
  const res = await db.updateTable('deliveries').set({ status: nextStatus('QUEUED', 'hold')!, updated_at: now, lease_owner: null, lease_expires_at: null })
    .where('workspace_id', '=', workspaceId).where('broadcast_id', '=', broadcastId)
    .where('status', 'in', statusesFor('hold')).where('handed_off_at', 'is', null).executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/** Releases held deliveries into the queue, due now (resume). */
export async function releaseDeliveries(db: Executor, workspaceId: string, broadcastId: string, now: string): Promise<number> {
  const res = await db.updateTable('deliveries').set({ status: nextStatus('PAUSED', 'release')!, next_attempt_at: now, updated_at: now })
    .where('workspace_id', '=', workspaceId).where('broadcast_id', '=', broadcastId).where('status', 'in', statusesFor('release')).executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/** What the circuit breaker weighs: final deliveries, hard bounces among them, complaints. */
export async function breakerCounts(db: Executor, workspaceId: string, broadcastId: string, since: string | null): Promise<{ final: number; hardBounced: number; complained: number }> {
  let q = db.selectFrom('deliveries')
    .select((eb) => [
      eb.fn.countAll<number>().as('final'),
      eb.fn.count<number>('bounced_at').as('hard'),
      eb.fn.count<number>('complained_at').as('complained'),
    ])
    .where('workspace_id', '=', workspaceId).where('broadcast_id', '=', broadcastId).where('status', 'in', ['SENT', 'FAILED', 'BOUNCED']);
  if (since) q = q.where('updated_at', '>=', since);
  const r = await q.executeTakeFirst();
  return { final: Number(r?.final ?? 0), hardBounced: Number(r?.hard ?? 0), complained: Number(r?.complained ?? 0) };
}

// ---- cancel, completion, stats ------------------------------------------------------------------

/** Cancels the deliveries not yet handed to the transport; returns how many. */
export async function cancelDeliveries(db: Executor, workspaceId: string, broadcastId: string, now: string): Promise<number> {
  const res = await db.updateTable('deliveries').set({ status: 'CANCELED', updated_at: now, lease_owner: null, lease_expires_at: null, last_error: 'broadcast canceled' })
    .where('workspace_id', '=', workspaceId).where('broadcast_id', '=', broadcastId)
    .where('status', 'in', statusesFor('cancel')).where('handed_off_at', 'is', null).executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/** Deliveries of the broadcast that a worker is handing to the transport right now. */
export async function countInFlight(db: Executor, workspaceId: string, broadcastId: string, now: string): Promise<number> {
  const row = await db.selectFrom('deliveries').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId).where('broadcast_id', '=', broadcastId)
    .where('status', '=', 'SENDING').where('handed_off_at', 'is not', null).where('lease_expires_at', '>=', now).executeTakeFirst();
  return Number(row?.n ?? 0);
}

export interface DeliveryCounts {
  total: number;
  byStatus: Partial<Record<DeliveryStatus, number>>;
  unsubscribed: number;
  softBounced: number;
  complained: number;
  /** SENT deliveries that the outbox transport wrote to disk (no SMTP_URL): nobody received them. */
  outboxed: number;
}

export async function countDeliveries(db: Executor, workspaceId: string, broadcastId: string): Promise<DeliveryCounts> {
  return (await countDeliveriesOf(db, workspaceId, [broadcastId])).get(broadcastId)!;
}

/** The counts of several broadcasts in one query (a list page shows each one's stats). */
export async function countDeliveriesOf(db: Executor, workspaceId: string, broadcastIds: string[]): Promise<Map<string, DeliveryCounts>> {
  const counts = new Map<string, DeliveryCounts>(broadcastIds.map((id) => [id, { total: 0, byStatus: {}, unsubscribed: 0, softBounced: 0, complained: 0, outboxed: 0 }]));
  if (!broadcastIds.length) return counts;
  const rows = await db.selectFrom('deliveries')
    .select(['broadcast_id', 'status', (eb) => eb.fn.countAll<number>().as('n'), (eb) => eb.fn.count<number>('unsubscribed_at').as('u'),
      (eb) => eb.fn.count<number>('soft_bounced_at').as('s'), (eb) => eb.fn.count<number>('complained_at').as('c'),
      (eb) => eb.fn.count<number>(eb.case().when('smtp_response', 'like', `${OUTBOX_RESPONSE}%`).then(1).end()).as('o')])
    .where('workspace_id', '=', workspaceId).where('broadcast_id', 'in', broadcastIds).groupBy(['broadcast_id', 'status']).execute();
  for (const r of rows) {
    const c = counts.get(r.broadcast_id)!;
    c.byStatus[r.status] = Number(r.n);
    c.total += Number(r.n);
    c.unsubscribed += Number(r.u);
    c.softBounced += Number(r.s);
    c.complained += Number(r.c);
    c.outboxed += Number(r.o);
  }
  return counts;
}

/**
 * Finishes a SENDING broadcast whose audience is materialised and whose deliveries are all final:
 * SENT if any message went out (or there was nobody to send to), FAILED if none could be sent.
 */
export async function completeIfDone(db: Executor, workspaceId: string, broadcastId: string, now: string): Promise<{ status: 'SENT' | 'FAILED'; counts: DeliveryCounts } | undefined> {
  const b = await db.selectFrom('broadcasts').select(['status', 'materialized_at', 'automation_id']).where('workspace_id', '=', workspaceId).where('id', '=', broadcastId).executeTakeFirst();
  // An automation's message never completes: its runs keep adding deliveries (docs/automations.md).
  if (!b || b.automation_id !== null || !broadcastStatusesFor('complete').includes(b.status) || !b.materialized_at) return undefined;
  // Workers call this after every batch: while deliveries are open (almost always), one index probe answers
  // it; counting them all would cost O(audience) per batch, O(audience²) per broadcast.
  const open = await db.selectFrom('deliveries').select('id').where('broadcast_id', '=', broadcastId).where('status', 'in', OPEN_STATUSES).limit(1).executeTakeFirst();
  if (open) return undefined;
  const counts = await countDeliveries(db, workspaceId, broadcastId);
  if (OPEN_STATUSES.some((s) => (counts.byStatus[s] ?? 0) > 0)) return undefined;
  // The broadcast state table's complete (some message went out, or there was nobody to send to) or fail.
  const next = transition(b.status, counts.total === 0 || (counts.byStatus.SENT ?? 0) > 0 ? 'complete' : 'fail') as 'SENT' | 'FAILED';
  const res = await db.updateTable('broadcasts').set({ status: next, sent_at: next === 'SENT' ? now : null, updated_at: now })
    .where('workspace_id', '=', workspaceId).where('id', '=', broadcastId).where('status', '=', b.status)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('deliveries').select('id').where('broadcast_id', '=', broadcastId).where('status', 'in', OPEN_STATUSES))))
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) return undefined;
  await recordBroadcastMove(db, workspaceId, broadcastId, b.status, next, now);
  return { status: next, counts };
}

/** SENDING broadcasts that may be finished (a sweep, for those no worker touched last). */
export async function sendingMaterializedBroadcasts(db: Executor, limit: number): Promise<{ id: string; workspaceId: string }[]> {
  const rows = await db.selectFrom('broadcasts').select(['id', 'workspace_id']).where('status', '=', 'SENDING').where('materialized_at', 'is not', null)
    .where('automation_id', 'is', null).limit(limit).execute();
  return rows.map((r) => ({ id: r.id, workspaceId: r.workspace_id }));
}

// ---- reading -------------------------------------------------------------------------------------

export interface Delivery {
  id: string;
  contactId: string | null;
  email: string;
  status: DeliveryStatus;
  attempts: number;
  lastError: string | null;
  smtpResponse: string | null;
  messageId: string | null;
  createdAt: string;
  updatedAt: string;
  sentAt: string | null;
  unsubscribedAt: string | null;
}

export async function listDeliveries(db: Executor, workspaceId: string, broadcastId: string, opts: { status?: DeliveryStatus; limit: number; beforeId?: string }): Promise<Delivery[]> {
  let q = db.selectFrom('deliveries')
    .select(['id', 'contact_id', 'email', 'status', 'attempts', 'last_error', 'smtp_response', 'message_id', 'created_at', 'updated_at', 'sent_at', 'unsubscribed_at'])
    .where('workspace_id', '=', workspaceId).where('broadcast_id', '=', broadcastId);
  if (opts.status) q = q.where('status', '=', opts.status);
  if (opts.beforeId) q = q.where('id', '<', opts.beforeId);
  const rows = await q.orderBy('id', 'desc').limit(opts.limit).execute();
  return rows.map((r) => ({
    id: r.id, contactId: r.contact_id, email: r.email, status: r.status, attempts: Number(r.attempts), lastError: r.last_error,
    smtpResponse: r.smtp_response, messageId: r.message_id, createdAt: toIso(r.created_at), updatedAt: toIso(r.updated_at),
    sentAt: toIso(r.sent_at), unsubscribedAt: toIso(r.unsubscribed_at),
  }));
}

/** The delivery an unsubscribe link belongs to (the token is the only credential of a public page). */
export async function findByUnsubscribeToken(db: Executor, token: string): Promise<{ id: string; workspaceId: string; broadcastId: string; contactId: string | null; email: string; unsubscribedAt: string | null } | undefined> {
  const r = await db.selectFrom('deliveries').select(['id', 'workspace_id', 'broadcast_id', 'contact_id', 'email', 'unsubscribed_at'])
    .where('unsubscribe_token', '=', token).executeTakeFirst();
  return r ? { id: r.id, workspaceId: r.workspace_id, broadcastId: r.broadcast_id, contactId: r.contact_id, email: r.email, unsubscribedAt: toIso(r.unsubscribed_at) } : undefined;
}

export async function markUnsubscribed(db: Executor, workspaceId: string, id: string, now: string): Promise<void> {
  await db.updateTable('deliveries').set({ unsubscribed_at: now }).where('workspace_id', '=', workspaceId).where('id', '=', id).where('unsubscribed_at', 'is', null).execute();
}

/**
 * The rate the workspace's last finished broadcast went out at: its deliveries over the time from the first
 * written to the last sent. Null without a finished broadcast with at least 10 messages.
 */
export async function lastSendRate(db: Executor, workspaceId: string): Promise<{ perSecond: number; broadcastId: string } | null> {
  const last = await db.selectFrom('broadcasts').select('id').where('workspace_id', '=', workspaceId).where('status', '=', 'SENT').orderBy('sent_at', 'desc').limit(1).executeTakeFirst();
  if (!last) return null;
  const r = await db.selectFrom('deliveries')
    .select((eb) => [eb.fn.count<number>('sent_at').as('n'), eb.fn.min('created_at').as('first'), eb.fn.max('sent_at').as('last')])
    .where('workspace_id', '=', workspaceId).where('broadcast_id', '=', last.id).executeTakeFirst();
  const n = Number(r?.n ?? 0);
  if (!r || n < 10 || !r.first || !r.last) return null;
  const seconds = Math.max(1, (Date.parse(toIso(r.last as string)) - Date.parse(toIso(r.first as string))) / 1000);
  return { perSecond: n / seconds, broadcastId: last.id };
}
