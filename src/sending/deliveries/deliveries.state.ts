import type { DeliveryStatus } from '../../db/schema.js';

/**
 * The delivery state machine (one row per recipient of a broadcast), in one place (deliveries/CONTEXT.md).
 * - claim: a worker takes a QUEUED delivery that is due, or a SENDING one whose lease expired (its worker died).
 * - sent / retry / fail / bounce / skip: the outcome of one attempt (retry puts it back in the queue for later).
 * - defer: back in the queue without using an attempt: its destination has no room, or throttled it (pacing.ts).
 * - cancel: the broadcast was canceled; only deliveries not yet handed to the transport are canceled.
 * - hold / release: the broadcast was paused / resumed; a delivery being handed to the transport finishes first.
 * - lateBounce / lateReject: a bounce report that arrives after the message was accepted (a DSN, a provider's
 *   event): a hard bounce makes it BOUNCED, a policy block or another permanent failure FAILED.
 * The repository's SQL uses `statusesFor(op)` so that code and table cannot disagree.
 */
export const DELIVERY_OPERATIONS = [
  'claim',
  'sent',
  'retry',
  'defer',
  'fail',
  'bounce',
  'skip',
  'cancel',
  'hold',
  'release',
  'lateBounce',
  'lateReject',
] as const;
export type DeliveryOperation = (typeof DELIVERY_OPERATIONS)[number];

type Row = Record<DeliveryOperation, DeliveryStatus | null>;
const none: Row = {
  claim: null,
  sent: null,
  retry: null,
  defer: null,
  fail: null,
  bounce: null,
  skip: null,
  cancel: null,
  hold: null,
  release: null,
  lateBounce: null,
  lateReject: null,
};

export const DELIVERY_TRANSITIONS: Record<DeliveryStatus, Row> = {
  QUEUED: { ...none, claim: 'SENDING', cancel: 'CANCELED', hold: 'PAUSED' },
  SENDING: {
    ...none,
    claim: 'SENDING',
    sent: 'SENT',
    retry: 'QUEUED',
    defer: 'QUEUED',
    fail: 'FAILED',
    bounce: 'BOUNCED',
    skip: 'SKIPPED',
    cancel: 'CANCELED',
    hold: 'PAUSED',
  },
  PAUSED: { ...none, cancel: 'CANCELED', release: 'QUEUED' },
  SENT: { ...none, lateBounce: 'BOUNCED', lateReject: 'FAILED' },
  FAILED: none,
  BOUNCED: none,
  CANCELED: none,
  SKIPPED: none,
};

/**
 * The statuses, in the table's order: the one list, from which the API's schema is built (broadcasts.schemas.ts). The table is a
 * Record of the column's type (db/schema.ts), so it names each status once and none other.
 */
export const DELIVERY_STATUSES = Object.keys(DELIVERY_TRANSITIONS) as DeliveryStatus[];

/** The statuses from which `op` is allowed. */
export function statusesFor(op: DeliveryOperation): DeliveryStatus[] {
  return DELIVERY_STATUSES.filter((s) => DELIVERY_TRANSITIONS[s][op] !== null);
}

/** The operations of sending itself: a delivery from which one of these is possible still needs work. */
const SENDING_OPERATIONS: DeliveryOperation[] = [
  'claim',
  'sent',
  'retry',
  'defer',
  'fail',
  'bounce',
  'skip',
  'release',
];

/** Statuses that still need work: a broadcast is finished when none of its deliveries is in one of these. */
export const OPEN_STATUSES: DeliveryStatus[] = DELIVERY_STATUSES.filter((s) =>
  SENDING_OPERATIONS.some((op) => DELIVERY_TRANSITIONS[s][op] !== null),
);

export function nextStatus(status: DeliveryStatus, op: DeliveryOperation): DeliveryStatus | null {
  return DELIVERY_TRANSITIONS[status][op];
}
