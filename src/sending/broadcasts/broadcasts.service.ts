import { SYSTEM_ACTOR, changesOf, recordAudit, type AuditAction, type AuditActor } from '../../outbox/index.js';
import { contactEmail, getContact, audiencePage, countAudience, getSegment, getTopic } from '../../audience/index.js';
import { type DomainsService, domainStatusByName, getSigningKey, findDomainByName } from '../../mail-setup/index.js';
import type { Mailer } from '../../mail/transport.js';
import { isBlockDocument } from '../../mail/blocks/grammar.js';
import {
  documentErrors,
  documentWarnings,
  withRenderedDocument,
  workspaceScope,
  type DocumentSettings,
} from '../../mail/documents.js';
import { returnPath } from '../../mail/verp.js';
import * as deliveries from '../deliveries/deliveries.repository.js';
import { cancelDeliveries, holdDeliveries, releaseDeliveries } from '../deliveries/deliveries.outcomes.js';
import type { DeliveryStatus } from '../../db/schema.js';
import type { Db, Executor } from '../../db/connection.js';
import {
  DomainError,
  conflict,
  notFound,
  payloadTooLarge,
  unprocessable,
  validationFailed,
  type FieldError,
  unavailable,
} from '../../errors/errors.js';
import { parseMailbox } from '../../lib/email.js';
import { newId } from '../../lib/ids.js';
import { liquidErrors } from '../../lib/liquid.js';
import { normalizeDateTime, nowIso } from '../../lib/time.js';
import { isTimeZone } from '../../lib/zones.js';
import * as repo from './broadcasts.repository.js';
import { planLocalSend, zonesOf, type ZoneProgress } from './broadcasts.local-time.js';
import { renderContent, type RenderedContent } from '../deliveries/message.content.js';
import { WEBVERSION_PREVIEW_PATH } from '../deliveries/webversion.js';
import type {
  AudienceMember,
  Broadcast,
  BroadcastStatus,
  CreateBroadcastInput,
  EmailContent,
  EmailContentInput,
  ResendInput,
  UpdateBroadcastInput,
  AbTest,
  AbTestInput,
} from './broadcasts.schemas.js';
import { transition } from './broadcasts.state.js';
import {
  SAMPLE_CONTACT,
  bareVariables,
  blockingChecks,
  checkErrors,
  contentChecks,
  documentChecks,
  pass,
  sentHtml,
  variantChecks,
  warning,
  type Check,
} from './broadcasts.preflight.js';
import { assembleContent, listHeaders } from '../deliveries/message.assembly.js';
import { classifySendError } from '../../mail/outcome.js';
import { getWorkspace } from '../../access/index.js';
import {
  engagementOf,
  linkStats,
  timeline,
  NO_ENGAGEMENT,
  type Bucket,
  type LinkStats,
  type TimelinePoint,
} from '../tracking/tracking.repository.js';
import { templateLinks } from '../tracking/tracking.links.js';
import { standing, withVariant } from './broadcasts.ab.js';
import { abStateOf, variantResults } from './broadcasts.ab.repository.js';
import { chooseWinner } from './broadcasts.writer.js';

export const MAX_BODY_BYTES = 2 * 1024 * 1024;

/** How long a cancel waits for messages already being handed to the transport. */
const CANCEL_DRAIN_MS = 30_000;

const EMPTY_CONTENT: EmailContent = { subject: null, html: null, text: null, previewText: null, editorContent: null };

/** emailContent is replaced whole when present (docs/api.md §1): keys it leaves out become null. */
function toContent(input: EmailContentInput): EmailContent {
  return {
    subject: input.subject ?? null,
    html: input.html ?? null,
    text: input.text ?? null,
    previewText: input.previewText ?? null,
    editorContent: input.editorContent ?? null,
  };
}

/**
 * Shape checks the schema cannot express: address syntax, template syntax, body sizes; `errors` found before (a block
 * document's) are reported with them.
 */
function checkShape(
  input: { from?: string | null; replyTo?: string | null; emailContent?: EmailContentInput },
  errors: FieldError[] = [],
): void {
  if (input.from != null && !parseMailbox(input.from))
    errors.push({
      path: '/from',
      message: 'must be an email address, optionally with a display name: "Name <addr@domain>"',
      keyword: 'format',
      params: { format: 'mailbox' },
    });
  if (input.replyTo != null && !parseMailbox(input.replyTo))
    errors.push({
      path: '/replyTo',
      message: 'must be an email address',
      keyword: 'format',
      params: { format: 'email' },
    });
  const c = input.emailContent;
  if (c) {
    for (const key of ['html', 'text'] as const) {
      if (c[key] != null && Buffer.byteLength(c[key]!, 'utf8') > MAX_BODY_BYTES)
        throw payloadTooLarge(`emailContent.${key} must be at most 2 MiB`);
    }
    errors.push(
      ...liquidErrors({ subject: c.subject, html: c.html, text: c.text, previewText: c.previewText }, '/emailContent'),
    );
  }
  if (errors.length) throw validationFailed(errors);
}

/** What test sends need: the mail transport of this process, and the secret of their VERP address. */
export interface TestSender {
  mailer: Mailer;
  secret: Buffer;
}

/** What broadcasts need of the installation's settings (src/config.ts passes its AppConfig). */
export interface BroadcastSettings {
  publicUrl: string;
  bounceMxHost?: string;
}

/**
 * The content a write stores (contract §16): a block document in `editorContent` is checked (its errors reported with
 * the other shape errors) and rendered to the html and text stored, whatever html or text the write sent; then the
 * usual shape checks apply to what is stored.
 */
async function storedContent<
  T extends { from?: string | null; replyTo?: string | null; emailContent?: EmailContentInput },
>(input: T, settings: DocumentSettings, lang: () => Promise<string | undefined>): Promise<T> {
  const errors = documentErrors(input.emailContent, '/emailContent');
  if (errors.length) checkShape({ ...input, emailContent: undefined }, errors);
  const emailContent =
    input.emailContent && (await withRenderedDocument(input.emailContent, '/emailContent', settings, lang));
  const stored = emailContent === input.emailContent ? input : { ...input, emailContent };
  checkShape(stored);
  return stored;
}

/**
 * An `abTest` as a write stores it (contract §17, docs/ab-tests.md): its variant ids unique, each variant's sender and
 * templates checked as the broadcast's are, and a variant's body that is a block document rendered as the broadcast's
 * is (storedContent), every error at its pointer under `/abTest/variants/<i>`. Nothing is written when one fails.
 */
