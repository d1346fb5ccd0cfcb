import crypto from 'node:crypto';
import { contactIdsByEmail, getContact, insertContactsIfNew, updateContact, type ContactRecord } from '../contacts/contacts.repository.js';
import type { Db, Executor } from '../db/connection.js';
import type { ContactStatus } from '../db/schema.js';
import * as forms from '../forms/forms.repository.js';
import type { Form } from '../forms/forms.schemas.js';
import { conflict, notFound } from '../errors/errors.js';
import { normalizeEmail } from '../lib/email.js';
import { newId } from '../lib/ids.js';
import { nowIso } from '../lib/time.js';
import * as repo from './submissions.repository.js';
import type { HeldChanges } from './submissions.repository.js';

/** The field a honeypot bot fills: it is hidden from people; a submission with it set is dropped silently. */
export const HONEYPOT_FIELD = '_fc_hp';
export const CONFIRMATION_TTL_MS = 7 * 24 * 3600 * 1000;
const MAX_TEXT = 2000;
const MAX_NAME = 200;
const MAX_VALUES = 50;

export interface FieldProblem {
  field: string;
  message: string;
}

export type SubmissionOutcome =
  | { ok: true; honeypot: boolean; submissionId: string | null; contactId: string | null; confirmationSent: boolean; successAction: Form['settings']['successAction'] }
  | { ok: false; errors: FieldProblem[] };

type Value = string | number | boolean | string[];

/**
 * Checks and converts the mapped fields (unmapped ones are ignored) by the contact property each maps to:
 * the email must be an address (required on SIGN_UP forms), names up to 200 characters, other properties up
 * to 2,000 characters (or a list of such, from checkboxes), numbers or booleans from JSON.
 */
