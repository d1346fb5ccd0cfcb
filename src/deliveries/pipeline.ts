import type { FastifyBaseLogger } from 'fastify';
import { getBroadcast } from '../broadcasts/broadcasts.repository.js';
import { prepareContent, type RenderScope, type RenderedContent } from '../broadcasts/broadcasts.render.js';
import type { Broadcast } from '../broadcasts/broadcasts.schemas.js';
import { contactEmail } from '../contacts/contacts.email.js';
import { CONTACT_COLUMNS, toContactRecord, type ContactRecord } from '../contacts/contacts.repository.js';
import type { Db } from '../db/connection.js';
import { getSigningKey } from '../domains/domains.repository.js';
import { parseMailbox } from '../lib/email.js';
import { htmlToText, textWithUnsubscribe, withPreheader, withUnsubscribeFooter, type Address, type OutgoingMessage } from '../mail/compose.js';
import { classifySendError } from '../mail/outcome.js';
import type { Mailer } from '../mail/transport.js';
import { audience } from '../segments/audience.js';
import { contactSlices, inRange } from '../segments/slices.js';
import * as repo from './deliveries.repository.js';

export interface PipelineOptions {
  /** Names this process in leases; unique per worker. */
  workerId: string;
  publicUrl: string;
  /** Deliveries claimed at a time. What a killed worker may send twice is bounded by this. */
  batchSize: number;
  /** How long a claim holds without renewal; a dead worker's claims are taken over after it. */
  leaseMs: number;
  /** Messages sent at once from a batch (the SMTP pool's connections are the real limit). */
  concurrency: number;
  /** Attempts before a temporary failure becomes final. */
  maxAttempts: number;
  /** Retry n waits backoffBaseMs × 2^(n-1), at most backoffMaxMs. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Recipients written to the deliveries table per transaction. */
  materializeBatch: number;
}

export const DEFAULT_PIPELINE_OPTIONS: Omit<PipelineOptions, 'workerId' | 'publicUrl'> = {
  batchSize: 100,
  leaseMs: 60_000,
  concurrency: 16,
  maxAttempts: 5,
  backoffBaseMs: 30_000,
  backoffMaxMs: 3_600_000,
  materializeBatch: 1000,
};

interface PreparedBroadcast {
  broadcast: Broadcast;
  /** From and Reply-To parsed once; null when the stored text no longer parses (the delivery fails). */
  from: Address | null;
  replyTo: Address | null;
  render: (scope: RenderScope) => RenderedContent;
  dkim: { domainName: string; keySelector: string; privateKey: string } | null;
  senderDomain: string | null;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The sending pipeline (see deliveries/CONTEXT.md): the scheduler starts due broadcasts, the materializer
 * writes each SENDING broadcast's audience into deliveries, and batches of deliveries are claimed, rendered,
 * handed to the transport and recorded. Several processes may run it against one PostgreSQL.
 */
export class DeliveryPipeline {
  private materializing: repo.MaterializationJob | null = null;
  private readonly prepared = new Map<string, PreparedBroadcast>();

  constructor(private readonly db: Db, private readonly mailer: Mailer, private readonly opts: PipelineOptions, private readonly log: FastifyBaseLogger) {}

  /** SCHEDULED broadcasts whose sendAt has passed start sending (also those missed while nothing ran). */
  async runScheduler(): Promise<number> {
    const started = await repo.startDueBroadcasts(this.db.kysely, iso(Date.now()));
    for (const b of started) this.log.info({ broadcastId: b.id, workspaceId: b.workspaceId }, 'scheduled broadcast started');
    return started.length;
  }

