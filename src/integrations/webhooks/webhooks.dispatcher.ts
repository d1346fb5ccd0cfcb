import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../db/connection.js';
import { claimUndispatchedEvents, eventsByIds } from '../../outbox/index.js';
import { newId } from '../../lib/ids.js';
import type { Sealer } from '../../lib/seal.js';
import { toIso } from '../../lib/time.js';
import { UrlGuard, UrlRefused, type ResolvedAddress, type Resolver } from './webhooks.guard.js';
import * as repo from './webhooks.repository.js';
import { WebhookSender, signatureHeader, type AttemptResult } from './webhooks.sender.js';
import { webhookSealer } from './webhooks.service.js';
import { DISABLE_AFTER_MS, RETRY_DELAYS_MS, nextAttemptDelay } from './webhooks.state.js';

export interface DispatcherOptions {
  /** Names this dispatcher's leases (host:pid:random). */
  workerId: string;
  /** The server secret (endpoint secrets are sealed with a key derived from it). */
  secret: Buffer;
  allowHttp: boolean;
  allowPrivate: boolean;
  /** DNS for the guard (tests inject one). */
  resolve?: Resolver;
  /** The clock: claims, leases, the retry schedule, the 5-day rule and webhook-timestamp all read it. */
  clock?: () => Date;
  /** Deliveries claimed at a time. */
  batchSize?: number;
  /** Requests in flight at once. */
  concurrency?: number;
  /**
   * Requests in flight at once to one endpoint (so a slow or hung receiver holds 2 of the slots, never all of them);
   * an endpoint whose last answer came within `fastMs` may have `fastConcurrency`.
   */
  endpointConcurrency?: number;
  /** Requests in flight at once to an endpoint that answers fast (default: `workspaceConcurrency`). */
  fastConcurrency?: number;
  /** An answer within this long makes its endpoint fast (default: a tenth of the timeout, 1 s at most). */
  fastMs?: number;
  /**
   * Requests in flight at once to one workspace's endpoints (default: half of `concurrency`), so that the others always
   * have the other half, even against a receiver that answers fast and then hangs.
   */
  workspaceConcurrency?: number;
  /** Deliveries of one endpoint that answers fast claimed and held at once (of another: 2 × endpointConcurrency). */
  endpointHold?: number;
  /**
   * Deliveries of one workspace's endpoints held at once (default: batchSize, half of the 2 × batchSize held in all), and
   * at most half of one claim, so that many endpoints of one workspace never fill the hold: the others are claimed too.
   */
  workspaceHold?: number;
  /** While requests are in flight and nothing else happens, a round waits this long at most for one to end. */
  pollMs?: number;
  leaseMs?: number;
  /** The whole exchange of one attempt. */
  timeoutMs?: number;
  /** Events fanned out per transaction. */
  fanOutBatch?: number;
  /** Deliveries kept this long (then pruned, in batches). */
  retentionMs?: number;
  log?: FastifyBaseLogger;
}

export const DEFAULT_DISPATCHER = {
  batchSize: 200,
  concurrency: 16,
  endpointConcurrency: 2,
  fastConcurrency: 0,
  fastMs: 0,
  workspaceConcurrency: 0,
  endpointHold: 128,
  workspaceHold: 0,
  pollMs: 100,
  leaseMs: 60_000,
  timeoutMs: 15_000,
  fanOutBatch: 500,
  retentionMs: 30 * 86_400_000,
};

const PRUNE_BATCH = 1000;
/** Endpoints remembered as not answering (a bound on memory; the oldest are forgotten first). */
const MAX_PAUSES = 10_000;

interface Target {
  enabled: boolean;
  url?: URL;
  address?: ResolvedAddress;
  refused?: string;
  secrets: string[];
  workspaceId: string;
}

interface Outcome {
  delivery: repo.ClaimedWebhookDelivery;
  attempt: repo.AttemptRecord | null;
  result: AttemptResult;
}

