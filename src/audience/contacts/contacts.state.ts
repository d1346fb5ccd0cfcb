import type { ContactStatus } from '../../db/schema.js';
import type { SuppressionReason } from '../suppressions/suppressions.schemas.js';

export type { SuppressionReason };

/**
 * The contact lifecycle, in one place (contacts/CONTEXT.md): every move of a contact's status and of its
 * address's suppression. A contact's state is its status and whether its address is suppressed; an
 * operation leads to the next status, may add or lift the suppression, and may ask for a confirmation email.
 *
 * - signUp / signUpDoubleOptIn: an anonymous sign-up (hosted page, embed, API submission) on a form without /
 *   with double opt-in. Only a new or PENDING contact is moved by it; any other (an address that
 *   unsubscribed, bounced, complained, or is suppressed) needs its owner: a confirmation is sent.
 * - confirm: the owner followed a confirmation link: SUBSCRIBED, and the suppression is lifted.
 * - unsubscribe: from everything (the unsubscribe page, one-click without a topic, the mailto address).
 * - hardBounce, softBounceLimit, complaint: what bounce and complaint reports do (docs/bounces.md).
 * - suppress / unsuppress: the suppression list's API (MANUAL entries; DELETE lifts any entry).
 * - set*: a status given by the API (POST/PUT /v1/contacts) or an import row. While the address is suppressed
 *   a contact cannot be made SUBSCRIBED or PENDING this way: the status stays and the answer says `suppressed`.
 */
export const CONTACT_STATUSES = [
  'SUBSCRIBED',
  'PENDING',
  'UNSUBSCRIBED',
  'BOUNCED',
  'COMPLAINED',
] as const satisfies readonly ContactStatus[];

export const CONTACT_OPERATIONS = [
  'signUp',
  'signUpDoubleOptIn',
  'confirm',
  'unsubscribe',
  'hardBounce',
  'softBounceLimit',
  'complaint',
  'suppress',
  'unsuppress',
  'setSubscribed',
  'setPending',
  'setUnsubscribed',
  'setBounced',
  'setComplained',
] as const;
export type ContactOperation = (typeof CONTACT_OPERATIONS)[number];

export interface ContactState {
  status: ContactStatus;
  suppressed: boolean;
}

export interface ContactMove {
  status: ContactStatus;
  /** Add an entry with this reason (an address already suppressed keeps its entry), lift the entry, or leave it. */
  suppression: { add: SuppressionReason } | 'lift' | 'keep';
  /** The owner must confirm by email (a sign-up the table will not act on by itself). */
  confirm: boolean;
  /** The operation asked for SUBSCRIBED or PENDING, and the suppression kept the status as it was. */
  heldBySuppression: boolean;
}

const S = 'SUBSCRIBED';
const P = 'PENDING';
const U = 'UNSUBSCRIBED';
const B = 'BOUNCED';
const C = 'COMPLAINED';

type Row = Record<ContactStatus, ContactStatus>;
const all = (to: ContactStatus): Row => ({
  SUBSCRIBED: to,
  PENDING: to,
  UNSUBSCRIBED: to,
  BOUNCED: to,
  COMPLAINED: to,
});
const same: Row = { SUBSCRIBED: S, PENDING: P, UNSUBSCRIBED: U, BOUNCED: B, COMPLAINED: C };

/** The next status of a contact whose address is not suppressed. */
export const CONTACT_TRANSITIONS: Record<ContactOperation, Row> = {
  signUp: { ...same, PENDING: S },
  signUpDoubleOptIn: same,
  confirm: all(S),
  // A bounce or a complaint is a stronger reason than an unsubscription, and a complaint the strongest.
  unsubscribe: { ...same, SUBSCRIBED: U, PENDING: U },
  hardBounce: { ...same, SUBSCRIBED: B, PENDING: B, UNSUBSCRIBED: B },
  softBounceLimit: { ...same, SUBSCRIBED: B, PENDING: B, UNSUBSCRIBED: B },
  complaint: all(C),
  suppress: same,
  unsuppress: same,
  setSubscribed: all(S),
  setPending: all(P),
  setUnsubscribed: all(U),
  setBounced: all(B),
  setComplained: all(C),
};

