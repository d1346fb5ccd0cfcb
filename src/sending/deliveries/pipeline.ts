import type { FastifyBaseLogger } from 'fastify';
import type { DeliveryStatus } from '../../db/schema.js';
import { parseMailbox } from '../../lib/email.js';
import { classifySendError } from '../../mail/outcome.js';
import type { RelayProfileName } from '../../mail/relay-profiles.js';
import type { Mailer } from '../../mail/transport.js';
import { ClaimCursor, RANGE_EVERY_MS } from './claim-cursor.js';
import { DestinationResolver, domainOf, type MxLookup } from './destinations.js';
import type { MessageRecipient } from './message.js';
import { dispatch, Pacer, type Permit } from './pacing.js';
import { DEFAULT_PACING, type PacingConfig } from './pacing.config.js';
import type { RenderResult, RenderTask } from './render.worker.js';
import { createRenderer, type MessageRenderer } from './send-threads.js';
import type {
  AttemptOutcome,
  BroadcastFinish,
  ClaimedDelivery,
  DeliveryStore,
  MaterializationJob,
  Recipient,
  SendingBroadcast,
} from './store.js';

export interface PipelineOptions {
  /** Names this process in leases; unique per worker. */
  workerId: string;
  publicUrl: string;
  /** Signs the VERP and unsubscribe tokens (db/secrets.ts). */
  secret: Buffer;
  /** What the relay does to a message (RELAY_PROFILE, mail/relay-profiles.ts): what is signed, which headers are added. */
  relayProfile?: RelayProfileName;
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
  /**
   * The transactional lane's own batches and retries (docs/emails.md; EMAILS_MAX_ATTEMPTS, EMAILS_BACKOFF_BASE_MS,
   * EMAILS_BACKOFF_MAX_MS): a receipt is tried sooner and more often than a broadcast's message, in small batches of
   * their own (`sendBatch('transactional')`) that wait at most `pacingWindowMs` for a destination.
   */
  emails: {
    batchSize: number;
    maxAttempts: number;
    backoffBaseMs: number;
    backoffMaxMs: number;
    pacingWindowMs: number;
  };
  /** Recipients written to the deliveries table per transaction. */
  materializeBatch: number;
  /**
   * While this process's batches find more deliveries due than they take (sending is busy), writing an audience takes at
   * most this share of the time: after a slice that took t ms, it waits t × (1 / share − 1) ms. Unset: no pause. On
   * SQLite a slice is written synchronously, and written back to back the slices of a million-recipient audience left
   * the send 9 messages a second for its first 40 s (bench:send --million); at a tenth they are still written faster
   * than they are sent. When nothing is due (a send's first seconds, or sending caught up), they are back to back.
   */
  materializeShare?: number;
  /**
   * While sending is busy and at least this many of the broadcast's deliveries wait in the queue (the lead), the next
   * slice waits (MAX_MATERIALIZE_PAUSE_MS at a time): the audience is written about as fast as it is sent, its cost
   * spread over the whole send instead of weighing on its first minutes (on PostgreSQL at a tenth of the time, a
   * 200,000-recipient send went at ~0.75× its later rate for the 250 s its audience took to write; bench/README.md,
   * "bench:send"). Unset: no such wait. Every worker's claims are counted in the database (the broadcast's QUEUED
   * deliveries, at most every 5 s; this process's own writes and claims in between), so with several workers the lead
   * holds as with one.
   */
  materializeLead?: number;
  /** How often that lead is counted in the database (default LEAD_COUNT_EVERY_MS; tests: 0, every time). */
  leadCountEveryMs?: number;
  /** How often the broadcasts' lane claims from the due range's start (default RANGE_EVERY_MS; claimDeliveries `from`). */
  rangeLookEveryMs?: number;
  /** How the pause between two slices is waited (a timer; tests give one that records). */
  pause?: (ms: number) => Promise<void>;
  /** Limits per destination and how they adapt (SEND_PACING, docs/sending.md). */
  pacing: PacingConfig;
  /** How long a batch waits for destinations with no room before it defers what is left. */
  pacingWindowMs: number;
  /** The MX lookup that groups recipient domains (DNS_SERVERS); none: each domain is its own destination. */
  mxLookup?: MxLookup | null;
  /**
   * Threads that render, compose and sign messages (SEND_THREADS; send-threads.ts); 0: the pipeline's own thread.
   * Ignored when a `renderer` is given.
   */
  sendThreads?: number;
  /** How much lower than the pipeline's thread the send threads run (SEND_THREADS_NICE; send-threads.ts). */
  sendThreadsNice?: number;
  renderer?: MessageRenderer;
  /** Deliveries of one broadcast rendered per task: the unit of work a send thread gets. */
  renderChunk?: number;
  /**
   * Told when a batch was claimed, before its messages are made, and before each slice of an audience is written: the
   * worker keeps its heap lean while it sends (lib/lean-heap.ts, createSendingHeap).
   */
  onBatch?: () => void;
}