async function storedAbTest(
  input: AbTestInput | null | undefined,
  settings: DocumentSettings,
  lang: () => Promise<string | undefined>,
): Promise<AbTest | null | undefined> {
  if (!input) return input;
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  input.variants.forEach((v, i) => {
    if (seen.has(v.id))
      errors.push({ path: `/abTest/variants/${i}/id`, message: `repeats the variant id "${v.id}"`, keyword: 'unique' });
    seen.add(v.id);
    const base = `/abTest/variants/${i}`;
    errors.push(...documentErrors(v.emailContent, `${base}/emailContent`));
    if (v.from != null && !parseMailbox(v.from))
      errors.push({
        path: `${base}/from`,
        message: 'must be an email address, optionally with a display name: "Name <addr@domain>"',
        keyword: 'format',
        params: { format: 'mailbox' },
      });
    errors.push(...liquidErrors({ subject: v.subject, previewText: v.previewText }, base));
  });
  if (errors.length) throw validationFailed(errors);
  const variants = [];
  for (const [i, v] of input.variants.entries()) {
    const base = `/abTest/variants/${i}`;
    const content = v.emailContent
      ? await withRenderedDocument(v.emailContent, `${base}/emailContent`, settings, lang)
      : null;
    if (content) {
      for (const key of ['html', 'text'] as const)
        if (content[key] != null && Buffer.byteLength(content[key]!, 'utf8') > MAX_BODY_BYTES)
          throw payloadTooLarge(`abTest.variants.${i}.emailContent.${key} must be at most 2 MiB`);
      errors.push(...liquidErrors({ html: content.html, text: content.text }, `${base}/emailContent`));
    }
    variants.push({
      id: v.id,
      subject: v.subject,
      previewText: v.previewText ?? null,
      from: v.from?.trim() ?? null,
      emailContent: content ? toContent(content) : null,
    });
  }
  if (errors.length) throw validationFailed(errors);
  return { variants, testPercent: input.testPercent, winnerBy: input.winnerBy, waitMinutes: input.waitMinutes };
}

export class BroadcastsService {
  /** Told when a broadcast is given to the workers (sent, resumed, its A/B winner picked): jobs.ts wakes them. */
  private given: (() => void) | null = null;

  constructor(
    private readonly db: Db,
    private readonly config: BroadcastSettings,
    private readonly domains: DomainsService,
    private readonly tests?: TestSender,
  ) {}

  /** The sending loops' wake (`formcast serve`, where the API and the worker share a process; docs/sending.md, "Idle"). */
  attachSender(wake: () => void): void {
    this.given = wake;
  }

  private tx<T>(fn: (trx: Executor) => Promise<T>): Promise<T> {
    return this.db.kysely.transaction().execute(fn);
  }

  /** The workspace's locale: the language a block document is rendered in (its footer's words, `<html lang>`). */
  private async localeOf(workspaceId: string): Promise<string | undefined> {
    return (await getWorkspace(this.db.kysely, workspaceId))?.settings.locale;
  }

  private async mustGet(db: Executor, workspaceId: string, id: string): Promise<Broadcast> {
    const b = await repo.getBroadcast(db, workspaceId, id);
    if (!b) throw notFound('broadcast');
    return b;
  }

  /** `from` must be on a VERIFIED domain of the workspace; topic and segment must exist in it. */
  private async checkReferences(
    db: Executor,
    workspaceId: string,
    input: { from?: string | null; topicId?: string | null; segmentId?: string | null; abTest?: AbTest | null },
  ): Promise<void> {
    const missing: FieldError[] = [];
    if (input.topicId && !(await getTopic(db, workspaceId, input.topicId)))
      missing.push({ path: '/topicId', message: 'names no topic of this workspace', keyword: 'reference' });
    if (input.segmentId && !(await getSegment(db, workspaceId, input.segmentId)))
      missing.push({ path: '/segmentId', message: 'names no segment of this workspace', keyword: 'reference' });
    if (missing.length)
      throw unprocessable(
        'invalid_reference',
        missing.map((m) => `${m.path.slice(1)} ${m.message}`).join('; '),
        missing,
      );
    if (input.from) await this.checkSender(db, workspaceId, input.from);
    for (const [i, v] of (input.abTest?.variants ?? []).entries())
      if (v.from) await this.checkSender(db, workspaceId, v.from, `/abTest/variants/${i}/from`);
  }

  private async checkSender(db: Executor, workspaceId: string, from: string, path = '/from'): Promise<void> {
    const domain = parseMailbox(from)?.domain;
    const status = domain ? await domainStatusByName(db, workspaceId, domain) : undefined;
    if (status !== 'VERIFIED') {
      throw unprocessable(
        'sender_domain_not_verified',
        `${domain ?? from} is not a verified sending domain of this workspace; add and verify it (POST /v1/domains)`,
        [{ path, message: 'is not on a verified domain', keyword: 'verified_domain' }],
      );
    }
  }

  /**
   * Ready to go out: the preflight checks that can fail (broadcasts.preflight.ts) all pass. The sender's domain
   * answers 422 sender_domain_not_verified, anything else 422 broadcast_incomplete with each failing check.
   */
  private async checkSendable(db: Executor, workspaceId: string, b: Broadcast): Promise<void> {
    const checks = blockingChecks(b, b.from ? await this.senderVerified(db, workspaceId, b.from) : null);
    // An A/B broadcast: each variant's message must be sendable too (docs/ab-tests.md), its checks named by it.
    checks.push(...(await this.abChecks(db, workspaceId, b)));
    const failed = checks.filter((c) => c.status === 'fail');
    if (!failed.length) return;
    if (failed.every((c) => c.id === 'sender_domain')) await this.checkSender(db, workspaceId, b.from!);
    const errors = checkErrors(failed.filter((c) => c.id !== 'sender_domain'));
    throw unprocessable(
      'broadcast_incomplete',
      'the broadcast is not complete: ' + errors.map((m) => `${m.path} ${m.message}`).join('; '),
      errors,
    );
  }

  /** The blocking checks of each variant's message (docs/ab-tests.md): a variant that cannot be sent blocks the send. */
  private async abChecks(db: Executor, workspaceId: string, b: Broadcast): Promise<Check[]> {
    const checks: Check[] = [];
    for (const [i, v] of (b.abTest?.variants ?? []).entries()) {
      const merged = withVariant(b, b.abTest, v.id);
      const own = blockingChecks(merged, merged.from ? await this.senderVerified(db, workspaceId, merged.from) : null);
      checks.push(...variantChecks(i, v.id, own));
    }
    return checks;
  }

