import type { Executor } from '../../db/connection.js';
import { holdDeliveries } from '../deliveries/deliveries.outcomes.js';
import { breakerCounts } from '../deliveries/deliveries.repository.js';
import { getBroadcast, updateBroadcast } from './broadcasts.repository.js';
import { transition } from './broadcasts.state.js';

/**
 * The circuit breaker (docs/bounces.md): a SENDING broadcast pauses itself when, after at least `minFinal`
 * final deliveries, its hard-bounce rate passes PAUSE_BOUNCE_RATE or its complaint rate PAUSE_COMPLAINT_RATE.
 * The complaint rate's default, 0.5%, is contract §11's; Gmail and Yahoo publish 0.3% for bulk senders (sender health
 * measures against that line), and docs/bounces.md advises PAUSE_COMPLAINT_RATE=0.3% to stop before it.
 * A list that bounces that much is an old or bought list, and mailbox providers judge a sender by it.
 * After a resume by hand only the deliveries that end afterwards are weighed: the operator chose to go on
 * (having suppressed the bad addresses, say), and the next `minFinal` deliveries decide again.
 */
export interface BreakerRules {
  minFinal: number;
  bounceRate: number;
  complaintRate: number;
}

export const DEFAULT_BREAKER_RULES: BreakerRules = { minFinal: 500, bounceRate: 0.05, complaintRate: 0.005 };

const pct = (x: number) => `${(x * 100).toFixed(x < 0.01 ? 2 : 1)}%`;

/** Why the breaker would trip for these counts, or null. */
export function breakerReason(
  c: { final: number; hardBounced: number; complained: number },
  rules: BreakerRules,
): string | null {
  if (c.final < rules.minFinal || c.final === 0) return null;
  const bounces = c.hardBounced / c.final;
  const complaints = c.complained / c.final;
  if (bounces > rules.bounceRate)
    return `hard-bounce rate ${pct(bounces)} (${c.hardBounced} of ${c.final} final deliveries) passed the ${pct(rules.bounceRate)} limit (PAUSE_BOUNCE_RATE)`;
  if (complaints > rules.complaintRate)
    return `complaint rate ${pct(complaints)} (${c.complained} of ${c.final} final deliveries) passed the ${pct(rules.complaintRate)} limit (PAUSE_COMPLAINT_RATE)`;
  return null;
}

/**
 * Pauses the broadcast (the state table's `trip`) if it is SENDING and over a limit. Returns the reason it
 * tripped (null if it did not) and the final deliveries counted.
 */
export async function tripIfOver(
  trx: Executor,
  workspaceId: string,
  broadcastId: string,
  rules: BreakerRules,
  now: string,
): Promise<{ tripped: string | null; final: number }> {
  const b = await getBroadcast(trx, workspaceId, broadcastId);
  if (!b || b.status !== 'SENDING') return { tripped: null, final: 0 };
  const since =
    (
      await trx
        .selectFrom('broadcasts')
        .select('breaker_since')
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', broadcastId)
        .executeTakeFirst()
    )?.breaker_since ?? null;
  const counts = await breakerCounts(trx, workspaceId, broadcastId, since);
  const reason = breakerReason(counts, rules);
  if (!reason) return { tripped: null, final: counts.final };
  const next = transition(b.status, 'trip') as 'PAUSED';
  if (!(await updateBroadcast(trx, workspaceId, broadcastId, b.status, next, { pausedReason: reason }, now)))
    return { tripped: null, final: counts.final };
  await holdDeliveries(trx, workspaceId, broadcastId, now);
  return { tripped: reason, final: counts.final };
}