export const DEFAULT_PIPELINE_OPTIONS: Omit<PipelineOptions, 'workerId' | 'publicUrl' | 'secret'> = {
  batchSize: 100,
  leaseMs: 60_000,
  concurrency: 16,
  maxAttempts: 5,
  backoffBaseMs: 30_000,
  backoffMaxMs: 3_600_000,
  emails: { batchSize: 20, maxAttempts: 12, backoffBaseMs: 10_000, backoffMaxMs: 900_000, pacingWindowMs: 500 },
  materializeBatch: 1000,
  pacing: DEFAULT_PACING,
  pacingWindowMs: 2_000,
};

const iso = (ms: number) => new Date(ms).toISOString();
/** How long after a full claim sending counts as busy (materializeShare), and the longest pause between two slices. */
const BUSY_MS = 2_000;
const MAX_MATERIALIZE_PAUSE_MS = 1_000;
/** How often the queue's lead is counted in the database while the audience's writing waits on it (materializeLead). */
const LEAD_COUNT_EVERY_MS = 5_000;
const LAPSED_EVERY_MS = 5_000;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The content and files of one chunk of transactional emails at most (renderEmails). */
const EMAIL_CHUNK_BYTES = 1024 * 1024;

/** About how many bytes a transactional email's message carries: its content and its files. */
function emailBytes(sending: SendingBroadcast): number {
  const c = sending.broadcast.emailContent;
  let n = (c.html?.length ?? 0) + (c.text?.length ?? 0);
  for (const a of sending.transactional?.attachments ?? []) n += a.content.byteLength;
  return n;
}

/** A claimed delivery with what sending it needs. */
interface Work extends Recipient {
  d: ClaimedDelivery;
  sending: SendingBroadcast | undefined;
  /** Its message, being made in a send thread (set once the delivery is to be sent). */
  message?: Promise<RenderResult>;
}

/**
 * The sending pipeline (see deliveries/CONTEXT.md): the scheduler starts due broadcasts, the materializer
 * writes each SENDING broadcast's audience into deliveries, and batches of deliveries are claimed, rendered,
 * handed to the transport and recorded. Several processes may run it against one PostgreSQL.
 */
export class DeliveryPipeline {
  private materializing: MaterializationJob | null = null;
  /** When a claim of the broadcasts' lane last came back full (more was due than a batch takes): sending is busy. */
  private lastFullClaim = Number.NEGATIVE_INFINITY;
  /** Recipients this process's materializer wrote, and deliveries its broadcasts' lane claimed (materializeLead). */
  private writtenRows = 0;
  private claimedRows = 0;
  /** The queue's lead as last counted in the database, and this process's counts then (aheadOf). */
  private leadCount: { at: number; broadcastId: string; queued: number; written: number; claimed: number } | null =
    null;
  /** When a claim of each lane last looked for expired leases first. */
  private readonly lastLapsedLook = new Map<'all' | 'transactional', number>();
  /** Where the broadcasts' lane claims from (claim-cursor.ts). */
  private readonly claimCursor: ClaimCursor;
  private readonly destinations: DestinationResolver;
  /** Where its messages are made (send-threads.ts). */
  readonly renderer: MessageRenderer;
  private readonly secret: Uint8Array;
  /** The pace of each destination (pacing.ts); per process. */
  readonly pacer: Pacer;

