import type { DeliveryStatus } from '../db/schema.js';

/**
 * The delivery state machine (one row per recipient of a broadcast), in one place.
 * - claim: a worker takes a QUEUED delivery that is due, or a SENDING one whose lease expired (its worker died).
 * - sent / retry / fail / bounce / skip: the outcome of one attempt (retry puts it back in the queue for later).
 * - cancel: the broadcast was canceled; only deliveries not yet handed to the transport are canceled.
 * The repository's SQL uses `statusesFor(op)` so that code and table cannot disagree.
 */
export const DELIVERY_STATUSES = ['QUEUED', 'SENDING', 'SENT', 'FAILED', 'BOUNCED', 'CANCELED', 'SKIPPED'] as const satisfies readonly DeliveryStatus[];
export const DELIVERY_OPERATIONS = ['claim', 'sent', 'retry', 'fail', 'bounce', 'skip', 'cancel'] as const;
export type DeliveryOperation = (typeof DELIVERY_OPERATIONS)[number];

const FINAL = { claim: null, sent: null, retry: null, fail: null, bounce: null, skip: null, cancel: null } as const;

export const DELIVERY_TRANSITIONS: Record<DeliveryStatus, Record<DeliveryOperation, DeliveryStatus | null>> = {
  QUEUED: { claim: 'SENDING', sent: null, retry: null, fail: null, bounce: null, skip: null, cancel: 'CANCELED' },
  SENDING: { claim: 'SENDING', sent: 'SENT', retry: 'QUEUED', fail: 'FAILED', bounce: 'BOUNCED', skip: 'SKIPPED', cancel: 'CANCELED' },
  SENT: FINAL,
  FAILED: FINAL,
  BOUNCED: FINAL,
  CANCELED: FINAL,
  SKIPPED: FINAL,
};

/** The statuses from which `op` is allowed. */
export function statusesFor(op: DeliveryOperation): DeliveryStatus[] {
  return DELIVERY_STATUSES.filter((s) => DELIVERY_TRANSITIONS[s][op] !== null);
}

/** Statuses that still need work: a broadcast is finished when none of its deliveries is in one of these. */
export const OPEN_STATUSES: DeliveryStatus[] = DELIVERY_STATUSES.filter((s) => DELIVERY_OPERATIONS.some((op) => DELIVERY_TRANSITIONS[s][op] !== null));

export function nextStatus(status: DeliveryStatus, op: DeliveryOperation): DeliveryStatus | null {
  return DELIVERY_TRANSITIONS[status][op];
}
