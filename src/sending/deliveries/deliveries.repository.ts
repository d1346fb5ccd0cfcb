import { PostgresAdapter, sql, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Dialect, Executor } from '../../db/connection.js';
import type { Database, DeliveryStatus } from '../../db/schema.js';
import { OUTBOX_RESPONSE } from '../../mail/transport.js';
import { toIso } from '../../lib/time.js';
import { statusesFor } from './deliveries.state.js';
import type { ClaimedDelivery } from './store.js';

/**
 * Queries of the deliveries table: the engine's claims and leases, and what the rest of sending reads (a report's
 * delivery, the breaker's counts, a broadcast's stats and rows). Workers serve every workspace, so claiming looks
 * across workspaces by design; everything that reads one broadcast's rows names its workspace. What changes a
 * delivery afterwards is deliveries.outcomes.ts; the hand-written and precompiled SQL is deliveries.batch-sql.ts.
 */

// ---- claiming -----------------------------------------------------------------------------------

if (statusesFor('claim').join() !== 'QUEUED,SENDING')
  throw new Error('claimDeliveries assumes QUEUED and SENDING are the claimable statuses');

/**
 * What a claim takes: every lane (the transactional lane's due deliveries first), or only the transactional lane (the
 * loop of its own that jobs.ts runs, so that an email never waits for a broadcast's batch to go out).
 */
export type ClaimLane = 'all' | 'transactional';

/**
 * Claims up to `limit` due deliveries with a lease: SENDING ones whose lease expired first (their worker died;
 * they may have been sent already: at-least-once, see CONTEXT.md), then QUEUED ones whose time has come,
 * oldest first. PostgreSQL skips rows other workers are claiming (FOR UPDATE SKIP LOCKED); SQLite has one writer.
 * Two statements rather than one with an OR: each is a range of the (status, next_attempt_at) index, so a
 * claim costs the same with a million queued deliveries as with ten (the OR made both databases scan and
 * sort every due row on each claim).
 *
 * `lapsed: false` looks for expired leases only when the due deliveries do not fill the batch. On PostgreSQL every
 * delivery sent leaves a dead entry in the SENDING range of the index until VACUUM reaches it: 60% into a
 * million-recipient send the expired-lease statement walked ~880,000 of them, 0.3–0.5 s a claim, and the rate fell from
 * ~750 to ~400 a second (bench:send --million --pg). The pipeline asks for them every few seconds (pipeline.ts).
 *
 * `from`: the due deliveries are looked for from that time on (`next_attempt_at >= from`) instead of from the range's
 * start. The QUEUED range has the same dead entries, those of every delivery claimed since the last VACUUM, and a claim
 * from the start walks them all: with a snapshot held open beside it (a materialisation's audience cursor, a report)
 * PostgreSQL cannot even mark them dead, and a claim of 100 went from 6.7 to 43 ms over 300,000 claimed (bench/README.md,
 * "`npm run bench:claim`"). The pipeline passes the latest due time it claimed last (claim-cursor.ts; only that
 * instant's claimed deliveries are walked) and looks from the start every few seconds, for a delivery written due
 * before it; when nothing is due past `from`, the claim looks from the start at once.
 */