export function readValues(form: Pick<Form, 'type' | 'fieldMapping'>, raw: Record<string, unknown>): { values: Record<string, Value>; errors: FieldProblem[] } {
  const values: Record<string, Value> = {};
  const errors: FieldProblem[] = [];
  for (const [field, property] of Object.entries(form.fieldMapping)) {
    let v = raw[field];
    if (Array.isArray(v) && v.length === 1 && property !== 'email') v = v[0];
    if (typeof v === 'string') v = v.trim();
    const empty = v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
    if (property === 'email') {
      const text = Array.isArray(v) ? v[0] : v;
      if (empty || text === undefined || text === '') {
        if (form.type === 'SIGN_UP') errors.push({ field, message: 'Enter your email address.' });
        continue;
      }
      const email = typeof text === 'string' ? normalizeEmail(text) : null;
      if (!email) errors.push({ field, message: 'Enter a valid email address, like name@example.com.' });
      else values[field] = email;
      continue;
    }
    if (empty) continue;
    const limit = property === 'firstName' || property === 'lastName' ? MAX_NAME : MAX_TEXT;
    if (typeof v === 'string') {
      if ([...v].length > limit) errors.push({ field, message: `Use at most ${limit} characters.` });
      else values[field] = v;
    } else if ((typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean') {
      if (limit === MAX_NAME) errors.push({ field, message: 'Enter text.' });
      else values[field] = v;
    } else if (Array.isArray(v) && limit === MAX_TEXT && v.length <= MAX_VALUES && v.every((x) => typeof x === 'string' && [...x].length <= MAX_TEXT)) {
      values[field] = (v as string[]).map((x) => x.trim());
    } else {
      errors.push({ field, message: 'This value is not valid.' });
    }
  }
  return { values, errors };
}

/** At most one confirmation email per address in this window, however often the address signs up. */
export const CONFIRMATION_RESEND_WINDOW_MS = 60 * 60 * 1000;

/** What a sign-up submits for the contact (mapped fields only). */
export interface SignUpFields {
  firstName?: string;
  lastName?: string;
  properties: Record<string, unknown>;
}

/** What a sign-up does (see planSignUp). */
export interface SignUpPlan {
  status: ContactStatus;
  /** Written now: everything for a new or unconfirmed contact; for a confirmed one only what it lacks. */
  write: HeldChanges;
  /** A confirmation email is due (double opt-in, or re-subscribing an address that unsubscribed). */
  confirm: boolean;
  /** Applied when that confirmation is followed (changes to what a confirmed contact already has). */
  held: HeldChanges | null;
}

const isBlank = (v: unknown) => v === undefined || v === null || v === '';

/**
 * The rules of an anonymous sign-up (hosted page, embed, API submission), docs/embedding.md:
 * - a new address is created, PENDING with double opt-in (a confirmation is sent), SUBSCRIBED without;
 * - a PENDING contact has confirmed nothing: it is updated as a new one would be;
 * - a confirmed contact (any other status) keeps its status and what it has: the sign-up only fills in
 *   fields it lacks. Unconfirmed data never overwrites confirmed data;
 * - an UNSUBSCRIBED address is re-subscribed only by its owner, with or without double opt-in on the form:
 *   a confirmation is sent, and its link re-subscribes and applies the sign-up's changes;
 * - BOUNCED and COMPLAINED addresses keep their status and get nothing.
 */
export function planSignUp(existing: Pick<ContactRecord, 'status' | 'firstName' | 'lastName' | 'properties'> | null, doubleOptIn: boolean, fields: SignUpFields): SignUpPlan {
  const all: HeldChanges = {
    ...(fields.firstName !== undefined ? { firstName: fields.firstName } : {}),
    ...(fields.lastName !== undefined ? { lastName: fields.lastName } : {}),
    ...(Object.keys(fields.properties).length ? { properties: fields.properties } : {}),
  };
  if (existing === null || existing.status === 'PENDING') {
    const write = existing ? { ...all, ...(all.properties ? { properties: { ...existing.properties, ...all.properties } } : {}) } : all;
    return { status: doubleOptIn ? 'PENDING' : 'SUBSCRIBED', write, confirm: doubleOptIn, held: null };
  }
  const write: HeldChanges = {};
  if (fields.firstName !== undefined && isBlank(existing.firstName)) write.firstName = fields.firstName;
  if (fields.lastName !== undefined && isBlank(existing.lastName)) write.lastName = fields.lastName;
  const missing = Object.entries(fields.properties).filter(([k]) => isBlank(existing.properties[k]));
  if (missing.length) write.properties = { ...existing.properties, ...Object.fromEntries(missing) };
  const resubscribe = existing.status === 'UNSUBSCRIBED';
  return { status: existing.status, write, confirm: resubscribe, held: resubscribe && Object.keys(all).length ? all : null };
}

export class SubmissionsService {
  constructor(private readonly db: Db) {}

  /** The PUBLISHED form at a public slug (any workspace), or 404. */
  async publishedBySlug(slug: string): Promise<Form & { workspaceId: string; html: string | null }> {
    const form = await forms.findPublishedBySlug(this.db.kysely, slug);
    if (!form) throw notFound('form');
    return form;
  }

  async recordView(workspaceId: string, formId: string): Promise<void> {
    await repo.bumpCounter(this.db.kysely, workspaceId, formId, 'views');
  }

  /**
   * The one code path of every submission (hosted page, embed, API): mapped fields only, validated by their
   * contact property; SIGN_UP creates or updates the contact by email; SURVEY stores the submission only.
   * Everything happens in one transaction; a filled honeypot changes nothing and looks like a success.
   */
  async submit(workspaceId: string, form: Form, raw: Record<string, unknown>, source: 'HOSTED' | 'EMBED' | 'API'): Promise<SubmissionOutcome> {
    const successAction = form.settings.successAction;
    const bait = raw[HONEYPOT_FIELD];
    if (source !== 'API' && bait !== undefined && bait !== '' && !(Array.isArray(bait) && bait.every((b) => b === ''))) {
      return { ok: true, honeypot: true, submissionId: null, contactId: null, confirmationSent: false, successAction };
    }
    const { values, errors } = readValues(form, raw);
    if (errors.length) return { ok: false, errors };
    const submissionId = newId('sub');
    const result = await this.db.kysely.transaction().execute(async (trx) => {
      const now = nowIso();
      let contactId: string | null = null;
      let confirmationSent = false;
      if (form.type === 'SIGN_UP') {
        const { id, plan } = await this.signUp(trx, workspaceId, form, values, now);
        contactId = id;
        const since = new Date(Date.parse(now) - CONFIRMATION_RESEND_WINDOW_MS).toISOString();
        if (plan.confirm && !(await repo.hasRecentConfirmation(trx, workspaceId, id, since))) {
          await repo.insertConfirmation(trx, workspaceId, {
            id: newId('cnf'), contactId: id, formId: form.id, token: crypto.randomBytes(24).toString('base64url'),
            expiresAt: new Date(Date.parse(now) + CONFIRMATION_TTL_MS).toISOString(), now, data: plan.held,
          });
          confirmationSent = true;
        }
      }
      await repo.insertSubmission(trx, workspaceId, { id: submissionId, formId: form.id, formGroupId: form.formGroupId, formVersion: form.version, data: toData(values), contactId, source, createdAt: now });
      await repo.bumpCounter(trx, workspaceId, form.id, 'submissions');
      return { contactId, confirmationSent };
    });
    return { ok: true, honeypot: false, submissionId, successAction, ...result };
  }

  /** Creates or updates the contact a sign-up names, by planSignUp's rules; race-safe on the unique email. */
  private async signUp(trx: Executor, workspaceId: string, form: Form, values: Record<string, Value>, now: string): Promise<{ id: string; plan: SignUpPlan }> {
    const fields: SignUpFields = { properties: {} };
    let email: string | undefined;
    for (const [field, property] of Object.entries(form.fieldMapping)) {
      const v = values[field];
      if (v === undefined) continue;
      if (property === 'email') email = v as string;
      else if (property === 'firstName') fields.firstName = String(v);
      else if (property === 'lastName') fields.lastName = String(v);
      else fields.properties[property] = v;
    }
    const doubleOptIn = form.settings.doubleOptIn;
    let id = (await contactIdsByEmail(trx, workspaceId, [email!])).get(email!);
    if (!id) {
      const plan = planSignUp(null, doubleOptIn, fields);
      const inserted = await insertContactsIfNew(trx, workspaceId, [{
        id: newId('ct'), email: email!, firstName: plan.write.firstName ?? null, lastName: plan.write.lastName ?? null,
        properties: plan.write.properties ?? {}, status: plan.status, createdAt: now,
      }]);
      id = inserted.get(email!);
      if (id) return { id, plan };
      id = (await contactIdsByEmail(trx, workspaceId, [email!])).get(email!)!; // created concurrently: update it below
    }
    const existing = (await getContact(trx, workspaceId, id))!;
    const plan = planSignUp(existing, doubleOptIn, fields);
    await updateContact(trx, workspaceId, id, { ...plan.write, status: plan.status }, now);
    return { id, plan };
  }

  /** The API's submission endpoint: the form, or its group, must be PUBLISHED; the published version takes it. */
  async submitViaApi(workspaceId: string, formId: string, raw: Record<string, unknown>): Promise<SubmissionOutcome & { form: Form }> {
    const form = await forms.getForm(this.db.kysely, workspaceId, formId);
    if (!form) throw notFound('form');
    const live = form.status === 'PUBLISHED' ? form : await forms.findGroupVersionByStatus(this.db.kysely, workspaceId, form.formGroupId, 'PUBLISHED');
    if (!live) throw conflict('form_not_published', 'submissions go to the published version of a form, and this form has none');
    return { ...(await this.submit(workspaceId, live, raw, 'API')), form: live };
  }

  async list(workspaceId: string, formId: string, limit: number, beforeId?: string): Promise<repo.Submission[]> {
    const form = await forms.getForm(this.db.kysely, workspaceId, formId);
    if (!form) throw notFound('form');
    return repo.listSubmissions(this.db.kysely, workspaceId, form.formGroupId, limit, beforeId);
  }

  async get(workspaceId: string, id: string): Promise<repo.Submission> {
    const s = await repo.getSubmission(this.db.kysely, workspaceId, id);
    if (!s) throw notFound('submission');
    return s;
  }

  counters(workspaceId: string, formId: string) {
    return repo.getCounters(this.db.kysely, workspaceId, formId);
  }

  /**
   * Follows a double opt-in link: single use, expiring. A PENDING contact, or an UNSUBSCRIBED one whose
   * re-subscription this link confirms, becomes SUBSCRIBED, and the changes its sign-up held are applied (the
   * link proves the address is theirs). BOUNCED and COMPLAINED contacts are left as they are.
   */
  async confirm(token: string): Promise<{ result: 'confirmed' | 'already' | 'expired' | 'unknown'; formName?: string }> {
    const k = this.db.kysely;
    const c = await repo.findConfirmation(k, token);
    if (!c) return { result: 'unknown' };
    const form = await forms.getForm(k, c.workspaceId, c.formId);
    if (c.usedAt) return { result: 'already', formName: form?.name };
    const now = nowIso();
    if (c.expiresAt <= now) return { result: 'expired', formName: form?.name };
    const used = await k.transaction().execute(async (trx) => {
      if (!(await repo.useConfirmation(trx, c.workspaceId, c.id, now))) return false;
      const contact = await getContact(trx, c.workspaceId, c.contactId);
      if (contact && (contact.status === 'PENDING' || contact.status === 'UNSUBSCRIBED')) {
        const held = c.data ?? {};
        await updateContact(trx, c.workspaceId, contact.id, {
          ...(held.firstName !== undefined ? { firstName: held.firstName } : {}),
          ...(held.lastName !== undefined ? { lastName: held.lastName } : {}),
          ...(held.properties ? { properties: { ...contact.properties, ...held.properties } } : {}),
          status: 'SUBSCRIBED',
        }, now);
      }
      await repo.bumpCounter(trx, c.workspaceId, c.formId, 'confirmations');
      return true;
    });
    return { result: used ? 'confirmed' : 'already', formName: form?.name };
  }
}

function toData(values: Record<string, Value>): Record<string, string | string[]> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Array.isArray(v) ? v : String(v)]));
}
