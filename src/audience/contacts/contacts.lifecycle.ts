import type { Executor } from '../../db/connection.js';
import type { ContactStatus } from '../../db/schema.js';
import { recordEvents, type NewEvent } from '../../outbox/index.js';
import { newId } from '../../lib/ids.js';
import { toJsonColumn } from '../../lib/json.js';
import { createdEvents, statusEvents, updatedEvent, type ContactSource } from './contacts.events.js';
import type { ContactUpsert } from './contacts.import.js';
import {
  addSuppression,
  getSuppression,
  liftSuppression,
  suppressionsOf,
} from '../suppressions/suppressions.repository.js';
import { insertContactIfNew, insertContactsIfNew, updateContacts } from './contacts.batch-sql.js';
import {
  contactIdByEmail,
  contactStatesByEmail,
  getContact,
  updateContact,
  type ContactRecord,
} from './contacts.repository.js';
import {
  initialStatus,
  moveContact,
  requestedStatus,
  signUpNew,
  type ContactMove,
  type ContactOperation,
  type SuppressionReason,
} from './contacts.state.js';

/**
 * The one writer of a contact's status and of its address's suppression (contacts/CONTEXT.md). Other
 * features call these functions, inside their own transaction, to say what happened (a bounce, a complaint,
 * an unsubscription, a sign-up, a confirmation, an upsert by the API or an import); the rules of what follows are
 * the table in contacts.state.ts.
 */