  constructor(
    private readonly store: DeliveryStore,
    private readonly mailer: Mailer,
    private readonly opts: PipelineOptions,
    private readonly log: FastifyBaseLogger,
  ) {
    this.destinations = new DestinationResolver(opts.pacing, opts.mxLookup ?? null);
    this.claimCursor = new ClaimCursor(opts.rangeLookEveryMs ?? RANGE_EVERY_MS);
    this.renderer = opts.renderer ?? createRenderer(opts.sendThreads ?? 0, log, { nice: opts.sendThreadsNice ?? 0 });
    this.secret = new Uint8Array(opts.secret);
    this.pacer = new Pacer(opts.pacing.adaptive, Date.now, (n) =>
      log.warn(
        { destination: n.key, from: n.from, to: n.to, reply: n.reply },
        `destination ${n.key} throttles: ${n.from === null ? 'no limit' : `${n.from}/s`} → ${Math.round(n.to * 100) / 100}/s`,
      ),
    );
  }

  /** A/B broadcasts whose wait has ended get their winner, sent to the rest of the audience next (docs/ab-tests.md). */
  async chooseWinners(): Promise<number> {
    const chosen = (await this.store.chooseDueWinners?.(iso(Date.now()))) ?? [];
    for (const b of chosen)
      this.log.info({ broadcastId: b.id, workspaceId: b.workspaceId, variant: b.variant }, 'A/B winner chosen');
    return chosen.length;
  }

  /** SCHEDULED broadcasts whose sendAt has passed start sending (also those missed while nothing ran). */
  async runScheduler(): Promise<number> {
    const started = await this.store.startDueBroadcasts(iso(Date.now()));
    for (const b of started)
      this.log.info({ broadcastId: b.id, workspaceId: b.workspaceId }, 'scheduled broadcast started');
    return started.length;
  }

  /** Writes up to `maxBatches` slices of one broadcast's audience; resumes where a dead worker stopped. */
  async materialize(maxBatches = 5): Promise<number> {
    let written = 0;
    for (let i = 0; i < maxBatches; i++) {
      const now = Date.now();
      if (!this.materializing) {
        this.materializing =
          (await this.store.claimAudience(this.opts.workerId, iso(now), iso(now + this.opts.leaseMs))) ?? null;
        if (!this.materializing) return written;
      }
      const job = this.materializing;
      // Far enough ahead of sending (materializeLead): wait rather than write.
      const lead = this.opts.materializeLead;
      if (lead !== undefined && this.sendingBusy() && (await this.aheadOf(job, lead)) >= lead) {
        await (this.opts.pause ?? sleep)(MAX_MATERIALIZE_PAUSE_MS);
        continue;
      }
      // Writing an audience is part of sending, for the heap as for the rest (onBatch).
      this.opts.onBatch?.();
      const started = performance.now();
      const slice = await this.store.writeAudienceSlice(
        job,
        this.opts.workerId,
        this.opts.materializeBatch,
        iso(now),
        iso(now + this.opts.leaseMs),
      );
      written += slice.written;
      this.writtenRows += slice.written;
      if (slice.state !== 'more') {
        if (slice.state === 'done') this.log.info({ broadcastId: job.broadcastId }, 'audience materialised');
        if (slice.finished) this.logFinished(job.workspaceId, job.broadcastId, slice.finished);
        this.materializing = null;
      }
      const share = this.opts.materializeShare;
      if (share !== undefined && share < 1 && slice.state === 'more' && this.sendingBusy()) {
        const pause = (performance.now() - started) * (1 / share - 1);
        await (this.opts.pause ?? sleep)(Math.min(pause, MAX_MATERIALIZE_PAUSE_MS));
      }
    }
    return written;
  }

