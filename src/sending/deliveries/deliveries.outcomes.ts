import { sql, type ExpressionBuilder } from 'kysely';
import { onPostgres } from '../../db/batch-sql.js';
import type { Executor } from '../../db/connection.js';
import { PrecompiledInsert } from '../../db/precompiled.js';
import type { Database, DeliveriesTable, DeliveryStatus } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import { pooledRandomBytes } from '../../lib/random.js';
import type { BounceClass } from '../../mail/classify.js';
import { markSent, markSentMany } from './deliveries.batch-sql.js';
import { nextStatus, statusesFor } from './deliveries.state.js';

/**
 * The one writer of what happens to a delivery (deliveries/CONTEXT.md, "Owners"): the outcome of an attempt, a late
 * report (a bounce or complaint after it was sent), a broadcast's pause, resume and cancel (hold, release, cancel), an
 * unsubscription by its link, and the one delivery an automation run's send step adds. Bounces, unsubscribe,
 * broadcasts, automations and the engine's store call these, in their own transaction; each move is the state
 * table's (deliveries.state.ts). Claiming, the lease, the hand-off and writing an audience are the engine's own
 * (deliveries.repository.ts, deliveries.batch-sql.ts).
 */

// ---- the outcome of an attempt ------------------------------------------------------------------

export type Outcome =
  | { op: 'hold' }
  | { op: 'sent'; messageId: string; response: string }
  | { op: 'retry'; error: string; nextAttemptAt: string }
  | { op: 'defer'; error: string | null; nextAttemptAt: string }
  | { op: 'skip'; error: string }
  /**
   * A hard bounce is BOUNCED, never FAILED: `bounced_at` comes with that terminal status alone, which the breaker's
   * count of hard bounces relies on (breakerFinal in deliveries.repository.ts counts them among the BOUNCED). A soft
   * bounce or a block at send time is FAILED with its class.
   */
  | { op: 'fail'; error: string; bounceClass?: Exclude<BounceClass, 'hard'> }
  | { op: 'bounce'; error: string; bounceClass?: BounceClass };

