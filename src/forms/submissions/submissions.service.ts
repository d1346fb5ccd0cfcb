import { confirm, fillContactTimezone, signUp, type SignUpFields } from '../../audience/index.js';
import { canonicalTimeZone } from '../../lib/zones.js';
import type { Db, Executor } from '../../db/connection.js';
import { GroupCommit } from '../../db/group-commit.js';
import { PublishedForms } from '../forms/forms.published.js';
import { DEFAULT_SUCCESS_MESSAGE } from '../forms/forms.service.js';
import { EMPTY_SUCCESS_SCOPE, isPersonalised, renderSuccessMessage } from '../forms/forms.success.js';
import * as forms from '../forms/forms.repository.js';
import type { PublishedForm } from '../forms/forms.repository.js';
import { RESERVED_FIELD_PREFIX, type Form } from '../forms/forms.schemas.js';
import { conflict, notFound } from '../../errors/errors.js';
import { recordEvent } from '../../outbox/index.js';
import { newId } from '../../lib/ids.js';
import { pooledRandomBytes } from '../../lib/random.js';
import { nowIso } from '../../lib/time.js';
import * as repo from './submissions.repository.js';
import { IntakeQueue, purgeIntakeNetworkData, type IntakeEntry, type SubmissionIntake } from './submissions.intake.js';
import {
  AnswerCounter,
  answersOf,
  readAnswers as readValues,
  type Answer,
  type FieldProblem,
  type QuestionSummary,
  type Value,
} from './submissions.answers.js';
import { getWorkspace, type Locale } from '../../access/index.js';
import { formQuestions } from '@formcast/form-appearance';
import { POW_FIELD, type PowFailure } from '../protection/protection.pow.js';
import type { ProtectionService } from '../protection/protection.service.js';
import type { FastifyBaseLogger } from 'fastify';
import { ipKey } from '../../lib/ip-key.js';
import { WindowCounter } from '../../lib/window-counter.js';

/** The field a honeypot bot fills: it is hidden from people; a submission with it set is dropped silently. */
export const HONEYPOT_FIELD = '_fc_hp';

/**
 * The hidden field a form with `settings.captureTimezone` carries: the embed fills it with the browser's zone
 * (`Intl.DateTimeFormat().resolvedOptions().timeZone`). A zone Intl does not know is dropped without a word: a
 * sign-up is never refused for it (docs/forms.md).
 */
export const TIMEZONE_FIELD = '_fc_tz';
export const CONFIRMATION_TTL_MS = 7 * 24 * 3600 * 1000;

export type { FieldProblem } from './submissions.answers.js';

/** Where a submission came from (proof of consent, docs/forms.md): cleared after SUBMISSION_RETENTION_DAYS. */
export interface SubmissionMeta {
  ip?: string | null;
  userAgent?: string | null;
}

export type SubmissionOutcome =
  | {
      ok: true;
      honeypot: boolean;
      submissionId: string | null;
      contactId: string | null;
      confirmationSent: boolean;
      successAction: Form['settings']['successAction'];
      held?: string[];
      queued?: boolean;
    }
  | { ok: false; errors: FieldProblem[]; proofOfWork?: PowFailure };

/**
 * The retention job (src/jobs): clears the address and user agent of submissions older than `days`
 * (SUBMISSION_RETENTION_DAYS), `batch` rows a statement; the consent text and its time stay. Entries of the intake
 * received as long ago and not made yet lose theirs too. Returns how many rows it cleared.
 */
export async function purgeSubmissionNetworkData(
  db: Db,
  days: number,
  now = Date.now(),
  batch = 1000,
): Promise<number> {
  const before = new Date(now - days * 86_400_000).toISOString();
  let total = 0;
  for (const purge of [repo.purgeNetworkData, purgeIntakeNetworkData]) {
    for (;;) {
      const n = await purge(db.kysely, before, batch);
      total += n;
      if (n < batch) break;
    }
  }
  return total;
}

/** A submission as the API shows it: with its answers, question by question. */
export type SubmissionView = repo.Submission & { answers: Answer[] };

const SUMMARY_PAGE = 1000;

/** At most one confirmation email per address in this window, however often the address signs up. */
export const CONFIRMATION_RESEND_WINDOW_MS = 60 * 60 * 1000;