  /**
   * How far the writing of this job's audience is ahead of sending: the broadcast's QUEUED deliveries, counted in the
   * database at most every LEAD_COUNT_EVERY_MS (every worker's claims are in it), moved on meanwhile by what this
   * process wrote and claimed since.
   */
  private async aheadOf(job: MaterializationJob, lead: number): Promise<number> {
    const last = this.leadCount;
    const fresh =
      last &&
      last.broadcastId === job.broadcastId &&
      performance.now() - last.at < (this.opts.leadCountEveryMs ?? LEAD_COUNT_EVERY_MS);
    if (!fresh) {
      const queued = await this.store.queuedAhead(job.workspaceId, job.broadcastId, lead);
      this.leadCount = {
        at: performance.now(),
        broadcastId: job.broadcastId,
        queued,
        written: this.writtenRows,
        claimed: this.claimedRows,
      };
    }
    const base = this.leadCount!;
    return base.queued + (this.writtenRows - base.written) - (this.claimedRows - base.claimed);
  }

  /** A claim of the broadcasts' lane came back full within the last BUSY_MS: deliveries are waiting to be sent. */
  private sendingBusy(): boolean {
    return performance.now() - this.lastFullClaim < BUSY_MS;
  }

  /**
   * Claims one batch and sends it. Returns how many deliveries it handled (0: nothing was due). `transactional`: only
   * the transactional lane's, in its own smaller batch (the loop jobs.ts runs for it).
   */
  async sendBatch(lane: 'all' | 'transactional' = 'all'): Promise<number> {
    const start = Date.now();
    const transactionalOnly = lane === 'transactional';
    // Expired leases (a dead worker's) are looked for first every LAPSED_EVERY_MS (a lease is leaseMs long anyway),
    // otherwise only when the due deliveries do not fill the batch (claimDeliveries: on PostgreSQL that look walks the
    // dead index entries of every delivery sent since the last VACUUM).
    const lapsedNow =
      performance.now() - (this.lastLapsedLook.get(lane) ?? -Infinity) >=
      Math.min(LAPSED_EVERY_MS, this.opts.leaseMs / 4);
    if (lapsedNow) this.lastLapsedLook.set(lane, performance.now());
    // The broadcasts' due deliveries from where the last claim stopped, not past the dead index entries of all those
    // claimed before it; from the range's start every rangeLookEveryMs.
    const limit = transactionalOnly ? this.opts.emails.batchSize : this.opts.batchSize;
    const ticket = transactionalOnly ? null : this.claimCursor.begin(performance.now());
    const claimed = await this.store.claimDeliveries(
      this.opts.workerId,
      iso(start),
      iso(start + this.opts.leaseMs),
      limit,
      lane,
      ticket?.from === undefined ? { lapsed: lapsedNow } : { lapsed: lapsedNow, from: ticket.from },
    );
    if (ticket) this.claimCursor.note(ticket, claimed, limit, performance.now());
    if (!claimed.length) return 0;
    if (!transactionalOnly) this.claimedRows += claimed.length;
    if (!transactionalOnly && claimed.length >= this.opts.batchSize) this.lastFullClaim = performance.now();
    this.opts.onBatch?.();
    const renew = setInterval(
      () => {
        this.store
          .renewLeases(this.opts.workerId, iso(Date.now() + this.opts.leaseMs))
          .catch((err) => this.log.warn({ err }, 'lease renewal failed'));
      },
      Math.max(1000, this.opts.leaseMs / 3),
    );
    try {
      const byBroadcast = new Map<string, ClaimedDelivery[]>();
      for (const d of claimed) byBroadcast.set(d.broadcastId, [...(byBroadcast.get(d.broadcastId) ?? []), d]);
      // An A/B broadcast's deliveries are made per variant (docs/ab-tests.md): each variant is its own message.
      const byMessage = new Map<string, ClaimedDelivery[]>();
      for (const d of claimed) {
        const key = `${d.broadcastId}\u0000${d.variant ?? ''}`;
        byMessage.set(key, [...(byMessage.get(key) ?? []), d]);
      }
      const work: Work[] = [];
      // What the batch's messages share, read once (a batch of transactional emails is a message per email).
      const memo = new Map<string, Promise<unknown>>();
      // The recipients of each workspace's deliveries in one call (their contacts and suppressions, two queries).
      const byWorkspace = new Map<string, ClaimedDelivery[]>();
      for (const d of claimed) {
        const list = byWorkspace.get(d.workspaceId);
        if (list) list.push(d);
        else byWorkspace.set(d.workspaceId, [d]);
      }
      const recipientsOf = new Map<string, Promise<Map<string, Recipient>>>();
      for (const [workspaceId, ds] of byWorkspace) {
        const read = this.store.recipients(workspaceId, ds);
        read.catch(() => {}); // awaited below; one the batch never reaches (it failed before) is not an unhandled rejection
        recipientsOf.set(workspaceId, read);
      }
      // A batch of emails is a message per email: the store may read their rows in a few queries for the batch.
      if (this.store.prefetchForSending)
        for (const [workspaceId, ds] of byWorkspace)
          this.store.prefetchForSending(
            workspaceId,
            ds.filter((d) => d.transactional).map((d) => d.broadcastId),
            memo,
          );
      // Every message's broadcast asked for at once (a batch of emails is a message per email): on SQLite's one
      // connection reads asked one after the other each wait behind the API's requests (bench:emails, e2e).
      const sendings = [...byMessage.values()].map((deliveries) => {
        const { workspaceId, broadcastId, variant } = deliveries[0]!;
        const read = this.store.broadcastForSending(workspaceId, broadcastId, this.opts.secret, variant ?? null, memo);
        read.catch(() => {}); // awaited in turn below; a failure fails the batch there
        return read;
      });
      let m = 0;
      // Transactional emails to be sent, by what their messages share (workspace, signing key): made in chunks across
      // emails (renderEmails), not a task per email.
      const emails = new Map<string, { sending: SendingBroadcast; work: Work }[]>();
      for (const deliveries of byMessage.values()) {
        const sending = await sendings[m++]!;
        const recipients = await recipientsOf.get(deliveries[0]!.workspaceId)!;
        // The sender's domain, read once for the batch; null when the stored From no longer parses.
        const senderDomain = sending?.broadcast.from ? (parseMailbox(sending.broadcast.from)?.domain ?? null) : null;
        const toSend: Work[] = [];
        for (const d of deliveries) {
          const w: Work = { d, sending, ...recipients.get(d.id)! };
          // Those that will not be sent are recorded at once; the others wait for their destination's pace.
          const verdict = this.verdict(w, senderDomain);
          if (verdict) await this.store.record(d, verdict, iso(Date.now()));
          else toSend.push(w);
        }
        // Their messages are made at once, in chunks, in the send threads (while the first ones go out, the next
        // ones are being made); a message whose destination then has no room is made again when it comes back.
        if (sending?.transactional && toSend.length) {
          const key = `${sending.workspace.id}\u0000${sending.dkim?.domainName}\u0000${sending.dkim?.keySelector}\u0000${sending.trackingHost ?? ''}\u0000${sending.topic?.id ?? ''}`;
          const group = emails.get(key) ?? [];
          for (const w of toSend) group.push({ sending, work: w });
          emails.set(key, group);
        } else if (sending && toSend.length) this.renderAll(sending, toSend);
        work.push(...toSend);
      }
      for (const group of emails.values()) this.renderEmails(group);
      // Each destination at its pace (pacing.ts): a lane takes the next delivery whose destination has room, and
      // what cannot go within the window goes back to the queue, due when its destination will have room.
      const destinations = await this.destinations.resolveAll(
        work.map((w) => domainOf(w.d.email)),
        this.opts.pacing.lookupBudgetMs,
      );
      await dispatch({
        items: work,
        lanes: this.opts.concurrency,
        pacer: this.pacer,
        until: Date.now() + (transactionalOnly ? this.opts.emails.pacingWindowMs : this.opts.pacingWindowMs),
        destinationOf: (w) => destinations.get(domainOf(w.d.email))!,
        // A transactional message goes first at its destination (Pacer.tryAcquire).
        priority: (w) => w.d.transactional === true,
        // A write that failed (the database) leaves the delivery SENDING under this worker's lease: it is claimed
        // again when the lease runs out. Said here; a lane never fails the batch.
        run: (w, permit) =>
          this.deliver(w.d, w.message!, permit).catch((err: unknown) =>
            this.log.error({ err, deliveryId: w.d.id }, 'recording a delivery failed; it is retried after its lease'),
          ),
        defer: (w, at) =>
          this.defer(w.d, at, null).catch((err: unknown) =>
            this.log.error({ err, deliveryId: w.d.id }, 'deferring a delivery failed; it is retried after its lease'),
          ),
      });
      for (const [broadcastId, deliveries] of byBroadcast) {
        // A transactional email's hidden broadcast is never finished nor paused by the breaker (docs/emails.md).
        if (deliveries[0]!.transactional) continue;
        const workspaceId = deliveries[0]!.workspaceId;
        const finished = await this.store.settle(workspaceId, broadcastId, iso(Date.now()));
        if (finished) this.logFinished(workspaceId, broadcastId, finished);
      }
    } finally {
      clearInterval(renew);
    }
    return claimed.length;
  }