/** The deliveries of one endpoint held by this dispatcher: waiting in `queue`, or in flight. */
interface Lane {
  endpointId: string;
  workspaceId: string;
  target: Target | undefined;
  queue: repo.ClaimedWebhookDelivery[];
  inFlight: number;
  /** The last claim gave it all the room it had: more of it may be due. */
  more: boolean;
}

/**
 * The webhook half of the worker (CONTEXT.md): `fanOut` turns new events into one delivery per subscribed endpoint,
 * `dispatch` claims due deliveries fairly, sends them and records each outcome (a pipeline: see dispatch), `prune`
 * forgets old deliveries.
 * Each is one round of a job (jobs/jobs.ts); several dispatchers may run against one PostgreSQL.
 */
export class WebhookDispatcher {
  private readonly sealer: Sealer;
  private readonly guard: UrlGuard;
  private readonly sender: WebhookSender;
  private readonly clock: () => Date;
  private readonly o: typeof DEFAULT_DISPATCHER;
  /** Opened secrets by sealed value (sealing is per row, so a rotation yields a new key here). */
  private readonly opened = new Map<string, string>();
  /** What this dispatcher holds (claimed, under its lease), by endpoint; a lane goes when it is empty. */
  private readonly lanes = new Map<string, Lane>();
  /** Requests in flight: in all, and to the endpoints of each workspace. */
  private running = 0;
  private readonly workspaceRunning = new Map<string, number>();
  /** Endpoints whose last answer came within fastMs. */
  private readonly fast = new Set<string>();
  /** When the outcomes were last recorded and due deliveries last claimed (performance.now()). */
  private lastFlush = 0;
  private lastClaim = 0;
  private flushFailures = 0;
  private readonly inFlight = new Set<Promise<void>>();
  /** The ids of the deliveries in flight. */
  private readonly sending = new Set<string>();
  /** Attempts made and not yet recorded; and those being recorded (still renewed meanwhile). */
  private finished: Outcome[] = [];
  private recording: Outcome[] = [];
  /** Endpoints that did not answer: how many times in a row, and until when nothing more is sent to them. */
  private readonly pauses = new Map<string, { strikes: number; until: number }>();
  /** Resolves the wait of a round for a request to end. */
  private wake: (() => void) | null = null;
  private renewTimer: NodeJS.Timeout | null = null;
  /** Where the round robin over lanes starts next. */
  private turn = 0;
  /** Outcomes recorded since the dispatcher started. */
  recorded = 0;

  constructor(
    private readonly db: Db,
    private readonly opts: DispatcherOptions,
  ) {
    this.sealer = webhookSealer(opts.secret);
    this.guard = new UrlGuard({ allowHttp: opts.allowHttp, allowPrivate: opts.allowPrivate, resolve: opts.resolve });
    this.clock = opts.clock ?? (() => new Date());
    const concurrency = opts.concurrency ?? DEFAULT_DISPATCHER.concurrency;
    const endpointConcurrency = Math.min(
      concurrency,
      opts.endpointConcurrency ?? DEFAULT_DISPATCHER.endpointConcurrency,
    );
    const timeoutMs = opts.timeoutMs ?? DEFAULT_DISPATCHER.timeoutMs;
    const workspaceConcurrency = Math.min(
      concurrency,
      opts.workspaceConcurrency ?? Math.max(endpointConcurrency, Math.ceil(concurrency / 2)),
    );
    const fastConcurrency = Math.max(
      endpointConcurrency,
      Math.min(workspaceConcurrency, opts.fastConcurrency ?? workspaceConcurrency),
    );
    const batchSize = opts.batchSize ?? DEFAULT_DISPATCHER.batchSize;
    this.o = {
      batchSize,
      concurrency,
      workspaceHold: Math.max(1, opts.workspaceHold ?? batchSize),
      endpointConcurrency,
      fastConcurrency,
      fastMs: opts.fastMs ?? Math.min(1000, Math.floor(timeoutMs / 10)),
      workspaceConcurrency,
      endpointHold: Math.max(fastConcurrency, opts.endpointHold ?? DEFAULT_DISPATCHER.endpointHold),
      pollMs: opts.pollMs ?? DEFAULT_DISPATCHER.pollMs,
      leaseMs: opts.leaseMs ?? DEFAULT_DISPATCHER.leaseMs,
      timeoutMs,
      fanOutBatch: opts.fanOutBatch ?? DEFAULT_DISPATCHER.fanOutBatch,
      retentionMs: opts.retentionMs ?? DEFAULT_DISPATCHER.retentionMs,
    };
    this.sender = new WebhookSender({ timeoutMs: this.o.timeoutMs, maxSocketsPerHost: this.o.concurrency });
  }

