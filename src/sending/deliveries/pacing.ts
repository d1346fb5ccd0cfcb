import type { Destination } from './destinations.js';
import type { Adaptive, Limits } from './pacing.config.js';

/**
 * The pace of each destination in this process (docs/sending.md): at most `concurrency` messages in flight and
 * `rate` messages a second (a token bucket holding a tenth of a second's worth), adapted to the destination's
 * replies by AIMD. A throttle reply ("421 4.7.0 try later") multiplies the rate by `decrease` and pauses the
 * destination for `pauseMs`; each `recoverEveryMs` without one gives `recoverStep` of the full rate back. A
 * destination without a configured rate is not limited until it throttles: then half the rate it was being sent
 * at becomes its limit, and recovering all of that rate lifts the limit again.
 *
 * Time comes from `now` (a controlled clock in tests); nothing here waits or sets timers.
 */

/** Grants remembered per destination to measure the rate it was sent at (for destinations without a rate). */
const RECENT = 256;
const OBSERVE_MS = 10_000;

interface State {
  limits: Limits;
  inFlight: number;
  tokens: number;
  refilledAt: number;
  /** The rate allowed now (messages a second); Infinity: no limit. */
  rate: number;
  /** What recovery climbs back to: the configured rate, or the rate seen when an unlimited destination first throttled. */
  ceiling: number;
  /** Bumped by every decrease: a throttle reply to a message sent before the last decrease does not decrease again. */
  epoch: number;
  pausedUntil: number;
  /** When the rate last changed (a decrease, or a recovery step). */
  changedAt: number;
  throttles: number;
  lastReply: string | null;
  /** Times of the latest grants, a ring. */
  recent: number[];
  usedAt: number;
}

export type PermitResult = 'sent' | 'throttled' | 'failed';

/** A slot to send one message to a destination; finished exactly once by `done` (sent or not) or `cancel` (not tried). */
export interface Permit {
  readonly destination: Destination;
  done(result: PermitResult, reply?: string): void;
  cancel(): void;
}

export interface DestinationPace {
  key: string;
  /** The rate allowed now (null: no limit) and the configured one (null: none). */
  rate: number | null;
  configuredRate: number | null;
  concurrency: number;
  inFlight: number;
  /** Throttle replies seen. */
  throttles: number;
  pausedUntil: string | null;
  lastReply: string | null;
}

export interface ThrottleNotice {
  key: string;
  /** The rate before and after (messages a second); null: no limit. */
  from: number | null;
  to: number;
  reply: string | null;
}

export class Pacer {
  private readonly states = new Map<string, State>();

  constructor(
    private readonly adaptive: Adaptive,
    private readonly now: () => number = Date.now,
    private readonly onThrottle?: (n: ThrottleNotice) => void,
  ) {}

  private state(dest: Destination): State {
    let s = this.states.get(dest.key);
    if (!s) {
      if (this.states.size >= 10_000) this.evictIdle();
      const rate = dest.limits.rate > 0 ? dest.limits.rate : Infinity;
      const now = this.now();
      s = {
        limits: dest.limits,
        inFlight: 0,
        tokens: burst(rate),
        refilledAt: now,
        rate,
        ceiling: rate,
        epoch: 0,
        pausedUntil: 0,
        changedAt: now,
        throttles: 0,
        lastReply: null,
        recent: [],
        usedAt: now,
      };
      this.states.set(dest.key, s);
    }
    this.update(s);
    return s;
  }

  /** Idle destinations at their full pace are forgotten (they start afresh); slowed ones are kept. */
  private evictIdle(): void {
    for (const [key, s] of this.states) if (s.inFlight === 0 && s.rate === full(s.limits)) this.states.delete(key);
  }

  /** Recovery steps earned since the last change, and the tokens earned since the last refill. */
  private update(s: State): void {
    const now = this.now();
    if (s.rate < full(s.limits)) {
      const quietSince = Math.max(s.changedAt, s.pausedUntil);
      const steps = Math.floor((now - quietSince) / this.adaptive.recoverEveryMs);
      if (steps > 0) {
        s.rate += steps * s.ceiling * this.adaptive.recoverStep;
        s.changedAt = quietSince + steps * this.adaptive.recoverEveryMs;
        if (s.rate >= s.ceiling - 1e-9) s.rate = full(s.limits);
      }
    }
    const from = Math.max(s.refilledAt, s.pausedUntil);
    if (now > from && Number.isFinite(s.rate))
      s.tokens = Math.min(burst(s.rate), s.tokens + ((now - from) / 1000) * s.rate);
    if (now > s.refilledAt) s.refilledAt = now;
  }