/** Where a change came from, kept on a suppression entry. */
export interface Cause {
  deliveryId?: string | null;
  broadcastId?: string | null;
  detail?: string | null;
  /** How it was asked for, as the status event says (`data.via`): an unsubscribe's link, page button or mail. */
  via?: string;
  /** Why, when the person said so on the unsubscribe page: the status event's `data.reason` (a code) and `data.comment`. */
  reason?: string;
  comment?: string;
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
export async function applyToAddress(
  trx: Executor,
  workspaceId: string,
  email: string,
  op: ContactOperation,
  cause: Cause,
  now: string,
): Promise<Applied> {
  const id = await contactIdByEmail(trx, workspaceId, email);
  const contact = id ? await getContact(trx, workspaceId, id) : undefined;
  return apply(trx, workspaceId, email, contact, op, cause, now);
}

/** Applies `op` to a contact of the workspace; undefined when there is no such contact. */
export async function applyToContact(
  trx: Executor,
  workspaceId: string,
  contactId: string,
  op: ContactOperation,
  cause: Cause,
  now: string,
): Promise<Applied | undefined> {
  const contact = await getContact(trx, workspaceId, contactId);
  if (!contact) return undefined;
  return apply(trx, workspaceId, contact.email, contact, op, cause, now);
}

/** Where each operation comes from, as its events say (`data.source`). */
const SOURCE: Record<ContactOperation, ContactSource> = {
  signUp: 'form',
  signUpDoubleOptIn: 'form',
  confirm: 'confirmation',
  unsubscribe: 'unsubscribe',
  hardBounce: 'report',
  softBounceLimit: 'report',
  complaint: 'report',
  suppress: 'suppression',
  unsuppress: 'suppression',
  setSubscribed: 'api',
  setPending: 'api',
  setUnsubscribed: 'api',
  setBounced: 'api',
  setComplained: 'api',
};

async function apply(
  trx: Executor,
  workspaceId: string,
  email: string,
  contact: ContactRecord | undefined,
  op: ContactOperation,
  cause: Cause,
  now: string,
): Promise<Applied> {
  const entry = await getSuppression(trx, workspaceId, email);
  const before = contact?.status ?? null;
  const move = moveContact({ status: before ?? 'UNSUBSCRIBED', suppressed: entry !== undefined }, op);
  if (contact && move.status !== contact.status) {
    await updateContact(trx, workspaceId, contact.id, { status: move.status }, now);
    const extra = {
      ...(cause.broadcastId ? { broadcastId: cause.broadcastId } : {}),
      ...(cause.via ? { via: cause.via } : {}),
      ...(cause.reason ? { reason: cause.reason } : {}),
      ...(cause.comment ? { comment: cause.comment } : {}),
    };
    await recordEvents(
      trx,
      workspaceId,
      statusEvents(contact.id, contact.email, contact.status, move.status, SOURCE[op], extra),
      now,
    );
  }
  let suppressed = entry !== undefined;
  if (move.suppression === 'lift' && suppressed) suppressed = !(await liftSuppression(trx, workspaceId, email));
  else if (typeof move.suppression === 'object' && !suppressed) {
    await addSuppression(trx, workspaceId, {
      email,
      reason: move.suppression.add,
      deliveryId: cause.deliveryId ?? null,
      broadcastId: cause.broadcastId ?? null,
      detail: cause.detail ?? null,
      now,
    });
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
export function signUpData(
  existing: Pick<ContactRecord, 'status' | 'firstName' | 'lastName' | 'properties'> | null,
  suppressed: boolean,
  fields: SignUpFields,
): { write: HeldChanges; held: HeldChanges | null } {
  const all: HeldChanges = {
    ...(fields.firstName !== undefined ? { firstName: fields.firstName } : {}),
    ...(fields.lastName !== undefined ? { lastName: fields.lastName } : {}),
    ...(Object.keys(fields.properties).length ? { properties: fields.properties } : {}),
  };
  if (existing === null) return { write: all, held: null };
  if (existing.status === 'PENDING' && !suppressed) {
    return {
      write: { ...all, ...(all.properties ? { properties: { ...existing.properties, ...all.properties } } : {}) },
      held: null,
    };
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
export async function signUp(
  trx: Executor,
  workspaceId: string,
  email: string,
  fields: SignUpFields,
  doubleOptIn: boolean,
  now: string,
): Promise<{ contactId: string; confirm: boolean; held: HeldChanges | null; created: boolean }> {
  const entry = await getSuppression(trx, workspaceId, email);
  const suppression: SuppressionReason | null = entry?.reason ?? null;
  let id = await contactIdByEmail(trx, workspaceId, email);
  if (!id) {
    const { status, confirm } = signUpNew(doubleOptIn, suppression);
    const { write, held } = signUpData(null, false, fields);
    id = await insertContactIfNew(
      trx,
      workspaceId,
      {
        id: newId('ct'),
        email,
        firstName: write.firstName ?? null,
        lastName: write.lastName ?? null,
        propertiesJson: toJsonColumn(write.properties ?? {})!,
        status,
      },
      now,
    );
    if (id) {
      await recordEvents(trx, workspaceId, createdEvents(id, email, status, 'form'), now);
      return { contactId: id, confirm, held, created: true };
    }
    id = (await contactIdByEmail(trx, workspaceId, email))!; // created concurrently: update it below
  }
  const existing = (await getContact(trx, workspaceId, id))!;
  const move = moveContact(
    { status: existing.status, suppressed: suppression !== null },
    doubleOptIn ? 'signUpDoubleOptIn' : 'signUp',
  );
  const { write, held } = signUpData(existing, suppression !== null, fields);
  await updateContact(trx, workspaceId, id, { ...write, status: move.status }, now);
  const events = statusEvents(id, email, existing.status, move.status, 'form');
  if (Object.keys(write).length) events.unshift(updatedEvent(id, email, Object.keys(write), 'form'));
  await recordEvents(trx, workspaceId, events, now);
  return { contactId: id, confirm: move.confirm, held: move.confirm ? held : null, created: false };
}

/** The owner followed a confirmation link: SUBSCRIBED, the suppression lifted, the held changes applied. */
export async function confirm(
  trx: Executor,
  workspaceId: string,
  contactId: string,
  held: HeldChanges | null,
  now: string,
): Promise<Applied | undefined> {
  const contact = await getContact(trx, workspaceId, contactId);
  if (!contact) return undefined;
  if (held) {
    await recordEvents(
      trx,
      workspaceId,
      [updatedEvent(contactId, contact.email, Object.keys(held), 'confirmation')],
      now,
    );
    await updateContact(
      trx,
      workspaceId,
      contactId,
      {
        ...(held.firstName !== undefined ? { firstName: held.firstName } : {}),
        ...(held.lastName !== undefined ? { lastName: held.lastName } : {}),
        ...(held.properties ? { properties: { ...contact.properties, ...held.properties } } : {}),
      },
      now,
    );
  }
  return apply(trx, workspaceId, contact.email, contact, 'confirm', {}, now);
}

// ---------------------------------------------------------------------------------------------------
// Upserts (the API's POST /v1/contacts, imports)

/**
 * Creates the contact, or updates the one with that email: present fields replace, omitted ones stay; a status is
 * applied by the table's `set*` rows (requestedStatus: a suppressed address is not made SUBSCRIBED or PENDING, and
 * `heldBySuppression` says so). Race-safe: the insert does nothing when the email exists (the unique constraint
 * decides) and the existing contact is then updated.
 */
export async function upsertContact(
  trx: Executor,
  workspaceId: string,
  input: ContactUpsert,
  now: string,
): Promise<{ id: string; created: boolean; heldBySuppression: boolean }> {
  const suppression = (await suppressionsOf(trx, workspaceId, [input.email])).get(input.email) ?? null;
  const propertiesJson = input.properties === undefined ? undefined : JSON.stringify(input.properties);
  return upsertOne(
    trx,
    workspaceId,
    input.email,
    input.firstName,
    input.lastName,
    input.status,
    propertiesJson,
    suppression,
    now,
    'api',
  );
}

/** The names of the fields an upsert sets, for `contact.updated`'s data. */
function fieldsSet(firstName: unknown, lastName: unknown, propertiesJson: unknown): string[] {
  return [
    firstName !== undefined && 'firstName',
    lastName !== undefined && 'lastName',
    propertiesJson !== undefined && 'properties',
  ].filter((f): f is string => Boolean(f));
}

async function upsertOne(
  trx: Executor,
  workspaceId: string,
  email: string,
  firstName: string | null | undefined,
  lastName: string | null | undefined,
  status: ContactStatus | undefined,
  propertiesJson: string | undefined,
  suppression: SuppressionReason | null,
  now: string,
  source: ContactSource,
): Promise<{ id: string; created: boolean; heldBySuppression: boolean }> {
  // A contact deleted between the two statements makes the insert succeed on the next turn.
  for (let attempt = 0; attempt < 3; attempt++) {
    const initial = initialStatus(status ?? 'SUBSCRIBED', suppression);
    const id = await insertContactIfNew(
      trx,
      workspaceId,
      { id: newId('ct'), email, firstName, lastName, propertiesJson, status: initial.status },
      now,
    );
    if (id) {
      await recordEvents(trx, workspaceId, createdEvents(id, email, initial.status, source), now);
      return { id, created: true, heldBySuppression: initial.heldBySuppression };
    }
    const existing = (await contactStatesByEmail(trx, workspaceId, [email])).get(email);
    const requested =
      status === undefined ? { status: null, heldBySuppression: false } : requestedStatus(status, suppression !== null);
    if (
      existing &&
      (await updateContact(
        trx,
        workspaceId,
        existing.id,
        { firstName, lastName, status: requested.status ?? undefined, propertiesJson },
        now,
      ))
    ) {
      const fields = fieldsSet(firstName, lastName, propertiesJson);
      await recordEvents(
        trx,
        workspaceId,
        [
          ...(fields.length ? [updatedEvent(existing.id, email, fields, source)] : []),
          ...statusEvents(existing.id, email, existing.status, requested.status ?? existing.status, source),
        ],
        now,
      );
      return { id: existing.id, created: false, heldBySuppression: requested.heldBySuppression };
    }
  }
  throw new Error('contact upsert did not settle after 3 attempts');
}

/**
 * The batch form of upsertContact, for an import (contacts.importer.ts): one slot per distinct email (normalised),
 * column by column (contacts.batch-sql.ts says why), the properties as JSON text.
 */
export interface ContactUpserts {
  size: number;
  emails: readonly string[];
  firstNames: readonly (string | null | undefined)[];
  lastNames: readonly (string | null | undefined)[];
  statuses: readonly (ContactStatus | undefined)[];
  properties: readonly (string | undefined)[];
}

/**
 * upsertContact for a batch, in the caller's transaction, with the same rules and events (source `import`): one
 * query finds which emails are suppressed, one multi-row insert adds every email that no contact has (doing nothing
 * for the others: the unique constraint decides), one query reads the contacts of the others and one multi-row
 * update changes them; those a concurrent writer deleted meanwhile are settled one by one. Returns, per slot,
 * whether it created its contact, and how many slots the suppression held (asked, or for a new contact defaulted,
 * to be SUBSCRIBED or PENDING while the address is suppressed).
 *
 * The insert comes first, before anything is read about the batch's contacts: in an import of new contacts (the
 * common case) nothing else has to look their emails up, and a lookup costs a descent of the email index as the
 * insert does.
 */
export async function upsertContacts(
  trx: Executor,
  workspaceId: string,
  b: ContactUpserts,
  now: string,
): Promise<{ created: boolean[]; held: number }> {
  const source: ContactSource = 'import';
  const emails = b.emails.slice(0, b.size);
  const suppressed = await suppressionsOf(trx, workspaceId, emails);
  // The batch's events (docs/events.md), written with it.
  const events: NewEvent[] = [];
  const ids: string[] = [];
  const statuses: ContactStatus[] = [];
  for (let i = 0; i < b.size; i++) {
    ids.push(newId('ct'));
    statuses.push(initialStatus(b.statuses[i] ?? 'SUBSCRIBED', suppressed.get(b.emails[i]!) ?? null).status);
  }
  const inserted = await insertContactsIfNew(
    trx,
    workspaceId,
    {
      size: b.size,
      ids,
      emails: b.emails,
      firstNames: b.firstNames,
      lastNames: b.lastNames,
      properties: b.properties,
      statuses,
    },
    now,
  );
  const states =
    inserted.size === b.size
      ? new Map<string, { id: string; status: ContactStatus }>()
      : await contactStatesByEmail(
          trx,
          workspaceId,
          emails.filter((e) => !inserted.has(e)),
        );
  const created: boolean[] = [];
  let held = 0;
  const changes = {
    size: 0,
    ids: [] as string[],
    firstNames: [] as (string | null | undefined)[],
    lastNames: [] as (string | null | undefined)[],
    properties: [] as (string | undefined)[],
    statuses: [] as (ContactStatus | undefined)[],
  };
  const changed: number[] = [];
  const settle: number[] = [];
  for (let i = 0; i < b.size; i++) {
    const email = b.emails[i]!;
    const requested = b.statuses[i];
    const insertedId = inserted.get(email);
    created.push(insertedId !== undefined);
    if (
      suppressed.has(email) &&
      (requested === 'SUBSCRIBED' || requested === 'PENDING' || (requested === undefined && insertedId !== undefined))
    )
      held++;
    if (insertedId) {
      events.push(...createdEvents(insertedId, email, statuses[i]!, source));
      continue;
    }
    const id = states.get(email)?.id;
    if (id === undefined) {
      settle.push(i);
      continue;
    }
    changes.ids.push(id);
    changes.firstNames.push(b.firstNames[i]);
    changes.lastNames.push(b.lastNames[i]);
    changes.properties.push(b.properties[i]);
    changes.statuses.push(
      requested === undefined ? undefined : (requestedStatus(requested, suppressed.has(email)).status ?? undefined),
    );
    changes.size++;
    changed.push(i);
  }
  const updated = await updateContacts(trx, workspaceId, changes, now);
  for (const i of changed) {
    const email = b.emails[i]!;
    const before = states.get(email)!;
    if (!updated.has(before.id)) {
      settle.push(i);
      continue;
    }
    const fields = fieldsSet(b.firstNames[i], b.lastNames[i], b.properties[i]);
    if (fields.length) events.push(updatedEvent(before.id, email, fields, source));
    const requested =
      b.statuses[i] === undefined ? null : requestedStatus(b.statuses[i]!, suppressed.has(email)).status;
    if (requested) events.push(...statusEvents(before.id, email, before.status, requested, source));
  }
  await recordEvents(trx, workspaceId, events, now);
  // Another writer deleted these contacts since the insert: settle each on its own.
  for (const i of settle) {
    const settled = await upsertOne(
      trx,
      workspaceId,
      b.emails[i]!,
      b.firstNames[i],
      b.lastNames[i],
      b.statuses[i],
      b.properties[i],
      suppressed.get(b.emails[i]!) ?? null,
      now,
      source,
    );
    created[i] = settled.created;
  }
  return { created, held };
}