  /** Hands the messages of these deliveries (of one broadcast) to the renderer, in chunks; each Work gets its promise. */
  private renderAll(sending: SendingBroadcast, work: Work[]): void {
    const chunk = this.opts.renderChunk ?? DEFAULT_RENDER_CHUNK;
    for (let i = 0; i < work.length; i += chunk) {
      const part = work.slice(i, i + chunk);
      const task: RenderTask = {
        publicUrl: this.opts.publicUrl,
        secret: this.secret,
        relayProfile: this.opts.relayProfile ?? 'smtp',
        sending,
        items: part.map((w) => ({ d: w.d, contact: recipientOf(w) })),
      };
      // The renderer makes a chunk its thread failed on again in this thread (send-threads.ts); a failure of that too
      // says nothing about the messages either: they are retried later.
      this.settleMessages(part, this.renderer.render(task));
    }
  }

  /**
   * Hands the messages of transactional emails that share their workspace and signing key to the renderer, in chunks
   * across emails: each item carries its own hidden broadcast and parts (RenderTask `message`).
   */
  private renderEmails(group: { sending: SendingBroadcast; work: Work }[]): void {
    const chunk = this.opts.renderChunk ?? DEFAULT_RENDER_CHUNK;
    // A chunk also ends at EMAIL_CHUNK_BYTES of content and files: an email may carry 10 MB of attachments, and a chunk's
    // messages come back in one buffer (render.worker.ts, packResults), so large emails go one to a task, as before.
    const parts: (typeof group)[] = [];
    let current: typeof group = [];
    let bytes = 0;
    for (const item of group) {
      // Counted per recipient, each of whom gets a message of their own in the task's buffer.
      const size = emailBytes(item.sending);
      if (current.length && (current.length >= chunk || bytes + size > EMAIL_CHUNK_BYTES)) {
        parts.push(current);
        current = [];
        bytes = 0;
      }
      current.push(item);
      bytes += size;
    }
    if (current.length) parts.push(current);
    for (const part of parts) {
      const { broadcast: _b, transactional: _t, ...shared } = part[0]!.sending;
      const task: RenderTask = {
        publicUrl: this.opts.publicUrl,
        secret: this.secret,
        relayProfile: this.opts.relayProfile ?? 'smtp',
        sending: { ...shared, broadcast: part[0]!.sending.broadcast },
        items: part.map(({ sending, work: w }) => ({
          d: w.d,
          contact: recipientOf(w),
          message: { broadcast: sending.broadcast, transactional: sending.transactional ?? null },
        })),
      };
      this.settleMessages(
        part.map((p) => p.work),
        this.renderer.render(task),
      );
    }
  }