/** What a confirmation link did or would do, and for whom (the page's words). */
export interface ConfirmationView {
  result: 'pending' | 'confirmed' | 'already' | 'expired' | 'unknown';
  locale: Locale;
  name: string;
  /** The workspace's brand colour (`settings.brandColor`), for the page's look. */
  brandColor?: string | null;
}

/** Views of one form counted from one visitor (IP address) a minute at most (recordView; the embed beacon's limit). */
export const VIEWS_PER_VISITOR_PER_MINUTE = 10;

export class SubmissionsService {
  /** Submissions arriving together are written together (SQLite): one commit for a burst of them. */
  private readonly writes: GroupCommit;
  private readonly published: PublishedForms;

  private readonly protection: ProtectionService | undefined;
  /** The intake of a spike (submissions.intake.ts). */
  private readonly intake: IntakeQueue;

  /**
   * `clock` (ms) dates the cache of published forms and the intake's spikes (tests move it); `protection` checks public
   * submissions (docs/bot-protection.md); `intake`: SUBMISSION_INTAKE (default `auto`).
   */
  constructor(
    private readonly db: Db,
    opts: { clock?: () => number; protection?: ProtectionService; intake?: SubmissionIntake } = {},
  ) {
    this.writes = new GroupCommit(db);
    this.published = new PublishedForms(db, opts.clock);
    this.protection = opts.protection;
    this.intake = new IntakeQueue(db, this.writes, opts.intake ?? 'auto', opts.clock ?? Date.now);
  }

  /**
   * The intake job of this process runs `processIntake` (jobs.ts): `wake` starts its next round at once, called when an
   * entry is taken in, so that a quiet server makes it within a turn of the event loop.
   */
  attachIntakeJob(wake: () => void, log: FastifyBaseLogger): void {
    this.intake.attach(wake, log);
  }

  /** The PUBLISHED form at a public slug (any workspace), or 404. Cached (forms/forms.published.ts): read-only. */
  async publishedBySlug(slug: string): Promise<PublishedForm> {
    const form = await this.published.get(slug);
    if (!form) throw notFound('form');
    return form;
  }

  /**
   * Counts a view of the form (its page, or an embed's impression beacon), each page view, but at most
   * VIEWS_PER_VISITOR_PER_MINUTE per visitor (IP address, IPv6 by /64) and form a minute, as the beacon's own rate limit: a script
   * fetching the page in a loop cannot inflate the views and lower the conversion rate (docs/api.md, forms). In memory, per
   * process (a visitor whose requests reach two processes may count up to the limit in each).
   */
  async recordView(workspaceId: string, formId: string, visitor?: string): Promise<void> {
    if (visitor !== undefined && !this.viewCounts.allow(`${ipKey(visitor)}|${formId}`, Date.now())) return;
    await forms.bumpCounter(this.db.kysely, workspaceId, formId, 'views');
  }

  /** Views counted per visitor and form in their current minute (recordView); the oldest forgotten past 20,000. */
  private readonly viewCounts = new WindowCounter(VIEWS_PER_VISITOR_PER_MINUTE, 60_000, 20_000);

