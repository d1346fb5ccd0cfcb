import type { Executor } from '../../db/connection.js';
import type { BroadcastStatus } from './broadcasts.schemas.js';
import { recordEvent, type EventType } from '../../outbox/index.js';

/**
 * The events of a broadcast's status moves (docs/events.md), written by whoever makes the move, in its
 * transaction: SENDING (sent, started by the scheduler, or resumed), PAUSED (by hand or by the circuit breaker),
 * SENT and CANCELED. FAILED (not one message could be sent) has no event type of its own in the contract.
 */
const STATUS_EVENT: Partial<Record<BroadcastStatus, EventType>> = {
  SENDING: 'broadcast.sending',
  PAUSED: 'broadcast.paused',
  SENT: 'broadcast.sent',
  CANCELED: 'broadcast.canceled',
};

export async function recordBroadcastMove(
  trx: Executor,
  workspaceId: string,
  broadcastId: string,
  from: BroadcastStatus,
  to: BroadcastStatus,
  now: string,
  data: Record<string, unknown> = {},
): Promise<void> {
  const type = from === to ? undefined : STATUS_EVENT[to];
  if (!type) return;
  await recordEvent(trx, workspaceId, { type, broadcastId, data: { from, status: to, ...data } }, now);
}
