import type { FastifyBaseLogger } from 'fastify';
import { applyToContact } from '../../audience/index.js';
import type { Db } from '../../db/connection.js';
import { workspaceOfDelivery } from '../deliveries/deliveries.repository.js';
import { newId } from '../../lib/ids.js';
import { nowIso } from '../../lib/time.js';
import { parseInboundAddress, type InboundTarget } from '../../mail/verp.js';
import { contactOfConfirmation, workspaceOfConfirmation } from '../../forms/index.js';
import type { UnsubscribeService } from '../unsubscribe/unsubscribe.service.js';
import { parseInbound, type InboundReport } from './bounces.parse.js';
import { claimsOf, conflictWithArrival } from './bounces.proof.js';
import { applyDeliveryReport, type ReportRules } from './bounces.service.js';

/** The first bytes of a message kept when it cannot be read (GET /v1/inbound). */
export const KEPT_BYTES = 256 * 1024;
/** How long unreadable messages are kept. */
export const INBOUND_RETENTION_DAYS = 30;

export type InboundOutcome =
  | { result: 'bounce'; deliveries: number }
  | { result: 'complaint' }
  | { result: 'unsubscribed' }
  | { result: 'ignored'; why: string }
  | { result: 'kept'; why: string };

/** One recipient of an accepted message: the address given at RCPT and what its token names. */
export interface InboundRecipient {
  rcptTo: string;
  target: InboundTarget;
}

/**
 * What the inbound listener does with a message it accepted (docs/bounces.md): a bounce or complaint report is
 * applied to the delivery (or the confirmation) the VERP token of the address it arrived at names, and to nothing
 * else (bounces.proof.ts: a report whose original names another message is kept for review); an unsubscribe request
 * to the mailto address's delivery; auto-replies are ignored; what cannot be read is kept for 30 days and listed.
 * It never throws: the message was accepted, and a sender must not be told otherwise.
 */
export class InboundProcessor {
  constructor(
    private readonly db: Db,
    private readonly secret: Buffer,
    private readonly rules: ReportRules,
    private readonly unsubscribe: UnsubscribeService,
    private readonly log: FastifyBaseLogger,
    /** The MIME reader (bounces.parse.ts); a test may count its calls. */
    private readonly parseReport: (raw: Buffer) => Promise<InboundReport> = parseInbound,
  ) {}

  /** The target a recipient address names, or null (RCPT is then refused). */
  target(address: string): InboundTarget | null {
    return parseInboundAddress(this.secret, address);
  }

