import { contactEmail } from '../contacts/contacts.email.js';
import { confirm, signUp, type SignUpFields } from '../contacts/contacts.lifecycle.js';
import type { Db } from '../db/connection.js';
import { GroupCommit } from '../db/group-commit.js';
import { PublishedForms } from '../forms/forms.published.js';
import * as forms from '../forms/forms.repository.js';
import type { PublishedForm } from '../forms/forms.repository.js';
import type { Form } from '../forms/forms.schemas.js';
import { conflict, notFound } from '../errors/errors.js';
import { recordEvent } from '../events/events.repository.js';
import { newId } from '../lib/ids.js';
import { pooledRandomBytes } from '../lib/random.js';
import { nowIso } from '../lib/time.js';
import * as repo from './submissions.repository.js';
import { getWorkspace } from '../workspaces/workspaces.repository.js';
import type { Locale } from '../workspaces/workspaces.schemas.js';

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
      const email = typeof text === 'string' ? contactEmail(text) : null;
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

/** What a confirmation link did or would do, and for whom (the page's words). */
export interface ConfirmationView {
  result: 'pending' | 'confirmed' | 'already' | 'expired' | 'unknown';
  locale: Locale;
  name: string;
}

export class SubmissionsService {
  /** Submissions arriving together are written together (SQLite): one commit for a burst of them. */
  private readonly writes: GroupCommit;
  private readonly published: PublishedForms;

  /** `clock` (ms) dates the cache of published forms (tests move it). */
  constructor(private readonly db: Db, opts: { clock?: () => number } = {}) {
    this.writes = new GroupCommit(db);
    this.published = new PublishedForms(db, opts.clock);
  }

  /** The PUBLISHED form at a public slug (any workspace), or 404. Cached (forms/forms.published.ts): read-only. */
  async publishedBySlug(slug: string): Promise<PublishedForm> {
    const form = await this.published.get(slug);
    if (!form) throw notFound('form');
    return form;
  }

  async recordView(workspaceId: string, formId: string): Promise<void> {
    await repo.bumpCounter(this.db.kysely, workspaceId, formId, 'views');
  }

  /**
   * The one code path of every submission (hosted page, embed, API): mapped fields only, validated by their
   * contact property; SIGN_UP creates or updates the contact by email; SURVEY stores the submission only.
   * Everything happens in one transaction (on SQLite shared with the submissions that arrived meanwhile, each in a
   * savepoint: db/group-commit.ts); a filled honeypot changes nothing and looks like a success.
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
    const { email, fields } = contactFields(form, values);
    const result = await this.writes.run(async (trx) => {
      const now = nowIso();
      let contactId: string | null = null;
      let confirmationSent = false;
      if (form.type === 'SIGN_UP') {
        const { contactId: id, confirm, held, created } = await signUp(trx, workspaceId, email, fields, form.settings.doubleOptIn, now);
        contactId = id;
        const since = new Date(Date.parse(now) - CONFIRMATION_RESEND_WINDOW_MS).toISOString();
        // A contact made by this sign-up has no confirmation yet: no need to look.
        if (confirm && (created || !(await repo.hasRecentConfirmation(trx, workspaceId, id, since)))) {
          await repo.insertConfirmation(trx, workspaceId, {
            id: newId('cnf'), contactId: id, formId: form.id, token: pooledRandomBytes(24).toString('base64url'),
            expiresAt: new Date(Date.parse(now) + CONFIRMATION_TTL_MS).toISOString(), now, data: held,
          });
          confirmationSent = true;
        }
      }
      await repo.insertSubmission(trx, workspaceId, { id: submissionId, formId: form.id, formGroupId: form.formGroupId, formVersion: form.version, data: toData(values), contactId, source, createdAt: now });
      await repo.bumpCounter(trx, workspaceId, form.id, 'submissions');
      // After the contact's own events (docs/events.md): an automation on form.submitted finds the contact.
      await recordEvent(trx, workspaceId, {
        type: 'form.submitted', contactId,
        data: { formId: form.id, formGroupId: form.formGroupId, formVersion: form.version, formType: form.type, submissionId, source, fields: toData(values) },
      }, now);
      return { contactId, confirmationSent };
    });
    return { ok: true, honeypot: false, submissionId, successAction, ...result };
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
   * Follows a confirmation link: single use, expiring. The contact becomes SUBSCRIBED, its address leaves the
   * suppression list, and the changes its sign-up held are applied: the link proves the address is theirs
   * (the contact lifecycle's `confirm`, contacts.state.ts).
   */
  /** What a confirmation link would do, without doing it (GET and HEAD of the link: scanners fetch every link). */
  async inspectConfirmation(token: string): Promise<ConfirmationView> {
    const k = this.db.kysely;
    const c = await repo.findConfirmation(k, token);
    if (!c) return { result: 'unknown', locale: 'en', name: '' };
    const about = await this.about(c.workspaceId);
    if (c.usedAt) return { result: 'already', ...about };
    if (c.expiresAt <= nowIso()) return { result: 'expired', ...about };
    return { result: 'pending', ...about };
  }

  /** Who a confirmation page speaks for: the workspace's name and locale. */
  private async about(workspaceId: string): Promise<{ locale: Locale; name: string }> {
    const ws = await getWorkspace(this.db.kysely, workspaceId);
    return { locale: ws?.settings.locale ?? 'en', name: ws?.name ?? '' };
  }

  async confirm(token: string): Promise<ConfirmationView> {
    const k = this.db.kysely;
    const c = await repo.findConfirmation(k, token);
    if (!c) return { result: 'unknown', locale: 'en', name: '' };
    const about = await this.about(c.workspaceId);
    if (c.usedAt) return { result: 'already', ...about };
    const now = nowIso();
    if (c.expiresAt <= now) return { result: 'expired', ...about };
    const used = await k.transaction().execute(async (trx) => {
      if (!(await repo.useConfirmation(trx, c.workspaceId, c.id, now))) return false;
      await confirm(trx, c.workspaceId, c.contactId, c.data, now);
      await repo.bumpCounter(trx, c.workspaceId, c.formId, 'confirmations');
      return true;
    });
    return { result: used ? 'confirmed' : 'already', ...about };
  }
}

/** The contact fields a SIGN_UP submission maps to (mapped fields only). */
function contactFields(form: Form, values: Record<string, Value>): { email: string; fields: SignUpFields } {
  const fields: SignUpFields = { properties: {} };
  let email = '';
  for (const [field, property] of Object.entries(form.fieldMapping)) {
    const v = values[field];
    if (v === undefined) continue;
    if (property === 'email') email = v as string;
    else if (property === 'firstName') fields.firstName = String(v);
    else if (property === 'lastName') fields.lastName = String(v);
    else fields.properties[property] = v;
  }
  return { email, fields };
}

function toData(values: Record<string, Value>): Record<string, string | string[]> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Array.isArray(v) ? v : String(v)]));
}