  /** Each Work's message: its result in the chunk's, or a failure to retry when the chunk could not be made. */
  private settleMessages(part: Work[], results: Promise<RenderResult[]>): void {
    part.forEach(
      (w, k) =>
        (w.message = results.then(
          (r) => r[k]!,
          (err: unknown) => ({
            ok: false,
            error: `the message could not be made: ${(err as Error).message}`,
            retry: true,
          }),
        )),
    );
  }

  /** The outcome of a delivery that will not be sent, or null when it is to be sent. */
  private verdict(
    { sending, contact, excluded, invalidAddress }: Work,
    senderDomain: string | null,
  ): AttemptOutcome | null {
    // Whoever unsubscribed, bounced, complained or was suppressed since the audience was taken is not mailed.
    if (excluded || !contact) return { op: 'skip', error: excluded ?? 'contact was deleted' };
    if (sending?.broadcast.status === 'PAUSED') return { op: 'hold' };
    if (!sending || sending.broadcast.status !== 'SENDING')
      return { op: 'skip', error: 'broadcast is no longer sending' };
    if (invalidAddress) return { op: 'fail', error: 'the stored address is not a valid single address' };
    if (!sending.dkim || !senderDomain)
      return { op: 'fail', error: `${senderDomain ?? 'the sender'} is not a verified sending domain of the workspace` };
    return null;
  }

