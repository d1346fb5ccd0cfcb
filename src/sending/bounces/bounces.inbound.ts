import type { FastifyBaseLogger } from 'fastify';
import { applyToContact } from '../../audience/index.js';
import type { Db } from '../../db/connection.js';
import { workspaceOfDelivery } from '../deliveries/deliveries.repository.js';
import { newId } from '../../lib/ids.js';
import { nowIso } from '../../lib/time.js';
import { recordDmarcReports, verifiedDomainHolders } from '../../mail-setup/index.js';
import { parseFixedAddress, parseInboundAddress, type FixedMailbox, type InboundTarget } from '../../mail/verp.js';
import { contactOfConfirmation, workspaceOfConfirmation } from '../../forms/index.js';
import type { UnsubscribeService } from '../unsubscribe/unsubscribe.service.js';
import { attachmentsOf, parseInbound, type InboundReport } from './bounces.parse.js';
import { claimsOf, conflictWithArrival, provenTarget, unprovenReason } from './bounces.proof.js';
import { signedClaims } from './bounces.signature.js';
import { applyDeliveryReport, type ReportRules } from './bounces.service.js';

/** The first bytes of a message kept when it cannot be read (GET /v1/inbound). */
export const KEPT_BYTES = 256 * 1024;
/** How long unreadable messages are kept. */
export const INBOUND_RETENTION_DAYS = 30;
/**
 * The most messages a workspace keeps for review in 24 hours from its fixed mailboxes (`postmaster@`, `abuse@`, `fbl@`,
 * `dmarc@`): anyone may write to them (spam does), and what is beyond is dropped (logged), not stored.
 */
export const FIXED_KEPT_PER_DAY = 200;

export type InboundOutcome =
  | { result: 'bounce'; deliveries: number }
  | { result: 'complaint' }
  | { result: 'unsubscribed' }
  | { result: 'dmarc'; reports: number; duplicates: number }
  | { result: 'ignored'; why: string }
  | { result: 'kept'; why: string };

/**
 * What an address the listener accepts names: a VERP or unsubscribe token (one row), or a fixed mailbox of a bounce
 * domain (`postmaster@`, `abuse@`, `fbl@`, `dmarc@`) with the workspaces where that domain is a verified sending domain.
 */
export type InboundAddress =
  | { kind: 'token'; target: InboundTarget }
  | { kind: 'fixed'; mailbox: FixedMailbox; domain: string; workspaceIds: string[] };

/** One recipient of an accepted message: the address given at RCPT and what it names. */
export interface InboundRecipient {
  rcptTo: string;
  address: InboundAddress;
}

type Report = Exclude<InboundReport, { kind: 'auto_reply' | 'unclassified' | 'delay' }>;
type Envelope = { mailFrom: string | null; rcptTo: string };

