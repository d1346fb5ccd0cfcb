import { sql } from 'kysely';
import type { Executor } from '../../db/connection.js';
import type { HeldChanges } from '../../audience/index.js';
import type { SubmissionsTable } from '../../db/schema.js';
import { fromJsonColumn, toJsonColumn } from '../../lib/json.js';
import { toIso } from '../../lib/time.js';

export interface Submission {
  id: string;
  formId: string;
  formVersion: number;
  data: Record<string, string | string[]>;
  contactId: string | null;
  source: SubmissionsTable['source'];
  createdAt: string;
  /** Proof of consent (docs/forms.md): null once SUBMISSION_RETENTION_DAYS have passed. */
  ip: string | null;
  userAgent: string | null;
  consent: { text: string; acceptedAt: string } | null;
  /** ACCEPTED; or HELD for review (a sign-up burst: docs/bot-protection.md), then RELEASED or DISCARDED. */
  status: SubmissionStatus;
  /** The burst rules a held submission tripped. */
  heldReasons: string[] | null;
  reviewedAt: string | null;
}

export type SubmissionStatus = 'ACCEPTED' | 'HELD' | 'RELEASED' | 'DISCARDED';

const COLUMNS = [
  'id',
  'form_id',
  'form_version',
  'data',
  'contact_id',
  'source',
  'created_at',
  'ip',
  'user_agent',
  'consent_text',
  'consent_accepted_at',
  'status',
  'held_reasons',
  'reviewed_at',
] as const;

type Row = {
  [K in (typeof COLUMNS)[number]]: K extends
    'ip' | 'user_agent' | 'consent_text' | 'consent_accepted_at' | 'held_reasons' | 'reviewed_at'
    ? string | null
    : K extends 'status'
      ? SubmissionStatus
      : SubmissionsTable[K];
};

function toSubmission(r: Row): Submission {
  return {
    id: r.id,
    formId: r.form_id,
    formVersion: Number(r.form_version),
    data: fromJsonColumn(r.data) ?? {},
    contactId: r.contact_id,
    source: r.source,
    createdAt: toIso(r.created_at),
    ip: r.ip,
    userAgent: r.user_agent,
    consent:
      r.consent_text !== null && r.consent_accepted_at !== null
        ? { text: r.consent_text, acceptedAt: toIso(r.consent_accepted_at) }
        : null,
    status: r.status,
    heldReasons: fromJsonColumn<string[]>(r.held_reasons),
    reviewedAt: toIso(r.reviewed_at),
  };
}

export async function insertSubmission(
  db: Executor,
  workspaceId: string,
  s: Omit<Submission, 'status' | 'heldReasons' | 'reviewedAt'> &
    Partial<Pick<Submission, 'status' | 'heldReasons'>> & { formGroupId: string },
): Promise<void> {
  await db
    .insertInto('submissions')
    .values({
      id: s.id,
      workspace_id: workspaceId,
      form_id: s.formId,
      form_group_id: s.formGroupId,
      form_version: s.formVersion,
      data: toJsonColumn(s.data)!,
      contact_id: s.contactId,
      source: s.source,
      created_at: s.createdAt,
      ip: s.ip,
      user_agent: s.userAgent,
      consent_text: s.consent?.text ?? null,
      consent_accepted_at: s.consent?.acceptedAt ?? null,
      status: s.status ?? 'ACCEPTED',
      held_reasons: toJsonColumn(s.heldReasons ?? null),
    })
    .execute();
}

export async function getSubmission(db: Executor, workspaceId: string, id: string): Promise<Submission | undefined> {
  const r = await db
    .selectFrom('submissions')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return r ? toSubmission(r) : undefined;
}

/** A submission to one of the group's versions. */
export async function getGroupSubmission(
  db: Executor,
  workspaceId: string,
  groupId: string,
  id: string,
): Promise<Submission | undefined> {
  const r = await db
    .selectFrom('submissions')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('form_group_id', '=', groupId)
    .where('id', '=', id)
    .executeTakeFirst();
  return r ? toSubmission(r) : undefined;
}

export async function setSubmissionContact(
  db: Executor,
  workspaceId: string,
  id: string,
  contactId: string,
): Promise<void> {
  await db
    .updateTable('submissions')
    .set({ contact_id: contactId })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .execute();
}

