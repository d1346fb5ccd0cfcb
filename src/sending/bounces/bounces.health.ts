import { sql } from 'kysely';
import type { Executor } from '../../db/connection.js';

/**
 * Sender health (docs/bounces.md): a workspace's hard-bounce and complaint rates over the last 7 and 30
 * days, each against the threshold mailbox providers hold senders to. Complaints: 0.3%, the limit Gmail and
 * Yahoo set for bulk senders (they ask to stay below 0.1%). Hard bounces: 2%, the common industry line
 * (Mailchimp, SendGrid and Amazon SES warn around it; SES reviews accounts at 5%).
 */
export const HEALTH_THRESHOLDS = { hardBounceRate: 0.02, complaintRate: 0.003 } as const;
export const HEALTH_WINDOWS = [7, 30] as const;

export interface RateHealth {
  value: number;
  threshold: number;
  /** ok below half the threshold, warning up to it, critical above it. */
  status: 'ok' | 'warning' | 'critical';
}

export interface WindowHealth {
  days: number;
  sent: number;
  hardBounces: number;
  complaints: number;
  hardBounceRate: RateHealth;
  complaintRate: RateHealth;
}

function rate(count: number, of: number, threshold: number): RateHealth {
  const value = of === 0 ? 0 : count / of;
  return {
    value: Math.round(value * 1e6) / 1e6,
    threshold,
    status: value > threshold ? 'critical' : value > threshold / 2 ? 'warning' : 'ok',
  };
}

/**
 * How many deliveries have `column` set within each window (`since`, oldest first), in one read of the column's
 * index from the widest window's start: the windows nest, so counting them apart read the newest days again for each
 * (at 2,750,000 deliveries in 30 days, the two windows' sent counts took ~1.4 s; bench/README.md, bench:console).
 */
async function countWindows(
  db: Executor,
  workspaceId: string,
  column: 'sent_at' | 'bounced_at' | 'complained_at',
  since: readonly string[],
  neverSent = false,
): Promise<number[]> {
  const widest = since.reduce((a, b) => (a < b ? a : b));
  let q = db
    .selectFrom('deliveries')
    .select((eb) =>
      since.map((s, i) =>
        eb.fn
          .sum<number | string | null>(eb.case().when(column, '>=', s).then(sql.lit(1)).else(sql.lit(0)).end())
          .as(`n${i}`),
      ),
    )
    .where('workspace_id', '=', workspaceId)
    .where(column, 'is not', null)
    .where(column, '>=', widest);
  if (neverSent) q = q.where('sent_at', 'is', null);
  const row = (await q.executeTakeFirst()) as Record<string, number | string | null> | undefined;
  return since.map((_, i) => Number(row?.[`n${i}`] ?? 0));
}

/**
 * The rates of each window. The hard-bounce rate is over every message that got an answer: those accepted
 * (sent) and those refused at send time as hard bounces (never sent); a bounce reported later was sent.
 */
export async function senderHealth(db: Executor, workspaceId: string, now = Date.now()): Promise<WindowHealth[]> {
  const since = HEALTH_WINDOWS.map((days) => new Date(now - days * 86_400_000).toISOString());
  const sent = await countWindows(db, workspaceId, 'sent_at', since);
  const hardBounces = await countWindows(db, workspaceId, 'bounced_at', since);
  const refused = await countWindows(db, workspaceId, 'bounced_at', since, true);
  const complaints = await countWindows(db, workspaceId, 'complained_at', since);
  return HEALTH_WINDOWS.map((days, i) => ({
    days,
    sent: sent[i]!,
    hardBounces: hardBounces[i]!,
    complaints: complaints[i]!,
    hardBounceRate: rate(hardBounces[i]!, sent[i]! + refused[i]!, HEALTH_THRESHOLDS.hardBounceRate),
    complaintRate: rate(complaints[i]!, sent[i]!, HEALTH_THRESHOLDS.complaintRate),
  }));
}
