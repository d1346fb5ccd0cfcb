import crypto from 'node:crypto';
import { contactIdsByEmail, getContact, insertContactsIfNew, updateContact } from '../contacts/contacts.repository.js';
import type { Db, Executor } from '../db/connection.js';
import type { ContactStatus } from '../db/schema.js';
import * as forms from '../forms/forms.repository.js';
import type { Form } from '../forms/forms.schemas.js';
import { conflict, notFound } from '../http/errors.js';
import { normalizeEmail } from '../lib/email.js';
import { newId } from '../lib/ids.js';
import { nowIso } from '../lib/time.js';
import * as repo from './submissions.repository.js';

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

/**
 * What a sign-up does to an existing contact's status. A SUBSCRIBED contact is never downgraded; with double
 * opt-in, anyone not yet subscribed (new, PENDING, or UNSUBSCRIBED signing up again) is PENDING until they
 * confirm; without it they are SUBSCRIBED. BOUNCED and COMPLAINED addresses keep their status.
 */
export function statusAfterSignUp(current: ContactStatus | null, doubleOptIn: boolean): ContactStatus {
  if (current === 'SUBSCRIBED' || current === 'BOUNCED' || current === 'COMPLAINED') return current;
  return doubleOptIn ? 'PENDING' : 'SUBSCRIBED';
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
        const { id, needsConfirmation } = await this.signUp(trx, workspaceId, form, values, now);
        contactId = id;
        if (needsConfirmation) {
          await repo.insertConfirmation(trx, workspaceId, {
            id: newId('cnf'), contactId: id, formId: form.id, token: crypto.randomBytes(24).toString('base64url'),
            expiresAt: new Date(Date.parse(now) + CONFIRMATION_TTL_MS).toISOString(), now,
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

  private async signUp(trx: Executor, workspaceId: string, form: Form, values: Record<string, Value>, now: string): Promise<{ id: string; needsConfirmation: boolean }> {
    const fields: { email?: string; firstName?: string; lastName?: string; properties: Record<string, unknown> } = { properties: {} };
    for (const [field, property] of Object.entries(form.fieldMapping)) {
      const v = values[field];
      if (v === undefined) continue;
      if (property === 'email') fields.email = v as string;
      else if (property === 'firstName') fields.firstName = String(v);
      else if (property === 'lastName') fields.lastName = String(v);
      else fields.properties[property] = v;
    }
    const email = fields.email!;
    const doubleOptIn = form.settings.doubleOptIn;
    let id = (await contactIdsByEmail(trx, workspaceId, [email])).get(email);
    if (!id) {
      const status = statusAfterSignUp(null, doubleOptIn);
      const inserted = await insertContactsIfNew(trx, workspaceId, [{
        id: newId('ct'), email, firstName: fields.firstName ?? null, lastName: fields.lastName ?? null, properties: fields.properties, status, createdAt: now,
      }]);
      id = inserted.get(email);
      if (id) return { id, needsConfirmation: status === 'PENDING' };
      id = (await contactIdsByEmail(trx, workspaceId, [email])).get(email)!; // created concurrently: update it below
    }
    const existing = (await getContact(trx, workspaceId, id))!;
    const status = statusAfterSignUp(existing.status, doubleOptIn);
    await updateContact(trx, workspaceId, id, {
      ...(fields.firstName !== undefined ? { firstName: fields.firstName } : {}),
      ...(fields.lastName !== undefined ? { lastName: fields.lastName } : {}),
      // A form fills in what it asks; other properties of the contact stay.
      ...(Object.keys(fields.properties).length ? { properties: { ...existing.properties, ...fields.properties } } : {}),
      status,
    }, now);
    return { id, needsConfirmation: status === 'PENDING' && doubleOptIn };
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
   * Follows a double opt-in link: single use, expiring. The contact becomes SUBSCRIBED (from PENDING; a
   * contact who meanwhile unsubscribed, bounced or complained is left as is).
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
      await trx.updateTable('contacts').set({ status: 'SUBSCRIBED', updated_at: now })
        .where('workspace_id', '=', c.workspaceId).where('id', '=', c.contactId).where('status', '=', 'PENDING').execute();
      await repo.bumpCounter(trx, c.workspaceId, c.formId, 'confirmations');
      return true;
    });
    return { result: used ? 'confirmed' : 'already', formName: form?.name };
  }
}

function toData(values: Record<string, Value>): Record<string, string | string[]> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Array.isArray(v) ? v : String(v)]));
}