/**
 * What the inbound listener does with a message it accepted (docs/bounces.md): a bounce or complaint report is
 * applied to the delivery (or the confirmation) the VERP token of the address it arrived at names, and to nothing
 * else (bounces.proof.ts: a report whose original names another message is kept for review); an unsubscribe request
 * to the mailto address's delivery; at the fixed mailboxes, a report acts only on the message its original proves
 * (a VERP token or a DKIM signature of ours) and DMARC aggregate reports are stored for the domain; delays and
 * auto-replies are ignored; what cannot be read or proved is kept for 30 days and listed.
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
    /** Limits against floods of the fixed mailboxes (a test lowers them). */
    private readonly limits: { fixedKeptPerDay: number } = { fixedKeptPerDay: FIXED_KEPT_PER_DAY },
  ) {}

  /** The target a token address names, or null. */
  target(address: string): InboundTarget | null {
    return parseInboundAddress(this.secret, address);
  }

  /**
   * What a recipient address names, or null (RCPT is then refused): a valid token, or a fixed mailbox of the bounce
   * domain of a domain verified in some workspace (any other domain's postmaster is not ours to answer for).
   */
  async accept(address: string): Promise<InboundAddress | null> {
    const target = this.target(address);
    if (target) return { kind: 'token', target };
    const fixed = parseFixedAddress(address);
    if (!fixed) return null;
    const holders = await verifiedDomainHolders(this.db.kysely, fixed.domain);
    if (!holders.length) return null;
    return { kind: 'fixed', ...fixed, workspaceIds: [...new Set(holders.map((h) => h.workspaceId))] };
  }

  /**
   * One message to one or more recipients: parsed once (only if some recipient needs it), then applied to each
   * distinct target once (two addresses naming the same row, or the same fixed mailbox, are one: the first is kept).
   */
  async processMessage(
    recipients: readonly InboundRecipient[],
    mailFrom: string | null,
    raw: Buffer,
  ): Promise<{ rcptTo: string; outcome: InboundOutcome }[]> {
    const seen = new Set<string>();
    const distinct = recipients.filter(({ address: a }) => {
      const key = a.kind === 'token' ? `${a.target.purpose}:${a.target.id}` : `${a.mailbox}@${a.domain}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    let parsed: Promise<InboundReport> | null = null;
    const parse = () => (parsed ??= this.parseReport(raw));
    const out: { rcptTo: string; outcome: InboundOutcome }[] = [];
    for (const r of distinct) {
      const envelope = { mailFrom, rcptTo: r.rcptTo };
      const outcome =
        r.address.kind === 'token'
          ? await this.process(r.address.target, envelope, raw, parse)
          : await this.processFixed(r.address, envelope, raw, parse);
      out.push({ rcptTo: r.rcptTo, outcome });
    }
    return out;
  }

  async process(
    target: InboundTarget,
    envelope: Envelope,
    raw: Buffer,
    parse: () => Promise<InboundReport> = () => this.parseReport(raw),
  ): Promise<InboundOutcome> {
    try {
      return await this.apply(target, envelope, raw, parse);
    } catch (err) {
      this.log.error({ err, rcptTo: envelope.rcptTo }, 'an inbound message could not be applied; it is kept');
      const workspaceId = await this.workspaceOf(target).catch(() => null);
      if (workspaceId)
        await this.keep([workspaceId], envelope, raw, '', `could not be applied: ${(err as Error).message}`).catch(
          () => {},
        );
      return { result: 'kept', why: (err as Error).message };
    }
  }

  private async workspaceOf(target: { kind: string; id: string }): Promise<string | null> {
    if (target.kind === 'd') return (await workspaceOfDelivery(this.db.kysely, target.id)) ?? null;
    if (target.kind === 'c') return (await workspaceOfConfirmation(this.db.kysely, target.id)) ?? null;
    return null;
  }

  private async apply(
    target: InboundTarget,
    envelope: Envelope,
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
    const skipped = await this.notAReport(report, [workspaceId], envelope, raw);
    if (skipped) return skipped;
    const signed = await this.signedOf(report as Report);
    // The address's token decides; a report naming another message inside is kept for review, applied to nothing.
    const conflict = conflictWithArrival(target, claimsOf(this.secret, report as Report, signed));
    if (conflict) {
      this.log.warn(
        { rcptTo: envelope.rcptTo, target: target.id, reason: conflict },
        'an inbound report names another message than its address: kept, not applied',
      );
      await this.keep([workspaceId], envelope, raw, report.subject, conflict);
      return { result: 'kept', why: conflict };
    }
    return this.onTarget(workspaceId, target, report as Report);
  }

  /** What a report that is not one to apply comes to (ignored, or kept), or null for a bounce or a complaint. */
  private async notAReport(
    report: InboundReport,
    workspaceIds: string[],
    envelope: Envelope,
    raw: Buffer,
  ): Promise<InboundOutcome | null> {
    if (report.kind === 'auto_reply') return { result: 'ignored', why: report.why };
    if (report.kind === 'delay')
      return { result: 'ignored', why: 'a delay notice: the receiving server is still trying (not a bounce)' };
    if (report.kind === 'unclassified') {
      await this.keep(workspaceIds, envelope, raw, report.subject, report.reason);
      return { result: 'kept', why: report.reason };
    }
    return null;
  }

  /** The rows named by verifying DKIM signatures of ours in the report's original, each of its key's workspace. */
  private async signedOf(report: Report) {
    const found = await signedClaims(this.db.kysely, report.originalHeaders);
    const out = [];
    for (const s of found) if ((await this.workspaceOf(s)) === s.workspaceId) out.push(s);
    return out;
  }

  private onTarget(workspaceId: string, target: InboundTarget, report: Report): Promise<InboundOutcome> {
    return target.kind === 'c'
      ? this.onConfirmation(workspaceId, target.id, report)
      : this.onDelivery(workspaceId, target.id, report);
  }

  /**
   * Mail to a fixed mailbox of a bounce domain (docs/bounces.md, "Addresses without a token"): DMARC reports at
   * `dmarc@`; at `postmaster@`, `abuse@` and `fbl@` a bounce or complaint report acts only on the message its original
   * proves by itself (bounces.proof.ts, provenTarget), else it is kept for review in the domain's workspaces.
   */
  private async processFixed(
    address: Extract<InboundAddress, { kind: 'fixed' }>,
    envelope: Envelope,
    raw: Buffer,
    parse: () => Promise<InboundReport>,
  ): Promise<InboundOutcome> {
    try {
      if (address.mailbox === 'dmarc') return await this.onDmarc(address, envelope, raw);
      const report = await parse();
      if (report.kind === 'unclassified')
        return await this.keepFixed(address, envelope, raw, report.subject, report.reason);
      const skipped = await this.notAReport(report, address.workspaceIds, envelope, raw);
      if (skipped) return skipped;
      const claims = claimsOf(this.secret, report as Report, await this.signedOf(report as Report));
      const proven = provenTarget(claims);
      if (!proven) {
        const why = unprovenReason(address.mailbox, claims);
        this.log.warn({ rcptTo: envelope.rcptTo, reason: why }, 'an inbound report proves no message: kept');
        return await this.keepFixed(address, envelope, raw, report.subject, why);
      }
      const workspaceId = await this.workspaceOf(proven);
      if (!workspaceId)
        return {
          result: 'ignored',
          why: proven.kind === 't' ? 'a report about a test send' : 'the message it proves no longer exists',
        };
      return await this.onTarget(workspaceId, proven, report as Report);
    } catch (err) {
      this.log.error({ err, rcptTo: envelope.rcptTo }, 'an inbound message could not be applied; it is kept');
      await this.keep(address.workspaceIds, envelope, raw, '', `could not be applied: ${(err as Error).message}`).catch(
        () => {},
      );
      return { result: 'kept', why: (err as Error).message };
    }
  }

  /** DMARC aggregate reports for the domain (mail-setup/dmarc); a message with none is kept for review. */
  private async onDmarc(
    address: Extract<InboundAddress, { kind: 'fixed' }>,
    envelope: Envelope,
    raw: Buffer,
  ): Promise<InboundOutcome> {
    const mail = await attachmentsOf(raw);
    const intake = mail
      ? await recordDmarcReports(this.db, {
          domain: address.domain,
          workspaceIds: address.workspaceIds,
          attachments: mail.attachments,
        })
      : { stored: 0, duplicates: 0, dropped: 0, problems: ['not a readable message'] };
    if (intake.stored || intake.duplicates) {
      if (intake.problems.length) this.log.warn({ rcptTo: envelope.rcptTo, problems: intake.problems }, 'DMARC report');
      return { result: 'dmarc', reports: intake.stored, duplicates: intake.duplicates };
    }
    if (intake.dropped) {
      this.log.warn({ rcptTo: envelope.rcptTo, problems: intake.problems }, 'DMARC report dropped');
      return { result: 'ignored', why: intake.problems.join('; ').slice(0, 500) };
    }
    const why = `not a DMARC aggregate report for ${address.domain}: ${intake.problems.join('; ')}`.slice(0, 500);
    return this.keepFixed(address, envelope, raw, mail?.subject ?? '', why);
  }

  /** A report about a broadcast's message: the delivery the address's token (or the report's proof) names. */
  private async onDelivery(workspaceId: string, deliveryId: string, report: Report): Promise<InboundOutcome> {
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
  private async onConfirmation(workspaceId: string, confirmationId: string, report: Report): Promise<InboundOutcome> {
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

  /**
   * Keeps mail of a fixed mailbox for review, in each of the domain's workspaces that has kept fewer than the daily
   * limit from its fixed mailboxes; beyond it the message is dropped (and logged), so that spam to postmaster@ cannot
   * fill the database.
   */
  private async keepFixed(
    address: Extract<InboundAddress, { kind: 'fixed' }>,
    envelope: Envelope,
    raw: Buffer,
    subject: string,
    reason: string,
  ): Promise<InboundOutcome> {
    const since = new Date(Date.now() - 86_400_000).toISOString();
    const room: string[] = [];
    for (const workspaceId of address.workspaceIds) {
      const kept = await this.db.kysely
        .selectFrom('inbound_messages')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('workspace_id', '=', workspaceId)
        .where('received_at', '>=', since)
        .where('rcpt_to', 'not like', 'bounces+%')
        .where('rcpt_to', 'not like', 'unsubscribe+%')
        .executeTakeFirst();
      if (Number(kept?.n ?? 0) < this.limits.fixedKeptPerDay) room.push(workspaceId);
    }
    if (!room.length) {
      this.log.warn(
        { rcptTo: envelope.rcptTo, reason },
        'inbound mail to a fixed mailbox dropped: the daily review limit is reached',
      );
      return {
        result: 'ignored',
        why: `not kept: ${this.limits.fixedKeptPerDay} messages to the fixed mailboxes kept in 24 hours already (${reason})`.slice(
          0,
          500,
        ),
      };
    }
    await this.keep(room, envelope, raw, subject, reason);
    return { result: 'kept', why: reason };
  }

  /**
   * Keeps a message for review in each workspace given: text made storable on both databases (no NUL, well-formed),
   * the bytes as base64.
   */
  private async keep(
    workspaceIds: readonly string[],
    envelope: Envelope,
    raw: Buffer,
    subject: string,
    reason: string,
  ): Promise<void> {
    const clean = (s: string | null, max: number) =>
      s === null ? null : s.replaceAll('\u0000', '').toWellFormed().slice(0, max) || null;
    if (!workspaceIds.length) return;
    await this.db.kysely
      .insertInto('inbound_messages')
      .values(
        workspaceIds.map((workspaceId) => ({
          id: newId('inb'),
          workspace_id: workspaceId,
          rcpt_to: clean(envelope.rcptTo, 998)!,
          mail_from: clean(envelope.mailFrom, 998),
          subject: clean(subject, 998),
          reason: clean(reason, 500) ?? 'unreadable',
          size: raw.length,
          raw: raw.subarray(0, KEPT_BYTES).toString('base64'),
          received_at: nowIso(),
        })),
      )
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