  /**
   * The one code path of every submission (hosted page, embed, API): mapped fields only, validated by their
   * contact property; SIGN_UP creates or updates the contact by email; SURVEY stores the submission only.
   * Everything happens in one transaction (on SQLite shared with the submissions that arrived meanwhile, each in a
   * savepoint: db/group-commit.ts); a filled honeypot changes nothing and looks like a success. During a spike a public
   * submission is taken in instead (`queued`): stored as it came, and made by the intake job (submissions/CONTEXT.md).
   */
  async submit(
    workspaceId: string,
    form: Form,
    raw: Record<string, unknown>,
    source: 'HOSTED' | 'EMBED' | 'API',
    meta: SubmissionMeta = {},
  ): Promise<SubmissionOutcome> {
    const bait = raw[HONEYPOT_FIELD];
    if (
      source !== 'API' &&
      bait !== undefined &&
      bait !== '' &&
      !(Array.isArray(bait) && bait.every((b) => b === ''))
    ) {
      // A bot gets the message a person would, without anyone's answers in it.
      const successAction = successFor(form, null);
      return { ok: true, honeypot: true, submissionId: null, contactId: null, confirmationSent: false, successAction };
    }
    const { values, errors, consented } = readValues(form, raw);
    if (errors.length) return { ok: false, errors };
    // The browser's time zone (captureTimezone): kept with the answers when it is one, so the intake keeps it too.
    const zone = form.settings.captureTimezone ? browserZone(raw[TIMEZONE_FIELD]) : undefined;
    if (zone) values[TIMEZONE_FIELD] = zone;
    const successAction = successFor(form, values);
    // The proof of work (a form that asks for it; not the API's key-holders): checked once the fields are fine, so
    // that an embed whose fields were refused sends the same solution again; spent in the transaction that stores
    // the submission, so that a submission that could not be written does not use it up.
    let solution: { token: string; expiresAt: string } | undefined;
    if (source !== 'API' && form.settings.protection?.proofOfWork) {
      // Fails closed: a service built without protection cannot check, so it refuses.
      const pow = this.protection
        ? await this.protection.checkProofOfWork(form.formGroupId, raw[POW_FIELD])
        : {
            ok: false as const,
            reason: 'invalid' as const,
            message: 'The spam check is not available. Please try again later.',
          };
      if (!pow.ok) return { ok: false, errors: [{ field: POW_FIELD, message: pow.message }], proofOfWork: pow.reason };
      solution = pow;
    }
    const submissionId = newId('sub');
    const ip = meta.ip ? meta.ip.slice(0, 64) : null;
    // The user agent only with an address: the purge finds the rows by their address.
    const userAgent = meta.ip && meta.userAgent ? meta.userAgent.slice(0, 512) : null;
    if (source !== 'API' && this.intake.takesNow()) {
      // A spike: stored as it is and answered; made into its submission by the intake job (submissions/CONTEXT.md).
      const taken = await this.intake.takeIn(
        workspaceId,
        { submissionId, formId: form.id, source, values, consented, ip, userAgent },
        async (trx) => !solution || this.protection!.spendSolution(trx, workspaceId, solution),
      );
      if (!taken) return this.replayed();
      return {
        ok: true,
        honeypot: false,
        submissionId,
        contactId: null,
        confirmationSent: false,
        successAction,
        queued: true,
      };
    }
    const result = await this.intake.writing(() =>
      this.writes.run(async (trx) => {
        if (solution && !(await this.protection!.spendSolution(trx, workspaceId, solution))) return null;
        return this.store(trx, workspaceId, form, {
          submissionId,
          source,
          values,
          consented,
          ip,
          userAgent,
          now: nowIso(),
        });
      }),
    );
    if (!result) return this.replayed();
    return { ok: true, honeypot: false, submissionId, successAction, ...result };
  }

  private replayed(): SubmissionOutcome {
    const refused = this.protection!.refusal('replayed');
    return { ok: false, errors: [{ field: POW_FIELD, message: refused.message }], proofOfWork: refused.reason };
  }

  /** How many public submissions wait in the intake (every workspace), and since when: `formcast doctor`. */
  intakeBacklog(): Promise<{ waiting: number; oldest: string | null }> {
    return this.intake.backlog();
  }

  /** A spike of public submissions (submissions.intake.ts): the intake job lets them wait. */
  spiking(): boolean {
    return this.intake.spiking();
  }

  /**
   * What a submission does, in the transaction given (the request's, or the intake job's): the sign-up burst check,
   * the contact (SIGN_UP), the submission, and its events. `now` is when the visitor sent it.
   */
  private async store(
    trx: Executor,
    workspaceId: string,
    form: Form,
    s: {
      submissionId: string;
      source: 'HOSTED' | 'EMBED' | 'API';
      values: Record<string, Value>;
      consented: boolean;
      ip: string | null;
      userAgent: string | null;
      now: string;
    },
  ): Promise<{ contactId: string | null; confirmationSent: boolean; held?: string[] }> {
    const { submissionId, source, values, now } = s;
    const { email, fields } = contactFields(form, values);
    let contactId: string | null = null;
    let confirmationSent = false;
    // A burst of public sign-ups (one network, one address pattern): held for review, nobody signed up or mailed.
    const held =
      source !== 'API' && this.protection
        ? await this.protection.burst(trx, workspaceId, submissionId, s.ip, email, now)
        : [];
    if (form.type === 'SIGN_UP' && !held.length)
      ({ contactId, confirmationSent } = await signUpContact(trx, workspaceId, form, email, fields, now));
    if (contactId) await fillBrowserZone(trx, workspaceId, form, contactId, values[TIMEZONE_FIELD]);
    await repo.insertSubmission(trx, workspaceId, {
      status: held.length ? 'HELD' : 'ACCEPTED',
      heldReasons: held.length ? held : null,
      id: submissionId,
      formId: form.id,
      formGroupId: form.formGroupId,
      formVersion: form.version,
      data: toData(values),
      contactId,
      source,
      createdAt: now,
      ip: s.ip,
      userAgent: s.userAgent,
      consent: s.consented ? { text: form.settings.appearance!.consentText!, acceptedAt: now } : null,
    });
    if (held.length) {
      await recordEvent(
        trx,
        workspaceId,
        {
          type: 'form.submission_held',
          contactId: null,
          data: {
            formId: form.id,
            formGroupId: form.formGroupId,
            formVersion: form.version,
            formType: form.type,
            submissionId,
            source,
            reasons: held,
          },
        },
        now,
      );
      return { contactId, confirmationSent, held };
    }
    await recordAccepted(trx, workspaceId, form, { submissionId, source, contactId, data: toData(values) }, now);
    return { contactId, confirmationSent };
  }

