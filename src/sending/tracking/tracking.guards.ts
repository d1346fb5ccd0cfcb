import { ipKey } from '../../lib/ip-key.js';
import { RecentKeys } from '../../lib/recent-keys.js';
import { WindowCounter } from '../../lib/window-counter.js';

/**
 * The guards against replayed and flooded tracking links (docs/tracking.md, "Replays and floods"). A token is in
 * the message, so whoever has the message may fetch its pixel or follow its links as often as they like; these
 * keep the stored events, and so the stats and the database, bounded without ever refusing a reader:
 * - a repeated hit of one token within a window is the same hit (RepeatedHits, in the memory of the process);
 * - at most `maxHitsPerDelivery` opens and as many clicks are stored per delivery (in the database: the writer);
 * - at most `perIpPerMinute` hits are recorded per client address a minute (PerIpLimit, in memory), except the first
 *   hit of a message's pixel or link (FirstHits): an image proxy (Gmail's, Apple's) or a company's gateway fetches for
 *   many readers from few addresses, and their first opens and clicks are the stats; what one message can store is
 *   bounded by the per-delivery cap anyway.
 * A hit that a guard stops is answered all the same (the GIF, the redirect) and not recorded.
 */
export interface TrackingGuards {
  /** A repeated hit of one token within this many seconds is the same hit; 0: every hit is stored (TRACKING_REPEAT_WINDOW_SECONDS). */
  repeatWindowSeconds: number;
  /** Opens, and clicks, stored per delivery at most; 0: no cap (TRACKING_MAX_HITS_PER_DELIVERY). */
  maxHitsPerDelivery: number;
  /** Hits recorded per client address (IPv6: per /64) a minute; 0: no limit (TRACKING_RATE_LIMIT_PER_IP). */
  perIpPerMinute: number;
}

export const DEFAULT_TRACKING_GUARDS: TrackingGuards = {
  repeatWindowSeconds: 60,
  maxHitsPerDelivery: 50,
  perIpPerMinute: 600,
};

/** Entries each guard keeps in memory at most (the oldest go first). */
const MAX_REMEMBERED = 100_000;

/**
 * The hits recorded lately, by key (the token's delivery and link, and whether a person or a machine hit it). A
 * repeat within the window is answered as the first one is: once it is committed (or with the same 503 when it
 * failed), so that nothing is answered as recorded that was not. The keys and times are kept off the JavaScript heap
 * (lib/recent-keys.ts: ~100,000 hits a minute would otherwise be promoted to the old generation and die there); the
 * promise of a write is kept only while it is in flight, so a repeat of a committed hit is answered at once.
 */
export class RepeatedHits {
  private readonly recent: RecentKeys | null;
  private readonly inFlight = new Map<string, Promise<void>>();

  constructor(windowMs: number, max = MAX_REMEMBERED) {
    this.recent = windowMs > 0 ? new RecentKeys(max, windowMs) : null;
  }

  /** The write of the same hit within the window, if there is one (resolved already when it committed). */
  repeatOf(key: string, now: number): Promise<void> | undefined {
    if (!this.recent || this.recent.lastSeen(key, now) === undefined) return undefined;
    return this.inFlight.get(key) ?? COMMITTED;
  }

  /** Remembers a recorded hit; a failed write is forgotten (the client's retry is a new hit). */
  remember(key: string, now: number, done: Promise<void>): void {
    const recent = this.recent;
    if (!recent) return;
    recent.remember(key, now);
    this.inFlight.set(key, done);
    done.then(
      () => {
        if (this.inFlight.get(key) === done) this.inFlight.delete(key);
      },
      () => {
        if (this.inFlight.get(key) === done) this.inFlight.delete(key);
        recent.forget(key, now);
      },
    );
  }

  get size(): number {
    return this.recent?.size ?? 0;
  }
}

const COMMITTED = Promise.resolve();

/**
 * The keys (a delivery's pixel or link, a person or a machine) this process has recorded a hit of, at most `max` (off
 * the JavaScript heap, as RepeatedHits').
 */
export class FirstHits {
  private readonly seen: RecentKeys;

  constructor(max = MAX_REMEMBERED) {
    this.seen = new RecentKeys(max);
  }

  /** Remembers `key`; true when no hit of it was recorded before (as far as this process remembers). */
  add(key: string): boolean {
    return this.seen.add(key, 0);
  }
}

/**
 * Hits recorded per client address in fixed windows of a minute, counted by ipKey (IPv6 by its /64, IPv4-mapped as
 * IPv4). Per process, at most MAX_REMEMBERED addresses.
 */
export class PerIpLimit {
  private readonly counts: WindowCounter | null;

  constructor(perMinute: number, max = MAX_REMEMBERED) {
    this.counts = perMinute > 0 ? new WindowCounter(perMinute, 60_000, max) : null;
  }

  /** Counts a hit of `ip`; false when the address is over its limit this minute. */
  allow(ip: string | undefined, now: number): boolean {
    return !this.counts || !ip || this.counts.allow(ipKey(ip), now);
  }
}
