import type { Executor } from '../../db/connection.js';
import type { ContactStatus } from '../../db/schema.js';
import { recordEvents } from '../../outbox/index.js';
import { newId } from '../../lib/ids.js';
import { createdEvents, statusEvents, updatedEvent, type ContactSource } from './contacts.events.js';
import { addSuppression, getSuppression, liftSuppression } from '../suppressions/suppressions.repository.js';
import { contactIdByEmail, getContact, insertContactsIfNew, updateContact, type ContactRecord } from './contacts.repository.js';
import { moveContact, signUpNew, type ContactMove, type ContactOperation, type SuppressionReason } from './contacts.state.js';

/**
 * The one writer of a contact's status and of its address's suppression (contacts/CONTEXT.md). Other
 * features call these functions, inside their own transaction, to say what happened (a bounce, a complaint,
 * an unsubscription, a sign-up, a confirmation); the rules of what follows are the table in contacts.state.ts.
 */

/** Where a change came from, kept on a suppression entry. */
export interface Cause {
  deliveryId?: string | null;
  broadcastId?: string | null;
  detail?: string | null;
}

export interface Applied {
  /** The contact, if the address has one. */
  contactId: string | null;
  before: ContactStatus | null;
  move: ContactMove;
  suppressed: boolean;
}

/**
 * Applies `op` to the contact of `email` (normalised), or to the address alone when it has no contact
 * (a bounce for a deleted contact still suppresses the address).
 */
export async function applyToAddress(trx: Executor, workspaceId: string, email: string, op: ContactOperation, cause: Cause, now: string): Promise<Applied> {
  const id = await contactIdByEmail(trx, workspaceId, email);
  const contact = id ? await getContact(trx, workspaceId, id) : undefined;
  return apply(trx, workspaceId, email, contact, op, cause, now);
}

/** Applies `op` to a contact of the workspace; undefined when there is no such contact. */
export async function applyToContact(trx: Executor, workspaceId: string, contactId: string, op: ContactOperation, cause: Cause, now: string): Promise<Applied | undefined> {
  const contact = await getContact(trx, workspaceId, contactId);
  if (!contact) return undefined;
  return apply(trx, workspaceId, contact.email, contact, op, cause, now);
}

/** Where each operation comes from, as its events say (`data.source`). */
const SOURCE: Record<ContactOperation, ContactSource> = {
  signUp: 'form', signUpDoubleOptIn: 'form', confirm: 'confirmation', unsubscribe: 'unsubscribe',
  hardBounce: 'report', softBounceLimit: 'report', complaint: 'report', suppress: 'suppression', unsuppress: 'suppression',
  setSubscribed: 'api', setPending: 'api', setUnsubscribed: 'api', setBounced: 'api', setComplained: 'api',
};

async function apply(trx: Executor, workspaceId: string, email: string, contact: ContactRecord | undefined, op: ContactOperation, cause: Cause, now: string): Promise<Applied> {
  const entry = await getSuppression(trx, workspaceId, email);
  const before = contact?.status ?? null;
  const move = moveContact({ status: before ?? 'UNSUBSCRIBED', suppressed: entry !== undefined }, op);
  if (contact && move.status !== contact.status) {
    await updateContact(trx, workspaceId, contact.id, { status: move.status }, now);
    const extra = cause.broadcastId ? { broadcastId: cause.broadcastId } : {};
    await recordEvents(trx, workspaceId, statusEvents(contact.id, contact.email, contact.status, move.status, SOURCE[op], extra), now);
  }
  let suppressed = entry !== undefined;
  if (move.suppression === 'lift' && suppressed) suppressed = !(await liftSuppression(trx, workspaceId, email));
  else if (typeof move.suppression === 'object' && !suppressed) {
    await addSuppression(trx, workspaceId, { email, reason: move.suppression.add, deliveryId: cause.deliveryId ?? null, broadcastId: cause.broadcastId ?? null, detail: cause.detail ?? null, now });
    suppressed = true;
  }
  return { contactId: contact?.id ?? null, before, move, suppressed };
}

// ---------------------------------------------------------------------------------------------------
// Sign-ups and confirmations (forms)

/** What a sign-up submits for the contact (mapped fields only). */
export interface SignUpFields {
  firstName?: string;
  lastName?: string;
  properties: Record<string, unknown>;
}

/** What a sign-up asked to change on a confirmed contact, applied when its owner confirms. */
export interface HeldChanges {
  firstName?: string;
  lastName?: string;
  properties?: Record<string, unknown>;
}