  /**
   * The intake job (jobs.ts): makes up to `limit` waiting entries into their submissions (`store`), oldest first, each
   * in the transaction that removes it; returns how many it took up (submissions.intake.ts IntakeQueue.process). The
   * submission, contact and events carry the time the entry was received.
   */
  async processIntake(limit?: number): Promise<number> {
    const cache = new Map<string, Promise<Form | undefined>>();
    const formOf = (e: IntakeEntry) => {
      const key = `${e.workspaceId}/${e.formId}`;
      let f = cache.get(key);
      if (!f) cache.set(key, (f = forms.getForm(this.db.kysely, e.workspaceId, e.formId)));
      return f;
    };
    return this.intake.process(
      formOf,
      async (trx, e, form) => {
        await this.store(trx, e.workspaceId, form, {
          submissionId: e.submissionId,
          source: e.source,
          values: e.values,
          consented: e.consented,
          ip: e.ip,
          userAgent: e.userAgent,
          now: e.receivedAt,
        });
      },
      limit,
    );
  }

  /** How long the intake job waits before its next round: a pause during a spike, else nothing. */
  intakePauseMs(): number {
    return this.intake.pauseMs();
  }

  /**
   * Ends the review of a HELD submission (docs/bot-protection.md). `release`: what the submission would have
   * done is done now (the contact signed up, the confirmation email queued, `form.submitted`), as the form version it
   * was sent to says; `discard`: nothing happens, the submission stays DISCARDED. 409 `invalid_state` when it is not HELD.
   */
  async review(
    workspaceId: string,
    formId: string,
    submissionId: string,
    action: 'release' | 'discard',
  ): Promise<SubmissionView> {
    const k = this.db.kysely;
    const group = await forms.getForm(k, workspaceId, formId);
    if (!group) throw notFound('form');
    const found = await repo.getGroupSubmission(k, workspaceId, group.formGroupId, submissionId);
    if (!found) throw notFound('submission');
    if (found.status !== 'HELD')
      throw conflict(
        'invalid_state',
        `the submission is ${found.status}, not HELD: only a held submission is released or discarded`,
      );
    const form = found.formId === group.id ? group : await forms.getForm(k, workspaceId, found.formId);
    if (!form) throw notFound('form');
    await k.transaction().execute(async (trx) => {
      const now = nowIso();
      if (action === 'discard') {
        if (!(await repo.reviewSubmission(trx, workspaceId, submissionId, 'DISCARDED', null, now)))
          throw conflict('invalid_state', 'the submission was reviewed meanwhile');
        return;
      }
      // Stored answers are text; read again by the version's fields, a number is a number and a box a boolean, as
      // they would have been had the submission not been held.
      const { email, fields } = contactFields(form, readValues(form, found.data).values);
      // The review first: of two reviewers at once, one releases.
      if (!(await repo.reviewSubmission(trx, workspaceId, submissionId, 'RELEASED', null, now)))
        throw conflict('invalid_state', 'the submission was reviewed meanwhile');
      const { contactId } =
        form.type === 'SIGN_UP' && email
          ? await signUpContact(trx, workspaceId, form, email, fields, now)
          : { contactId: null };
      if (contactId) await repo.setSubmissionContact(trx, workspaceId, submissionId, contactId);
      // The browser's zone it came with (captureTimezone), as an accepted sign-up gives it.
      if (contactId) await fillBrowserZone(trx, workspaceId, form, contactId, found.data[TIMEZONE_FIELD]);
      await recordAccepted(
        trx,
        workspaceId,
        form,
        { submissionId, source: found.source, contactId, data: found.data },
        now,
      );
    });
    return this.get(workspaceId, submissionId);
  }