  private nowIso(): string {
    return this.clock().toISOString();
  }

  /**
   * Fans a batch of new events out: one PENDING delivery, due now, per enabled endpoint of the event's workspace
   * subscribed to its type, and the events marked dispatched, in one transaction (so an event is fanned out once,
   * or not yet). On PostgreSQL the events are claimed FOR UPDATE SKIP LOCKED: concurrent workers take other events.
   * Returns how many events it took.
   */
  async fanOut(): Promise<number> {
    const now = this.nowIso();
    return this.db.kysely.transaction().execute(async (trx) => {
      const events = await claimUndispatchedEvents(trx, this.o.fanOutBatch, {
        skipLocked: this.db.dialect === 'postgres',
      });
      if (!events.length) return 0;
      const endpoints = await repo.enabledEndpointsOf(trx, [...new Set(events.map((e) => e.workspaceId))]);
      const wants = (endpoint: (typeof endpoints)[number], event: (typeof events)[number]) =>
        endpoint.workspaceId === event.workspaceId && endpoint.eventTypes.includes(event.type);
      // Only the events some endpoint wants are read whole (most have none).
      const wanted = endpoints.length ? events.filter((e) => endpoints.some((endpoint) => wants(endpoint, e))) : [];
      const records = new Map(
        (
          await eventsByIds(
            trx,
            wanted.map((e) => e.id),
          )
        ).map((e) => [e.id, e]),
      );
      const deliveries: repo.NewDelivery[] = [];
      for (const head of wanted) {
        const { workspaceId } = head;
        const event = records.get(head.id)!;
        let payload: string | undefined;
        for (const endpoint of endpoints) {
          if (!wants(endpoint, head)) continue;
          // The exact body, the same on every attempt: { type, timestamp, data } (Standard Webhooks).
          payload ??= JSON.stringify({ type: event.type, timestamp: event.occurredAt, data: event });
          deliveries.push({
            id: newId('whd'),
            workspaceId,
            endpointId: endpoint.id,
            eventId: event.id,
            eventType: event.type,
            payload,
          });
        }
      }
      await repo.insertDeliveries(trx, deliveries, now);
      return events.length;
    });
  }

  private open(sealed: string, endpointId: string): string {
    const key = `${endpointId}:${sealed}`;
    let secret = this.opened.get(key);
    if (secret === undefined) {
      secret = this.sealer.open(sealed, endpointId);
      if (this.opened.size > 10_000) this.opened.clear();
      this.opened.set(key, secret);
    }
    return secret;
  }