  /**
   * Back to the queue until `at` without using an attempt (its destination has no room, or throttled it); a
   * delivery that has waited for its destination longer than SEND_PACING's giveUpAfterMs fails instead.
   */
  private defer(d: ClaimedDelivery, at: number, reply: string | null): Promise<void> {
    const now = Date.now();
    const limit = this.opts.pacing.giveUpAfterMs;
    if (now - Date.parse(d.createdAt) > limit) {
      const within =
        limit >= 3_600_000
          ? `${Math.round(limit / 3_600_000)} h`
          : limit >= 60_000
            ? `${Math.round(limit / 60_000)} min`
            : `${Math.round(limit / 100) / 10} s`;
      return this.store.record(
        d,
        {
          op: 'fail',
          error: `its destination did not take it within ${within} of queueing${reply ? `: ${reply}` : ''}`,
        },
        iso(now),
      );
    }
    return this.store.record(d, { op: 'defer', error: reply, nextAttemptAt: iso(at) }, iso(now));
  }

  /** The retry schedule of a delivery's lane: the transactional lane has its own (docs/emails.md). */
  private retries(d: ClaimedDelivery): { maxAttempts: number; backoffBaseMs: number; backoffMaxMs: number } {
    return d.transactional ? this.opts.emails : this.opts;
  }