  /**
   * A permit when the destination has room now (in-flight and rate), otherwise null. A `priority` message (the
   * transactional lane's, docs/emails.md) goes first: it may take one in-flight slot beyond the limit, and it may
   * borrow the next slot of the rate (up to a burst's worth of debt), which the messages waiting after it then wait for.
   * A destination that throttled is paused for priority messages too. So a receipt never queues behind a broadcast
   * at a destination, and the destination still sees its rate over any second or more.
   */
  tryAcquire(dest: Destination, priority = false): Permit | null {
    const s = this.state(dest);
    const now = this.now();
    if (now < s.pausedUntil || s.inFlight >= s.limits.concurrency + (priority ? PRIORITY_SLOTS : 0)) return null;
    if (Number.isFinite(s.rate)) {
      if (s.tokens < (priority ? 1 - burst(s.rate) : 1)) return null;
      s.tokens -= 1;
    }
    s.inFlight++;
    s.usedAt = now;
    s.recent.push(now);
    if (s.recent.length > RECENT) s.recent.shift();
    const epoch = s.epoch;
    let finished = false;
    const finish = () => {
      if (finished) return false;
      finished = true;
      s.inFlight--;
      return true;
    };
    return {
      destination: dest,
      done: (result, reply) => {
        if (finish() && result === 'throttled') this.throttled(dest.key, s, epoch, reply ?? null);
      },
      cancel: () => {
        // Not tried: the slot goes back.
        if (finish() && Number.isFinite(s.rate)) s.tokens = Math.min(burst(s.rate), s.tokens + 1);
      },
    };
  }

  /** Whether the destination's in-flight limit is what holds it back (a finished send makes room). */
  full(dest: Destination, priority = false): boolean {
    const s = this.state(dest);
    return s.inFlight >= s.limits.concurrency + (priority ? PRIORITY_SLOTS : 0);
  }

  /**
   * When the destination's rate lets the `position`-th message waiting for it (0: the next) go, in ms since the
   * epoch; the in-flight limit aside (it depends on sends finishing).
   */
  slotAt(dest: Destination, position = 0, priority = false): number {
    const s = this.state(dest);
    const now = this.now();
    const start = Math.max(now, s.pausedUntil);
    if (!Number.isFinite(s.rate)) return start;
    // Tokens are not earned during a pause: those held now are those held when it ends.
    const missing = position + 1 - s.tokens - (priority ? burst(s.rate) : 0);
    return missing <= 0 ? start : start + Math.ceil((missing / s.rate) * 1000);
  }

  private throttled(key: string, s: State, epoch: number, reply: string | null): void {
    const now = this.now();
    s.throttles++;
    s.lastReply = reply;
    // Nothing to the destination for a while, whichever message this answer was about.
    s.pausedUntil = Math.max(s.pausedUntil, now + this.adaptive.pauseMs);
    // One message may go when the pause ends (then the rate's pace); none is earned during the pause.
    s.tokens = 1;
    s.refilledAt = now;
    s.changedAt = now;
    // Messages sent before the last decrease were sent at the old rate: their replies do not decrease it again.
    if (epoch !== s.epoch) return;
    const before = s.rate;
    const base = Number.isFinite(s.rate) ? s.rate : this.observed(s, now);
    if (!Number.isFinite(s.rate)) s.ceiling = base;
    s.rate = Math.max(this.adaptive.minRate, base * this.adaptive.decrease);
    s.epoch++;
    this.onThrottle?.({ key, from: Number.isFinite(before) ? before : null, to: s.rate, reply });
  }

  /** Messages a second granted over the last ten seconds (at least a one-second span; one a second when unknown). */
  private observed(s: State, now: number): number {
    const inWindow = s.recent.filter((t) => t > now - OBSERVE_MS);
    if (inWindow.length < 2) return 1;
    return inWindow.length / Math.max(1, (now - inWindow[0]!) / 1000);
  }

  /** The pace of every destination seen (for logs, /readyz and tests). */
  snapshot(): DestinationPace[] {
    return [...this.states.entries()].map(([key, s]) => {
      this.update(s);
      return {
        key,
        rate: Number.isFinite(s.rate) ? round(s.rate) : null,
        configuredRate: s.limits.rate > 0 ? s.limits.rate : null,
        concurrency: s.limits.concurrency,
        inFlight: s.inFlight,
        throttles: s.throttles,
        pausedUntil: s.pausedUntil > this.now() ? new Date(s.pausedUntil).toISOString() : null,
        lastReply: s.lastReply,
      };
    });
  }
}

