import { sql, type ExpressionBuilder, type Insertable, type RawBuilder } from 'kysely';
import { getWorkspace } from '../../access/index.js';
import type { Executor } from '../../db/connection.js';
import { PrecompiledInsert } from '../../db/precompiled.js';
import type { BroadcastsTable, Database } from '../../db/schema.js';
import { countDeliveries, type DeliveryCounts } from '../deliveries/deliveries.repository.js';
import { OPEN_STATUSES } from '../deliveries/deliveries.state.js';
import type { MaterializationJob } from '../deliveries/store.js';
import { recordEvent } from '../../outbox/index.js';
import { parseAbSelection, parseAbTest, rank, type AbSelection, type VariantResult } from './broadcasts.ab.js';
import { abStateOf, hasTestShare, undecidedAbTests, variantResults } from './broadcasts.ab.repository.js';
import { recordBroadcastMove } from './broadcasts.events.js';
import { resendOfRow, valuesToRow, type BroadcastValues } from './broadcasts.repository.js';
import { broadcastStatusesFor, transition } from './broadcasts.state.js';

/**
 * The one writer of the broadcasts table outside the broadcasts API (broadcasts.service.ts): what the delivery
 * pipeline does to a broadcast (its start by the scheduler, the bookkeeping of writing its audience into deliveries,
 * its completion) and the message rows of automations' send steps. The sending engine reaches these through its
 * store (deliveries/store.ts, whose adapter is src/composition/sql-delivery-store.ts), automations through the
 * sending face. Each status move goes through the state table (broadcasts.state.ts) and writes its event.
 */

// ---- the scheduler ------------------------------------------------------------------------------

/**
 * Due SCHEDULED broadcasts start (the broadcast state table's `start`). One UPDATE: of several workers,
 * exactly one wins each.
 */
export async function startDueBroadcasts(db: Executor, now: string): Promise<{ id: string; workspaceId: string }[]> {
  const from = broadcastStatusesFor('start');
  const rows = await db
    .updateTable('broadcasts')
    .set({ status: 'SENDING', updated_at: now })
    .where('status', 'in', from)
    // Local-time sending (issue 34): a broadcast sent in each contact's zone starts at its earliest zone's turn.
    .where((eb) =>
      eb.or([eb.and([eb('local_start_at', 'is', null), eb('send_at', '<=', now)]), eb('local_start_at', '<=', now)]),
    )
    .returning(['id', 'workspace_id', 'name'])
    .execute();
  // Only SCHEDULED broadcasts start (asserted below); the caller's transaction holds the moves and their events.
  for (const r of rows)
    await recordBroadcastMove(db, r.workspace_id, r.id, 'SCHEDULED', 'SENDING', now, {
      name: r.name,
      started: 'by the scheduler',
    });
  return rows.map((r) => ({ id: r.id, workspaceId: r.workspace_id }));
}
if (broadcastStatusesFor('start').join() !== 'SCHEDULED' || transition('SCHEDULED', 'start') !== 'SENDING')
  throw new Error('startDueBroadcasts assumes start leads from SCHEDULED to SENDING');

// ---- materialising the audience -----------------------------------------------------------------
// The lease (materialize_owner, materialize_lease_until), the cursor (the last contact written) and materialized_at are
// the bookkeeping of one worker writing a SENDING broadcast's audience into deliveries (deliveries/CONTEXT.md).

/** Takes the lease on one SENDING broadcast whose audience is not yet fully in the deliveries table. */
export async function claimMaterialization(
  db: Executor,
  owner: string,
  now: string,
  leaseUntil: string,
): Promise<MaterializationJob | undefined> {
  const free = (eb: ExpressionBuilder<Database, 'broadcasts'>) =>
    eb.and([
      eb('status', '=', 'SENDING'),
      eb('materialized_at', 'is', null),
      eb.or([eb('materialize_lease_until', 'is', null), eb('materialize_lease_until', '<', now)]),
    ]);
  const candidate = await db
    .selectFrom('broadcasts')
    .select('id')
    .where(free)
    .orderBy('updated_at')
    .limit(1)
    .executeTakeFirst();
  if (!candidate) return undefined;
  const row = await db
    .updateTable('broadcasts')
    .set({ materialize_owner: owner, materialize_lease_until: leaseUntil })
    .where('id', '=', candidate.id)
    .where(free)
    .returning([
      'id',
      'workspace_id',
      'segment_id',
      'topic_id',
      'resend_of',
      'resend_to',
      'resend_as_of',
      'materialize_cursor',
      'ab_test',
      'ab_winner',
      'ab_selection',
      'local_send_time',
    ])
    .executeTakeFirst();
  if (!row) return undefined;
  // An A/B broadcast is written in two passes (docs/ab-tests.md): the test share, then, once the winner is chosen, the rest.
  const test = parseAbTest(row.ab_test);
  // Local-time sending (issue 34, docs/sending.md): the wall-clock time, and the workspace's zone for contacts
  // without one (deliveries/local-time.ts sets each recipient's due time from them).
  const local = row.local_send_time
    ? {
        wallTime: row.local_send_time,
        defaultZone: (await getWorkspace(db, row.workspace_id))?.settings.timezone ?? 'UTC',
      }
    : null;
  return {
    broadcastId: row.id,
    workspaceId: row.workspace_id,
    segmentId: row.segment_id,
    topicId: row.topic_id,
    resend: resendOfRow(row),
    cursor: row.materialize_cursor,
    ab: test
      ? {
          variants: test.variants.map((v) => v.id),
          testPercent: test.testPercent,
          winner: row.ab_winner,
          selection: parseAbSelection(row.ab_selection),
        }
      : null,
    local,
  };
}