  /** Writes up to `maxBatches` batches of one broadcast's audience; resumes where a dead worker stopped. */
  async materialize(maxBatches = 5): Promise<number> {
    const k = this.db.kysely;
    let written = 0;
    for (let i = 0; i < maxBatches; i++) {
      const now = Date.now();
      if (!this.materializing) {
        this.materializing = (await repo.claimMaterialization(k, this.opts.workerId, iso(now), iso(now + this.opts.leaseMs))) ?? null;
        if (!this.materializing) return written;
      }
      const job = this.materializing;
      const done = await k.transaction().execute(async (trx) => {
        if (!(await repo.renewMaterialization(trx, job.workspaceId, job.broadcastId, this.opts.workerId, iso(now + this.opts.leaseMs)))) return 'lost' as const;
        // One slice of contacts per transaction (segments/slices.ts): on SQLite a bounded range of contact ids,
        // however few of them the audience keeps; on PostgreSQL the next batch of the audience.
        const { query, sliceRows } = await audience(trx, this.db.dialect, job.workspaceId, { segmentId: job.segmentId, topicId: job.topicId });
        const batch = Math.min(this.opts.materializeBatch, sliceRows);
        const slices = contactSlices(trx, this.db.dialect, job.workspaceId, { rows: batch, order: 'asc', after: job.cursor ?? undefined });
        const range = (await slices.next()).value!;
        await slices.return(undefined);
        const rows = await inRange(query, range).select(['contacts.id', 'contacts.email']).orderBy('contacts.id').limit(batch).execute();
        await repo.insertDeliveries(trx, job.workspaceId, job.broadcastId, rows.map((r) => ({ contactId: r.id, email: r.email })), iso(now));
        const closed = range.upTo !== undefined;
        const last = closed ? range.upTo! : rows.at(-1)?.id ?? job.cursor;
        const finished = !closed && rows.length < batch;
        await repo.advanceMaterialization(trx, job.workspaceId, job.broadcastId, last, finished, iso(now));
        job.cursor = last;
        written += rows.length;
        return finished ? ('done' as const) : ('more' as const);
      });
      if (done !== 'more') {
        if (done === 'done') {
          this.log.info({ broadcastId: job.broadcastId }, 'audience materialised');
          await repo.completeIfDone(k, job.workspaceId, job.broadcastId, iso(Date.now()));
        }
        this.materializing = null;
      }
    }
    return written;
  }

  private async prepare(workspaceId: string, broadcastId: string): Promise<PreparedBroadcast | undefined> {
    const broadcast = await getBroadcast(this.db.kysely, workspaceId, broadcastId);
    if (!broadcast) return undefined;
    const cached = this.prepared.get(broadcastId);
    if (cached && cached.broadcast.updatedAt === broadcast.updatedAt) return cached;
    const from = broadcast.from ? parseMailbox(broadcast.from) : null;
    const replyTo = broadcast.replyTo ? parseMailbox(broadcast.replyTo) : null;
    const senderDomain = from?.domain ?? null;
    const key = senderDomain ? await getSigningKey(this.db.kysely, workspaceId, senderDomain) : undefined;
    const prepared: PreparedBroadcast = {
      broadcast,
      from: from ? { name: from.name, address: from.address } : null,
      replyTo: replyTo ? { name: replyTo.name, address: replyTo.address } : null,
      render: prepareContent(broadcast.emailContent),
      dkim: key ? { domainName: key.domain, keySelector: key.selector, privateKey: key.privateKey } : null,
      senderDomain,
    };
    if (this.prepared.size > 100) this.prepared.clear();
    this.prepared.set(broadcastId, prepared);
    return prepared;
  }

  private async contactsOf(workspaceId: string, ids: string[]): Promise<Map<string, ContactRecord>> {
    if (!ids.length) return new Map();
    const rows = await this.db.kysely.selectFrom('contacts').select(CONTACT_COLUMNS).where('workspace_id', '=', workspaceId).where('id', 'in', ids).execute();
    return new Map(rows.map((r) => [r.id, toContactRecord(r)]));
  }

  /** Claims one batch and sends it. Returns how many deliveries it handled (0: nothing was due). */
  async sendBatch(): Promise<number> {
    const k = this.db.kysely;
    const start = Date.now();
    const claimed = await repo.claimDeliveries(k, this.db.dialect, this.opts.workerId, iso(start), iso(start + this.opts.leaseMs), this.opts.batchSize);
    if (!claimed.length) return 0;
    const renew = setInterval(() => {
      repo.renewLeases(k, this.opts.workerId, iso(Date.now() + this.opts.leaseMs)).catch((err) => this.log.warn({ err }, 'lease renewal failed'));
    }, Math.max(1000, this.opts.leaseMs / 3));
    try {
      const byBroadcast = new Map<string, repo.ClaimedDelivery[]>();
      for (const d of claimed) byBroadcast.set(d.broadcastId, [...(byBroadcast.get(d.broadcastId) ?? []), d]);
      for (const [broadcastId, deliveries] of byBroadcast) {
        const workspaceId = deliveries[0]!.workspaceId;
        const prepared = await this.prepare(workspaceId, broadcastId);
        const contacts = await this.contactsOf(workspaceId, deliveries.map((d) => d.contactId).filter((id): id is string => id !== null));
        let next = 0;
        const lane = async () => {
          while (next < deliveries.length) {
            const d = deliveries[next++]!;
            await this.deliver(d, prepared, d.contactId ? contacts.get(d.contactId) : undefined);
          }
        };
        await Promise.all(Array.from({ length: Math.min(this.opts.concurrency, deliveries.length) }, lane));
        await repo.completeIfDone(k, workspaceId, broadcastId, iso(Date.now()));
      }
    } finally {
      clearInterval(renew);
    }
    return claimed.length;
  }