/** The outcome of an attempt (the state table's op of the same name); false if the delivery was no longer in a status it applies to. */
export async function recordOutcome(
  db: Executor,
  workspaceId: string,
  id: string,
  outcome: Outcome,
  now: string,
): Promise<boolean> {
  if (outcome.op === 'hold') {
    const res = await db
      .updateTable('deliveries')
      .set({
        status: nextStatus('SENDING', 'hold')!,
        updated_at: now,
        lease_owner: null,
        lease_expires_at: null,
        handed_off_at: null,
      })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .where('status', 'in', statusesFor('hold'))
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }
  if (outcome.op === 'defer') {
    // Back in the queue until its destination has room, and the attempt the claim counted given back (pacing).
    const res = await db
      .updateTable('deliveries')
      .set({
        status: nextStatus('SENDING', 'defer')!,
        attempts: sql`attempts - 1`,
        next_attempt_at: outcome.nextAttemptAt,
        updated_at: now,
        lease_owner: null,
        lease_expires_at: null,
        handed_off_at: null,
        ...(outcome.error !== null ? { last_error: outcome.error.slice(0, 500) } : {}),
      })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .where('status', 'in', statusesFor('defer'))
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }
  if (outcome.op === 'sent') return markSent(db, workspaceId, id, now, outcome.messageId, outcome.response);
  const set: Partial<Omit<DeliveriesTable, 'lane'>> = {
    status: nextStatus('SENDING', outcome.op)!,
    updated_at: now,
    lease_owner: null,
    lease_expires_at: null,
    last_error: outcome.error.slice(0, 500),
    handed_off_at: null,
  };
  if (outcome.op === 'retry') set.next_attempt_at = outcome.nextAttemptAt;
  if ((outcome.op === 'fail' || outcome.op === 'bounce') && outcome.bounceClass) {
    set.bounce_class = outcome.bounceClass;
    if (outcome.bounceClass === 'hard') set.bounced_at = now;
    if (outcome.bounceClass === 'soft') set.soft_bounced_at = now;
  }
  const res = await db
    .updateTable('deliveries')
    .set(set)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('status', 'in', statusesFor(outcome.op))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * PostgreSQL: the "sent" outcomes of a batch in one statement (recordOutcome's `sent` row by row; the store's
 * per-message writer); returns the ids recorded.
 */
export function recordSentMany(
  db: Executor,
  items: readonly { workspaceId: string; id: string; now: string; messageId: string; response: string }[],
): Promise<Set<string>> {
  return markSentMany(db, items);
}

/**
 * A bounce or complaint reported after the message was sent (a DSN, an ARF report, a provider's event): a
 * hard bounce makes a SENT delivery BOUNCED (lateBounce), a block or another permanent failure FAILED
 * (lateReject); a soft bounce and a complaint are recorded on the delivery, whose status stays.
 */
export async function recordLateReport(
  db: Executor,
  workspaceId: string,
  id: string,
  report: { kind: BounceClass | 'complaint'; detail: string },
  now: string,
): Promise<boolean> {
  const set: Partial<Omit<DeliveriesTable, 'lane' | 'updated_at'>> = {};
  let q = db.updateTable('deliveries').where('workspace_id', '=', workspaceId).where('id', '=', id);
  if (report.kind === 'complaint') {
    // The first complaint's time stays: a report delivered again (a provider's retry, an ARF after its event) is the
    // same complaint, and sender health counts each complaint in the hour it came (bounces.health.ts keeps past hours).
    const res = await q
      .set((eb) => ({
        updated_at: notBefore(eb, 'updated_at', now),
        complained_at: eb.fn.coalesce('complained_at', eb.val(now)),
      }))
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
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
  const res = await q.set((eb) => ({ ...set, updated_at: notBefore(eb, 'updated_at', now) })).executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * `now`, or the row's own time in `column` when that is later. A late report's `updated_at`: the breaker counts a
 * broadcast's final deliveries by `updated_at` from its `breaker_since` and keeps the count as a floor
 * (broadcasts.breaker.ts, FinalFloor), so a report written by a process whose clock is behind must not move a counted
 * delivery out of the count. A resume's `next_attempt_at`: a delivery waiting for a later retry keeps its time.
 */
function notBefore(
  eb: ExpressionBuilder<Database, 'deliveries'>,
  column: 'updated_at' | 'next_attempt_at',
  now: string,
) {
  return eb.case().when(column, '>', now).then(eb.ref(column)).else(eb.val(now)).end();
}

// ---- a broadcast's pause, resume and cancel -----------------------------------------------------

/** Holds the broadcast's deliveries that are waiting or claimed but not yet handed to the transport (pause). */
/**
 * On PostgreSQL, a pause or a cancel locks the broadcast's rows in the order of their ids first (SELECT … ORDER BY id
 * FOR UPDATE), as the batch writer of the pipeline does (its hand-offs and outcomes, byId): an UPDATE that locked them
 * in the order its index scan met them deadlocked with a batch being recorded (40P01), and the cancel answered 500
 * (bench:emails, PostgreSQL, once in six runs). Both now take the rows they share in one order.
 */
function lockedInIdOrder(db: Executor, workspaceId: string, broadcastId: string, statuses: DeliveryStatus[]) {
  return db
    .selectFrom('deliveries')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('broadcast_id', '=', broadcastId)
    .where('status', 'in', statuses)
    .where('handed_off_at', 'is', null)
    .orderBy('id')
    .forUpdate();
}

export async function holdDeliveries(
  db: Executor,
  workspaceId: string,
  broadcastId: string,
  now: string,
): Promise<number> {
  const res = await db
    .updateTable('deliveries')
    .set({ status: nextStatus('QUEUED', 'hold')!, updated_at: now, lease_owner: null, lease_expires_at: null })
    .where('workspace_id', '=', workspaceId)
    .where('broadcast_id', '=', broadcastId)
    .where('status', 'in', statusesFor('hold'))
    .where('handed_off_at', 'is', null)
    .$if(onPostgres(db), (q) => q.where('id', 'in', lockedInIdOrder(db, workspaceId, broadcastId, statusesFor('hold'))))
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/**
 * Releases held deliveries into the queue, due now (resume); one due later (a local-time send's zone whose turn has
 * not come, docs/sending.md) keeps its time.
 */
export async function releaseDeliveries(
  db: Executor,
  workspaceId: string,
  broadcastId: string,
  now: string,
): Promise<number> {
  const res = await db
    .updateTable('deliveries')
    .set((eb) => ({
      status: nextStatus('PAUSED', 'release')!,
      next_attempt_at: notBefore(eb, 'next_attempt_at', now),
      updated_at: now,
    }))
    .where('workspace_id', '=', workspaceId)
    .where('broadcast_id', '=', broadcastId)
    .where('status', 'in', statusesFor('release'))
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/** Cancels the deliveries not yet handed to the transport; returns how many. */
export async function cancelDeliveries(
  db: Executor,
  workspaceId: string,
  broadcastId: string,
  now: string,
): Promise<number> {
  const res = await db
    .updateTable('deliveries')
    .set({
      status: 'CANCELED',
      updated_at: now,
      lease_owner: null,
      lease_expires_at: null,
      last_error: 'broadcast canceled',
    })
    .where('workspace_id', '=', workspaceId)
    .where('broadcast_id', '=', broadcastId)
    .where('status', 'in', statusesFor('cancel'))
    .where('handed_off_at', 'is', null)
    .$if(onPostgres(db), (q) =>
      q.where('id', 'in', lockedInIdOrder(db, workspaceId, broadcastId, statusesFor('cancel'))),
    )
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

// ---- unsubscribing, automations -----------------------------------------------------------------

/** The delivery's recipient unsubscribed by its link (the stats' `unsubscribed`); once. */
export async function markUnsubscribed(db: Executor, workspaceId: string, id: string, now: string): Promise<void> {
  await db
    .updateTable('deliveries')
    .set({ unsubscribed_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('unsubscribed_at', 'is', null)
    .execute();
}

/**
 * The message of an automation run's send step (docs/automations.md): one QUEUED delivery, due now, in the
 * caller's transaction (the run's step). The pipeline sends it as any other: suppression, pacing, tracking, DKIM,
 * VERP, the hand-off rule. Returns its id.
 */
export async function insertRunDelivery(
  db: Executor,
  workspaceId: string,
  broadcastId: string,
  runId: string,
  recipient: { contactId: string; email: string },
  now: string,
): Promise<string> {
  const id = newId('dlv');
  await db
    .insertInto('deliveries')
    .values({
      id,
      workspace_id: workspaceId,
      broadcast_id: broadcastId,
      contact_id: recipient.contactId,
      email: recipient.email,
      status: 'QUEUED',
      attempts: 0,
      next_attempt_at: now,
      unsubscribe_token: pooledRandomBytes(24).toString('base64url'),
      created_at: now,
      updated_at: now,
      automation_run_id: runId,
    } as never)
    .execute();
  return id;
}

/**
 * A transactional email's deliveries (docs/emails.md): one per recipient (to, cc and bcc alike), in the transactional
 * lane (1), due now; one whose address is suppressed for a hard bounce or a complaint is written SKIPPED at once (its
 * recipient SUPPRESSED), never mailed. No contact: transactional messages ignore contacts and topics.
 */
export async function insertEmailDeliveries(
  db: Executor,
  workspaceId: string,
  emailId: string,
  recipients: readonly { email: string; suppressed: string | null }[],
  now: string,
): Promise<void> {
  if (!recipients.length) return;
  const rows = recipients.map((r) => ({
    id: newId('dlv'),
    workspace_id: workspaceId,
    broadcast_id: emailId,
    contact_id: null,
    email: r.email,
    status: r.suppressed ? ('SKIPPED' as const) : ('QUEUED' as const),
    attempts: 0,
    next_attempt_at: now,
    last_error: r.suppressed ? `suppressed: the address is on the suppression list (${r.suppressed})` : null,
    unsubscribe_token: pooledRandomBytes(24).toString('base64url'),
    created_at: now,
    updated_at: now,
    lane: 1,
  }));
  // One recipient, the usual email: the insert compiled once (db/precompiled.ts; bench:emails, accept).
  if (rows.length === 1) return emailDeliveryInsert.execute(db, rows[0]!);
  await db.insertInto('deliveries').values(rows).execute();
}

const emailDeliveryInsert = new PrecompiledInsert('deliveries');