export async function claimDeliveries(
  db: Executor,
  dialect: Dialect,
  owner: string,
  now: string,
  leaseUntil: string,
  limit: number,
  lane: ClaimLane = 'all',
  { lapsed: lapsedFirst = true, from }: { lapsed?: boolean; from?: string } = {},
): Promise<ClaimedDelivery[]> {
  // `range`: the claim of the due range in due order, whose deliveries carry their due time (the pipeline's next `from`).
  const claim = async (due: SelectQueryBuilder<Database, 'deliveries', { id: string }>, range = false) => {
    if (dialect === 'postgres') due = due.forUpdate().skipLocked();
    const rows = await db
      .updateTable('deliveries')
      .set({
        status: 'SENDING',
        lease_owner: owner,
        lease_expires_at: leaseUntil,
        attempts: sql`attempts + 1`,
        handed_off_at: null,
        updated_at: now,
      })
      // No status condition out here: the subquery has it (and on PostgreSQL re-checks it on the locked row).
      // One would make SQLite walk the whole status index instead of looking the ids up by primary key.
      .where('id', 'in', due)
      .returning([
        'id',
        'workspace_id',
        'broadcast_id',
        'contact_id',
        'email',
        'attempts',
        'unsubscribe_token',
        'created_at',
        'variant',
        'lane',
        'next_attempt_at',
      ])
      .execute();
    return rows.map((r) => ({
      id: r.id,
      workspaceId: r.workspace_id,
      broadcastId: r.broadcast_id,
      contactId: r.contact_id,
      email: r.email,
      attempts: Number(r.attempts),
      unsubscribeToken: r.unsubscribe_token,
      createdAt: toIso(r.created_at),
      variant: r.variant,
      ...(range ? { dueAt: toIso(r.next_attempt_at) } : {}),
      ...(Number(r.lane) === 1 ? { transactional: true } : {}),
    }));
  };
  // Both statuses are the claimable ones of the state machine (deliveries.state.ts).
  const lapsed = db
    .selectFrom('deliveries')
    .select('id')
    .where('status', '=', 'SENDING')
    .where('lease_expires_at', '<', now)
    .orderBy('lease_expires_at');
  const claimLapsed = (n: number) =>
    claim((lane === 'transactional' ? lapsed.where(sql<boolean>`lane = 1`) : lapsed).limit(n));
  const expired = lapsedFirst ? await claimLapsed(limit) : [];
  if (expired.length >= limit) return expired;
  // QUEUED deliveries whose time has come, oldest first: an index range of (status, next_attempt_at).
  const due = (n: number) =>
    db
      .selectFrom('deliveries')
      .select('id')
      .where('status', '=', 'QUEUED')
      .where('next_attempt_at', '<=', now)
      .orderBy('next_attempt_at')
      .limit(n);
  // The transactional lane (docs/emails.md) first: its own partial index (deliveries_lane_due, `lane = 1` written as a
  // literal so both databases match it), so an email never waits behind a broadcast's backlog.
  const transactional = await claim(due(limit - expired.length).where(sql<boolean>`lane = 1`));
  const fill = async (got: ClaimedDelivery[]) =>
    lapsedFirst || got.length >= limit ? got : [...got, ...(await claimLapsed(limit - got.length))];
  if (lane === 'transactional' || expired.length + transactional.length >= limit)
    return fill([...expired, ...transactional]);
  const rest = due(limit - expired.length - transactional.length);
  // From `from` on; from the start when nothing is due past it, so a claim comes back empty only when nothing is due.
  let queued = from === undefined ? [] : await claim(rest.where('next_attempt_at', '>=', from), true);
  if (!queued.length) queued = await claim(rest, true);
  return fill([...expired, ...transactional, ...queued]);
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
    await db
      .updateTable('deliveries')
      .set({ lease_expires_at: leaseUntil })
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('deliveries')
          .select('id')
          .where('lease_owner', '=', owner)
          .where('status', '=', 'SENDING')
          .orderBy('id')
          .forUpdate()
          .skipLocked(),
      )
      .execute();
    return;
  }
  await db
    .updateTable('deliveries')
    .set({ lease_expires_at: leaseUntil })
    .where('lease_owner', '=', owner)
    .where('status', '=', 'SENDING')
    .execute();
}

// ---- reading ------------------------------------------------------------------------------------

/** A delivery a bounce or complaint report names (by its id, from a VERP token or a Message-ID). */
export async function findDelivery(
  db: Executor,
  workspaceId: string,
  id: string,
): Promise<
  { id: string; broadcastId: string; contactId: string | null; email: string; status: DeliveryStatus } | undefined