const isBlank = (v: unknown) => v === undefined || v === null || v === '';

/**
 * The data side of a sign-up (docs/security.md): a new or PENDING contact takes everything submitted; a
 * confirmed one only what it lacks, and the rest is held until its owner confirms.
 */
export function signUpData(existing: Pick<ContactRecord, 'status' | 'firstName' | 'lastName' | 'properties'> | null, suppressed: boolean, fields: SignUpFields): { write: HeldChanges; held: HeldChanges | null } {
  const all: HeldChanges = {
    ...(fields.firstName !== undefined ? { firstName: fields.firstName } : {}),
    ...(fields.lastName !== undefined ? { lastName: fields.lastName } : {}),
    ...(Object.keys(fields.properties).length ? { properties: fields.properties } : {}),
  };
  if (existing === null) return { write: all, held: null };
  if (existing.status === 'PENDING' && !suppressed) {
    return { write: { ...all, ...(all.properties ? { properties: { ...existing.properties, ...all.properties } } : {}) }, held: null };
  }
  const write: HeldChanges = {};
  if (fields.firstName !== undefined && isBlank(existing.firstName)) write.firstName = fields.firstName;
  if (fields.lastName !== undefined && isBlank(existing.lastName)) write.lastName = fields.lastName;
  const missing = Object.entries(fields.properties).filter(([k]) => isBlank(existing.properties[k]));
  if (missing.length) write.properties = { ...existing.properties, ...Object.fromEntries(missing) };
  return { write, held: Object.keys(all).length ? all : null };
}

/**
 * An anonymous sign-up of `email` (normalised): creates or updates the contact by the lifecycle's rules.
 * `confirm` says a confirmation email is due; `held` is what its link will apply; `created`, that the contact is
 * new (made by this call). Race-safe on the unique email.
 */
export async function signUp(trx: Executor, workspaceId: string, email: string, fields: SignUpFields, doubleOptIn: boolean, now: string): Promise<{ contactId: string; confirm: boolean; held: HeldChanges | null; created: boolean }> {
  const entry = await getSuppression(trx, workspaceId, email);
  const suppression: SuppressionReason | null = entry?.reason ?? null;
  let id = await contactIdByEmail(trx, workspaceId, email);
  if (!id) {
    const { status, confirm } = signUpNew(doubleOptIn, suppression);
    const { write, held } = signUpData(null, false, fields);
    const inserted = await insertContactsIfNew(trx, workspaceId, [{
      id: newId('ct'), email, firstName: write.firstName ?? null, lastName: write.lastName ?? null, properties: write.properties ?? {}, status, createdAt: now,
    }]);
    id = inserted.get(email);
    if (id) {
      await recordEvents(trx, workspaceId, createdEvents(id, email, status, 'form'), now);
      return { contactId: id, confirm, held, created: true };
    }
    id = (await contactIdByEmail(trx, workspaceId, email))!; // created concurrently: update it below
  }
  const existing = (await getContact(trx, workspaceId, id))!;
  const move = moveContact({ status: existing.status, suppressed: suppression !== null }, doubleOptIn ? 'signUpDoubleOptIn' : 'signUp');
  const { write, held } = signUpData(existing, suppression !== null, fields);
  await updateContact(trx, workspaceId, id, { ...write, status: move.status }, now);
  const events = statusEvents(id, email, existing.status, move.status, 'form');
  if (Object.keys(write).length) events.unshift(updatedEvent(id, email, Object.keys(write), 'form'));
  await recordEvents(trx, workspaceId, events, now);
  return { contactId: id, confirm: move.confirm, held: move.confirm ? held : null, created: false };
}

/** The owner followed a confirmation link: SUBSCRIBED, the suppression lifted, the held changes applied. */
export async function confirm(trx: Executor, workspaceId: string, contactId: string, held: HeldChanges | null, now: string): Promise<Applied | undefined> {
  const contact = await getContact(trx, workspaceId, contactId);
  if (!contact) return undefined;
  if (held) {
    await recordEvents(trx, workspaceId, [updatedEvent(contactId, contact.email, Object.keys(held), 'confirmation')], now);
    await updateContact(trx, workspaceId, contactId, {
      ...(held.firstName !== undefined ? { firstName: held.firstName } : {}),
      ...(held.lastName !== undefined ? { lastName: held.lastName } : {}),
      ...(held.properties ? { properties: { ...contact.properties, ...held.properties } } : {}),
    }, now);
  }
  return apply(trx, workspaceId, contact.email, contact, 'confirm', {}, now);
}