  /** The workspace's `settings.defaultFrom` when its domain is VERIFIED now; null otherwise (a draft without a sender). */
  private async defaultSender(
    db: Executor,
    workspaceId: string,
    settings: { defaultFrom?: string | null } | undefined,
  ): Promise<string | null> {
    const configured = settings?.defaultFrom?.trim();
    return configured && (await this.senderVerified(db, workspaceId, configured)) ? configured : null;
  }

  private async senderVerified(db: Executor, workspaceId: string, from: string): Promise<boolean> {
    const domain = parseMailbox(from)?.domain;
    return domain ? (await domainStatusByName(db, workspaceId, domain)) === 'VERIFIED' : false;
  }

  async create(workspaceId: string, given: CreateBroadcastInput): Promise<Broadcast> {
    const lang = () => this.localeOf(workspaceId);
    const input = {
      ...(await storedContent(given, this.config, lang)),
      abTest: await storedAbTest(given.abTest, this.config, lang),
    };
    const id = newId('bc');
    await this.tx(async (trx) => {
      await this.checkReferences(trx, workspaceId, input);
      const settings = (await getWorkspace(trx, workspaceId))?.settings;
      // Tracking not given: the workspace's default at the time of creation (docs/tracking.md).
      const tracking = input.tracking ?? settings?.tracking ?? { opens: true, clicks: true };
      // No `from` given: the workspace's default sender, while its domain is verified (docs/api.md §5).
      const from =
        input.from !== undefined ? (input.from?.trim() ?? null) : await this.defaultSender(trx, workspaceId, settings);
      await repo.insertBroadcast(
        trx,
        workspaceId,
        id,
        {
          tracking: { opens: tracking.opens, clicks: tracking.clicks },
          archive: input.archive ?? false,
          name: input.name,
          from,
          replyTo: input.replyTo?.trim() ?? null,
          emailContent: input.emailContent ? toContent(input.emailContent) : EMPTY_CONTENT,
          topicId: input.topicId ?? null,
          segmentId: input.segmentId ?? null,
          sendAt: null,
          pausedReason: null,
          breakerSince: null,
          abTest: input.abTest ?? null,
        },
        nowIso(),
      );
    });
    return this.get(workspaceId, id);
  }

  /**
   * A resend (§18, docs/sending.md "Resend to non-openers"): a new DRAFT with the original's content (its subject
   * replaced when one is given), sender, reply-to, topic and tracking, whose audience is the original's recipients
   * without a human open (click) now, the instant stored as `resendOf.asOf`. The original must be SENT (409
   * invalid_state) and must have tracked what `to` asks about (422 validation_failed at /to: without the pixel
   * nobody has opened, and everybody would get it again). Recorded in the audit log on the original.
   */
  async resend(
    workspaceId: string,
    id: string,
    input: ResendInput,
    actor: AuditActor = SYSTEM_ACTOR,
  ): Promise<Broadcast> {
    if (input.subject !== undefined) {
      const errors = liquidErrors({ subject: input.subject }, '');
      if (errors.length) throw validationFailed(errors);
    }
    const resendId = newId('bc');
    await this.tx(async (trx) => {
      const original = await this.mustGet(trx, workspaceId, id);
      if (original.status !== 'SENT')
        throw conflict(
          'invalid_state',
          `only a SENT broadcast can be resent; this one is ${original.status}${original.status === 'SENDING' || original.status === 'PAUSED' ? ': wait until it is sent' : ''}`,
        );
      const tracked = input.to === 'NON_OPENERS' ? original.tracking.opens : original.tracking.clicks;
      if (!tracked)
        throw validationFailed([
          {
            path: '/to',
            message: `the broadcast did not track ${input.to === 'NON_OPENERS' ? 'opens' : 'clicks'}, so it cannot tell who did not ${input.to === 'NON_OPENERS' ? 'open' : 'click'}`,
          },
        ]);
      const now = nowIso();
      await repo.insertBroadcast(
        trx,
        workspaceId,
        resendId,
        {
          tracking: original.tracking,
          name: resendName(original.name, input.to),
          from: original.from,
          replyTo: original.replyTo,
          emailContent: { ...original.emailContent, subject: input.subject ?? original.emailContent.subject },
          topicId: original.topicId,
          segmentId: null,
          sendAt: null,
          pausedReason: null,
          breakerSince: null,
          resend: { of: original.id, to: input.to, asOf: now },
          // The same email again to some of its readers: the archive shows the original, not this second copy.
          archive: false,
        },
        now,
      );
      await recordAudit(trx, workspaceId, actor, {
        action: 'broadcast.resent',
        target: { type: 'broadcast', id: original.id, label: original.name },
        changes: { resendId: { before: null, after: resendId }, to: { before: null, after: input.to } },
      });
    });
    return this.get(workspaceId, resendId);
  }

  /** PUT /v1/broadcasts/{id}/archive: in or out of the public archive, in any status (docs/archive.md). */
  async setArchive(
    workspaceId: string,
    id: string,
    archive: boolean,
    actor: AuditActor = SYSTEM_ACTOR,
  ): Promise<Broadcast> {
    await this.db.kysely.transaction().execute(async (trx) => {
      const current = await this.mustGet(trx, workspaceId, id);
      if (!(await repo.setArchive(trx, workspaceId, id, archive))) throw notFound('broadcast');
      // What the public archive shows is the workspace's to know: who turned a broadcast's switch (docs/audit-log.md).
      if (current.archive !== archive)
        await recordAudit(trx, workspaceId, actor, {
          action: 'broadcast.archive_changed',
          target: { type: 'broadcast', id, label: current.name },
          changes: { archive: { before: current.archive, after: archive } },
        });
    });
    return this.get(workspaceId, id);
  }

  async get(workspaceId: string, id: string): Promise<Broadcast> {
    return (await this.withStats(workspaceId, [await this.mustGet(this.db.kysely, workspaceId, id)]))[0]!;
  }

  async list(
    workspaceId: string,
    opts: { status?: BroadcastStatus; limit: number; beforeId?: string },
  ): Promise<Broadcast[]> {
    return this.withStats(workspaceId, await repo.listBroadcasts(this.db.kysely, workspaceId, opts));
  }