  private async deliver(d: repo.ClaimedDelivery, prepared: PreparedBroadcast | undefined, contact: ContactRecord | undefined): Promise<void> {
    const k = this.db.kysely;
    const record = (outcome: repo.Outcome) => repo.recordOutcome(k, d.workspaceId, d.id, outcome, iso(Date.now()));
    // Whoever unsubscribed, bounced or complained since the audience was taken is not mailed.
    if (!contact || contact.status !== 'SUBSCRIBED') return record({ op: 'skip', error: contact ? `contact is ${contact.status}` : 'contact was deleted' });
    if (!prepared || prepared.broadcast.status !== 'SENDING') return record({ op: 'skip', error: 'broadcast is no longer sending' });
    // Addresses stored before the input rules tightened (a quoted local part kept without its quotes) are never sent to.
    if (contactEmail(d.email) !== d.email) return record({ op: 'fail', error: 'the stored address is not a valid single address' });
    if (!prepared.dkim || !prepared.from) return record({ op: 'fail', error: `${prepared.senderDomain ?? 'the sender'} is not a verified sending domain of the workspace` });

    let message: OutgoingMessage;
    try {
      message = await this.compose(d, prepared, contact);
    } catch (err) {
      return record({ op: 'fail', error: `the content could not be rendered: ${(err as Error).message.split('\n')[0]}` });
    }
    if (!(await repo.handOff(k, d.workspaceId, d.id, this.opts.workerId, iso(Date.now())))) return; // canceled meanwhile
    try {
      const info = await this.mailer.send(message);
      await record({ op: 'sent', messageId: info.messageId, response: info.response });
    } catch (err) {
      const result = classifySendError(err);
      if (result.kind === 'temporary' && d.attempts < this.opts.maxAttempts) {
        const wait = Math.min(this.opts.backoffMaxMs, this.opts.backoffBaseMs * 2 ** (d.attempts - 1));
        await record({ op: 'retry', error: result.reason, nextAttemptAt: iso(Date.now() + wait) });
      } else if (result.kind === 'bounce') {
        await record({ op: 'bounce', error: result.reason });
        await k.updateTable('contacts').set({ status: 'BOUNCED', updated_at: iso(Date.now()) })
          .where('workspace_id', '=', d.workspaceId).where('id', '=', contact.id).execute();
      } else {
        await record({ op: 'fail', error: result.reason });
      }
    }
  }

  private async compose(d: repo.ClaimedDelivery, p: PreparedBroadcast, contact: ContactRecord): Promise<OutgoingMessage> {
    const unsubscribeUrl = `${this.opts.publicUrl}/unsubscribe/${d.unsubscribeToken}`;
    const rendered = p.render({
      contact: { email: contact.email, firstName: contact.firstName, lastName: contact.lastName, properties: contact.properties },
      broadcast: { id: p.broadcast.id, name: p.broadcast.name },
      unsubscribe_url: unsubscribeUrl,
    });
    const source = p.broadcast.emailContent;
    const html = rendered.html == null ? null : withPreheader(withUnsubscribeFooter(rendered.html, source.html ?? '', unsubscribeUrl), rendered.previewText);
    const text = textWithUnsubscribe(rendered.text ?? (rendered.html ? htmlToText(rendered.html) : ''), rendered.text != null ? source.text : null, unsubscribeUrl);
    return {
      from: p.from!,
      to: d.email,
      replyTo: p.replyTo,
      returnPath: p.from!.address,
      subject: (rendered.subject ?? '').replace(/[\r\n]+/g, ' '),
      html,
      text,
      // Stable per delivery: a message sent again after a crash carries the same Message-ID.
      messageId: `<${d.id}@${p.dkim!.domainName}>`,
      headers: { 'List-Unsubscribe': `<${unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
      dkim: p.dkim,
    };
  }

  /** Finishes SENDING broadcasts nobody else finished (all deliveries final, e.g. after a cancel race). */
  async sweep(): Promise<void> {
    for (const b of await repo.sendingMaterializedBroadcasts(this.db.kysely, 50)) {
      await repo.completeIfDone(this.db.kysely, b.workspaceId, b.id, iso(Date.now()));
    }
  }
}
