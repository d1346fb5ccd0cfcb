import { applyToAddress, applyToContact } from '../../audience/index.js';
import type { Db, Executor } from '../../db/connection.js';
import { DEFAULT_BREAKER_RULES, tripIfOver, type BreakerRules } from '../broadcasts/broadcasts.breaker.js';
import { recordLateReport, recordOutcome } from '../deliveries/deliveries.outcomes.js';
import { findDelivery, softBounceStreak } from '../deliveries/deliveries.repository.js';
import { recordEvent, type EventType } from '../../outbox/index.js';
import { nowIso, toIso } from '../../lib/time.js';
import type { BounceClass } from '../../mail/classify.js';
import { senderHealth, type WindowHealth } from './bounces.health.js';

/**
 * What a bounce or a complaint does, in one place (docs/bounces.md), whether it comes from the relay's reply
 * at send time, from a DSN or ARF report received by the inbound listener, or from a provider's webhook. The
 * callers run it inside their transaction: the delivery, the contact and the suppression list change together.
 */
export interface BounceRules {
  /** Consecutive broadcasts soft-bounced that make a contact BOUNCED (SOFT_BOUNCE_LIMIT)… */
  softBounceLimit: number;
  /** …when they span at least this many days, first to last (SOFT_BOUNCE_DAYS). */
  softBounceDays: number;
}

export const DEFAULT_BOUNCE_RULES: BounceRules = { softBounceLimit: 3, softBounceDays: 7 };

/** The rules that reports are applied by: the soft-bounce limit and the circuit breaker's. */
export interface ReportRules {
  bounces: BounceRules;
  breaker: BreakerRules;
}

/**
 * The rules from the configuration (SOFT_BOUNCE_LIMIT, SOFT_BOUNCE_DAYS, PAUSE_BOUNCE_RATE, PAUSE_COMPLAINT_RATE); the
 * defaults without it.
 */
export function reportRules(config?: {
  softBounceLimit: number;
  softBounceDays?: number;
  pauseBounceRate: number;
  pauseComplaintRate: number;
}): ReportRules {
  if (!config) return { bounces: DEFAULT_BOUNCE_RULES, breaker: DEFAULT_BREAKER_RULES };
  return {
    bounces: {
      softBounceLimit: config.softBounceLimit,
      softBounceDays: config.softBounceDays ?? DEFAULT_BOUNCE_RULES.softBounceDays,
    },
    breaker: { ...DEFAULT_BREAKER_RULES, bounceRate: config.pauseBounceRate, complaintRate: config.pauseComplaintRate },
  };
}

/** The delivery a report is about. */
export interface BouncedDelivery {
  workspaceId: string;
  deliveryId: string;
  broadcastId: string;
  contactId: string | null;
  email: string;
}

/**
 * A bounce of class `cls`. `sync`: the relay refused the message at send time (the delivery is SENDING and
 * gets its outcome); `late`: a report about a message the relay had accepted (the delivery is SENT). A hard
 * bounce makes the contact BOUNCED and suppresses the address; a soft one counts towards the soft-bounce
 * limit; a block or another failure leaves the contact alone. Returns false when the delivery was not in a
 * status the report applies to (a duplicate report, a delivery already bounced).
 */
export async function recordBounce(
  trx: Executor,
  d: BouncedDelivery,
  cls: BounceClass,
  detail: string,
  when: 'sync' | 'late',
  rules: BounceRules,
  now: string,
): Promise<boolean> {
  const recorded =
    when === 'sync'
      ? await recordOutcome(
          trx,
          d.workspaceId,
          d.deliveryId,
          cls === 'hard'
            ? { op: 'bounce', error: detail, bounceClass: cls }
            : { op: 'fail', error: detail, bounceClass: cls },
          now,
        )
      : await recordLateReport(trx, d.workspaceId, d.deliveryId, { kind: cls, detail }, now);
  if (!recorded) return false;
  await recordEvent(
    trx,
    d.workspaceId,
    {
      type: BOUNCE_EVENT[cls],
      contactId: d.contactId,
      broadcastId: d.broadcastId,
      deliveryId: d.deliveryId,
      data: {
        email: d.email,
        bounceClass: cls,
        detail: detail.slice(0, 500),
        reported: when === 'sync' ? 'at send time' : 'later',
      },
    },
    now,
  );
  const cause = { deliveryId: d.deliveryId, broadcastId: d.broadcastId, detail };
  if (cls === 'hard') await onContact(trx, d, 'hardBounce', cause, now);
  else if (
    cls === 'soft' &&
    d.contactId &&
    (await softBounceStreak(trx, d.workspaceId, d.contactId, {
      limit: rules.softBounceLimit,
      days: rules.softBounceDays,
    }))
  ) {
    await onContact(
      trx,
      d,
      'softBounceLimit',
      {
        ...cause,
        detail: `${rules.softBounceLimit} or more consecutive broadcasts soft-bounced over at least ${rules.softBounceDays} days; last: ${detail}`,
      },
      now,
    );
  }
  return true;
}