  /** Once sending has started, `stats` counts the deliveries (docs/api.md §5): one query for the lot. */
  private async withStats(workspaceId: string, broadcasts: Broadcast[]): Promise<Broadcast[]> {
    const started = broadcasts.filter((b) => b.status !== 'DRAFT' && b.status !== 'SCHEDULED').map((b) => b.id);
    const counts = await deliveries.countDeliveriesOf(this.db.kysely, workspaceId, started);
    const engagement = await engagementOf(this.db.kysely, workspaceId, started);
    const ab = new Map<string, Awaited<ReturnType<BroadcastsService['abStats']>>>();
    for (const b of broadcasts)
      if (b.abTest && counts.has(b.id)) ab.set(b.id, await this.abStats(this.db.kysely, workspaceId, b.id));
    // Local-time sending: progress per zone (stats.zones, an addition to the contract's stats; docs/sending.md).
    const zones = new Map<string, ZoneProgress[]>();
    for (const b of broadcasts)
      if (b.localSendTime !== null && counts.has(b.id))
        zones.set(b.id, await zonesOf(this.db.kysely, workspaceId, b.id, b.localSendTime));
    return broadcasts.map((b) => {
      const c = counts.get(b.id);
      if (!c) return b;
      const e = engagement.get(b.id) ?? NO_ENGAGEMENT;
      const n = (s: DeliveryStatus) => c.byStatus[s] ?? 0;
      return {
        ...b,
        stats: {
          recipients: c.total,
          queued: n('QUEUED') + n('SENDING') + n('PAUSED'),
          sent: n('SENT'),
          failed: n('FAILED'),
          bounced: n('BOUNCED'),
          softBounced: c.softBounced,
          complained: c.complained,
          unsubscribed: c.unsubscribed,
          opened: e.opened,
          clicked: e.clicked,
          uniqueOpens: e.uniqueOpens,
          uniqueClicks: e.uniqueClicks,
          machineOpens: e.machineOpens,
          ...(ab.get(b.id) ?? {}),
          ...(zones.has(b.id) ? { zones: zones.get(b.id) } : {}),
          ...(c.outboxed ? { outbox: c.outboxed } : {}),
        },
      };
    });
  }

  /**
   * An A/B broadcast's `stats.variants` and `stats.abResult` (docs/ab-tests.md): each variant's test share, the winner
   * (once chosen) or the leader by the rule, the margin and a two-proportion z-test of leader against runner-up.
   */
  private async abStats(db: Executor, workspaceId: string, id: string) {
    const state = await abStateOf(db, workspaceId, id);
    if (!state) return {};
    const results = await variantResults(db, workspaceId, id, state.test);
    const rate = (x: number, n: number) => (n ? Math.round((x / n) * 10_000) / 10_000 : 0);
    const standingNow = standing(results, state.test.winnerBy);
    return {
      variants: results.map((r) => ({
        ...r,
        openRate: rate(r.uniqueOpens, r.sent),
        clickRate: rate(r.uniqueClicks, r.sent),
        winner: r.id === state.winner,
      })),
      abResult: {
        winnerBy: state.test.winnerBy,
        winner: state.winner,
        chosenAt: state.chosenAt,
        decidesAt: state.testQueuedAt
          ? new Date(Date.parse(state.testQueuedAt) + state.test.waitMinutes * 60_000).toISOString()
          : null,
        ...standingNow,
      },
    };
  }

  /**
   * Picks an A/B broadcast's winner by hand (contract §17), before the wait ends: the variant is sent to the rest of the
   * audience next. 409 ab_winner_chosen once chosen (by hand or by the timer), 409 ab_test_missing without a test,
   * 409 invalid_state unless SENDING or PAUSED, 422 validation_failed for a variant the test does not have.
   */
  async pickWinner(
    workspaceId: string,
    id: string,
    variant: string,
    actor: AuditActor = SYSTEM_ACTOR,
  ): Promise<Broadcast> {
    await this.tx(async (trx) => {
      const current = await this.mustGet(trx, workspaceId, id);
      const state = await abStateOf(trx, workspaceId, id);
      if (!state) throw conflict('ab_test_missing', 'this broadcast has no A/B test (abTest is null)');
      if (state.winner)
        throw conflict('ab_winner_chosen', `the winner was already chosen: variant ${state.winner}`, {
          winner: state.winner,
        });
      if (!state.test.variants.some((v) => v.id === variant))
        throw validationFailed([
          {
            path: '/variant',
            message: `names no variant of the test (${state.test.variants.map((v) => v.id).join(', ')})`,
            keyword: 'enum',
          },
        ]);
      if (current.status !== 'SENDING' && current.status !== 'PAUSED')
        throw conflict(
          'invalid_state',
          `a winner is picked while the broadcast is SENDING or PAUSED; it is ${current.status}`,
        );
      const results = await variantResults(trx, workspaceId, id, state.test);
      const now = nowIso();
      if (!(await chooseWinner(trx, workspaceId, id, { variant, chosenBy: 'hand', results }, now)))
        throw conflict('ab_winner_chosen', 'the winner was chosen meanwhile; reload the broadcast');
      await recordAudit(trx, workspaceId, actor, {
        action: 'broadcast.ab_winner_picked',
        target: { type: 'broadcast', id, label: current.name },
        changes: { abWinner: { before: null, after: variant } },
      });
    });
    this.given?.();
    return this.get(workspaceId, id);
  }