  /** Where each endpoint of the batch goes: its URL checked by the guard again, the address pinned, its secrets. */
  private async targets(endpointIds: string[], now: Date): Promise<Map<string, Target>> {
    const rows = await repo.endpointsByIds(this.db.kysely, endpointIds);
    const checks = new Map<string, Promise<{ url: URL; address: ResolvedAddress } | { refused: string }>>();
    const targets = new Map<string, Target>();
    await Promise.all(
      rows.map(async (row) => {
        // One endpoint that cannot be prepared (a secret that does not open, a resolver error) fails its own deliveries
        // (recorded as attempts), never the whole batch of every workspace.
        try {
          const secrets = [this.open(row.secret, row.id)];
          if (
            row.previous_secret &&
            row.previous_secret_until &&
            Date.parse(toIso(row.previous_secret_until)) > now.getTime()
          )
            secrets.push(this.open(row.previous_secret, row.id));
          let check = checks.get(row.url);
          if (!check) {
            check = this.guard.check(row.url).then(
              ({ url, addresses }) => ({ url, address: addresses[0]! }),
              (err: unknown) => ({
                refused:
                  err instanceof UrlRefused
                    ? err.message
                    : `the address could not be checked: ${(err as Error).message ?? String(err)}`,
              }),
            );
            checks.set(row.url, check);
          }
          targets.set(row.id, {
            enabled: Boolean(Number(row.enabled)),
            secrets,
            workspaceId: row.workspace_id,
            ...(await check),
          });
        } catch (err) {
          this.opts.log?.error({ err, endpoint: row.id }, 'a webhook endpoint could not be prepared');
          targets.set(row.id, {
            enabled: Boolean(Number(row.enabled)),
            secrets: [],
            workspaceId: row.workspace_id,
            refused: 'the endpoint could not be prepared (see the server log)',
          });
        }
      }),
    );
    return targets;
  }

  /** Deliveries held: waiting in a lane, in flight, or sent and not yet recorded. */
  get held(): number {
    let n = this.finished.length;
    for (const lane of this.lanes.values()) n += lane.queue.length + lane.inFlight;
    return n;
  }

  /** The ids of what it holds (the leases it renews). */
  private heldIds(): string[] {
    const ids = [...this.sending, ...[...this.finished, ...this.recording].map((o) => o.delivery.id)];
    for (const lane of this.lanes.values()) ids.push(...lane.queue.map((d) => d.id));
    return ids;
  }

  private paused(endpointId: string, now: number): number | null {
    const pause = this.pauses.get(endpointId);
    return pause && pause.until > now ? pause.until : null;
  }

  /** Requests in flight at once to this endpoint: 2, or more while it answers fast. */
  private limit(endpointId: string): number {
    return this.fast.has(endpointId) ? this.o.fastConcurrency : this.o.endpointConcurrency;
  }

  /**
   * Deliveries of this endpoint held at once: a few (twice its limit) unless it answers fast, so that endpoints that
   * hang (or are new) never fill the room of the others.
   */
  private hold(endpointId: string): number {
    return this.fast.has(endpointId) ? this.o.endpointHold : 2 * this.o.endpointConcurrency;
  }

  /**
   * Outcomes are recorded in groups (half a batch: a transaction per outcome would cost more than the requests), or
   * when nothing is in flight, or pollMs after the last time.
   */
  private flushDue(): boolean {
    if (!this.finished.length) return false;
    return (
      this.finished.length >= Math.ceil(this.o.batchSize / 2) ||
      this.running === 0 ||
      performance.now() - this.lastFlush >= this.o.pollMs
    );
  }

  /**
   * Claims when there is room and: nothing is held, pollMs went by (new work of other endpoints is found within it),
   * or a lane that may have more due runs short.
   */
  private claimDue(): boolean {
    if (this.held >= 2 * this.o.batchSize) return false;
    if (!this.lanes.size || performance.now() - this.lastClaim >= this.o.pollMs) return true;
    const now = this.clock().getTime();
    for (const lane of this.lanes.values()) {
      if (lane.more && lane.queue.length < this.limit(lane.endpointId) && this.paused(lane.endpointId, now) === null)
        return true;
    }
    return false;
  }

