import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../db/connection.js';
import { engagementKindOf, noteEngagement, recomputeEngagement } from '../../audience/index.js';
import { insertTrackingEvents, type NewEvent } from '../../outbox/index.js';
import { newId } from '../../lib/ids.js';
import { keepWithinCap, markClicksMachine, type MachineClick } from './tracking.repository.js';

/**
 * The group-commit writer of opens and clicks (docs/tracking.md, "How hits are recorded"). A hit is queued
 * and its request waits; the queue is written in ONE transaction when it reaches `maxBatch` hits or `flushMs`
 * after its first hit, and at once after the previous batch when hits queued up meanwhile. Each request is
 * answered after its batch committed, so no event is lost once answered, and a burst of hits costs one commit
 * per batch instead of one per hit. One batch is written at a time.
 */
export interface WriterOptions {
  /** Hits per transaction at most. */
  maxBatch: number;
  /** How long the first hit of a batch waits for others (ms); 0: until the current event-loop turn ends. */
  flushMs: number;
  /** Hits waiting at most; more are refused at once (the endpoint answers 503) rather than held without bound. */
  maxQueued?: number;
  /** A batch not committed within this (a stalled database) fails its hits (503); a late commit is harmless. */
  commitTimeoutMs?: number;
  /**
   * Opens, and clicks, stored per delivery at most (TRACKING_MAX_HITS_PER_DELIVERY); 0 or absent: no cap. Counted in
   * the database (tracking_hits) in the batch's transaction, so the cap holds across processes and restarts; a hit
   * over it is answered as recorded and not stored.
   */
  maxHitsPerDelivery?: number;
}

export const DEFAULT_WRITER_OPTIONS: WriterOptions = {
  maxBatch: 500,
  flushMs: 2,
  maxQueued: 10_000,
  commitTimeoutMs: 10_000,
};

/** The hit could not be recorded in time (a full queue or a stalled database): the endpoint answers 503. */
export class TrackingUnavailable extends Error {}

export interface PendingEvent {
  workspaceId: string;
  event: NewEvent & { broadcastId: string; deliveryId: string; data: Record<string, unknown> };
  /** The event's id: a click's is chosen when it is received (a burst marks the click by it later), an open's when
   * its batch is written. */
  id?: string;
}

interface Waiter {
  pending: PendingEvent;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class TrackingWriter {
  private queue: Waiter[] = [];
  /** The queued events that have an id already (clicks: the burst rule may mark them while they wait), by id. */
  private readonly queuedClicks = new Map<string, PendingEvent>();
  private updates: MachineClick[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    private readonly opts: WriterOptions = DEFAULT_WRITER_OPTIONS,
  ) {}

  /** Queues an event; resolves once it is committed, rejects when its batch failed. */
  write(pending: PendingEvent): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the tracking writer is closed'));
    if (this.queue.length >= (this.opts.maxQueued ?? DEFAULT_WRITER_OPTIONS.maxQueued!))
      return Promise.reject(new TrackingUnavailable('too many hits are waiting to be written'));
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ pending, resolve, reject });
      if (pending.id) this.queuedClicks.set(pending.id, pending);
      this.schedule();
    });
  }

  /**
   * A click already queued or written turns out to be a machine's (the burst rule), known by its id. Still queued:
   * changed in place. Being written or written: updated in the next batch's transaction, the one that writes the click
   * that revealed the burst (by the database, from the id alone: markClicksMachine). Nothing happens to one that was not
   * stored.
   */
  markMachine(click: { workspaceId: string; id: string }, reason: string): void {
    const p = this.queuedClicks.get(click.id);
    if (p && p.workspaceId === click.workspaceId) {
      p.event.machine = true;
      p.event.data = { ...p.event.data, machine: true, reason };
      return;
    }
    this.updates.push({ workspaceId: click.workspaceId, id: click.id, reason });
  }

  private schedule(): void {
    if (this.writing) return; // the batch in flight flushes the queue when it is done
    if (this.queue.length >= this.opts.maxBatch) {
      this.flushNow();
    } else if (!this.timer) {
      this.timer =
        this.opts.flushMs > 0
          ? setTimeout(() => this.flushNow(), this.opts.flushMs)
          : (setImmediate(() => this.flushNow()) as unknown as NodeJS.Timeout);
    }
  }

  private flushNow(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      clearImmediate(this.timer as unknown as NodeJS.Immediate);
      this.timer = null;
    }
    if (this.writing || (!this.queue.length && !this.updates.length)) return;
    const batch = this.queue.splice(0, this.opts.maxBatch);
    for (const w of batch) if (w.pending.id) this.queuedClicks.delete(w.pending.id);
    const updates = this.updates;
    this.updates = [];
    this.writing = this.commit(batch, updates).finally(() => {
      this.writing = null;
      if (this.queue.length) this.flushNow();
      else if (this.updates.length) this.schedule();
    });
  }

  private async commit(batch: Waiter[], updates: MachineClick[]): Promise<void> {
    const rows = batch.map(({ pending }) => {
      pending.id ??= newId('evt');
      return pending as PendingEvent & { id: string };
    });
    const now = new Date().toISOString();
    // A stalled database (a lock wait, an exhausted pool) must not hold the requests forever: after the timeout
    // they are answered 503; should the batch commit later, its events simply exist (at least once, never lost).
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new TrackingUnavailable('the database did not commit in time')),
        this.opts.commitTimeoutMs ?? DEFAULT_WRITER_OPTIONS.commitTimeoutMs!,
      );
    });
    try {
      await Promise.race([
        this.db.kysely.transaction().execute(async (trx) => {
          const cap = this.opts.maxHitsPerDelivery ?? 0;
          let kept = rows;
          if (cap > 0) {
            // Not stored: a burst found later marks nothing (markClicksMachine finds no row).
            kept = await keepWithinCap(trx, rows, cap);
          }
          await insertTrackingEvents(trx, kept, now);
          // The contacts' engagement summary (last_opened_at, last_clicked_at: human hits), with the events.
          const notes = [];
          for (const r of kept) {
            const kind = engagementKindOf(r.event.type, r.event.machine);
            if (kind)
              notes.push({
                workspaceId: r.workspaceId,
                contactId: r.event.contactId,
                kind,
                at: r.event.occurredAt ?? now,
              });
          }
          await noteEngagement(trx, notes);
          if (updates.length) {
            // Clicks written earlier, now a machine's: the contacts' latest human click is read again.
            const marked = await markClicksMachine(trx, updates);
            for (const [workspaceId, contactIds] of marked)
              await recomputeEngagement(trx, workspaceId, 'clicked', contactIds);
          }
        }),
        deadline,
      ]);
    } catch (err) {
      this.log.error({ err, events: batch.length }, 'tracking events could not be written');
      for (const w of batch) w.reject(err);
      return;
    } finally {
      clearTimeout(timer);
    }
    for (const w of batch) w.resolve();
  }

  /** Writes what is queued and waits for it; later writes are refused. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.writing || this.queue.length || this.updates.length) {
      if (!this.writing) this.flushNow();
      await this.writing;
    }
  }
}