/** Extends the lease; false if it was lost or the broadcast is no longer SENDING (canceled): stop. */
export async function renewMaterialization(
  db: Executor,
  workspaceId: string,
  broadcastId: string,
  owner: string,
  leaseUntil: string,
): Promise<boolean> {
  const res = await db
    .updateTable('broadcasts')
    .set({ materialize_lease_until: leaseUntil })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', broadcastId)
    .where('materialize_owner', '=', owner)
    .where('status', '=', 'SENDING')
    .where('materialized_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Moves the cursor; `done`: the audience is all written (the broadcast materialised, its lease released). */
export async function advanceMaterialization(
  db: Executor,
  workspaceId: string,
  broadcastId: string,
  cursor: string | null,
  done: boolean,
  now: string,
): Promise<void> {
  await db
    .updateTable('broadcasts')
    .set({
      materialize_cursor: cursor,
      ...(done ? { materialized_at: now, materialize_owner: null, materialize_lease_until: null } : {}),
    })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', broadcastId)
    .execute();
}

/**
 * PostgreSQL: the broadcast's part of one batch of a materialisation, a statement for the batch's own to run first (a
 * common table expression of deliveries.batch-sql.ts insertLeasedRecipients): the lease checked and renewed, the
 * cursor moved and, when `done`, the broadcast marked materialised and its lease released, what renewMaterialization
 * and advanceMaterialization do. It returns the broadcast's id only when the lease was `owner`'s: the recipients are
 * inserted only then.
 */
export function materializationStep(
  workspaceId: string,
  broadcastId: string,
  owner: string,
  leaseUntil: string,
  cursor: string | null,
  done: boolean,
  now: string,
): RawBuilder<{ id: string }> {
  const set = done
    ? sql`materialize_cursor = ${cursor}, materialized_at = ${now}::timestamptz, materialize_owner = null, materialize_lease_until = null`
    : sql`materialize_cursor = ${cursor}, materialize_lease_until = ${leaseUntil}::timestamptz`;
  return sql<{ id: string }>`update broadcasts set ${set}
      where workspace_id = ${workspaceId} and id = ${broadcastId} and materialize_owner = ${owner} and status = 'SENDING' and materialized_at is null
      returning id`;
}

// ---- completion ---------------------------------------------------------------------------------

/**
 * Whether any of the broadcast's deliveries is still open: one probe of `deliveries_broadcast` (broadcast_id, status,
 * id) per open status, newest first. Newest first, because a send takes its deliveries oldest first: on PostgreSQL every
 * delivery already sent left dead entries under QUEUED and SENDING (an update writes a new row version; VACUUM removes
 * the old entries later), all at the low end of each status's range. A probe from the low end walked them all before
 * the first live one: at a million recipients ~1,000,000 entries, 13–160 ms a probe, once a batch, from the moment the
 * audience was all written (bench/README.md, "Events nobody listens to, the completion probe, and autovacuum"). From the high end it meets
 * the deliveries queued last, or the batch claimed last, at once.
 */
async function hasOpenDelivery(db: Executor, broadcastId: string): Promise<boolean> {
  for (const status of OPEN_STATUSES) {
    const row = await db
      .selectFrom('deliveries')
      .select('id')
      .where('broadcast_id', '=', broadcastId)
      .where('status', '=', status)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (row) return true;
  }
  return false;
}

/**
 * Finishes a SENDING broadcast whose audience is materialised and whose deliveries are all final:
 * SENT if any message went out (or there was nobody to send to), FAILED if none could be sent.
 */
export async function completeIfDone(
  db: Executor,
  workspaceId: string,
  broadcastId: string,
  now: string,
): Promise<{ status: 'SENT' | 'FAILED'; counts: DeliveryCounts } | undefined> {
  const b = await db
    .selectFrom('broadcasts')
    .select(['status', 'materialized_at', 'automation_id', 'ab_test', 'ab_winner', 'transactional'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', broadcastId)
    .executeTakeFirst();
  // An automation's message never completes: its runs keep adding deliveries (docs/automations.md); nor does a
  // transactional email's hidden row (docs/emails.md): its recipients' statuses are its state.
  if (
    !b ||
    b.automation_id !== null ||
    Number(b.transactional) === 1 ||
    !broadcastStatusesFor('complete').includes(b.status) ||
    !b.materialized_at
  )
    return undefined;
  // An A/B broadcast whose winner is not chosen yet has only its test share written: it stays SENDING until the
  // winner's send to the rest is complete too (docs/ab-tests.md).
  if (b.ab_test !== null && b.ab_winner === null) return undefined;
  // Workers call this after every batch: while deliveries are open (almost always), an index probe answers it;
  // counting them all would cost O(audience) per batch, O(audience²) per broadcast.
  if (await hasOpenDelivery(db, broadcastId)) return undefined;
  const counts = await countDeliveries(db, workspaceId, broadcastId);
  if (OPEN_STATUSES.some((s) => (counts.byStatus[s] ?? 0) > 0)) return undefined;
  // The broadcast state table's complete (some message went out, or there was nobody to send to) or fail.
  const next = transition(b.status, counts.total === 0 || (counts.byStatus.SENT ?? 0) > 0 ? 'complete' : 'fail') as
    'SENT' | 'FAILED';
  const res = await db
    .updateTable('broadcasts')
    .set({ status: next, sent_at: next === 'SENT' ? now : null, updated_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', broadcastId)
    .where('status', '=', b.status)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('deliveries')
            .select('id')
            .where('broadcast_id', '=', broadcastId)
            .where('status', 'in', OPEN_STATUSES),
        ),
      ),
    )
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) return undefined;
  await recordBroadcastMove(db, workspaceId, broadcastId, b.status, next, now);
  return { status: next, counts };
}

// ---- A/B broadcasts -----------------------------------------------------------------------------

/**
 * Chooses an A/B broadcast's winner (docs/ab-tests.md), once: `ab_winner` is set only while it is null, on a SENDING or
 * PAUSED broadcast with a test. In the same statement the materialisation starts over for the second pass (cursor,
 * lease and materialized_at cleared): a worker takes it and writes the rest of the audience with the winner, the unique
 * index leaving the test share's deliveries as they are; a worker still writing the test share loses its lease. The
 * event `broadcast.ab_winner_chosen` is written in the caller's transaction. False when it was chosen already (or the
 * broadcast has no test, or is not sending).
 */
export async function chooseWinner(
  db: Executor,
  workspaceId: string,
  broadcastId: string,
  choice: { variant: string; chosenBy: 'timer' | 'hand'; results: readonly VariantResult[] },
  now: string,
): Promise<boolean> {
  const row = await db
    .updateTable('broadcasts')
    .set({
      ab_winner: choice.variant,
      ab_winner_at: now,
      materialized_at: null,
      materialize_cursor: null,
      materialize_owner: null,
      materialize_lease_until: null,
    })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', broadcastId)
    .where('ab_test', 'is not', null)
    .where('ab_winner', 'is', null)
    .where('status', 'in', ['SENDING', 'PAUSED'])
    .where('automation_id', 'is', null)
    .returning(['name', 'ab_test'])
    .executeTakeFirst();
  if (!row) return false;
  await recordEvent(
    db,
    workspaceId,
    {
      type: 'broadcast.ab_winner_chosen',
      broadcastId,
      data: {
        name: row.name,
        variant: choice.variant,
        winnerBy: parseAbTest(row.ab_test)?.winnerBy ?? null,
        chosenBy: choice.chosenBy,
        variants: choice.results.map((r) => ({
          id: r.id,
          sent: r.sent,
          uniqueOpens: r.uniqueOpens,
          uniqueClicks: r.uniqueClicks,
        })),
      },
    },
    now,
  );
  return true;
}

/**
 * Stores an A/B broadcast's test share (broadcasts.ab.ts selectTestShare) when its first pass starts, once: only while
 * none is stored, so that of two workers that chose it (one whose lease ran out meanwhile), every batch of either uses
 * the first one stored. Returns the stored selection (its own or the earlier one); null when there is none to use (no
 * longer a first pass: the winner is chosen, or the broadcast is gone).
 */
export async function storeAbSelection(
  db: Executor,
  workspaceId: string,
  broadcastId: string,
  selection: AbSelection,
): Promise<AbSelection | null> {
  await db
    .updateTable('broadcasts')
    .set({ ab_selection: JSON.stringify(selection) })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', broadcastId)
    .where('ab_selection', 'is', null)
    .where('ab_winner', 'is', null)
    .execute();
  const row = await db
    .selectFrom('broadcasts')
    .select(['ab_selection', 'ab_winner'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', broadcastId)
    .executeTakeFirst();
  return row && row.ab_winner === null ? parseAbSelection(row.ab_selection) : null;
}

/**
 * The timer (docs/ab-tests.md): a SENDING A/B broadcast whose test share was queued `waitMinutes` ago or more gets its
 * winner by the rule (broadcasts.ab.ts rank: the highest rate of unique human opens or clicks, ties to the first
 * variant). `tx` runs each choice in a transaction of its own; of several workers, one wins each (chooseWinner).
 */
export async function chooseDueWinners(
  db: Executor,
  tx: <T>(fn: (trx: Executor) => Promise<T>) => Promise<T>,
  now: string,
): Promise<{ id: string; workspaceId: string; variant: string }[]> {
  const chosen = [];
  for (const t of await undecidedAbTests(db, 50)) {
    // The wait is over; or there is nothing to wait for: a test share with nobody in it (a tiny audience) goes on at
    // once, the first variant winning the tie.
    const due = Date.parse(t.testQueuedAt) + t.waitMinutes * 60_000 <= Date.parse(now);
    if (!due && (await hasTestShare(db, t.workspaceId, t.id))) continue;
    const variant = await tx(async (trx) => {
      const state = await abStateOf(trx, t.workspaceId, t.id);
      if (!state || state.winner) return null;
      const results = await variantResults(trx, t.workspaceId, t.id, state.test);
      const winner = rank(results, state.test.winnerBy)[0]!.id;
      return (await chooseWinner(trx, t.workspaceId, t.id, { variant: winner, chosenBy: 'timer', results }, now))
        ? winner
        : null;
    });
    if (variant) chosen.push({ id: t.id, workspaceId: t.workspaceId, variant });
  }
  return chosen;
}

// ---- automations --------------------------------------------------------------------------------

/**
 * The message of an automation version's send step (docs/automations.md): a broadcast row SENDING from the start,
 * its audience "materialised" (it has none: the automation's runs add one delivery each), hidden from the
 * broadcasts API, never completed; the pipeline sends its deliveries like any broadcast's.
 */
export function insertAutomationMessage(
  db: Executor,
  workspaceId: string,
  id: string,
  v: Pick<BroadcastValues, 'name' | 'from' | 'replyTo' | 'emailContent' | 'tracking'> & {
    automationId: string;
    stepId: string;
  },
  now: string,
): Promise<void> {
  return insertHiddenMessage(db, workspaceId, id, v, now, {
    automation_id: v.automationId,
    automation_step_id: v.stepId,
  });
}

// Each accepted transactional email writes one (bench:emails, accept): compiled once per shape (db/precompiled.ts).
const hiddenInsert = new PrecompiledInsert('broadcasts');

/** A hidden broadcast row SENDING from the start, its audience "materialised" (an automation's message, an email's). */
async function insertHiddenMessage(
  db: Executor,
  workspaceId: string,
  id: string,
  v: Pick<BroadcastValues, 'name' | 'from' | 'replyTo' | 'emailContent' | 'tracking'>,
  now: string,
  kind: Pick<Insertable<BroadcastsTable>, 'automation_id' | 'automation_step_id' | 'transactional' | 'archive'>,
): Promise<void> {
  await hiddenInsert.execute(db, {
    ...(valuesToRow({ ...v, topicId: null, segmentId: null, sendAt: null }) as Insertable<BroadcastsTable>),
    id,
    workspace_id: workspaceId,
    status: 'SENDING',
    created_at: now,
    updated_at: now,
    sent_at: null,
    materialized_at: now,
    ...kind,
  });
}

// ---- transactional emails -----------------------------------------------------------------------

/**
 * A transactional email's hidden broadcast row (docs/emails.md): its id is the email's, SENDING from the start with
 * no audience to write, hidden from the broadcasts API (`transactional = 1`) and never completed (no broadcast.*
 * events); its content is the email's, rendered when it was accepted. The pipeline sends its deliveries (lane 1).
 */
export function insertEmailMessage(
  db: Executor,
  workspaceId: string,
  id: string,
  v: Pick<BroadcastValues, 'from' | 'replyTo' | 'emailContent' | 'tracking'>,
  now: string,
): Promise<void> {
  return insertHiddenMessage(db, workspaceId, id, { ...v, name: `Transactional email ${id}` }, now, {
    transactional: 1,
    archive: 0,
  });
}