/** The event each bounce class writes (docs/events.md): a block or another permanent refusal is `email.failed`. */
const BOUNCE_EVENT: Record<BounceClass, EventType> = {
  hard: 'email.bounced',
  soft: 'email.soft_bounced',
  blocked: 'email.failed',
  failed: 'email.failed',
};

/** A complaint (an ARF report, a provider's event): the contact COMPLAINED, the address suppressed. */
export async function recordComplaint(
  trx: Executor,
  d: BouncedDelivery,
  detail: string,
  now: string,
): Promise<boolean> {
  if (!(await recordLateReport(trx, d.workspaceId, d.deliveryId, { kind: 'complaint', detail }, now))) return false;
  await recordEvent(
    trx,
    d.workspaceId,
    {
      type: 'email.complained',
      contactId: d.contactId,
      broadcastId: d.broadcastId,
      deliveryId: d.deliveryId,
      data: { email: d.email, detail: detail.slice(0, 500) },
    },
    now,
  );
  await onContact(trx, d, 'complaint', { deliveryId: d.deliveryId, broadcastId: d.broadcastId, detail }, now);
  return true;
}

async function onContact(
  trx: Executor,
  d: BouncedDelivery,
  op: 'hardBounce' | 'softBounceLimit' | 'complaint',
  cause: { deliveryId: string; broadcastId: string; detail: string },
  now: string,
): Promise<void> {
  // The contact may have been deleted since: the address is suppressed all the same.
  const applied = d.contactId ? await applyToContact(trx, d.workspaceId, d.contactId, op, cause, now) : undefined;
  if (!applied) await applyToAddress(trx, d.workspaceId, d.email, op, cause, now);
}

export interface InboundMessage {
  id: string;
  rcptTo: string;
  mailFrom: string | null;
  subject: string | null;
  reason: string;
  size: number;
  receivedAt: string;
  raw: string;
}

/** A report about one delivery, from whichever source (the inbound listener, a provider's webhook). */
export type DeliveryReport =
  | { kind: 'bounce'; results: { recipient: string | null; class: BounceClass | null; detail: string }[] }
  | { kind: 'complaint'; detail: string };

/**
 * Applies a report to the delivery it names, in one transaction, then weighs the broadcast for the circuit
 * breaker. A result about another address (a forwarding mailbox) is still this delivery's: the token or the
 * Message-ID named it. Returns how many outcomes changed something (0: a duplicate or a stale report).
 */
export async function applyDeliveryReport(
  db: Db,
  rules: ReportRules,
  workspaceId: string,
  deliveryId: string,
  report: DeliveryReport,
): Promise<number> {
  const k = db.kysely;
  const d = await findDelivery(k, workspaceId, deliveryId);
  if (!d) return 0;
  const target: BouncedDelivery = {
    workspaceId,
    deliveryId: d.id,
    broadcastId: d.broadcastId,
    contactId: d.contactId,
    email: d.email,
  };
  const now = nowIso();
  const applied = await k.transaction().execute(async (trx) => {
    if (report.kind === 'complaint') return (await recordComplaint(trx, target, report.detail, now)) ? 1 : 0;
    const own = report.results.filter((r) => r.recipient === d.email);
    let n = 0;
    for (const r of own.length ? own : report.results.slice(0, 1)) {
      if (r.class && (await recordBounce(trx, target, r.class, r.detail, 'late', rules.bounces, now))) n++;
    }
    return n;
  });
  if (applied)
    await k.transaction().execute((trx) => tripIfOver(trx, workspaceId, d.broadcastId, rules.breaker, nowIso()));
  return applied;
}

/** The bounces feature's API side: sender health, and what the inbound listener could not read. */
export class BouncesService {
  constructor(private readonly db: Db) {}

  async health(workspaceId: string): Promise<{ windows: WindowHealth[] }> {
    return { windows: await senderHealth(this.db.kysely, workspaceId) };
  }

  /** Messages the inbound listener kept (unreadable reports), newest first; kept 30 days. */
  async listInbound(workspaceId: string, opts: { limit: number; beforeId?: string }): Promise<InboundMessage[]> {
    let q = this.db.kysely
      .selectFrom('inbound_messages')
      .select(['id', 'rcpt_to', 'mail_from', 'subject', 'reason', 'size', 'received_at', 'raw'])
      .where('workspace_id', '=', workspaceId);
    if (opts.beforeId) q = q.where('id', '<', opts.beforeId);
    const rows = await q.orderBy('id', 'desc').limit(opts.limit).execute();
    return rows.map((r) => ({
      id: r.id,
      rcptTo: r.rcpt_to,
      mailFrom: r.mail_from,
      subject: r.subject,
      reason: r.reason,
      size: Number(r.size),
      receivedAt: toIso(r.received_at),
      raw: r.raw,
    }));
  }
}