  /**
   * PUT: DRAFT or SCHEDULED only. A future sendAt schedules (the result must be sendable), null unschedules,
   * a past one is rejected. Edits to a SCHEDULED broadcast keep it scheduled, so they must leave it sendable.
   */
  async update(
    workspaceId: string,
    id: string,
    given: UpdateBroadcastInput,
    actor: AuditActor = SYSTEM_ACTOR,
  ): Promise<Broadcast> {
    if (given.id !== undefined && given.id !== id)
      throw validationFailed([{ path: '/id', message: 'must equal the broadcast id in the path' }]);
    const lang = () => this.localeOf(workspaceId);
    const input = {
      ...(await storedContent(given, this.config, lang)),
      abTest: await storedAbTest(given.abTest, this.config, lang),
    };
    const now = nowIso();
    let sendAt: string | null | undefined;
    if (input.sendAt != null) {
      sendAt = normalizeDateTime(input.sendAt);
      if (sendAt === undefined)
        throw validationFailed([
          {
            path: '/sendAt',
            message: 'must be an RFC 3339 date-time',
            keyword: 'format',
            params: { format: 'date-time' },
          },
        ]);
    } else if (input.sendAt === null) {
      sendAt = null;
    }
    return this.tx(async (trx) => {
      const current = await this.mustGet(trx, workspaceId, id);
      const op = sendAt === undefined ? 'update' : sendAt === null ? 'unschedule' : 'schedule';
      const next = transition(current.status, op) as BroadcastStatus;
      // Local-time sending (issue 34, docs/sending.md): `sendAtLocal` omitted keeps what the broadcast has. A local
      // send time need only be future in one zone of the audience (broadcasts.local-time.ts planLocalSend).
      const local = input.sendAtLocal ?? current.sendAtLocal;
      if (sendAt && !local && sendAt <= now)
        throw validationFailed([
          {
            path: '/sendAt',
            message: 'must be in the future (use POST /v1/broadcasts/{id}/send to send now)',
            keyword: 'future',
          },
        ]);
      await this.checkReferences(trx, workspaceId, input);
      const values: Partial<repo.BroadcastValues> = {};
      if (input.name !== undefined) values.name = input.name;
      if (input.from !== undefined) values.from = input.from?.trim() ?? null;
      if (input.replyTo !== undefined) values.replyTo = input.replyTo?.trim() ?? null;
      if (input.emailContent !== undefined) values.emailContent = toContent(input.emailContent);
      if (input.topicId !== undefined) values.topicId = input.topicId;
      if (input.segmentId !== undefined) values.segmentId = input.segmentId;
      if (input.tracking !== undefined)
        values.tracking = { opens: input.tracking.opens, clicks: input.tracking.clicks };
      if (input.abTest !== undefined) values.abTest = input.abTest;
      if (input.archive !== undefined) values.archive = input.archive;
      if (sendAt !== undefined) values.sendAt = sendAt;
      const scheduledAt = sendAt === undefined ? current.sendAt : sendAt;
      if (sendAt === null || input.sendAtLocal === false) values.local = null;
      else if (input.sendAtLocal === true && scheduledAt === null)
        throw validationFailed([
          {
            path: '/sendAtLocal',
            message: 'needs a sendAt: the time each recipient gets the broadcast at in their own zone',
            keyword: 'required',
          },
        ]);
      else if (
        local &&
        scheduledAt !== null &&
        (sendAt !== undefined ||
          input.sendAtLocal !== undefined ||
          input.segmentId !== undefined ||
          input.topicId !== undefined)
      )
        values.local = await planLocalSend(
          trx,
          this.db.dialect,
          workspaceId,
          {
            segmentId: input.segmentId !== undefined ? input.segmentId : current.segmentId,
            topicId: input.topicId !== undefined ? input.topicId : current.topicId,
            // A resend's zones are those of its own audience (the original's non-openers), not its segment's.
            resend: current.resendOf
              ? { of: current.resendOf.broadcastId, to: current.resendOf.to, asOf: current.resendOf.asOf }
              : null,
          },
          scheduledAt,
          now,
        );
      const merged: Broadcast = {
        ...current,
        ...(values.name !== undefined ? { name: values.name } : {}),
        from: values.from !== undefined ? values.from : current.from,
        emailContent: values.emailContent ?? current.emailContent,
        abTest: values.abTest !== undefined ? values.abTest : current.abTest,
      };
      // An A/B test sends its test share and, after the wait, the winner at one time for everyone: it is not sent at
      // each recipient's local time (Mailchimp does not combine them either; docs/ab-tests.md).
      const sendsLocal = values.local !== undefined ? values.local !== null : current.sendAtLocal;
      if (merged.abTest && sendsLocal)
        throw validationFailed([
          {
            path: input.abTest ? '/abTest' : '/sendAtLocal',
            message: "an A/B test cannot be sent at each recipient's local time: turn one of them off",
            keyword: 'abTestLocalTime',
          },
        ]);
      if (next === 'SCHEDULED') await this.checkSendable(trx, workspaceId, merged);
      const updated = await repo.updateBroadcast(trx, workspaceId, id, current.status, next, values, now);
      if (!updated) throw conflict('invalid_state', 'the broadcast changed status while it was being updated; retry');
      // A send time set or cleared is a send decision (docs/audit-log.md); other edits of a draft are not audited.
      if (op === 'schedule' || (op === 'unschedule' && current.status === 'SCHEDULED'))
        await auditSend(
          trx,
          workspaceId,
          actor,
          op === 'schedule' ? 'broadcast.scheduled' : 'broadcast.unscheduled',
          current,
          updated,
        );
      return updated;
    });
  }

  /**
   * Send now (202): DRAFT or SCHEDULED, and sendable. The workers take it from here: they write the audience
   * into deliveries and send them.
   */
  async send(workspaceId: string, id: string, actor: AuditActor = SYSTEM_ACTOR): Promise<Broadcast> {
    const sent = await this.tx(async (trx) => {
      const current = await this.mustGet(trx, workspaceId, id);
      const next = transition(current.status, 'send') as BroadcastStatus;
      await this.checkSendable(trx, workspaceId, current);
      // Sent now: a local-time schedule no longer applies (docs/sending.md).
      const values: Partial<repo.BroadcastValues> = current.sendAtLocal ? { local: null } : {};
      const updated = await repo.updateBroadcast(trx, workspaceId, id, current.status, next, values, nowIso());
      if (!updated) throw conflict('invalid_state', 'the broadcast changed status while it was being sent; retry');
      await auditSend(trx, workspaceId, actor, 'broadcast.sent', current, updated);
      return updated;
    });
    this.given?.();
    return (await this.withStats(workspaceId, [sent]))[0]!;
  }

  /**
   * SCHEDULED → DRAFT (the send time is cleared). SENDING or PAUSED → CANCELED: every delivery not yet handed to the
   * transport is canceled in the same transaction, and the call returns only once the few being handed over
   * right now are done, so nothing is sent after it returns (bounded by CANCEL_DRAIN_MS for a stuck server).
   */
  async cancel(workspaceId: string, id: string, actor: AuditActor = SYSTEM_ACTOR): Promise<Broadcast> {
    const canceled = await this.tx(async (trx) => {
      const current = await this.mustGet(trx, workspaceId, id);
      const next = transition(current.status, 'cancel') as BroadcastStatus;
      const values: Partial<repo.BroadcastValues> = next === 'DRAFT' ? { sendAt: null, local: null } : {};
      const updated = await repo.updateBroadcast(trx, workspaceId, id, current.status, next, values, nowIso());
      if (!updated) throw conflict('invalid_state', 'the broadcast changed status while it was being canceled; retry');
      if (next === 'CANCELED') await cancelDeliveries(trx, workspaceId, id, nowIso());
      await auditSend(trx, workspaceId, actor, 'broadcast.canceled', current, updated);
      return updated;
    });
    if (canceled.status === 'CANCELED') await this.drain(workspaceId, id);
    return (await this.withStats(workspaceId, [canceled]))[0]!;
  }

