import { type DomainError, conflict } from '../../errors/errors.js';
import type { WebhookDeliveryStatus } from '../../db/schema.js';

/**
 * The webhook delivery state machine, in one place (CONTEXT.md). Every operation against every status is either
 * the status it leads to or the error it answers; every status change of a webhook delivery goes through it.
 * - claim: a dispatcher takes a due PENDING delivery, or a SENDING one whose lease ran out (its dispatcher died).
 * - succeed / retry / fail: the outcome of an attempt (2xx; a failure with attempts left; the last failure).
 * - resend: POST /v1/webhooks/{id}/deliveries/{deliveryId}/retry (a finished delivery goes again, due now).
 * - abandon: the endpoint was disabled (by hand, or after 5 days of failures): what waits is FAILED.
 * - release: a claimed delivery not attempted after all, because its endpoint did not answer (it is paused) or the
 *   dispatcher stops: back to PENDING, its claim not counted as an attempt.
 */
export const WEBHOOK_DELIVERY_OPERATIONS = [
  'claim',
  'succeed',
  'retry',
  'fail',
  'resend',
  'abandon',
  'release',
] as const;
export type WebhookDeliveryOperation = (typeof WEBHOOK_DELIVERY_OPERATIONS)[number];

type Outcome = WebhookDeliveryStatus | (() => DomainError);

const invalid = (what: string) => () => conflict('invalid_state', what);

export const WEBHOOK_DELIVERY_TRANSITIONS: Record<WebhookDeliveryStatus, Record<WebhookDeliveryOperation, Outcome>> = {
  PENDING: {
    claim: 'SENDING',
    succeed: invalid('the delivery is not being sent'),
    retry: invalid('the delivery is not being sent'),
    fail: invalid('the delivery is not being sent'),
    resend: invalid('the delivery is already waiting to be sent'),
    abandon: 'FAILED',
    release: invalid('the delivery is not being sent'),
  },
  SENDING: {
    // Only once its lease has run out (the claim's query says so): its dispatcher is gone.
    claim: 'SENDING',
    succeed: 'SUCCEEDED',
    retry: 'PENDING',
    fail: 'FAILED',
    resend: invalid('the delivery is being sent right now'),
    // Left to the dispatcher sending it: it records its own outcome.
    abandon: invalid('the delivery is being sent right now'),
    release: 'PENDING',
  },
  SUCCEEDED: {
    claim: invalid('the delivery has succeeded'),
    succeed: invalid('the delivery has succeeded'),
    retry: invalid('the delivery has succeeded'),
    fail: invalid('the delivery has succeeded'),
    resend: 'PENDING',
    abandon: invalid('the delivery has succeeded'),
    release: invalid('the delivery has succeeded'),
  },
  FAILED: {
    claim: invalid('the delivery has failed; retry it by hand'),
    succeed: invalid('the delivery has failed'),
    retry: invalid('the delivery has failed'),
    fail: invalid('the delivery has failed'),
    resend: 'PENDING',
    abandon: invalid('the delivery has failed'),
    release: invalid('the delivery has failed'),
  },
};

/**
 * The statuses, in the table's order: the one list, from which the API's schema is built (webhooks.schemas.ts). The table is a
 * Record of the column's type (db/schema.ts), so it names each status once and none other.
 */
export const WEBHOOK_DELIVERY_STATUSES = Object.keys(WEBHOOK_DELIVERY_TRANSITIONS) as WebhookDeliveryStatus[];

/** The statuses from which `op` is allowed (for the queries that make a move in one statement). */
export function webhookStatusesFor(op: WebhookDeliveryOperation): WebhookDeliveryStatus[] {
  return WEBHOOK_DELIVERY_STATUSES.filter((s) => typeof WEBHOOK_DELIVERY_TRANSITIONS[s][op] === 'string');
}

/** The status `op` leads to from `status`, or throws the documented error for a move that is not allowed. */
export function webhookTransition(status: WebhookDeliveryStatus, op: WebhookDeliveryOperation): WebhookDeliveryStatus {
  const outcome = WEBHOOK_DELIVERY_TRANSITIONS[status][op];
  if (typeof outcome === 'function') throw outcome();
  return outcome;
}

/** Waits before attempts 2 to 8 (contract §13): 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; then the delivery is FAILED. */
export const RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** After attempt number `attempts` failed: when to try again, or null when it was the last. */
export function nextAttemptDelay(attempts: number): number | null {
  return attempts >= 1 && attempts <= RETRY_DELAYS_MS.length ? RETRY_DELAYS_MS[attempts - 1]! : null;
}

/** An endpoint whose failures have lasted this long without a success in between is disabled. */
export const DISABLE_AFTER_MS = 5 * 86_400_000;