  /**
   * One message to one or more recipients: parsed once (only if some recipient is a bounce address), then applied
   * to each distinct target once (two addresses naming the same row are one: the first is kept).
   */
  async processMessage(
    recipients: readonly InboundRecipient[],
    mailFrom: string | null,
    raw: Buffer,
  ): Promise<{ rcptTo: string; outcome: InboundOutcome }[]> {
    const seen = new Set<string>();
    const distinct = recipients.filter(({ target: t }) => {
      const key = `${t.purpose}:${t.id}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    let parsed: Promise<InboundReport> | null = null;
    const parse = () => (parsed ??= this.parseReport(raw));
    const out: { rcptTo: string; outcome: InboundOutcome }[] = [];
    for (const r of distinct)
      out.push({ rcptTo: r.rcptTo, outcome: await this.process(r.target, { mailFrom, rcptTo: r.rcptTo }, raw, parse) });
    return out;
  }

  async process(
    target: InboundTarget,
    envelope: { mailFrom: string | null; rcptTo: string },
    raw: Buffer,
    parse: () => Promise<InboundReport> = () => this.parseReport(raw),
  ): Promise<InboundOutcome> {
    try {
      return await this.apply(target, envelope, raw, parse);
    } catch (err) {
      this.log.error({ err, rcptTo: envelope.rcptTo }, 'an inbound message could not be applied; it is kept');
      const workspaceId = await this.workspaceOf(target).catch(() => null);
      if (workspaceId)
        await this.keep(workspaceId, envelope, raw, '', `could not be applied: ${(err as Error).message}`).catch(
          () => {},
        );
      return { result: 'kept', why: (err as Error).message };
    }
  }

  private async workspaceOf(target: InboundTarget): Promise<string | null> {
    if (target.kind === 'd') return (await workspaceOfDelivery(this.db.kysely, target.id)) ?? null;
    if (target.kind === 'c') return (await workspaceOfConfirmation(this.db.kysely, target.id)) ?? null;
    return null;
  }

  private async apply(
    target: InboundTarget,
    envelope: { mailFrom: string | null; rcptTo: string },
    raw: Buffer,
    parse: () => Promise<InboundReport>,
  ): Promise<InboundOutcome> {
    const workspaceId = await this.workspaceOf(target);
    if (!workspaceId)
      return {
        result: 'ignored',
        why: target.kind === 't' ? 'a report about a test send' : 'what the address names no longer exists',
      };
    if (target.purpose === 'unsubscribe') {
      await this.unsubscribe.unsubscribeByMail(workspaceId, target.id);
      return { result: 'unsubscribed' };
    }
    const report = await parse();
    if (report.kind === 'auto_reply') return { result: 'ignored', why: 'an auto-reply' };
    if (report.kind === 'unclassified') {
      await this.keep(workspaceId, envelope, raw, report.subject, report.reason);
      return { result: 'kept', why: report.reason };
    }
    // The address's token decides; a report naming another message inside is kept for review, applied to nothing.
    const conflict = conflictWithArrival(target, claimsOf(this.secret, report));
    if (conflict) {
      this.log.warn(
        { rcptTo: envelope.rcptTo, target: target.id, reason: conflict },
        'an inbound report names another message than its address: kept, not applied',
      );
      await this.keep(workspaceId, envelope, raw, report.subject, conflict);
      return { result: 'kept', why: conflict };
    }
    return target.kind === 'c'
      ? this.onConfirmation(workspaceId, target.id, report)
      : this.onDelivery(workspaceId, target.id, report);
  }

  /** A report about a broadcast's message: the delivery the address's token names. */
  private async onDelivery(
    workspaceId: string,
    deliveryId: string,
    report: Exclude<InboundReport, { kind: 'auto_reply' | 'unclassified' }>,
  ): Promise<InboundOutcome> {
    if (report.kind === 'complaint') {
      await applyDeliveryReport(this.db, this.rules, workspaceId, deliveryId, {
        kind: 'complaint',
        detail: `${report.feedbackType} report${report.subject ? `: ${report.subject}` : ''}`,
      });
      return { result: 'complaint' };
    }
    const results = report.results.map((r) => ({
      recipient: r.recipient,
      class: r.class,
      detail: [r.status, r.diagnostic].filter(Boolean).join(' ').slice(0, 500) || report.subject,
    }));
    return {
      result: 'bounce',
      deliveries: await applyDeliveryReport(this.db, this.rules, workspaceId, deliveryId, { kind: 'bounce', results }),
    };
  }

  /** A report about a confirmation email: a hard bounce or a complaint is the address's; nothing else changes. */
  private async onConfirmation(
    workspaceId: string,
    confirmationId: string,
    report: Exclude<InboundReport, { kind: 'auto_reply' | 'unclassified' }>,
  ): Promise<InboundOutcome> {
    const k = this.db.kysely;
    const contactId = await contactOfConfirmation(k, workspaceId, confirmationId);
    if (!contactId) return { result: 'ignored', why: 'the confirmation no longer exists' };
    const hard = report.kind === 'bounce' && report.results.some((r) => r.class === 'hard');
    if (report.kind === 'complaint' || hard) {
      const detail =
        report.kind === 'complaint'
          ? `${report.feedbackType} report about a confirmation email`
          : `a confirmation email bounced: ${report.results[0]?.status ?? ''} ${report.results[0]?.diagnostic ?? ''}`.trim();
      await k
        .transaction()
        .execute((trx) =>
          applyToContact(
            trx,
            workspaceId,
            contactId,
            report.kind === 'complaint' ? 'complaint' : 'hardBounce',
            { detail },
            nowIso(),
          ),
        );
    }
    return report.kind === 'complaint' ? { result: 'complaint' } : { result: 'bounce', deliveries: 0 };
  }

  /** Keeps an unreadable message: text made storable on both databases (no NUL, well-formed), the bytes as base64. */
  private async keep(
    workspaceId: string,
    envelope: { mailFrom: string | null; rcptTo: string },
    raw: Buffer,
    subject: string,
    reason: string,
  ): Promise<void> {
    const clean = (s: string | null, max: number) =>
      s === null ? null : s.replaceAll('\u0000', '').toWellFormed().slice(0, max) || null;
    await this.db.kysely
      .insertInto('inbound_messages')
      .values({
        id: newId('inb'),
        workspace_id: workspaceId,
        rcpt_to: clean(envelope.rcptTo, 998)!,
        mail_from: clean(envelope.mailFrom, 998),
        subject: clean(subject, 998),
        reason: clean(reason, 500) ?? 'unreadable',
        size: raw.length,
        raw: raw.subarray(0, KEPT_BYTES).toString('base64'),
        received_at: nowIso(),
      })
      .execute();
  }
}

/** Deletes kept messages older than the retention, a thousand at a time (the job runner calls it daily). */
export async function purgeInboundMessages(db: Db, now = Date.now()): Promise<number> {
  const cutoff = new Date(now - INBOUND_RETENTION_DAYS * 86_400_000).toISOString();
  let total = 0;
  for (;;) {
    const old = await db.kysely
      .selectFrom('inbound_messages')
      .select('id')
      .where('received_at', '<', cutoff)
      .limit(1000)
      .execute();
    if (!old.length) return total;
    total += Number(
      (
        await db.kysely
          .deleteFrom('inbound_messages')
          .where(
            'id',
            'in',
            old.map((r) => r.id),
          )
          .executeTakeFirst()
      ).numDeletedRows,
    );
  }
}