  /** The API's submission endpoint: the form, or its group, must be PUBLISHED; the published version takes it. */
  async submitViaApi(
    workspaceId: string,
    formId: string,
    raw: Record<string, unknown>,
    meta: SubmissionMeta = {},
  ): Promise<SubmissionOutcome & { form: Form }> {
    const form = await forms.getForm(this.db.kysely, workspaceId, formId);
    if (!form) throw notFound('form');
    const live =
      form.status === 'PUBLISHED'
        ? form
        : await forms.findGroupVersionByStatus(this.db.kysely, workspaceId, form.formGroupId, 'PUBLISHED');
    if (!live)
      throw conflict('form_not_published', 'submissions go to the published version of a form, and this form has none');
    // Strict like every /v1 body (contract §1): a key that is no field of the published version is refused, not
    // dropped (a `first_name` the form does not map would otherwise vanish without a word). The reserved `_fc_` fields
    // (consent, honeypot, proof of work) are the hosted page's and stay accepted.
    const known = new Set(formQuestions(live).map((q) => q.name));
    const unknown = Object.keys(raw).filter((k) => !known.has(k) && !k.startsWith(RESERVED_FIELD_PREFIX));
    if (unknown.length) {
      const fields = [...known].join(', ') || 'none';
      return {
        ok: false,
        errors: unknown.map((k) => ({
          field: k,
          message: `is not a field of this form (its fields: ${fields}); map it in fieldMapping to keep it`,
        })),
        form: live,
      };
    }
    return { ...(await this.submit(workspaceId, live, raw, 'API', meta)), form: live };
  }

  /** A page of the group's submissions, each with its answers question by question, as its own version asked them. */
  async list(
    workspaceId: string,
    formId: string,
    limit: number,
    beforeId?: string,
    status?: repo.SubmissionStatus,
  ): Promise<SubmissionView[]> {
    const form = await forms.getForm(this.db.kysely, workspaceId, formId);
    if (!form) throw notFound('form');
    const rows = await repo.listSubmissions(this.db.kysely, workspaceId, form.formGroupId, limit, beforeId, status);
    const versions = rows.some((r) => r.formVersion !== form.version)
      ? await forms.listGroupVersions(this.db.kysely, workspaceId, form.formGroupId)
      : [form];
    const byVersion = new Map(versions.map((v) => [v.version, v]));
    return rows.map((r) => ({ ...r, answers: answersOf(byVersion.get(r.formVersion) ?? form, r.data) }));
  }

  async get(workspaceId: string, id: string): Promise<SubmissionView> {
    const s = await repo.getSubmission(this.db.kysely, workspaceId, id);
    if (!s) throw notFound('submission');
    const form = await forms.getForm(this.db.kysely, workspaceId, s.formId);
    return { ...s, answers: form ? answersOf(form, s.data) : [] };
  }

  /**
   * The per-question summary of a form group's submissions (docs/forms.md, "Results"), by the questions of the
   * version named: counts per option for select, radio and checkbox questions, how many answered for the others.
   * Submissions held for review or discarded do not count.
   */
  async summary(
    workspaceId: string,
    formId: string,
  ): Promise<{ formId: string; formGroupId: string; total: number; questions: QuestionSummary[] }> {
    const form = await forms.getForm(this.db.kysely, workspaceId, formId);
    if (!form) throw notFound('form');
    const counter = new AnswerCounter(form);
    for (let after: string | null = null; ;) {
      const page = await repo.pageSubmissionData(this.db.kysely, workspaceId, form.formGroupId, after, SUMMARY_PAGE);
      for (const row of page) counter.add(row.data);
      if (page.length < SUMMARY_PAGE) break;
      after = page[page.length - 1]!.id;
    }
    return { formId: form.id, formGroupId: form.formGroupId, total: counter.total, questions: counter.result() };
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

  /** Who a confirmation page speaks for: the workspace's name, locale and brand colour. */
  private async about(workspaceId: string): Promise<{ locale: Locale; name: string; brandColor: string | null }> {
    const ws = await getWorkspace(this.db.kysely, workspaceId);
    return { locale: ws?.settings.locale ?? 'en', name: ws?.name ?? '', brandColor: ws?.settings.brandColor ?? null };
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
      // A re-subscription asked for on the unsubscribe page has no form to count it.
      if (c.formId) await forms.bumpCounter(trx, c.workspaceId, c.formId, 'confirmations');
      return true;
    });
    return { result: used ? 'confirmed' : 'already', ...about };
  }
}

