import { type DomainError, conflict } from '../../errors/errors.js';
import type { BroadcastStatus } from '../../db/schema.js';

/**
 * The broadcast state machine, in one place (docs/api.md §5 and §11). Every operation against every status
 * is either the status it leads to or the error it answers; every status change of a broadcast goes through it.
 * - update: PUT without a sendAt change; schedule / unschedule: PUT with a future sendAt / sendAt null.
 * - send: POST …/send; start: the scheduler reaching sendAt; cancel: POST …/cancel.
 * - pause / resume: POST …/pause and …/resume; trip: the circuit breaker pausing a broadcast by itself.
 * - complete / fail: the delivery pipeline, when every delivery is final (some sent / none sent).
 */
export const BROADCAST_OPERATIONS = [
  'update',
  'schedule',
  'unschedule',
  'send',
  'start',
  'cancel',
  'delete',
  'pause',
  'resume',
  'trip',
  'complete',
  'fail',
] as const;
export type BroadcastOperation = (typeof BROADCAST_OPERATIONS)[number];

type Outcome = BroadcastStatus | 'DELETED' | (() => DomainError);

const notEditable = () => conflict('broadcast_not_editable', 'only DRAFT and SCHEDULED broadcasts can be edited');
const invalid = (what: string) => () => conflict('invalid_state', what);

const finished = (status: string): Record<BroadcastOperation, Outcome> => ({
  update: notEditable,
  schedule: notEditable,
  unschedule: notEditable,
  send: invalid(`a ${status} broadcast cannot be sent again; create a new one`),
  start: invalid(`a ${status} broadcast cannot start`),
  cancel: invalid(`a ${status} broadcast cannot be canceled`),
  delete: invalid('only DRAFT broadcasts can be deleted'),
  pause: invalid(`a ${status} broadcast is not sending`),
  resume: invalid(`a ${status} broadcast is not paused`),
  trip: invalid(`a ${status} broadcast is not sending`),
  complete: invalid(`a ${status} broadcast is already finished`),
  fail: invalid(`a ${status} broadcast is already finished`),
});

export const BROADCAST_TRANSITIONS: Record<BroadcastStatus, Record<BroadcastOperation, Outcome>> = {
  DRAFT: {
    update: 'DRAFT',
    schedule: 'SCHEDULED',
    unschedule: 'DRAFT',
    send: 'SENDING',
    start: invalid('a draft has no send time'),
    cancel: invalid('a draft is not scheduled or sending'),
    delete: 'DELETED',
    pause: invalid('a draft is not sending'),
    resume: invalid('a draft is not paused'),
    trip: invalid('a draft is not sending'),
    complete: invalid('a draft is not sending'),
    fail: invalid('a draft is not sending'),
  },
  SCHEDULED: {
    update: 'SCHEDULED',
    schedule: 'SCHEDULED',
    unschedule: 'DRAFT',
    send: 'SENDING',
    start: 'SENDING',
    cancel: 'DRAFT',
    delete: invalid('only DRAFT broadcasts can be deleted; cancel the schedule first'),
    pause: invalid('a scheduled broadcast is not sending yet; cancel the schedule instead'),
    resume: invalid('a scheduled broadcast is not paused'),
    trip: invalid('a scheduled broadcast is not sending'),
    complete: invalid('a scheduled broadcast is not sending'),
    fail: invalid('a scheduled broadcast is not sending'),
  },
  SENDING: {
    update: notEditable,
    schedule: notEditable,
    unschedule: notEditable,
    send: invalid('the broadcast is already sending'),
    start: invalid('the broadcast is already sending'),
    cancel: 'CANCELED',
    delete: invalid('only DRAFT broadcasts can be deleted'),
    pause: 'PAUSED',
    resume: invalid('the broadcast is sending, not paused'),
    trip: 'PAUSED',
    complete: 'SENT',
    fail: 'FAILED',
  },
  PAUSED: {
    update: notEditable,
    schedule: notEditable,
    unschedule: notEditable,
    send: invalid('the broadcast is paused; resume it (POST /v1/broadcasts/{id}/resume)'),
    start: invalid('the broadcast is paused'),
    cancel: 'CANCELED',
    delete: invalid('only DRAFT broadcasts can be deleted'),
    pause: invalid('the broadcast is already paused'),
    resume: 'SENDING',
    trip: invalid('the broadcast is already paused'),
    complete: invalid('a paused broadcast finishes only once resumed'),
    fail: invalid('a paused broadcast finishes only once resumed'),
  },
  SENT: finished('SENT'),
  CANCELED: finished('CANCELED'),
  FAILED: finished('FAILED'),
};

/**
 * The statuses, in the table's order: the one list, from which the API's schema is built (broadcasts.schemas.ts).
 * The table is a Record of the column's type (db/schema.ts), so it names each status once and none other.
 */
export const BROADCAST_STATUSES = Object.keys(BROADCAST_TRANSITIONS) as BroadcastStatus[];

/** The statuses from which `op` is allowed (for the queries that make a move in one statement). */
export function broadcastStatusesFor(op: BroadcastOperation): BroadcastStatus[] {
  return BROADCAST_STATUSES.filter((s) => typeof BROADCAST_TRANSITIONS[s][op] === 'string');
}

/** The status `op` leads to from `status`, or throws the documented error for a move that is not allowed. */
export function transition(status: BroadcastStatus, op: BroadcastOperation): BroadcastStatus | 'DELETED' {
  const outcome = BROADCAST_TRANSITIONS[status][op];
  if (typeof outcome === 'function') throw outcome();
  return outcome;
}
