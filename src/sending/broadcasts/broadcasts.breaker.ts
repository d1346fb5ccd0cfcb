import type { Executor } from '../../db/connection.js';
import { holdDeliveries } from '../deliveries/deliveries.outcomes.js';
import { breakerFinal, breakerMarks } from '../deliveries/deliveries.repository.js';
import { breakerStateOf, updateBroadcast } from './broadcasts.repository.js';
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
 * A count of a broadcast's final deliveries made earlier, under the same `breaker_since` (null: never resumed by hand):
 * a lower bound of the count now, since a final delivery stays final (SENT may only become BOUNCED or FAILED:
 * deliveries.state.ts), a delivery is deleted only with its broadcast (a draft's, which has none), and a final
 * delivery's `updated_at` only moves forward (a late report keeps the row's time when its own is earlier:
 * recordLateReport, so a process whose clock is behind cannot move a counted delivery out of the count).
 */
export interface FinalFloor {
  since: string | null;
  final: number;
}

/**
 * Pauses the broadcast (the state table's `trip`) if it is SENDING and over a limit. Returns the reason it
 * tripped (null if it did not), the final deliveries counted, and whether they were counted now.
 *
 * With `floor` (an earlier count, under the same `breaker_since`, of at least `minFinal`), the hard bounces and
 * complaints are counted first (few rows, through indexes): weighed against the floor, if no rate is over its limit,
 * none is against the larger count of now, and the final deliveries are not counted again (at a million recipients a
 * count read every final delivery's index entry: bench/README.md, "The breaker's count"). `final` is then the floor.
 */
export async function tripIfOver(
  trx: Executor,
  workspaceId: string,
  broadcastId: string,
  rules: BreakerRules,
  now: string,
  floor?: FinalFloor,
): Promise<{ tripped: string | null; final: number; counted: boolean; since: string | null }> {
  const b = await breakerStateOf(trx, workspaceId, broadcastId);
  if (!b || b.status !== 'SENDING') return { tripped: null, final: 0, counted: false, since: null };
  const since = b.since;
  const marks = await breakerMarks(trx, workspaceId, broadcastId, since);
  if (floor && floor.since === since && floor.final > 0 && floor.final >= rules.minFinal) {
    if (!breakerReason({ final: floor.final, ...marks }, rules))
      return { tripped: null, final: floor.final, counted: false, since };
  }
  const counts = { final: await breakerFinal(trx, workspaceId, broadcastId, since), ...marks };
  const reason = breakerReason(counts, rules);
  if (!reason) return { tripped: null, final: counts.final, counted: true, since };
  const next = transition(b.status, 'trip') as 'PAUSED';
  if (!(await updateBroadcast(trx, workspaceId, broadcastId, b.status, next, { pausedReason: reason }, now)))
    return { tripped: null, final: counts.final, counted: true, since };
  await holdDeliveries(trx, workspaceId, broadcastId, now);
  return { tripped: reason, final: counts.final, counted: true, since };
}