/** What each operation does to the suppression list. */
export const SUPPRESSION_EFFECTS: Record<ContactOperation, ContactMove['suppression']> = {
  signUp: 'keep',
  signUpDoubleOptIn: 'keep',
  confirm: 'lift',
  unsubscribe: { add: 'UNSUBSCRIBED' },
  hardBounce: { add: 'BOUNCED' },
  softBounceLimit: { add: 'BOUNCED' },
  complaint: { add: 'COMPLAINED' },
  suppress: { add: 'MANUAL' },
  unsuppress: 'lift',
  setSubscribed: 'keep',
  setPending: 'keep',
  setUnsubscribed: 'keep',
  setBounced: 'keep',
  setComplained: 'keep',
};

const SIGN_UPS = new Set<ContactOperation>(['signUp', 'signUpDoubleOptIn']);
const SETS_MAILABLE = new Set<ContactOperation>(['setSubscribed', 'setPending']);

/** The status an API set operation names. */
export const SET_OPERATION: Record<ContactStatus, ContactOperation> = {
  SUBSCRIBED: 'setSubscribed',
  PENDING: 'setPending',
  UNSUBSCRIBED: 'setUnsubscribed',
  BOUNCED: 'setBounced',
  COMPLAINED: 'setComplained',
};

/** The status a contact created for a suppressed address starts with (a re-import after its deletion). */
export const STATUS_OF_SUPPRESSED: Record<SuppressionReason, ContactStatus> = {
  BOUNCED: B,
  COMPLAINED: C,
  UNSUBSCRIBED: U,
  MANUAL: U,
};

/** The move `op` makes from `state`. Total: every operation is defined for every state. */
export function moveContact(state: ContactState, op: ContactOperation): ContactMove {
  const suppression = SUPPRESSION_EFFECTS[op];
  if (SIGN_UPS.has(op)) {
    // Only a contact that has confirmed nothing (PENDING) is moved by a stranger's sign-up.
    const next = !state.suppressed && state.status === P ? CONTACT_TRANSITIONS[op][state.status] : state.status;
    const confirm =
      state.suppressed ||
      state.status === U ||
      state.status === B ||
      state.status === C ||
      (op === 'signUpDoubleOptIn' && state.status === P);
    return { status: next, suppression, confirm, heldBySuppression: false };
  }
  if (state.suppressed && SETS_MAILABLE.has(op)) {
    return { status: state.status, suppression, confirm: false, heldBySuppression: true };
  }
  return { status: CONTACT_TRANSITIONS[op][state.status], suppression, confirm: false, heldBySuppression: false };
}

/** The state of a contact about to be created by a sign-up (a new address), or by the API / an import. */
export function initialStatus(
  requested: ContactStatus,
  suppression: SuppressionReason | null,
): { status: ContactStatus; heldBySuppression: boolean } {
  if (suppression && (requested === S || requested === P))
    return { status: STATUS_OF_SUPPRESSED[suppression], heldBySuppression: true };
  return { status: requested, heldBySuppression: false };
}

/** A sign-up for an address that has no contact yet: PENDING with double opt-in, else SUBSCRIBED, unless suppressed. */
export function signUpNew(
  doubleOptIn: boolean,
  suppression: SuppressionReason | null,
): { status: ContactStatus; confirm: boolean } {
  if (suppression) return { status: STATUS_OF_SUPPRESSED[suppression], confirm: true };
  return doubleOptIn ? { status: P, confirm: true } : { status: S, confirm: false };
}

/**
 * A status given by the API or an import row, for a contact whose address is or is not suppressed: the
 * status to write (null: keep the current one) — the `set*` rows of the table, which do not depend on the
 * current status.
 */
export function requestedStatus(
  requested: ContactStatus,
  suppressed: boolean,
): { status: ContactStatus | null; heldBySuppression: boolean } {
  const move = moveContact({ status: 'UNSUBSCRIBED', suppressed }, SET_OPERATION[requested]);
  return move.heldBySuppression
    ? { status: null, heldBySuppression: true }
    : { status: move.status, heldBySuppression: false };
}
