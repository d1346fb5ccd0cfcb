import { sql } from 'kysely';
import type { Executor } from '../../db/connection.js';
import { toIso } from '../../lib/time.js';
import { parseAbTest, type VariantResult } from './broadcasts.ab.js';
import type { AbTest } from './broadcasts.schemas.js';

/**
 * The reads of A/B broadcasts (docs/ab-tests.md): where a test stands (its winner, when its test share was queued)
 * and each variant's results over its test share (deliveries of `ab_group` TEST, with their unique human opens and
 * clicks from the events). The writes are broadcasts.writer.ts's.
 */

export interface AbState {
  test: AbTest;
  winner: string | null;
  chosenAt: string | null;
  /** When the test share was all queued (the wait counts from it); null before. */
  testQueuedAt: string | null;
  status: string;
  name: string;
}

export async function abStateOf(db: Executor, workspaceId: string, broadcastId: string): Promise<AbState | undefined> {
  const r = await db
    .selectFrom('broadcasts')
    .select(['ab_test', 'ab_winner', 'ab_winner_at', 'materialized_at', 'status', 'name'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', broadcastId)
    .where('automation_id', 'is', null)
    .executeTakeFirst();
  const test = r ? parseAbTest(r.ab_test) : null;
  if (!r || !test) return undefined;
  return {
    test,
    winner: r.ab_winner,
    chosenAt: toIso(r.ab_winner_at),
    // Until a winner is chosen, materialized_at is the end of the first pass: the test share (broadcasts.writer.ts).
    testQueuedAt: r.ab_winner ? null : toIso(r.materialized_at),
    status: r.status,
    name: r.name,
  };
}

/** Each variant of the test share: recipients, sent, unique human opens and clicks; in the test's order. */
export async function variantResults(
  db: Executor,
  workspaceId: string,
  broadcastId: string,
  test: AbTest,
): Promise<(VariantResult & { recipients: number })[]> {
  const counts = await db
    .selectFrom('deliveries')
    .select([
      'variant',
      (eb) => eb.fn.countAll<number>().as('n'),
      sql<number>`sum(case when status = 'SENT' then 1 else 0 end)`.as('sent'),
    ])
    .where('workspace_id', '=', workspaceId)
    .where('broadcast_id', '=', broadcastId)
    .where('ab_group', '=', 'TEST')
    .groupBy('variant')
    .execute();
  const engaged = await db
    .selectFrom('events')
    .innerJoin('deliveries', 'deliveries.id', 'events.delivery_id')
    .select([
      'deliveries.variant',
      sql<number>`count(distinct case when events.type = 'email.opened' then events.delivery_id end)`.as('opens'),
      sql<number>`count(distinct case when events.type = 'email.clicked' then events.delivery_id end)`.as('clicks'),
    ])
    .where('events.workspace_id', '=', workspaceId)
    .where('events.broadcast_id', '=', broadcastId)
    .where('events.type', 'in', ['email.opened', 'email.clicked'])
    // People only: machine opens (Apple MPP, scanners) and scanners' clicks are left out (docs/tracking.md).
    .where('events.machine', '=', 0)
    .where('deliveries.ab_group', '=', 'TEST')
    .groupBy('deliveries.variant')
    .execute();
  return test.variants.map((v) => {
    const c = counts.find((r) => r.variant === v.id);
    const e = engaged.find((r) => r.variant === v.id);
    return {
      id: v.id,
      recipients: Number(c?.n ?? 0),
      sent: Number(c?.sent ?? 0),
      uniqueOpens: Number(e?.opens ?? 0),
      uniqueClicks: Number(e?.clicks ?? 0),
    };
  });
}

/**
 * SENDING A/B broadcasts whose test share is queued and whose winner is not chosen yet (few at a time: the timer
 * checks each one's wait).
 */
export async function undecidedAbTests(
  db: Executor,
  limit: number,
): Promise<{ id: string; workspaceId: string; testQueuedAt: string; waitMinutes: number }[]> {
  const rows = await db
    .selectFrom('broadcasts')
    .select(['id', 'workspace_id', 'materialized_at', 'ab_test'])
    .where('status', '=', 'SENDING')
    .where('ab_test', 'is not', null)
    .where('ab_winner', 'is', null)
    .where('materialized_at', 'is not', null)
    .where('automation_id', 'is', null)
    .orderBy('materialized_at')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    workspaceId: r.workspace_id,
    testQueuedAt: toIso(r.materialized_at)!,
    waitMinutes: parseAbTest(r.ab_test)!.waitMinutes,
  }));
}

/** Whether an A/B broadcast's test share has anyone in it (one index probe). */
export async function hasTestShare(db: Executor, workspaceId: string, broadcastId: string): Promise<boolean> {
  const r = await db
    .selectFrom('deliveries')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('broadcast_id', '=', broadcastId)
    .limit(1)
    .executeTakeFirst();
  return r !== undefined;
}
