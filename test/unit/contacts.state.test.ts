import { describe, expect, it } from 'vitest';
import {
  CONTACT_OPERATIONS,
  CONTACT_STATUSES,
  initialStatus,
  moveContact,
  requestedStatus,
  signUpNew,
  type ContactOperation,
} from '../../src/audience/contacts/contacts.state.js';

/**
 * Every contact state (status × suppressed) against every operation, spelled out independently of the
 * table in the source: the next status, what happens to the suppression, whether a confirmation is due,
 * and whether the suppression held a requested status back.
 */
type Want = [next: string, suppression: string, confirm: boolean, held: boolean];
const S = 'SUBSCRIBED';
const P = 'PENDING';
const U = 'UNSUBSCRIBED';
const B = 'BOUNCED';
const C = 'COMPLAINED';

function expected(status: string, suppressed: boolean, op: ContactOperation): Want {
  const keep: Want = [status, 'keep', false, false];
  switch (op) {
    case 'signUp':
      if (suppressed) return [status, 'keep', true, false];
      return status === P ? [S, 'keep', false, false] : status === S ? keep : [status, 'keep', true, false];
    case 'signUpDoubleOptIn':
      if (suppressed) return [status, 'keep', true, false];
      return status === S ? keep : [status, 'keep', true, false];
    case 'confirm':
      return [S, 'lift', false, false];
    case 'unsubscribe':
      return [status === S || status === P ? U : status, 'add:UNSUBSCRIBED', false, false];
    case 'hardBounce':
    case 'softBounceLimit':
      return [status === C ? C : B, 'add:BOUNCED', false, false];
    case 'complaint':
      return [C, 'add:COMPLAINED', false, false];
    case 'suppress':
      return [status, 'add:MANUAL', false, false];
    case 'unsuppress':
      return [status, 'lift', false, false];
    case 'setSubscribed':
      return suppressed ? [status, 'keep', false, true] : [S, 'keep', false, false];
    case 'setPending':
      return suppressed ? [status, 'keep', false, true] : [P, 'keep', false, false];
    case 'setUnsubscribed':
      return [U, 'keep', false, false];
    case 'setBounced':
      return [B, 'keep', false, false];
    case 'setComplained':
      return [C, 'keep', false, false];
  }
}

describe('contact lifecycle', () => {
  for (const status of CONTACT_STATUSES) {
    for (const suppressed of [false, true]) {
      for (const op of CONTACT_OPERATIONS) {
        const want = expected(status, suppressed, op);
        it(`${status}${suppressed ? ' (suppressed)' : ''} × ${op} → ${want.join(' ')}`, () => {
          const move = moveContact({ status, suppressed }, op);
          const suppression = typeof move.suppression === 'object' ? `add:${move.suppression.add}` : move.suppression;
          expect([move.status, suppression, move.confirm, move.heldBySuppression]).toEqual(want);
        });
      }
    }
  }

  it('a new address: PENDING with double opt-in, SUBSCRIBED without; a suppressed one takes its suppression status and needs confirming', () => {
    expect(signUpNew(true, null)).toEqual({ status: P, confirm: true });
    expect(signUpNew(false, null)).toEqual({ status: S, confirm: false });
    expect(signUpNew(false, 'BOUNCED')).toEqual({ status: B, confirm: true });
    expect(signUpNew(true, 'MANUAL')).toEqual({ status: U, confirm: true });
    expect(initialStatus(S, 'COMPLAINED')).toEqual({ status: C, heldBySuppression: true });
    expect(initialStatus(U, 'COMPLAINED')).toEqual({ status: U, heldBySuppression: false });
    expect(initialStatus(S, null)).toEqual({ status: S, heldBySuppression: false });
    expect(requestedStatus(S, true)).toEqual({ status: null, heldBySuppression: true });
    expect(requestedStatus(B, true)).toEqual({ status: B, heldBySuppression: false });
  });
});
