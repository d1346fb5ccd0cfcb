import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/connection.js';
import { ClickBursts, classifyClick, classifyOpen, truncateUserAgent, type Hit } from './tracking.classify.js';
import { verifyTrackingToken, type ClickRef, type TrackingRef } from './tracking.token.js';
import { DEFAULT_WRITER_OPTIONS, TrackingWriter, type PendingEvent, type WriterOptions } from './tracking.writer.js';

/**
 * What an open or a click does (docs/tracking.md): verify the token, classify the hit, and hand the event to the
 * group-commit writer; resolves once it is committed. No database read, no rendering.
 */
export class TrackingService {
  readonly writer: TrackingWriter;
  private readonly bursts = new ClickBursts<PendingEvent>();

  constructor(db: Db, private readonly secret: Buffer, log: FastifyBaseLogger, writer: WriterOptions = DEFAULT_WRITER_OPTIONS) {
    this.writer = new TrackingWriter(db, log, writer);
  }

  verifyOpen(token: string): TrackingRef | null {
    return verifyTrackingToken(this.secret, token, 'open');
  }

  verifyClick(token: string): ClickRef | null {
    return verifyTrackingToken(this.secret, token, 'click');
  }

  /** Records an `email.opened`; resolves when it is committed. */
  open(ref: TrackingRef, hit: Hit, now = Date.now()): Promise<void> {
    const verdict = classifyOpen(hit);
    return this.writer.write({
      workspaceId: ref.workspaceId,
      state: 'queued',
      event: {
        type: 'email.opened', contactId: ref.contactId, broadcastId: ref.broadcastId, deliveryId: ref.deliveryId,
        machine: verdict.machine, occurredAt: new Date(now).toISOString(),
        data: { userAgent: truncateUserAgent(hit.userAgent), machine: verdict.machine, ...(verdict.reason ? { reason: verdict.reason } : {}) },
      },
    });
  }

  /**
   * Records an `email.clicked`; resolves when it is committed. When this click completes a burst, the earlier
   * clicks of the burst are marked as a machine's in the same transaction (TrackingWriter.markMachine).
   */
  click(ref: ClickRef, hit: Hit, now = Date.now()): Promise<void> {
    const verdict = classifyClick(hit, ref.sentAt, now);
    const pending: PendingEvent = {
      workspaceId: ref.workspaceId,
      state: 'queued',
      event: {
        type: 'email.clicked', contactId: ref.contactId, broadcastId: ref.broadcastId, deliveryId: ref.deliveryId, url: ref.url,
        machine: verdict.machine, occurredAt: new Date(now).toISOString(),
        data: { url: ref.url, machine: verdict.machine, ...(verdict.reason ? { reason: verdict.reason } : {}) },
      },
    };
    const { burst, earlier } = this.bursts.add(ref.deliveryId, ref.linkIndex, ref.linkCount, now, pending, verdict.machine);
    if (burst) {
      if (!verdict.machine) {
        pending.event.machine = true;
        pending.event.data = { ...pending.event.data, machine: true, reason: 'burst' };
      }
      for (const c of earlier) this.writer.markMachine(c.ref, 'burst');
    }
    return this.writer.write(pending);
  }

  close(): Promise<void> {
    return this.writer.close();
  }
}
