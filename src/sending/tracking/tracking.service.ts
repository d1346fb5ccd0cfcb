import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../db/connection.js';
import { ClickBursts, classifyClick, classifyOpen, truncateUserAgent, type Hit } from './tracking.classify.js';
import {
  DEFAULT_TRACKING_GUARDS,
  FirstHits,
  PerIpLimit,
  RepeatedHits,
  type TrackingGuards,
} from './tracking.guards.js';
import { newId } from '../../lib/ids.js';
import { verifyTrackingToken, type ClickRef, type TrackingRef } from './tracking.token.js';
import { DEFAULT_WRITER_OPTIONS, TrackingWriter, type PendingEvent, type WriterOptions } from './tracking.writer.js';

/**
 * What an open or a click does (docs/tracking.md): verify the token, classify the hit, and hand the event to the
 * group-commit writer; resolves once it is committed. No database read, no rendering. A repeat of a hit within the
 * window, or a hit over its address's limit, is not written (tracking.guards.ts): it resolves as the first one did,
 * or at once; the per-delivery cap is the writer's.
 */
export class TrackingService {
  readonly writer: TrackingWriter;
  private readonly bursts = new ClickBursts<{ workspaceId: string; id: string }>();
  private readonly repeats: RepeatedHits;
  private readonly perIp: PerIpLimit;
  private readonly firstHits = new FirstHits();

  constructor(
    db: Db,
    private readonly secret: Buffer,
    log: FastifyBaseLogger,
    writer: WriterOptions = DEFAULT_WRITER_OPTIONS,
    guards: TrackingGuards = DEFAULT_TRACKING_GUARDS,
  ) {
    this.writer = new TrackingWriter(db, log, { ...writer, maxHitsPerDelivery: guards.maxHitsPerDelivery });
    this.repeats = new RepeatedHits(guards.repeatWindowSeconds * 1000);
    this.perIp = new PerIpLimit(guards.perIpPerMinute);
  }

  /**
   * A hit that is not to be written: the same one within the window (answered once that one is committed), or one
   * over its address's limit that is not the first hit of its message's pixel or link (answered at once). The key tells a person's hit from a machine's, so that a scanner
   * fetching a link does not hide the reader who follows it a moment later.
   */
  private notWritten(key: string, hit: Hit, now: number): Promise<void> | undefined {
    const repeat = this.repeats.repeatOf(key, now);
    if (repeat) return repeat;
    // Counted whatever it is; only the hits after a message's first one are held back by the address's limit.
    const allowed = this.perIp.allow(hit.ip, now);
    // One lookup: remembered now when it was not (a hit of the limit is written only when it is the first).
    const first = this.firstHits.add(key);
    return allowed || first ? undefined : Promise.resolve();
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
    const key = `o ${ref.deliveryId} ${verdict.machine ? 'm' : 'h'}`;
    const skip = this.notWritten(key, hit, now);
    if (skip) return skip;
    const done = this.writer.write({
      workspaceId: ref.workspaceId,
      event: {
        type: 'email.opened',
        contactId: ref.contactId,
        broadcastId: ref.broadcastId,
        deliveryId: ref.deliveryId,
        machine: verdict.machine,
        occurredAt: new Date(now).toISOString(),
        data: {
          userAgent: truncateUserAgent(hit.userAgent),
          machine: verdict.machine,
          ...(verdict.reason ? { reason: verdict.reason } : {}),
        },
      },
    });
    this.repeats.remember(key, now, done);
    return done;
  }

  /**
   * Records an `email.clicked`; resolves when it is committed. When this click completes a burst, the earlier
   * clicks of the burst are marked as a machine's in the same transaction (TrackingWriter.markMachine).
   */
  click(ref: ClickRef, hit: Hit, now = Date.now()): Promise<void> {
    const verdict = classifyClick(hit, ref.sentAt, now);
    const key = `c ${ref.deliveryId} ${ref.linkIndex} ${verdict.machine ? 'm' : 'h'}`;
    const skip = this.notWritten(key, hit, now);
    if (skip) return skip;
    // Its id chosen now: the burst rule remembers a click for a few seconds by its id alone (tracking.classify.ts).
    const id = newId('evt');
    const pending: PendingEvent = {
      workspaceId: ref.workspaceId,
      id,
      event: {
        type: 'email.clicked',
        contactId: ref.contactId,
        broadcastId: ref.broadcastId,
        deliveryId: ref.deliveryId,
        url: ref.url,
        machine: verdict.machine,
        occurredAt: new Date(now).toISOString(),
        data: { url: ref.url, machine: verdict.machine, ...(verdict.reason ? { reason: verdict.reason } : {}) },
      },
    };
    const { burst, earlier } = this.bursts.add(
      ref.deliveryId,
      ref.linkIndex,
      ref.linkCount,
      now,
      { workspaceId: ref.workspaceId, id },
      verdict.machine,
    );
    if (burst) {
      if (!verdict.machine) {
        pending.event.machine = true;
        pending.event.data = { ...pending.event.data, machine: true, reason: 'burst' };
      }
      for (const c of earlier) this.writer.markMachine(c.ref, 'burst');
    }
    const done = this.writer.write(pending);
    this.repeats.remember(key, now, done);
    return done;
  }

  close(): Promise<void> {
    return this.writer.close();
  }
}