  /**
   * Pause by hand (SENDING → PAUSED): nothing new goes out; deliveries not yet handed to the transport wait
   * (PAUSED). Returns once the few being handed over right now are done, as cancel does.
   */
  async pause(workspaceId: string, id: string, actor: AuditActor = SYSTEM_ACTOR): Promise<Broadcast> {
    const paused = await this.tx(async (trx) => {
      const current = await this.mustGet(trx, workspaceId, id);
      const next = transition(current.status, 'pause') as BroadcastStatus;
      const now = nowIso();
      const updated = await repo.updateBroadcast(
        trx,
        workspaceId,
        id,
        current.status,
        next,
        { pausedReason: 'paused by hand' },
        now,
      );
      if (!updated) throw conflict('invalid_state', 'the broadcast changed status while it was being paused; retry');
      await holdDeliveries(trx, workspaceId, id, now);
      await auditSend(trx, workspaceId, actor, 'broadcast.paused', current, updated);
      return updated;
    });
    await this.drain(workspaceId, id);
    return (await this.withStats(workspaceId, [paused]))[0]!;
  }

  /** PAUSED → SENDING: held deliveries go back to the queue, due now; sending continues where it stopped. */
  async resume(workspaceId: string, id: string, actor: AuditActor = SYSTEM_ACTOR): Promise<Broadcast> {
    const resumed = await this.tx(async (trx) => {
      const current = await this.mustGet(trx, workspaceId, id);
      const next = transition(current.status, 'resume') as BroadcastStatus;
      const now = nowIso();
      const updated = await repo.updateBroadcast(
        trx,
        workspaceId,
        id,
        current.status,
        next,
        { pausedReason: null, breakerSince: now },
        now,
      );
      if (!updated) throw conflict('invalid_state', 'the broadcast changed status while it was being resumed; retry');
      await releaseDeliveries(trx, workspaceId, id, now);
      await auditSend(trx, workspaceId, actor, 'broadcast.resumed', current, updated);
      return updated;
    });
    this.given?.();
    return (await this.withStats(workspaceId, [resumed]))[0]!;
  }