> {
  const r = await db
    .selectFrom('deliveries')
    .select(['id', 'broadcast_id', 'contact_id', 'email', 'status'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return r
    ? { id: r.id, broadcastId: r.broadcast_id, contactId: r.contact_id, email: r.email, status: r.status }
    : undefined;
}

/** The workspace a delivery belongs to, for reports that name only the delivery (a provider's event, a Message-ID). */
export async function workspaceOfDelivery(db: Executor, id: string): Promise<string | undefined> {
  return (await db.selectFrom('deliveries').select('workspace_id').where('id', '=', id).executeTakeFirst())
    ?.workspace_id;
}

/** How many of a contact's latest final deliveries the soft-bounce streak looks at, at most. */
const STREAK_SCAN = 200;

/**
 * Whether the contact's soft bounces reached the soft-bounce limit (docs/bounces.md): its most recent final deliveries,
 * newest first and with no delivery without a soft bounce between them, are at least `limit` soft bounces that span
 * at least `days` days (from the first of them to the last). Three broadcasts in one afternoon to a mailbox that is
 * full for an hour are not enough; a mailbox full for a week is. Derived from the deliveries, nothing counted by hand.
 */
export async function softBounceStreak(
  db: Executor,
  workspaceId: string,
  contactId: string,
  rule: { limit: number; days: number },
): Promise<boolean> {
  const rows = await db
    .selectFrom('deliveries')
    .select(['soft_bounced_at'])
    .where('contact_id', '=', contactId)
    .where('workspace_id', '=', workspaceId)
    .where('status', 'in', ['SENT', 'FAILED', 'BOUNCED'])
    .orderBy('id', 'desc')
    .limit(Math.max(rule.limit, STREAK_SCAN))
    .execute();
  let count = 0;
  let newest = -Infinity;
  let oldest = Infinity;
  for (const r of rows) {
    // A delivery without a soft bounce (delivered, or failed otherwise) ends the streak.
    if (r.soft_bounced_at === null) return false;
    const at = Date.parse(toIso(r.soft_bounced_at));
    count++;
    newest = Math.max(newest, at);
    oldest = Math.min(oldest, at);
    if (count >= rule.limit && newest - oldest >= rule.days * 86_400_000) return true;
  }
  return false;
}

const FINAL_STATUSES: DeliveryStatus[] = ['SENT', 'FAILED', 'BOUNCED'];

/**
 * The broadcast's final deliveries: from `deliveries_broadcast` (broadcast_id, status, id) alone without `since`
 * (the broadcast is the workspace's, by the subquery, so no delivery row is read for its workspace); with it, each
 * final row is read for its `updated_at`.
 */
export async function breakerFinal(
  db: Executor,
  workspaceId: string,
  broadcastId: string,
  since: string | null,
): Promise<number> {
  const r = await breakerCountQueries(db, workspaceId, broadcastId, since).final.executeTakeFirst();
  return Number(r?.n ?? 0);
}

/**
 * The hard bounces and complaints the breaker weighs (with `since`, those of deliveries that ended after it), without
 * the final deliveries: the hard bounces among the BOUNCED deliveries (`bounced_at` is only ever set with that status,
 * a terminal one: deliveries.outcomes.ts, deliveries.state.ts), the complaints of final deliveries among the marked
 * ones (`deliveries_broadcast_marks`; the status is asked in the count, not in the condition: with it in the condition
 * SQLite chose `deliveries_broadcast` and read every final row; a complaint can reach a delivery that is not final, one
 * whose attempt timed out after the receiving server took the message, say). Both read few rows, unless the outbox
 * transport sent the broadcast (its answer marks every delivery).
 */
export async function breakerMarks(
  db: Executor,
  workspaceId: string,
  broadcastId: string,
  since: string | null,
): Promise<{ hardBounced: number; complained: number }> {
  const q = breakerCountQueries(db, workspaceId, broadcastId, since);
  const hard = await q.hardBounced.executeTakeFirst();
  const complained = await q.complained.executeTakeFirst();
  return { hardBounced: Number(hard?.n ?? 0), complained: Number(complained?.n ?? 0) };
}

/**
 * The ids of these broadcasts that are the workspace's, as a subquery: a count of their deliveries through it stays
 * within the tenant without reading any delivery row for its workspace (the indexes over `broadcast_id` serve alone).
 */
function ownedBroadcasts(db: Executor, workspaceId: string, ids: string | readonly string[]) {
  const q = db.selectFrom('broadcasts').select('broadcasts.id').where('broadcasts.workspace_id', '=', workspaceId);
  return typeof ids === 'string' ? q.where('broadcasts.id', '=', ids) : q.where('broadcasts.id', 'in', ids);
}

/** The reads of breakerFinal and breakerMarks (exported for the test of their plans). */
export function breakerCountQueries(db: Executor, workspaceId: string, broadcastId: string, since: string | null) {
  const owned = ownedBroadcasts(db, workspaceId, broadcastId);
  const from = () => {
    const q = db.selectFrom('deliveries').where('broadcast_id', 'in', owned);
    return since ? q.where('updated_at', '>=', since) : q;
  };
  return {
    final: from()
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', 'in', FINAL_STATUSES),
    hardBounced: from()
      .select((eb) => eb.fn.count<number>('bounced_at').as('n'))
      .where('status', '=', 'BOUNCED'),
    complained: from()
      .select((eb) =>
        eb.fn.count<number>(eb.case().when('status', 'in', FINAL_STATUSES).then(eb.ref('complained_at')).end()).as('n'),
      )
      .where(sql.raw<SqlBool>(`(${DELIVERY_MARKS_PREDICATE})`)),
  };
}

/**
 * How many of the broadcast's deliveries wait in the queue (QUEUED), counted up to `atMost` (a range of
 * `deliveries_broadcast`): how far its audience's writing is ahead of sending (the pipeline's materializeLead).
 */
export async function countQueued(
  db: Executor,
  workspaceId: string,
  broadcastId: string,
  atMost: number,
): Promise<number> {
  const row = await db
    .selectFrom((eb) =>
      eb
        .selectFrom('deliveries')
        .select('id')
        .where('broadcast_id', '=', broadcastId)
        .where('status', '=', 'QUEUED')
        .where('workspace_id', '=', workspaceId)
        .limit(atMost)
        .as('queued'),
    )
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Deliveries of the broadcast that a worker is handing to the transport right now. */
export async function countInFlight(
  db: Executor,
  workspaceId: string,
  broadcastId: string,
  now: string,
): Promise<number> {
  const row = await db
    .selectFrom('deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('broadcast_id', '=', broadcastId)
    .where('status', '=', 'SENDING')
    .where('handed_off_at', 'is not', null)
    .where('lease_expires_at', '>=', now)
    .executeTakeFirst();
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

/**
 * The deliveries a broadcast's stats count apart from their status (an unsubscribe, a soft bounce, a complaint, the
 * outbox's answer): the predicate of migration 0038's partial index `deliveries_broadcast_marks`, as text, so that the
 * databases see that the query's condition is the index's (a test holds the two to the same text).
 */
export const DELIVERY_MARKS_PREDICATE = `unsubscribed_at is not null or soft_bounced_at is not null or complained_at is not null or smtp_response like '${OUTBOX_RESPONSE}%'`;

/**
 * The counts of several broadcasts (a list page shows each one's stats), in two reads of indexes: the statuses from
 * `deliveries_broadcast` (broadcast_id, status, id) alone, and the marked deliveries' rows (few) through
 * `deliveries_broadcast_marks`. The broadcasts are the workspace's (the subquery): their deliveries are then only
 * theirs, and no delivery row is read for its workspace. One query over every row took ~2.3 s for 25 broadcasts of
 * 110,000 recipients; these two ~0.5 s (bench/README.md, bench:console).
 */
export async function countDeliveriesOf(
  db: Executor,
  workspaceId: string,
  broadcastIds: string[],
): Promise<Map<string, DeliveryCounts>> {
  const counts = new Map<string, DeliveryCounts>(
    broadcastIds.map((id) => [
      id,
      { total: 0, byStatus: {}, unsubscribed: 0, softBounced: 0, complained: 0, outboxed: 0 },
    ]),
  );
  if (!broadcastIds.length) return counts;
  const owned = ownedBroadcasts(db, workspaceId, broadcastIds);
  const statuses = await db
    .selectFrom('deliveries')
    .select(['broadcast_id', 'status', (eb) => eb.fn.countAll<number>().as('n')])
    .where('broadcast_id', 'in', owned)
    .groupBy(['broadcast_id', 'status'])
    .execute();
  for (const r of statuses) {
    const c = counts.get(r.broadcast_id)!;
    c.byStatus[r.status] = Number(r.n);
    c.total += Number(r.n);
  }
  const marks = await db
    .selectFrom('deliveries')
    .select([
      'broadcast_id',
      (eb) => eb.fn.count<number>('unsubscribed_at').as('u'),
      (eb) => eb.fn.count<number>('soft_bounced_at').as('s'),
      (eb) => eb.fn.count<number>('complained_at').as('c'),
      (eb) => eb.fn.count<number>(eb.case().when('smtp_response', 'like', `${OUTBOX_RESPONSE}%`).then(1).end()).as('o'),
    ])
    .where('broadcast_id', 'in', owned)
    .where(sql.raw<SqlBool>(`(${DELIVERY_MARKS_PREDICATE})`))
    .groupBy('broadcast_id')
    .execute();
  for (const r of marks) {
    const c = counts.get(r.broadcast_id)!;
    c.unsubscribed += Number(r.u);
    c.softBounced += Number(r.s);
    c.complained += Number(r.c);
    c.outboxed += Number(r.o);
  }
  return counts;
}

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

export async function listDeliveries(
  db: Executor,
  workspaceId: string,
  broadcastId: string,
  opts: { status?: DeliveryStatus; limit: number; beforeId?: string },
): Promise<Delivery[]> {
  let q = db
    .selectFrom('deliveries')
    .select([
      'id',
      'contact_id',
      'email',
      'status',
      'attempts',
      'last_error',
      'smtp_response',
      'message_id',
      'created_at',
      'updated_at',
      'sent_at',
      'unsubscribed_at',
    ])
    .where('workspace_id', '=', workspaceId)
    .where('broadcast_id', '=', broadcastId);
  if (opts.status) q = q.where('status', '=', opts.status);
  if (opts.beforeId) q = q.where('id', '<', opts.beforeId);
  const rows = await q.orderBy('id', 'desc').limit(opts.limit).execute();
  return rows.map((r) => ({
    id: r.id,
    contactId: r.contact_id,
    email: r.email,
    status: r.status,
    attempts: Number(r.attempts),
    lastError: r.last_error,
    smtpResponse: r.smtp_response,
    messageId: r.message_id,
    createdAt: toIso(r.created_at),
    updatedAt: toIso(r.updated_at),
    sentAt: toIso(r.sent_at),
    unsubscribedAt: toIso(r.unsubscribed_at),
  }));
}

/** The delivery an unsubscribe link belongs to (the token is the only credential of a public page). */
export async function findByUnsubscribeToken(
  db: Executor,
  token: string,
): Promise<
  | {
      id: string;
      workspaceId: string;
      broadcastId: string;
      contactId: string | null;
      email: string;
      unsubscribedAt: string | null;
    }
  | undefined
> {
  const r = await db
    .selectFrom('deliveries')
    .select(['id', 'workspace_id', 'broadcast_id', 'contact_id', 'email', 'unsubscribed_at'])
    .where('unsubscribe_token', '=', token)
    .executeTakeFirst();
  return r
    ? {
        id: r.id,
        workspaceId: r.workspace_id,
        broadcastId: r.broadcast_id,
        contactId: r.contact_id,
        email: r.email,
        unsubscribedAt: toIso(r.unsubscribed_at),
      }
    : undefined;
}

/**
 * The rate a broadcast went out at: its deliveries over the time from the first written to the last sent. Null with
 * fewer than 10 messages sent.
 */
export async function sendRate(
  db: Executor,
  workspaceId: string,
  broadcastId: string,
): Promise<{ perSecond: number } | null> {
  const r = await db
    .selectFrom('deliveries')
    .select((eb) => [
      eb.fn.count<number>('sent_at').as('n'),
      eb.fn.min('created_at').as('first'),
      eb.fn.max('sent_at').as('last'),
    ])
    .where('workspace_id', '=', workspaceId)
    .where('broadcast_id', '=', broadcastId)
    .executeTakeFirst();
  const n = Number(r?.n ?? 0);
  if (!r || n < 10 || !r.first || !r.last) return null;
  const seconds = Math.max(1, (Date.parse(toIso(r.last as string)) - Date.parse(toIso(r.first as string))) / 1000);
  return { perSecond: n / seconds };
}

/**
 * Local-time sending (docs/sending.md): a broadcast's deliveries per zone of their turn (`local_zone`), with how many
 * were sent. Deliveries without a zone (written before the send was local) are left out.
 */
export async function zoneProgress(
  db: Executor,
  workspaceId: string,
  broadcastId: string,
): Promise<{ zone: string; recipients: number; sent: number }[]> {
  const rows = await db
    .selectFrom('deliveries')
    .select([
      'local_zone',
      (eb) => eb.fn.countAll<number>().as('n'),
      (eb) => eb.fn.count<number>(eb.case().when('status', '=', 'SENT').then(1).end()).as('s'),
    ])
    .where('workspace_id', '=', workspaceId)
    .where('broadcast_id', '=', broadcastId)
    .where('local_zone', 'is not', null)
    .groupBy('local_zone')
    .execute();
  return rows.map((r) => ({ zone: r.local_zone!, recipients: Number(r.n), sent: Number(r.s) }));
}
