import { type DomainError, conflict } from '../errors/errors.js';
import type { BroadcastStatus } from './broadcasts.schemas.js';

/**
 * The broadcast state machine, in one place (contract section 5). Every operation against every status
 * is either the status it leads to or the error it answers.
 * - update: PUT without a sendAt change; schedule / unschedule: PUT with a future sendAt / sendAt null.
 * - send: POST …/send; start: the scheduler reaching sendAt; cancel: POST …/cancel.
 * - complete / fail: the delivery pipeline, when every delivery is final (some sent / none sent).
 */
export const BROADCAST_OPERATIONS = ['update', 'schedule', 'unschedule', 'send', 'start', 'cancel', 'delete', 'complete', 'fail'] as const;
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
    complete: 'SENT',
    fail: 'FAILED',
  },
  SENT: finished('SENT'),
  CANCELED: finished('CANCELED'),
  FAILED: finished('FAILED'),
};

/** The status `op` leads to from `status`, or throws the contract's error for a move that is not allowed. */
export function transition(status: BroadcastStatus, op: BroadcastOperation): BroadcastStatus | 'DELETED' {
  const outcome = BROADCAST_TRANSITIONS[status][op];
  if (typeof outcome === 'function') throw outcome();
  return outcome;
}