  /** Waits (at most CANCEL_DRAIN_MS) until no delivery of the broadcast is being handed to the transport. */
  private async drain(workspaceId: string, id: string): Promise<void> {
    const deadline = Date.now() + CANCEL_DRAIN_MS;
    while (Date.now() < deadline && (await deliveries.countInFlight(this.db.kysely, workspaceId, id, nowIso())) > 0) {
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** One row per recipient with its status, attempts and last SMTP reply. */
  async listDeliveries(
    workspaceId: string,
    id: string,
    opts: { status?: DeliveryStatus; limit: number; beforeId?: string },
  ): Promise<deliveries.Delivery[]> {
    await this.mustGet(this.db.kysely, workspaceId, id);
    return deliveries.listDeliveries(this.db.kysely, workspaceId, id, opts);
  }

  /** The links people clicked, most clicked first, by the link as the template writes it (docs/tracking.md, "Stats"). */
  async links(workspaceId: string, id: string): Promise<{ data: LinkStats[] }> {
    const b = await this.mustGet(this.db.kysely, workspaceId, id);
    const links = templateLinks([b.emailContent.html]);
    return { data: await linkStats(this.db.kysely, this.db.dialect, workspaceId, id, 500, links) };
  }

  /** Sent, opens, clicks and bounces per hour or day (UTC), computed by the database. */
  /** Per hour or day of `tz` (an IANA zone, UTC by default: the reader's, so that a send at 8:51 is in the 8:00 hour). */
  async timeline(
    workspaceId: string,
    id: string,
    bucket: Bucket = 'hour',
    tz = 'UTC',
  ): Promise<{ bucket: Bucket; timeZone: string; data: TimelinePoint[] }> {
    if (!isTimeZone(tz))
      throw validationFailed([
        {
          path: '/query/tz',
          message: 'must be an IANA time zone name, such as Europe/Paris',
          keyword: 'format',
          params: { format: 'time-zone' },
        },
      ]);
    await this.mustGet(this.db.kysely, workspaceId, id);
    return {
      bucket,
      timeZone: tz,
      data: await timeline(this.db.kysely, this.db.dialect, workspaceId, id, bucket, tz),
    };
  }

  async remove(workspaceId: string, id: string): Promise<void> {
    const current = await this.mustGet(this.db.kysely, workspaceId, id);
    transition(current.status, 'delete');
    if (!(await repo.deleteDraftBroadcast(this.db.kysely, workspaceId, id))) {
      throw conflict('invalid_state', 'the broadcast is no longer a draft');
    }
  }

  /**
   * Preflight (docs/bounces.md): every check, those that can fail and those that advise — the sender domain's
   * DNS (DKIM, SPF, DMARC, bounce MX), PUBLIC_URL over https, the unsubscribe link, contact fields the templates
   * print that part of the audience lacks, Gmail's clipping size, images without alt text, plain-http links,
   * the audience and how long sending it takes at the rate measured last.
   */
  async preflight(workspaceId: string, id: string): Promise<{ ok: boolean; checks: Check[] }> {
    const k = this.db.kysely;
    const b = await this.mustGet(k, workspaceId, id);
    const domain = b.from ? parseMailbox(b.from)?.domain : undefined;
    const checks = blockingChecks(b, b.from ? await this.senderVerified(k, workspaceId, b.from) : null);
    checks.push(...(await this.abChecks(k, workspaceId, b)));

    if (domain) {
      const dns = await this.domains.checkDns(workspaceId, domain).catch(() => undefined);
      if (!dns) checks.push(warning('dns', `the DNS of ${domain} could not be checked`));
      else {
        const dkim = dns.records[1];
        checks.push(
          dkim?.status === 'VERIFIED'
            ? pass('dns_dkim', `the DKIM key is published at ${dkim.name}`)
            : warning(
                'dns_dkim',
                `the DKIM key at ${dkim?.name ?? domain} is ${dkim?.status ?? 'missing'}: receivers cannot verify the signature`,
              ),
        );
        // SPF where receivers evaluate it: the Return-Path's domain (bounces.<domain>, or the relay's), not the From's.
        const envelope = dns.envelope;
        if (envelope) {
          const missing = envelope.records.filter((r) => r.status !== 'VERIFIED');
          checks.push(
            envelope.domain === null
              ? warning(
                  'dns_spf',
                  `the Return-Path domain is your relay's (${envelope.relay}): Formcast cannot check its SPF; publish the records its domain authentication gives for ${domain}`,
                )
              : missing.length === 0 && envelope.records.length > 0
                ? pass(
                    'dns_spf',
                    `SPF at ${envelope.domain}, the Return-Path receivers check: ${envelope.spf.record ?? 'through its CNAME'}`,
                  )
                : warning(
                    'dns_spf',
                    `SPF at ${envelope.domain}, the Return-Path domain receivers check for these messages, is not as advised: ${missing.map((r) => `${r.type} ${r.name} ${r.status}`).join(', ')} (Gmail and Yahoo require SPF of bulk senders)`,
                  ),
          );
        } else
          checks.push(
            dns.bounce.spf.found
              ? pass('dns_spf', `SPF at bounces.${domain}: ${dns.bounce.spf.record}`)
              : warning('dns_spf', `bounces.${domain}, the Return-Path domain receivers check, has no SPF record`),
          );
        checks.push(
          dns.dmarc.found
            ? pass('dns_dmarc', `DMARC: ${dns.dmarc.record}`)
            : warning('dns_dmarc', `${domain} has no DMARC record (Gmail and Yahoo require one of bulk senders)`),
        );
        if (dns.alignment && !dns.alignment.spfAligns)
          checks.push(
            warning(
              'dns_dmarc_alignment',
              `the DMARC record has aspf=s: SPF of the Return-Path (${envelope?.domain ?? `bounces.${domain}`}) never aligns with ${domain}, so DMARC rests on DKIM alone; remove aspf=s`,
            ),
          );
        if (!envelope || envelope.relay === 'smtp')
          checks.push(
            dns.bounce.mx.found
              ? pass('dns_bounce_mx', `bounces.${domain} has its MX`)
              : warning(
                  'dns_bounce_mx',
                  `bounces.${domain} has no MX to ${this.config.bounceMxHost ?? 'the inbound listener'}: bounce reports after sending will not be seen`,
                ),
          );
        if (dns.tracking)
          checks.push(
            dns.tracking.status === 'VERIFIED'
              ? pass('dns_tracking', `links and the open pixel use ${dns.tracking.name} (its CNAME is published)`)
              : warning(
                  'dns_tracking',
                  `the tracking host ${dns.tracking.name} has no CNAME to ${dns.tracking.value} (${dns.tracking.status}): links and the pixel use PUBLIC_URL until it is verified`,
                ),
          );
      }
    }
    checks.push(
      new URL(this.config.publicUrl).protocol === 'https:'
        ? pass('public_url', 'links use https')
        : warning(
            'public_url',
            `PUBLIC_URL is ${this.config.publicUrl}: one-click unsubscribe (RFC 8058) and mailbox providers expect https`,
          ),
    );

    const spec = repo.audienceSpecOf(b);
    const audience = await countAudience(k, this.db.dialect, workspaceId, spec).catch(() => null);
    if (audience !== null) {
      const last = await repo.lastSentBroadcast(k, workspaceId);
      const rate = last ? await deliveries.sendRate(k, workspaceId, last) : null;
      const eta = rate
        ? ` (about ${formatDuration(audience / rate.perSecond)} at the ${Math.round(rate.perSecond)} messages a second the last broadcast went out at)`
        : '';
      checks.push(
        audience === 0
          ? warning('audience', 'nobody would receive it: the audience is empty')
          : pass('audience', `${audience} recipient${audience === 1 ? '' : 's'}${eta}`),
      );
      for (const field of bareVariables(b.emailContent)) {
        const missing = await countAudience(k, this.db.dialect, workspaceId, {
          ...spec,
          extra: {
            any: [
              { field, op: 'notExists' },
              { field, op: 'eq', value: '' },
            ],
          },
        });
        const name = field.replace(/^properties\./, '');
        checks.push(
          missing
            ? warning(
                `empty_${name}`,
                `${missing} of ${audience} recipients have no ${name}: "{{ contact.${field} }}" renders empty for them (add | default: "…")`,
              )
            : pass(`empty_${name}`, `every recipient has a ${name}`),
        );
      }
    }
    const workspace = (await getWorkspace(k, workspaceId))!;
    let html: string | null = null;
    let sent: ReturnType<typeof sentHtml> = null;
    let linked = false;
    try {
      const unsubscribeUrl = `${this.config.publicUrl}/unsubscribe/preview`;
      const rendered = renderContent(b.emailContent, {
        contact: SAMPLE_CONTACT,
        broadcast: { id: b.id, name: b.name },
        unsubscribe_url: unsubscribeUrl,
        webversion_url: `${this.config.publicUrl}${WEBVERSION_PREVIEW_PATH}`,
        workspace: workspaceScope(workspace),
      });
      // The footer's rule (deliveries/message.assembly.ts): only a rendered link to the recipient's own URL counts, not a mention.
      linked = rendered.html?.includes(unsubscribeUrl) ?? false;
      html = assembleContent(rendered, { unsubscribeUrl, workspace }).html;
      // Measured as sent: the footer, the tracked links and the pixel make a message larger than its template.
      const topic = b.topicId ? await getTopic(k, workspaceId, b.topicId) : undefined;
      const sender = domain ? await findDomainByName(k, workspaceId, domain) : undefined;
      if (domain && html !== null)
        sent = sentHtml(this.config.publicUrl, {
          broadcast: b,
          workspace: { id: workspace.id, name: workspace.name, settings: workspace.settings },
          topic: topic ? { id: topic.id, name: topic.name } : null,
          senderDomain: domain,
          trackingHost: sender?.trackingVerifiedAt ? sender.trackingHost : null,
        });
    } catch {
      // The blocking checks said why it does not render.
    }
    checks.push(
      pass(
        'unsubscribe',
        linked ? 'the template links {{ unsubscribe_url }}' : 'an unsubscribe footer is added to every message',
      ),
    );
    if (!workspace.settings.postalAddress)
      checks.push(
        warning(
          'postal_address',
          'the workspace has no postal address for the footer (CAN-SPAM requires one): PUT /v1/workspace { settings: { postalAddress } }',
        ),
      );
    checks.push(...contentChecks(html, sent ?? undefined));
    if (isBlockDocument(b.emailContent.editorContent))
      checks.push(...documentChecks(documentWarnings(b.emailContent.editorContent)));
    return { ok: !checks.some((c) => c.status === 'fail'), checks };
  }

  /**
   * A test send (docs/bounces.md): the real rendering, for a contact of the workspace or sample data, to up to
   * five addresses, its subject marked [Test]. It goes out at once through this process's transport, with a
   * VERP address of its own, and counts in no stats (no delivery row).
   */
  async sendTest(
    workspaceId: string,
    id: string,
    input: { emails: string[]; contactId?: string },
  ): Promise<{
    sent: { email: string; messageId: string; response: string }[];
    failed: { email: string; error: string }[];
  }> {
    if (!this.tests) throw unavailable('this process has no mail transport for test sends');
    const k = this.db.kysely;
    const b = await this.mustGet(k, workspaceId, id);
    const emails = input.emails.map((e, i) => {
      const email = contactEmail(e);
      if (!email)
        throw validationFailed([
          {
            path: `/emails/${i}`,
            message: 'must be a valid email address',
            keyword: 'format',
            params: { format: 'email' },
          },
        ]);
      return email;
    });
    await this.checkSendable(k, workspaceId, b);
    let contact = { ...SAMPLE_CONTACT };
    if (input.contactId) {
      const found = await getContact(k, workspaceId, input.contactId);
      if (!found)
        throw unprocessable('invalid_reference', 'contactId names no contact of this workspace', [
          { path: '/contactId', message: 'names no contact of this workspace' },
        ]);
      contact = found;
    }
    const from = parseMailbox(b.from!)!;
    const replyTo = b.replyTo ? parseMailbox(b.replyTo) : null;
    const key = (await getSigningKey(k, workspaceId, from.domain, this.tests.secret))!;
    const workspace = (await getWorkspace(k, workspaceId))!;
    // A page that says it is a test and changes nothing (unsubscribe.routes.ts), in the workspace's language.
    const locale = workspace.settings.locale;
    const unsubscribeUrl = `${this.config.publicUrl}/unsubscribe/test${locale === 'en' ? '' : `?lang=${locale}`}`;
    const rendered = renderContent(b.emailContent, {
      contact: {
        email: contact.email,
        firstName: contact.firstName,
        lastName: contact.lastName,
        properties: contact.properties,
      },
      broadcast: { id: b.id, name: b.name },
      unsubscribe_url: unsubscribeUrl,
      webversion_url: `${this.config.publicUrl}${WEBVERSION_PREVIEW_PATH}`,
      workspace: workspaceScope(workspace),
    });
    const content = assembleContent(rendered, { unsubscribeUrl, workspace });
    const sent = [];
    const failed = [];
    for (const to of emails) {
      const testId = newId('tst');
      let info;
      try {
        info = await this.tests.mailer.send({
          from: { name: from.name, address: from.address },
          to,
          replyTo: replyTo ? { name: replyTo.name, address: replyTo.address } : null,
          returnPath: returnPath(this.tests.secret, 't', testId, from.domain),
          ...content,
          subject: `[Test] ${content.subject}`,
          messageId: `<${testId}@${from.domain}>`,
          headers: listHeaders({
            unsubscribeUrl,
            unsubscribeMailto: null,
            listName: workspace.name,
            listId: `test.${workspaceId.toLowerCase().replace(/_/g, '-')}.${from.domain}`,
            feedbackId: `${b.id}:${workspaceId}:formcast`,
          }),
          dkim: { domainName: key.domain, keySelector: key.selector, privateKey: key.privateKey },
        });
      } catch (err) {
        // A refusal of this address is its result; a relay that cannot be reached is the service's state (503).
        const result = classifySendError(err);
        if (result.kind === 'temporary' && !result.reply)
          throw unavailable(`the mail transport cannot be reached: ${result.reason.split('\n')[0]}`);
        failed.push({ email: to, error: result.reason.slice(0, 500) });
        continue;
      }
      sent.push({ email: to, messageId: info.messageId, response: info.response });
    }
    return { sent, failed };
  }

  /** Renders the content for one contact of the workspace, or for sample data, as a recipient would get it. */
  async preview(
    workspaceId: string,
    id: string,
    contactId?: string,
  ): Promise<RenderedContent & { contact: { id: string | null; email: string } }> {
    const b = await this.mustGet(this.db.kysely, workspaceId, id);
    let contact = { id: null as string | null, ...SAMPLE_CONTACT };
    if (contactId) {
      const found = await getContact(this.db.kysely, workspaceId, contactId);
      if (!found)
        throw unprocessable('invalid_reference', 'contactId names no contact of this workspace', [
          { path: '/contactId', message: 'names no contact of this workspace' },
        ]);
      contact = found;
    }
    const workspace = (await getWorkspace(this.db.kysely, workspaceId))!;
    try {
      const unsubscribeUrl = `${this.config.publicUrl}/unsubscribe/preview`;
      const rendered = renderContent(b.emailContent, {
        contact: {
          email: contact.email,
          firstName: contact.firstName,
          lastName: contact.lastName,
          properties: contact.properties,
        },
        broadcast: { id: b.id, name: b.name },
        unsubscribe_url: unsubscribeUrl,
        webversion_url: `${this.config.publicUrl}${WEBVERSION_PREVIEW_PATH}`,
        workspace: workspaceScope(workspace),
      });
      // Assembled as a send assembles it (document, preheader, footer, text part), so the preview is what arrives.
      const assembled = assembleContent(rendered, { unsubscribeUrl, workspace });
      return { ...assembled, previewText: rendered.previewText, contact: { id: contact.id, email: contact.email } };
    } catch (err) {
      if (err instanceof DomainError) throw err;
      throw validationFailed([
        { path: '/emailContent', message: `cannot be rendered: ${(err as Error).message.split('\n')[0]}` },
      ]);
    }
  }

  /** Who the broadcast would go to now: segment ∩ SUBSCRIBED ∩ topic, counted and paged (newest contacts first). */
  async audience(
    workspaceId: string,
    id: string,
    limit: number,
    beforeId?: string,
  ): Promise<{ count: number; rows: AudienceMember[] }> {
    const b = await this.mustGet(this.db.kysely, workspaceId, id);
    const spec = repo.audienceSpecOf(b);
    const count = await countAudience(this.db.kysely, this.db.dialect, workspaceId, spec);
    const found = await audiencePage(this.db.kysely, this.db.dialect, workspaceId, spec, limit, beforeId);
    return {
      count,
      rows: found.map((r) => ({ id: r.id, email: r.email, firstName: r.first_name, lastName: r.last_name })),
    };
  }
}

/** "<name> (resend to non-openers)", within the 255 characters a name may have. */
function resendName(name: string, to: ResendInput['to']): string {
  const suffix = to === 'NON_OPENERS' ? ' (resend to non-openers)' : ' (resend to non-clickers)';
  const chars = [...name];
  const room = 255 - suffix.length;
  return (chars.length > room ? chars.slice(0, room - 1).join('') + '…' : name) + suffix;
}

function formatDuration(seconds: number): string {
  if (seconds < 90) return `${Math.max(1, Math.round(seconds))} seconds`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} minutes`;
  return `${(seconds / 3600).toFixed(1)} hours`;
}

/** A send decision in the audit log (docs/audit-log.md): the broadcast's status and send time, before and after. */
function auditSend(
  trx: Executor,
  workspaceId: string,
  actor: AuditActor,
  action: AuditAction,
  before: Broadcast,
  after: Broadcast,
): Promise<void> {
  return recordAudit(trx, workspaceId, actor, {
    action,
    target: { type: 'broadcast', id: after.id, label: after.name },
    changes: changesOf(before, after, ['status', 'sendAt']),
  });
}