  /**
   * One round of the dispatcher, which works as a pipeline (CONTEXT.md, "Dispatch"): records the attempts that ended,
   * claims due deliveries for the room it has (round robin over endpoints: no more than hold() of one endpoint held at
   * once), and starts requests in the free slots, taking turns over the endpoints, at most
   * `endpointConcurrency` in flight per endpoint (`fastConcurrency` while it answers fast) and `workspaceConcurrency`
   * to a workspace's endpoints. It does not wait for the requests it starts: a receiver that hangs
   * holds its own slots, never the round. When nothing happened it waits up to `pollMs` for a request to end. Returns
   * how much it did (claims and outcomes), or 1 while it still holds deliveries, so that the job runs again at once;
   * 0 when it is idle.
   */
  async dispatch(): Promise<number> {
    let done = this.flushDue() ? await this.flush() : 0;
    if (this.claimDue()) done += await this.claim();
    this.start();
    if (done === 0 && this.running > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.wake = null;
          resolve();
        }, this.o.pollMs);
        this.wake = () => {
          clearTimeout(timer);
          this.wake = null;
          resolve();
        };
      });
      if (this.flushDue()) done += await this.flush();
      this.start();
    }
    this.syncRenewal();
    return done > 0 ? done : this.held > 0 ? 1 : 0;
  }

  /** Leases are renewed while this dispatcher holds deliveries (they may wait in a lane, or be in flight, for a while). */
  private syncRenewal(): void {
    if (this.held > 0 && !this.renewTimer) {
      this.renewTimer = setInterval(
        () => {
          const leaseUntil = new Date(this.clock().getTime() + this.o.leaseMs).toISOString();
          repo
            .renewWebhookLeases(this.db.kysely, this.opts.workerId, this.heldIds(), leaseUntil)
            .catch((err: unknown) => this.opts.log?.warn({ err }, 'renewing webhook leases failed'));
        },
        Math.max(100, Math.floor(this.o.leaseMs / 3)),
      );
      this.renewTimer.unref();
    } else if (this.held === 0 && this.renewTimer) {
      clearInterval(this.renewTimer);
      this.renewTimer = null;
    }
  }

  /**
   * Claims what fits: up to batchSize, at most 2 × batchSize held, no more than hold() of one endpoint, and no more than
   * workspaceHold of one workspace (and half of this claim), whatever its number of endpoints.
   */
  private async claim(): Promise<number> {
    const held = this.held;
    const limit = Math.min(this.o.batchSize, 2 * this.o.batchSize - held);
    if (limit <= 0) return 0;
    this.lastClaim = performance.now();
    const claimedAt = this.clock();
    const holding = (endpointId: string) => {
      const lane = this.lanes.get(endpointId);
      return lane ? lane.queue.length + lane.inFlight : 0;
    };
    const skip = [...this.lanes.values()]
      .filter((l) => l.queue.length + l.inFlight >= this.hold(l.endpointId))
      .map((l) => l.endpointId);
    const rooms = new Map<string, number>();
    const room = (id: string) => {
      let r = rooms.get(id);
      if (r === undefined) rooms.set(id, (r = this.hold(id) - holding(id)));
      return r;
    };
    const ofWorkspace = new Map<string, number>();
    const count = (workspaceId: string) => ofWorkspace.set(workspaceId, (ofWorkspace.get(workspaceId) ?? 0) + 1);
    for (const lane of this.lanes.values())
      ofWorkspace.set(lane.workspaceId, (ofWorkspace.get(lane.workspaceId) ?? 0) + lane.queue.length + lane.inFlight);
    for (const o of this.finished) count(o.delivery.workspaceId);
    const share = Math.ceil(limit / 2);
    const workspaceRoom = (id: string) => Math.min(share, this.o.workspaceHold - (ofWorkspace.get(id) ?? 0));
    const claimed = await this.db.kysely
      .transaction()
      .execute((trx) =>
        repo.claimWebhookDeliveries(
          trx,
          this.db.dialect,
          this.opts.workerId,
          claimedAt.toISOString(),
          new Date(claimedAt.getTime() + this.o.leaseMs).toISOString(),
          { limit, skipEndpoints: skip, room, workspaceRoom },
        ),
      );
    for (const lane of this.lanes.values()) lane.more = false;
    if (!claimed.length) return 0;
    const taken = new Map<string, number>();
    for (const d of claimed) taken.set(d.endpointId, (taken.get(d.endpointId) ?? 0) + 1);
    const targets = await this.targets([...new Set(claimed.map((d) => d.endpointId))], claimedAt);
    const release = new Map<number, string[]>();
    for (const d of claimed) {
      // An endpoint that did not answer gets nothing until its pause ends: what comes due meanwhile goes back, untried.
      const until = this.paused(d.endpointId, claimedAt.getTime());
      if (until !== null) {
        release.set(until, [...(release.get(until) ?? []), d.id]);
        continue;
      }
      let lane = this.lanes.get(d.endpointId);
      if (!lane)
        this.lanes.set(
          d.endpointId,
          (lane = {
            endpointId: d.endpointId,
            workspaceId: d.workspaceId,
            target: undefined,
            queue: [],
            inFlight: 0,
            more: false,
          }),
        );
      lane.target = targets.get(d.endpointId);
      lane.more = taken.get(d.endpointId)! >= room(d.endpointId);
      lane.queue.push(d);
    }
    for (const [until, ids] of release) await this.release(ids, until);
    return claimed.length;
  }

  /** Gives claimed deliveries back untried (no attempt counted), due at `until`. */
  private async release(ids: string[], until: number): Promise<void> {
    if (!ids.length) return;
    await repo.releaseDeliveries(this.db.kysely, this.opts.workerId, ids, new Date(until).toISOString(), this.nowIso());
  }

  /** Starts requests in the free slots, one lane at a time in turn, within the per-endpoint and per-workspace limits. */
  private start(): void {
    const now = this.clock().getTime();
    const lanes = [...this.lanes.values()].filter((lane) => this.paused(lane.endpointId, now) === null);
    if (!lanes.length) return;
    const first = this.turn++ % lanes.length;
    const order = [...lanes.slice(first), ...lanes.slice(0, first)];
    for (let started = true; started && this.running < this.o.concurrency;) {
      started = false;
      for (const lane of order) {
        if (this.running >= this.o.concurrency) break;
        if (!lane.queue.length || lane.inFlight >= this.limit(lane.endpointId)) continue;
        if ((this.workspaceRunning.get(lane.workspaceId) ?? 0) >= this.o.workspaceConcurrency) continue;
        this.launch(lane, lane.queue.shift()!);
        started = true;
      }
    }
  }

  private launch(lane: Lane, delivery: repo.ClaimedWebhookDelivery): void {
    this.running++;
    lane.inFlight++;
    this.sending.add(delivery.id);
    this.workspaceRunning.set(lane.workspaceId, (this.workspaceRunning.get(lane.workspaceId) ?? 0) + 1);
    const target = lane.target;
    const reachable = Boolean(target?.enabled && target.url && target.address && target.refused === undefined);
    const request: Promise<void> = this.attempt(delivery, target)
      .catch((err: unknown) => ({
        delivery,
        attempt: null,
        result: {
          statusCode: null,
          durationMs: 0,
          error: `not sent: ${(err as Error).message ?? String(err)}`,
          ok: false,
        },
      }))
      .then((outcome) => {
        if (reachable && outcome.attempt) {
          // Known at once, so that nothing more of the lane starts before the round records it.
          if (outcome.result.statusCode === null) {
            this.fast.delete(lane.endpointId);
            this.strike(lane.endpointId);
          } else {
            this.pauses.delete(lane.endpointId);
            if (outcome.result.durationMs <= this.o.fastMs) this.remember(this.fast, lane.endpointId);
            else this.fast.delete(lane.endpointId);
          }
        }
        this.finished.push(outcome);
        this.sending.delete(delivery.id);
        this.running--;
        lane.inFlight--;
        const n = (this.workspaceRunning.get(lane.workspaceId) ?? 1) - 1;
        if (n > 0) this.workspaceRunning.set(lane.workspaceId, n);
        else this.workspaceRunning.delete(lane.workspaceId);
        this.inFlight.delete(request);
        this.wake?.();
      });
    this.inFlight.add(request);
  }

  /**
   * An endpoint that did not answer (a timeout, a refused connection) is paused: nothing more is sent to it until the
   * pause ends, which grows as the retry schedule does (5 s, 5 min, 30 min, 2 h, 5 h, 10 h) while it keeps not
   * answering; requests of it that were in flight together count once. Any answer ends the pause.
   */
  /** Adds to a bounded set (the oldest entry goes first). */
  private remember(set: Set<string>, id: string): void {
    if (set.has(id)) return;
    if (set.size >= MAX_PAUSES) set.delete(set.values().next().value!);
    set.add(id);
  }

  private strike(endpointId: string): void {
    const now = this.clock().getTime();
    const pause = this.pauses.get(endpointId);
    if (pause && pause.until > now) return;
    const strikes = (pause?.strikes ?? 0) + 1;
    this.pauses.delete(endpointId);
    if (this.pauses.size >= MAX_PAUSES) this.pauses.delete(this.pauses.keys().next().value!);
    this.pauses.set(endpointId, {
      strikes,
      until: now + RETRY_DELAYS_MS[Math.min(strikes, RETRY_DELAYS_MS.length) - 1]!,
    });
  }

  /** Records the attempts that ended, in one transaction; what a paused (or disabled) endpoint held goes back, untried. */
  private async flush(): Promise<number> {
    if (!this.finished.length) return 0;
    this.lastFlush = performance.now();
    const outcomes = this.finished;
    this.finished = [];
    this.recording = outcomes;
    const now = this.clock().getTime();
    let disabled: Set<string>;
    try {
      let recorded: number;
      ({ recorded, disabled } = await this.record(this.opts.workerId, outcomes));
      this.recorded += recorded;
    } catch (err) {
      // Kept, under the lease (still renewed), for the next rounds to record; after 3 failures in a row they are let go:
      // no longer renewed, their leases run out and they are claimed and sent again (at least once).
      if (++this.flushFailures < 3) this.finished.unshift(...outcomes);
      else this.flushFailures = 0;
      throw err;
    } finally {
      this.recording = [];
    }
    this.flushFailures = 0;
    for (const lane of [...this.lanes.values()]) {
      // Disabled: what it held goes back, due now, to be claimed again and failed as the endpoint's state says.
      const until = disabled.has(lane.endpointId) ? now : this.paused(lane.endpointId, now);
      if (until !== null && lane.queue.length)
        await this.release(
          lane.queue.splice(0).map((d) => d.id),
          until,
        );
      // No longer fast: what it holds beyond a slow endpoint's hold goes back, due now, for the others to have the room.
      const excess = Math.min(lane.queue.length, lane.queue.length + lane.inFlight - this.hold(lane.endpointId));
      if (excess > 0)
        await this.release(
          lane.queue.splice(lane.queue.length - excess).map((d) => d.id),
          now,
        );
      if (!lane.queue.length && !lane.inFlight) this.lanes.delete(lane.endpointId);
    }
    return outcomes.length;
  }

  private async attempt(delivery: repo.ClaimedWebhookDelivery, target: Target | undefined) {
    const attemptedAt = this.clock();
    const record = (result: AttemptResult) => ({
      delivery,
      result,
      attempt: {
        deliveryId: delivery.id,
        workspaceId: delivery.workspaceId,
        attemptedAt: attemptedAt.toISOString(),
        statusCode: result.statusCode,
        durationMs: result.durationMs,
        error: result.error,
      },
    });
    // Disabled (or deleted) since the claim: nothing is sent, and no attempt is logged.
    if (!target?.enabled)
      return {
        delivery,
        attempt: null,
        result: { statusCode: null, durationMs: 0, error: 'the endpoint is disabled', ok: false },
      };
    if (target.refused !== undefined || !target.url || !target.address)
      return record({ statusCode: null, durationMs: 0, error: `refused: ${target.refused}`, ok: false });
    const timestamp = Math.floor(attemptedAt.getTime() / 1000);
    const result = await this.sender.send({
      url: target.url,
      address: target.address,
      body: delivery.payload,
      headers: {
        'webhook-id': delivery.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(target.secrets, delivery.id, timestamp, delivery.payload),
      },
    });
    return record(result);
  }

  /** Records a round's attempts and outcomes in one transaction; returns how many, and the endpoints it disabled. */
  private async record(owner: string, results: Outcome[]): Promise<{ recorded: number; disabled: Set<string> }> {
    const now = this.clock();
    const nowIso = now.toISOString();
    const succeededEndpoints = new Set(results.filter((r) => r.result.ok).map((r) => r.delivery.endpointId));
    const disabled = new Set<string>();
    await this.db.kysely.transaction().execute(async (trx) => {
      // Deliveries deleted meanwhile (their endpoint deleted, or pruned) have nothing to record; the others are locked
      // (PostgreSQL), so that a deletion waits for this transaction instead of failing it.
      const live = new Set(
        await repo.lockDeliveries(
          trx,
          this.db.dialect,
          results.map((r) => r.delivery.id),
        ),
      );
      results = results.filter((r) => live.has(r.delivery.id));
      await repo.insertAttempts(
        trx,
        results.flatMap((r) => (r.attempt ? [r.attempt] : [])),
      );
      await repo.recordSuccesses(
        trx,
        owner,
        results.filter((r) => r.result.ok).map((r) => r.attempt!),
        nowIso,
      );
      // Any success in the batch: the endpoint answers, it is not failing.
      await repo.clearFailing(trx, [...succeededEndpoints]);
      for (const { delivery, attempt, result } of results) {
        if (result.ok) continue;
        const failed = attempt ?? {
          deliveryId: delivery.id,
          workspaceId: delivery.workspaceId,
          attemptedAt: nowIso,
          statusCode: null,
          durationMs: 0,
          error: result.error,
        };
        let delay = attempt ? nextAttemptDelay(delivery.attempts) : null;
        if (attempt && !succeededEndpoints.has(delivery.endpointId) && !disabled.has(delivery.endpointId)) {
          const since = await repo.markFailing(trx, delivery.endpointId, nowIso);
          if (since && Date.parse(since) <= now.getTime() - DISABLE_AFTER_MS) {
            const reason = `disabled on ${nowIso}: every delivery has failed since ${since} (last error: ${(result.error ?? '').slice(0, 200)})`;
            await repo.disableEndpoint(trx, delivery.workspaceId, delivery.endpointId, reason, nowIso);
            this.opts.log?.warn(
              { endpoint: delivery.endpointId, workspace: delivery.workspaceId, failingSince: since },
              'a webhook endpoint failing for 5 days was disabled',
            );
            disabled.add(delivery.endpointId);
          }
        }
        if (disabled.has(delivery.endpointId)) delay = null;
        const nextAt = delay === null ? null : new Date(now.getTime() + delay).toISOString();
        await repo.recordFailure(trx, owner, failed, nextAt, nowIso);
      }
    });
    return { recorded: results.length, disabled };
  }

  /** Deletes deliveries older than the retention (30 days), a batch per call; returns how many. */
  async prune(): Promise<number> {
    return repo.pruneDeliveries(
      this.db.kysely,
      new Date(this.clock().getTime() - this.o.retentionMs).toISOString(),
      PRUNE_BATCH,
    );
  }

  /**
   * Stops: what waits in a lane goes back (due now, untried), the requests in flight end (within the timeout) and are
   * recorded, and the connections are closed. Call it once the job that runs dispatch() has stopped.
   */
  async close(): Promise<void> {
    try {
      const waiting = [...this.lanes.values()].flatMap((lane) => lane.queue.splice(0).map((d) => d.id));
      await this.release(waiting, this.clock().getTime());
      await Promise.all([...this.inFlight]);
      await this.flush();
    } finally {
      if (this.renewTimer) clearInterval(this.renewTimer);
      this.renewTimer = null;
      this.sender.close();
    }
  }
}
