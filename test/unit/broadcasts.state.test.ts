import { describe, expect, it } from 'vitest';
import { expectRefused } from '../helpers/transitions.js';
import { BROADCAST_STATUSES } from '../../src/sending/broadcasts/broadcasts.schemas.js';
import { BROADCAST_OPERATIONS, transition } from '../../src/sending/broadcasts/broadcasts.state.js';

/** Every status against every operation, spelled out independently of the table in the source. */
const N = 'broadcast_not_editable';
const I = 'invalid_state';
const P = 'PAUSED';
const expected: Record<string, Record<string, string>> = {
  DRAFT: {
    update: 'DRAFT',
    schedule: 'SCHEDULED',
    unschedule: 'DRAFT',
    send: 'SENDING',
    start: I,
    cancel: I,
    delete: 'DELETED',
    pause: I,
    resume: I,
    trip: I,
    complete: I,
    fail: I,
  },
  SCHEDULED: {
    update: 'SCHEDULED',
    schedule: 'SCHEDULED',
    unschedule: 'DRAFT',
    send: 'SENDING',
    start: 'SENDING',
    cancel: 'DRAFT',
    delete: I,
    pause: I,
    resume: I,
    trip: I,
    complete: I,
    fail: I,
  },
  SENDING: {
    update: N,
    schedule: N,
    unschedule: N,
    send: I,
    start: I,
    cancel: 'CANCELED',
    delete: I,
    pause: P,
    resume: I,
    trip: P,
    complete: 'SENT',
    fail: 'FAILED',
  },
  PAUSED: {
    update: N,
    schedule: N,
    unschedule: N,
    send: I,
    start: I,
    cancel: 'CANCELED',
    delete: I,
    pause: I,
    resume: 'SENDING',
    trip: I,
    complete: I,
    fail: I,
  },
  SENT: {
    update: N,
    schedule: N,
    unschedule: N,
    send: I,
    start: I,
    cancel: I,
    delete: I,
    pause: I,
    resume: I,
    trip: I,
    complete: I,
    fail: I,
  },
  CANCELED: {
    update: N,
    schedule: N,
    unschedule: N,
    send: I,
    start: I,
    cancel: I,
    delete: I,
    pause: I,
    resume: I,
    trip: I,
    complete: I,
    fail: I,
  },
  FAILED: {
    update: N,
    schedule: N,
    unschedule: N,
    send: I,
    start: I,
    cancel: I,
    delete: I,
    pause: I,
    resume: I,
    trip: I,
    complete: I,
    fail: I,
  },
};

describe('broadcast state machine', () => {
  for (const status of BROADCAST_STATUSES) {
    for (const op of BROADCAST_OPERATIONS) {
      const want = expected[status]![op]!;
      it(`${status} × ${op} → ${want}`, () => {
        if (want === N || want === I) {
          expectRefused(() => transition(status, op), want);
        } else {
          expect(transition(status, op)).toBe(want);
        }
      });
    }
  }
});