const full = (limits: Limits) => (limits.rate > 0 ? limits.rate : Infinity);
/** In-flight slots a destination keeps for priority messages beyond its limit (tryAcquire). */
const PRIORITY_SLOTS = 1;

/** A tenth of a second's worth of messages, at least one. */
const burst = (rate: number) => (Number.isFinite(rate) ? Math.max(1, rate / 10) : Infinity);
const round = (n: number) => Math.round(n * 1000) / 1000;

export interface DispatchOptions<T> {
  items: readonly T[];
  /** Messages in flight from this batch at most. */
  lanes: number;
  destinationOf(item: T): Destination;
  pacer: Pacer;
  /** Until when the batch may wait for a destination (ms since the epoch); what cannot go by then is deferred. */
  until: number;
  run(item: T, permit: Permit): Promise<void>;
  /** Items that go first at their destination (Pacer.tryAcquire's `priority`): the transactional lane's. */
  priority?(item: T): boolean;
  /** Puts the item back in the queue until `at` (ms since the epoch), without using an attempt. */
  defer(item: T, at: number): Promise<void>;
  now?: () => number;
  /** Waits for `ms` or until `wake` settles, whichever is first (a timer; tests give a controlled one). */
  wait?: (ms: number, wake: Promise<unknown>) => Promise<void>;
}

const realWait = (ms: number, wake: Promise<unknown>) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    void wake.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });

/** How long to look again when only in-flight sends elsewhere hold a destination back (none of this batch's finish). */
const RECHECK_MS = 50;

/**
 * Sends a batch through the pacer (docs/sending.md): each free lane takes the first item whose destination has
 * room, so a destination that must wait never holds up the others; an item whose destination will not have room
 * before `until` goes back to the queue with its due time (`defer`), spread at the destination's rate; at `until`
 * whatever has not started is deferred.
 */
export async function dispatch<T>(o: DispatchOptions<T>): Promise<void> {
  const now = o.now ?? Date.now;
  const wait = o.wait ?? realWait;
  const pending = [...o.items];
  const running = new Set<Promise<void>>();
  const deferrals: Promise<void>[] = [];
  const defer = (i: number, at: number) => {
    deferrals.push(o.defer(pending[i]!, at));
    pending.splice(i, 1);
  };
  while (pending.length || running.size) {
    const blocked = new Set<string>();
    for (let i = 0; i < pending.length && running.size < o.lanes;) {
      const dest = o.destinationOf(pending[i]!);
      const first = o.priority?.(pending[i]!) ?? false;
      const key = first ? `\u0000${dest.key}` : dest.key;
      const permit = blocked.has(key) ? null : o.pacer.tryAcquire(dest, first);
      if (!permit) {
        blocked.add(key);
        i++;
        continue;
      }
      const item = pending.splice(i, 1)[0]!;
      const p: Promise<void> = o.run(item, permit).finally(() => {
        permit.cancel();
        running.delete(p);
      });
      running.add(p);
    }
    const t = now();
    const lanesFull = running.size >= o.lanes;
    // What will not get a slot in time goes back to the queue, at the time its destination's rate would let it go.
    let next = Infinity;
    const position = new Map<string, number>();
    for (let i = 0; i < pending.length;) {
      const dest = o.destinationOf(pending[i]!);
      const first = o.priority?.(pending[i]!) ?? false;
      const key = first ? `\u0000${dest.key}` : dest.key;
      const k = position.get(key) ?? 0;
      position.set(key, k + 1);
      const at = o.pacer.slotAt(dest, k, first);
      if (at > o.until || t >= o.until) {
        defer(i, Math.max(at, t));
        continue;
      }
      // A free lane waits for the next slot of a rate; room under an in-flight limit comes with a finished send.
      if (!lanesFull && (at > t || !o.pacer.full(dest, first))) next = Math.min(next, at);
      i++;
    }
    if (!pending.length) {
      await Promise.all(running);
      break;
    }
    // Wait for a send to finish (room for its destination) or for the next slot of a rate, whichever comes first.
    const wake = running.size ? Promise.race(running) : new Promise<never>(() => {});
    const ms = Number.isFinite(next)
      ? Math.max(0, next - t)
      : running.size
        ? o.until - t
        : Math.min(RECHECK_MS, o.until - t);
    await wait(
      Math.max(1, ms),
      wake.catch(() => {}),
    );
  }
  await Promise.all(deferrals);
}