/**
 * A SIGN_UP submission's effect on the contacts: created or updated by email (contacts.lifecycle.ts), and with double
 * opt-in a confirmation email queued, at most one per address per window.
 */
async function signUpContact(
  trx: Executor,
  workspaceId: string,
  form: Form,
  email: string,
  fields: SignUpFields,
  now: string,
): Promise<{ contactId: string; confirmationSent: boolean }> {
  const { contactId, confirm, held, created } = await signUp(
    trx,
    workspaceId,
    email,
    fields,
    form.settings.doubleOptIn,
    now,
  );
  const since = new Date(Date.parse(now) - CONFIRMATION_RESEND_WINDOW_MS).toISOString();
  // A contact made by this sign-up has no confirmation yet: no need to look.
  if (confirm && (created || !(await repo.hasRecentConfirmation(trx, workspaceId, contactId, since)))) {
    await repo.insertConfirmation(trx, workspaceId, {
      id: newId('cnf'),
      contactId,
      formId: form.id,
      token: pooledRandomBytes(24).toString('base64url'),
      expiresAt: new Date(Date.parse(now) + CONFIRMATION_TTL_MS).toISOString(),
      now,
      data: held,
    });
    return { contactId, confirmationSent: true };
  }
  return { contactId, confirmationSent: false };
}

/** A submission that counts: the form's counter, and `form.submitted` after the contact's own events (docs/events.md), so an automation on it finds the contact. */
async function recordAccepted(
  trx: Executor,
  workspaceId: string,
  form: Form,
  s: { submissionId: string; source: string; contactId: string | null; data: Record<string, string | string[]> },
  now: string,
): Promise<void> {
  await forms.bumpCounter(trx, workspaceId, form.id, 'submissions');
  await recordEvent(
    trx,
    workspaceId,
    {
      type: 'form.submitted',
      contactId: s.contactId,
      data: {
        formId: form.id,
        formGroupId: form.formGroupId,
        formVersion: form.version,
        formType: form.type,
        submissionId: s.submissionId,
        source: s.source,
        fields: s.data,
      },
    },
    now,
  );
}

/** The contact fields a SIGN_UP submission maps to (mapped fields only). */
/**
 * The form's success action as this submission gets it: a MESSAGE with Liquid rendered with its answers (`values`;
 * null: none), forms/forms.success.ts.
 */
function successFor(form: Form, values: Record<string, Value> | null): Form['settings']['successAction'] {
  const action = form.settings.successAction;
  if (action.type !== 'MESSAGE' || !isPersonalised(action.message)) return action;
  let scope = EMPTY_SUCCESS_SCOPE;
  if (values) {
    const { email, fields } = contactFields(form, values);
    scope = {
      fields: { ...values },
      contact: {
        email: email || null,
        firstName: fields.firstName ?? null,
        lastName: fields.lastName ?? null,
        properties: fields.properties,
      },
    };
  }
  return { type: 'MESSAGE', message: renderSuccessMessage(action.message!, scope, DEFAULT_SUCCESS_MESSAGE) };
}

/** A sign-up's browser zone (captureTimezone) given to its contact when it has none; anything else is ignored. */
async function fillBrowserZone(
  trx: Executor,
  workspaceId: string,
  form: Form,
  contactId: string,
  value: unknown,
): Promise<void> {
  const zone = form.settings.captureTimezone ? browserZone(value) : undefined;
  if (zone) await fillContactTimezone(trx, workspaceId, contactId, zone);
}

/** A submitted zone as Intl spells it, or undefined when it is none (or not text). */
function browserZone(value: unknown): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  return typeof text === 'string' && text.length <= 64 ? canonicalTimeZone(text) : undefined;
}

function contactFields(form: Form, values: Record<string, Value | string[]>): { email: string; fields: SignUpFields } {
  const fields: SignUpFields = { properties: {} };
  let email = '';
  for (const [field, property] of Object.entries(form.fieldMapping)) {
    const v = Object.hasOwn(values, field) ? values[field] : undefined;
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