  private async deliver(d: ClaimedDelivery, made: Promise<RenderResult>, permit: Permit): Promise<void> {
    const record = (outcome: AttemptOutcome) => this.store.record(d, outcome, iso(Date.now()));
    const { maxAttempts, backoffBaseMs, backoffMaxMs } = this.retries(d);
    const message = await made;
    if (!message.ok) {
      permit.done('failed');
      // A thread that failed says nothing about the message: it is made again later, as after a temporary failure.
      if (message.retry && d.attempts < maxAttempts)
        return record({ op: 'retry', error: message.error, nextAttemptAt: iso(Date.now() + backoffBaseMs) });
      return record({ op: 'fail', error: message.error });
    }
    if (!(await this.store.handOff(d, this.opts.workerId, iso(Date.now())))) {
      this.renderer.done?.(message, true);
      return; // canceled or paused meanwhile
    }
    try {
      let info;
      try {
        info = await this.mailer.sendRaw(message);
      } finally {
        // The message's bytes: given back for another chunk's messages after a clean send (send-threads.ts, "slabs"),
        // not when a connection that failed with them may still be writing them.
        this.renderer.done?.(message, info !== undefined && !info.bytesHeld);
      }
      permit.done('sent');
      await record({ op: 'sent', messageId: info.messageId, response: info.response });
    } catch (err) {
      const result = classifySendError(err);
      if (result.kind === 'temporary' && result.throttle) {
        // "Try later" from the destination: it slows down, and the message waits for it without using an attempt
        // (nor counting as the recipient's soft bounce).
        permit.done('throttled', result.reason);
        return this.defer(d, this.pacer.slotAt(permit.destination), result.reason);
      }
      permit.done('failed');
      if (result.kind === 'temporary' && d.attempts < maxAttempts) {
        const wait = Math.min(backoffMaxMs, backoffBaseMs * 2 ** (d.attempts - 1));
        await record({ op: 'retry', error: result.reason, nextAttemptAt: iso(Date.now() + wait) });
      } else if (result.kind === 'temporary') {
        // Out of attempts: final. A server that kept refusing this recipient soft-bounced it (it counts towards the
        // soft-bounce limit); a relay that could not be reached says nothing about the recipient.
        await record(
          result.reply
            ? { op: 'bounce', error: result.reason, bounceClass: 'soft' }
            : { op: 'fail', error: result.reason },
        );
      } else {
        await record({ op: 'bounce', error: result.reason, bounceClass: result.kind });
      }
    }
  }

  /** Stops the send threads (after the last batch) and lets go of the store's held connections. */
  async close(): Promise<void> {
    await Promise.all([this.renderer.close(), this.store.close?.()]);
  }

  /** Settles SENDING broadcasts nobody else finished (all deliveries final, e.g. after a cancel race). */
  async sweep(): Promise<void> {
    for (const b of await this.store.sendingBroadcasts(50)) {
      const finished = await this.store.settle(b.workspaceId, b.id, iso(Date.now()));
      if (finished) this.logFinished(b.workspaceId, b.id, finished);
    }
  }

  /** One line per finished broadcast, with its deliveries counted: what an operator looks for in the log. */
  private logFinished(workspaceId: string, broadcastId: string, { status, counts }: BroadcastFinish): void {
    const n = (s: DeliveryStatus) => counts.byStatus[s] ?? 0;
    const fields = {
      workspaceId,
      broadcastId,
      status,
      recipients: counts.total,
      sent: n('SENT'),
      failed: n('FAILED'),
      bounced: n('BOUNCED'),
      skipped: n('SKIPPED'),
      canceled: n('CANCELED'),
      outbox: counts.outboxed,
    };
    if (status === 'SENT')
      this.log.info(
        fields,
        `broadcast ${broadcastId} sent: ${fields.sent} of ${counts.total} delivered, ${fields.failed} failed, ${fields.bounced} bounced`,
      );
    else this.log.warn(fields, `broadcast ${broadcastId} failed: none of its ${counts.total} messages could be sent`);
  }
}

/** Deliveries per render task: small enough that the first messages go out at once, large enough to pay a thread hop. */
const DEFAULT_RENDER_CHUNK = 10;

function recipientOf(w: Work): MessageRecipient {
  const c = w.contact!;
  return { email: c.email, firstName: c.firstName, lastName: c.lastName, properties: c.properties };
}
