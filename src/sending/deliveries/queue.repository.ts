import type { Executor } from '../../db/connection.js';
import type { DeliveryStatus } from '../../db/schema.js';
import { toIso } from '../../lib/time.js';

/**
 * The delivery queue as an operator sees it (`formcast queue status`): deliveries by status, the oldest one due, and
 * the leases each worker holds. Of one workspace, or, with `workspaceId` null, of the whole installation: the
 * workers serve every workspace at once, so the queue is the operator's, not a tenant's.
 */
export interface QueueStatus {
  byStatus: Partial<Record<DeliveryStatus, number>>;
  /** The QUEUED delivery whose time came first (null: nothing is waiting). */
  oldestDue: { id: string; workspaceId: string; broadcastId: string; dueAt: string } | null;
  /** How many QUEUED deliveries are due now. */
  due: number;
  /** Per worker (lease owner): the SENDING deliveries it holds, and when the first and last of its leases expire. */
  leases: { owner: string; deliveries: number; firstExpiry: string; lastExpiry: string; expired: number }[];
}

export async function queueStatus(db: Executor, workspaceId: string | null, now: string): Promise<QueueStatus> {
  const deliveries = () =>
    db.selectFrom('deliveries').$if(workspaceId !== null, (q) => q.where('workspace_id', '=', workspaceId!));
  const statusRows = await deliveries()
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('status')
    .execute();
  const byStatus: QueueStatus['byStatus'] = {};
  for (const r of statusRows) byStatus[r.status] = Number(r.n);

  const oldest = await deliveries()
    .select(['id', 'workspace_id', 'broadcast_id', 'next_attempt_at'])
    .where('status', '=', 'QUEUED')
    .orderBy('next_attempt_at')
    .limit(1)
    .executeTakeFirst();
  const dueRow = await deliveries()
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'QUEUED')
    .where('next_attempt_at', '<=', now)
    .executeTakeFirst();
  const leaseRows = await deliveries()
    .select([
      'lease_owner',
      (eb) => eb.fn.countAll<number>().as('n'),
      (eb) => eb.fn.min('lease_expires_at').as('first'),
      (eb) => eb.fn.max('lease_expires_at').as('last'),
      (eb) => eb.fn.count<number>(eb.case().when('lease_expires_at', '<', now).then(1).end()).as('expired'),
    ])
    .where('status', '=', 'SENDING')
    .where('lease_owner', 'is not', null)
    .groupBy('lease_owner')
    .orderBy('lease_owner')
    .execute();

  return {
    byStatus,
    oldestDue: oldest
      ? {
          id: oldest.id,
          workspaceId: oldest.workspace_id,
          broadcastId: oldest.broadcast_id,
          dueAt: toIso(oldest.next_attempt_at),
        }
      : null,
    due: Number(dueRow?.n ?? 0),
    leases: leaseRows.map((r) => ({
      owner: r.lease_owner!,
      deliveries: Number(r.n),
      firstExpiry: toIso(r.first as string),
      lastExpiry: toIso(r.last as string),
      expired: Number(r.expired),
    })),
  };
}
