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

async function countSince(
  db: Executor,
  workspaceId: string,
  column: 'sent_at' | 'bounced_at' | 'complained_at',
  since: string,
  neverSent = false,
): Promise<number> {
  let q = db
    .selectFrom('deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where(column, 'is not', null)
    .where(column, '>=', since);
  if (neverSent) q = q.where('sent_at', 'is', null);
  return Number((await q.executeTakeFirst())?.n ?? 0);
}

/**
 * The rates of each window. The hard-bounce rate is over every message that got an answer: those accepted
 * (sent) and those refused at send time as hard bounces (never sent); a bounce reported later was sent.
 */
export async function senderHealth(db: Executor, workspaceId: string, now = Date.now()): Promise<WindowHealth[]> {
  const out: WindowHealth[] = [];
  for (const days of HEALTH_WINDOWS) {
    const since = new Date(now - days * 86_400_000).toISOString();
    const sent = await countSince(db, workspaceId, 'sent_at', since);
    const hardBounces = await countSince(db, workspaceId, 'bounced_at', since);
    const refused = await countSince(db, workspaceId, 'bounced_at', since, true);
    const complaints = await countSince(db, workspaceId, 'complained_at', since);
    out.push({
      days,
      sent,
      hardBounces,
      complaints,
      hardBounceRate: rate(hardBounces, sent + refused, HEALTH_THRESHOLDS.hardBounceRate),
      complaintRate: rate(complaints, sent, HEALTH_THRESHOLDS.complaintRate),
    });
  }
  return out;
}