/**
 * Ends the review of a HELD submission: RELEASED (with the contact its sign-up made) or DISCARDED. False when it is not
 * HELD (any more: two reviewers at once, one wins).
 */
export async function reviewSubmission(
  db: Executor,
  workspaceId: string,
  id: string,
  status: 'RELEASED' | 'DISCARDED',
  contactId: string | null,
  now: string,
): Promise<boolean> {
  const res = await db
    .updateTable('submissions')
    .set({ status, contact_id: contactId, reviewed_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('status', '=', 'HELD')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Submissions to every version of a form group, newest first; only those of one status when it is given. */
export async function listSubmissions(
  db: Executor,
  workspaceId: string,
  groupId: string,
  limit: number,
  beforeId?: string,
  status?: SubmissionStatus,
): Promise<Submission[]> {
  let q = db
    .selectFrom('submissions')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('form_group_id', '=', groupId);
  if (beforeId) q = q.where('id', '<', beforeId);
  if (status) q = q.where('status', '=', status);
  return (await q.orderBy('id', 'desc').limit(limit).execute()).map(toSubmission);
}

/**
 * The answers of a group's submissions that count in its summary (not those HELD for review or DISCARDED), a page at a
 * time in id order: the summary reads them all without holding them all.
 */
export async function pageSubmissionData(
  db: Executor,
  workspaceId: string,
  groupId: string,
  afterId: string | null,
  limit: number,
): Promise<{ id: string; data: Record<string, unknown> }[]> {
  let q = db
    .selectFrom('submissions')
    .select(['id', 'data'])
    .where('workspace_id', '=', workspaceId)
    .where('form_group_id', '=', groupId)
    .where('status', 'in', ['ACCEPTED', 'RELEASED']);
  if (afterId) q = q.where('id', '>', afterId);
  return (await q.orderBy('id').limit(limit).execute()).map((r) => ({
    id: r.id,
    data: fromJsonColumn<Record<string, unknown>>(r.data) ?? {},
  }));
}

/**
 * Clears the address and user agent of submissions made before `before` (SUBMISSION_RETENTION_DAYS; the consent text
 * and its time stay), up to `limit` of them; returns how many. Every workspace: a worker job.
 */
export async function purgeNetworkData(db: Executor, before: string, limit: number): Promise<number> {
  const due = db
    .selectFrom('submissions')
    .select('id')
    .where('ip', 'is not', null)
    .where('created_at', '<', before)
    .orderBy('created_at')
    .limit(limit);
  const res = await db
    .updateTable('submissions')
    .set({ ip: null, user_agent: null })
    .where('id', 'in', due)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

// ---- double opt-in ------------------------------------------------------------------------------

export async function insertConfirmation(
  db: Executor,
  workspaceId: string,
  c: {
    id: string;
    contactId: string;
    /** Null: a re-subscription asked for on the unsubscribe page. */
    formId: string | null;
    token: string;
    expiresAt: string;
    now: string;
    data: HeldChanges | null;
  },
): Promise<void> {
  await db
    .insertInto('confirmations')
    .values({
      id: c.id,
      workspace_id: workspaceId,
      contact_id: c.contactId,
      form_id: c.formId,
      token: c.token,
      expires_at: c.expiresAt,
      used_at: null,
      email_sent_at: null,
      attempts: 0,
      next_attempt_at: c.now,
      last_error: null,
      created_at: c.now,
      data: toJsonColumn(c.data),
    })
    .execute();
}

/** True when the contact has an unused confirmation created at or after `since` (one per address per window). */
export async function hasRecentConfirmation(
  db: Executor,
  workspaceId: string,
  contactId: string,
  since: string,
): Promise<boolean> {
  const r = await db
    .selectFrom('confirmations')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('contact_id', '=', contactId)
    .where('created_at', '>=', since)
    .where('used_at', 'is', null)
    .limit(1)
    .executeTakeFirst();
  return r !== undefined;
}

/** When the contact's newest unused, unexpired confirmation was made (the unsubscribe page says one is on its way). */
export async function openConfirmationSince(
  db: Executor,
  workspaceId: string,
  contactId: string,
  now: string,
): Promise<string | null> {
  const r = await db
    .selectFrom('confirmations')
    .select('created_at')
    .where('workspace_id', '=', workspaceId)
    .where('contact_id', '=', contactId)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return r ? toIso(r.created_at) : null;
}

export interface ConfirmationRecord {
  id: string;
  workspaceId: string;
  contactId: string;
  /** Null: a re-subscription asked for on the unsubscribe page. */
  formId: string | null;
  token: string;
  expiresAt: string;
  usedAt: string | null;
  attempts: number;
  data: HeldChanges | null;
}

const CONFIRMATION_COLUMNS = [
  'id',
  'workspace_id',
  'contact_id',
  'form_id',
  'token',
  'expires_at',
  'used_at',
  'attempts',
  'data',
] as const;

function toConfirmation(r: {
  id: string;
  workspace_id: string;
  contact_id: string;
  form_id: string | null;
  token: string;
  expires_at: string;
  used_at: string | null;
  attempts: number;
  data: string | null;
}): ConfirmationRecord {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    contactId: r.contact_id,
    formId: r.form_id,
    token: r.token,
    expiresAt: toIso(r.expires_at),
    usedAt: toIso(r.used_at),
    attempts: Number(r.attempts),
    data: fromJsonColumn<HeldChanges>(r.data),
  };
}

/** The confirmation a link names: the token is the only credential of the public confirm page. */
export async function findConfirmation(db: Executor, token: string): Promise<ConfirmationRecord | undefined> {
  const r = await db
    .selectFrom('confirmations')
    .select(CONFIRMATION_COLUMNS)
    .where('token', '=', token)
    .executeTakeFirst();
  return r ? toConfirmation(r) : undefined;
}

/** Marks it used; false if it was used already (single use, also under concurrent clicks). */
export async function useConfirmation(db: Executor, workspaceId: string, id: string, now: string): Promise<boolean> {
  const res = await db
    .updateTable('confirmations')
    .set({ used_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * Claims confirmation emails that are due (not sent, not expired, attempts left): the claim pushes their
 * next attempt out, so another worker does not send the same one meanwhile. Cross-workspace: a worker job.
 */
export async function claimDueConfirmations(
  db: Executor,
  now: string,
  retryAt: string,
  maxAttempts: number,
  limit: number,
): Promise<ConfirmationRecord[]> {
  const due = await db
    .selectFrom('confirmations')
    .select('id')
    .where('email_sent_at', 'is', null)
    .where('used_at', 'is', null)
    .where('next_attempt_at', '<=', now)
    .where('expires_at', '>', now)
    .where('attempts', '<', maxAttempts)
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
  if (!due.length) return [];
  const rows = await db
    .updateTable('confirmations')
    .set({ attempts: sql`attempts + 1`, next_attempt_at: retryAt })
    .where(
      'id',
      'in',
      due.map((d) => d.id),
    )
    .where('email_sent_at', 'is', null)
    .where('next_attempt_at', '<=', now)
    .returning(CONFIRMATION_COLUMNS)
    .execute();
  return rows.map(toConfirmation);
}

export async function markConfirmationEmail(
  db: Executor,
  workspaceId: string,
  id: string,
  result: { sentAt: string } | { error: string },
): Promise<void> {
  await db
    .updateTable('confirmations')
    .set(
      'sentAt' in result
        ? { email_sent_at: result.sentAt, last_error: null }
        : { last_error: result.error.slice(0, 500) },
    )
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .execute();
}

/**
 * The workspace of a confirmation a bounce report names: its id comes from a signed VERP token (the token
 * is the credential, as the confirmation link's token is), so it is looked up across workspaces.
 */
export async function workspaceOfConfirmation(db: Executor, id: string): Promise<string | undefined> {
  return (await db.selectFrom('confirmations').select('workspace_id').where('id', '=', id).executeTakeFirst())
    ?.workspace_id;
}

/** The contact a confirmation was sent to. */
export async function contactOfConfirmation(
  db: Executor,
  workspaceId: string,
  id: string,
): Promise<string | undefined> {
  return (
    await db
      .selectFrom('confirmations')
      .select('contact_id')
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst()
  )?.contact_id;
}
