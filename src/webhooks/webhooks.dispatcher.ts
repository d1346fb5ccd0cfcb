import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/connection.js';
import { claimUndispatchedEvents, eventsByIds } from '../events/events.repository.js';
import { newId } from '../lib/ids.js';
import type { Sealer } from '../lib/seal.js';
import { toIso } from '../lib/time.js';
import { UrlGuard, UrlRefused, type ResolvedAddress, type Resolver } from './webhooks.guard.js';
import * as repo from './webhooks.repository.js';
import { WebhookSender, signatureHeader, type AttemptResult } from './webhooks.sender.js';
import { webhookSealer } from './webhooks.service.js';
import { DISABLE_AFTER_MS, nextAttemptDelay } from './webhooks.state.js';

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
  leaseMs?: number;
  /** The whole exchange of one attempt. */
  timeoutMs?: number;
  /** Events fanned out per transaction. */
  fanOutBatch?: number;
  /** Deliveries kept this long (then pruned, in batches). */
  retentionMs?: number;
  log?: FastifyBaseLogger;
}

export const DEFAULT_DISPATCHER = { batchSize: 200, concurrency: 16, leaseMs: 60_000, timeoutMs: 15_000, fanOutBatch: 500, retentionMs: 30 * 86_400_000 };

const PRUNE_BATCH = 1000;
/** When the deliveries of an endpoint that did not answer come back (its first one follows the retry schedule). */
const RELEASE_DELAY_MS = 5_000;

interface Target {
  enabled: boolean;
  url?: URL;
  address?: ResolvedAddress;
  refused?: string;
  secrets: string[];
  workspaceId: string;
}

/**
 * The webhook half of the worker (CONTEXT.md): `fanOut` turns new events into one delivery per subscribed endpoint,
 * `dispatch` sends a claimed batch of due deliveries and records each outcome, `prune` forgets old deliveries.
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

  constructor(private readonly db: Db, private readonly opts: DispatcherOptions) {
    this.sealer = webhookSealer(opts.secret);
    this.guard = new UrlGuard({ allowHttp: opts.allowHttp, allowPrivate: opts.allowPrivate, resolve: opts.resolve });
    this.clock = opts.clock ?? (() => new Date());
    this.o = {
      batchSize: opts.batchSize ?? DEFAULT_DISPATCHER.batchSize, concurrency: opts.concurrency ?? DEFAULT_DISPATCHER.concurrency,
      leaseMs: opts.leaseMs ?? DEFAULT_DISPATCHER.leaseMs, timeoutMs: opts.timeoutMs ?? DEFAULT_DISPATCHER.timeoutMs,
      fanOutBatch: opts.fanOutBatch ?? DEFAULT_DISPATCHER.fanOutBatch, retentionMs: opts.retentionMs ?? DEFAULT_DISPATCHER.retentionMs,
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
      const events = await claimUndispatchedEvents(trx, this.o.fanOutBatch, { skipLocked: this.db.dialect === 'postgres' });
      if (!events.length) return 0;
      const endpoints = await repo.enabledEndpointsOf(trx, [...new Set(events.map((e) => e.workspaceId))]);
      const wants = (endpoint: (typeof endpoints)[number], event: (typeof events)[number]) => endpoint.workspaceId === event.workspaceId && endpoint.eventTypes.includes(event.type);
      // Only the events some endpoint wants are read whole (most have none).
      const wanted = endpoints.length ? events.filter((e) => endpoints.some((endpoint) => wants(endpoint, e))) : [];
      const records = new Map((await eventsByIds(trx, wanted.map((e) => e.id))).map((e) => [e.id, e]));
      const deliveries: repo.NewDelivery[] = [];
      for (const head of wanted) {
        const { workspaceId } = head;
        const event = records.get(head.id)!;
        let payload: string | undefined;
        for (const endpoint of endpoints) {
          if (!wants(endpoint, head)) continue;
          // The exact body, the same on every attempt: { type, timestamp, data } (Standard Webhooks).
          payload ??= JSON.stringify({ type: event.type, timestamp: event.occurredAt, data: event });
          deliveries.push({ id: newId('whd'), workspaceId, endpointId: endpoint.id, eventId: event.id, eventType: event.type, payload });
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
    await Promise.all(rows.map(async (row) => {
      // One endpoint that cannot be prepared (a secret that does not open, a resolver error) fails its own deliveries
      // (recorded as attempts), never the whole batch of every workspace.
      try {
        const secrets = [this.open(row.secret, row.id)];
        if (row.previous_secret && row.previous_secret_until && Date.parse(toIso(row.previous_secret_until)) > now.getTime()) secrets.push(this.open(row.previous_secret, row.id));
        let check = checks.get(row.url);
        if (!check) {
          check = this.guard.check(row.url).then(({ url, addresses }) => ({ url, address: addresses[0]! }), (err: unknown) => ({
            refused: err instanceof UrlRefused ? err.message : `the address could not be checked: ${(err as Error).message ?? String(err)}`,
          }));
          checks.set(row.url, check);
        }
        targets.set(row.id, { enabled: Boolean(Number(row.enabled)), secrets, workspaceId: row.workspace_id, ...(await check) });
      } catch (err) {
        this.opts.log?.error({ err, endpoint: row.id }, 'a webhook endpoint could not be prepared');
        targets.set(row.id, { enabled: Boolean(Number(row.enabled)), secrets: [], workspaceId: row.workspace_id, refused: 'the endpoint could not be prepared (see the server log)' });
      }
    }));
    return targets;
  }

  /**
   * One round: claims up to batchSize due deliveries (with a lease, renewed while the batch is sent), POSTs them,
   * `concurrency` at a time, and records every attempt and outcome. Returns how many it claimed.
   */
  async dispatch(): Promise<number> {
    const owner = this.opts.workerId;
    const claimedAt = this.clock();
    const leaseUntil = () => new Date(this.clock().getTime() + this.o.leaseMs).toISOString();
    const claimed = await repo.claimWebhookDeliveries(this.db.kysely, this.db.dialect, owner, claimedAt.toISOString(), leaseUntil(), this.o.batchSize);
    if (!claimed.length) return 0;
    const renew = setInterval(() => {
      repo.renewWebhookLeases(this.db.kysely, owner, leaseUntil()).catch((err: unknown) => this.opts.log?.warn({ err }, 'renewing webhook leases failed'));
    }, Math.max(100, Math.floor(this.o.leaseMs / 3)));
    try {
      const targets = await this.targets([...new Set(claimed.map((d) => d.endpointId))], claimedAt);
      const results: { delivery: repo.ClaimedWebhookDelivery; attempt: repo.AttemptRecord | null; result: AttemptResult }[] = [];
      // One lane per endpoint, all sharing `concurrency` slots; with several endpoints in the batch, none takes more than
      // half of them. An endpoint that did not answer an attempt (timeout, connection refused) gets no more attempts in
      // this batch: its other deliveries are released (PENDING, due in RELEASE_DELAY_MS, no attempt counted), so one
      // dead endpoint costs the batch one timeout, not one per delivery.
      const queues = new Map<string, repo.ClaimedWebhookDelivery[]>();
      for (const d of claimed) {
        const queue = queues.get(d.endpointId);
        if (queue) queue.push(d);
        else queues.set(d.endpointId, [d]);
      }
      const perEndpoint = queues.size > 1 ? Math.max(1, Math.ceil(this.o.concurrency / 2)) : this.o.concurrency;
      const unresponsive = new Set<string>();
      const released: string[] = [];
      let free = this.o.concurrency;
      const waiting: (() => void)[] = [];
      const acquire = async () => {
        while (free === 0) await new Promise<void>((resolve) => waiting.push(resolve));
        free--;
      };
      const releaseSlot = () => {
        free++;
        waiting.shift()?.();
      };
      const lane = async (endpointId: string, queue: repo.ClaimedWebhookDelivery[]) => {
        const target = targets.get(endpointId);
        const reachable = Boolean(target?.enabled && target.url && target.address && target.refused === undefined);
        for (let delivery = queue.shift(); delivery; delivery = queue.shift()) {
          if (unresponsive.has(endpointId)) {
            released.push(delivery.id);
            continue;
          }
          await acquire();
          try {
            if (unresponsive.has(endpointId)) {
              released.push(delivery.id);
              continue;
            }
            const outcome = await this.attempt(delivery, target);
            results.push(outcome);
            if (reachable && outcome.result.statusCode === null) unresponsive.add(endpointId);
          } finally {
            releaseSlot();
          }
        }
      };
      await Promise.all([...queues].flatMap(([endpointId, queue]) => Array.from({ length: Math.min(perEndpoint, queue.length) }, () => lane(endpointId, queue))));
      await this.record(owner, results);
      if (released.length) {
        const now = this.clock();
        await repo.releaseDeliveries(this.db.kysely, owner, released, new Date(now.getTime() + RELEASE_DELAY_MS).toISOString(), now.toISOString());
      }
    } finally {
      clearInterval(renew);
    }
    return claimed.length;
  }

  private async attempt(delivery: repo.ClaimedWebhookDelivery, target: Target | undefined) {
    const attemptedAt = this.clock();
    const record = (result: AttemptResult) => ({
      delivery, result,
      attempt: { deliveryId: delivery.id, workspaceId: delivery.workspaceId, attemptedAt: attemptedAt.toISOString(), statusCode: result.statusCode, durationMs: result.durationMs, error: result.error },
    });
    // Disabled (or deleted) since the claim: nothing is sent, and no attempt is logged.
    if (!target?.enabled) return { delivery, attempt: null, result: { statusCode: null, durationMs: 0, error: 'the endpoint is disabled', ok: false } };
    if (target.refused !== undefined || !target.url || !target.address) return record({ statusCode: null, durationMs: 0, error: `refused: ${target.refused}`, ok: false });
    const timestamp = Math.floor(attemptedAt.getTime() / 1000);
    const result = await this.sender.send({
      url: target.url, address: target.address, body: delivery.payload,
      headers: { 'webhook-id': delivery.id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatureHeader(target.secrets, delivery.id, timestamp, delivery.payload) },
    });
    return record(result);
  }

  /** Records a batch's attempts and outcomes in one transaction. */
  private async record(owner: string, results: { delivery: repo.ClaimedWebhookDelivery; attempt: repo.AttemptRecord | null; result: AttemptResult }[]): Promise<void> {
    const now = this.clock();
    const nowIso = now.toISOString();
    const succeededEndpoints = new Set(results.filter((r) => r.result.ok).map((r) => r.delivery.endpointId));
    await this.db.kysely.transaction().execute(async (trx) => {
      await repo.insertAttempts(trx, results.flatMap((r) => (r.attempt ? [r.attempt] : [])));
      await repo.recordSuccesses(trx, owner, results.filter((r) => r.result.ok).map((r) => r.attempt!), nowIso);
      // Any success in the batch: the endpoint answers, it is not failing.
      await repo.clearFailing(trx, [...succeededEndpoints]);
      const disabled = new Set<string>();
      for (const { delivery, attempt, result } of results) {
        if (result.ok) continue;
        const failed = attempt ?? { deliveryId: delivery.id, workspaceId: delivery.workspaceId, attemptedAt: nowIso, statusCode: null, durationMs: 0, error: result.error };
        let delay = attempt ? nextAttemptDelay(delivery.attempts) : null;
        if (attempt && !succeededEndpoints.has(delivery.endpointId) && !disabled.has(delivery.endpointId)) {
          const since = await repo.markFailing(trx, delivery.endpointId, nowIso);
          if (since && Date.parse(since) <= now.getTime() - DISABLE_AFTER_MS) {
            const reason = `disabled on ${nowIso}: every delivery has failed since ${since} (last error: ${(result.error ?? '').slice(0, 200)})`;
            await repo.disableEndpoint(trx, delivery.workspaceId, delivery.endpointId, reason, nowIso);
            this.opts.log?.warn({ endpoint: delivery.endpointId, workspace: delivery.workspaceId, failingSince: since }, 'a webhook endpoint failing for 5 days was disabled');
            disabled.add(delivery.endpointId);
          }
        }
        if (disabled.has(delivery.endpointId)) delay = null;
        const nextAt = delay === null ? null : new Date(now.getTime() + delay).toISOString();
        await repo.recordFailure(trx, owner, failed, nextAt, nowIso);
      }
    });
  }

  /** Deletes deliveries older than the retention (30 days), a batch per call; returns how many. */
  async prune(): Promise<number> {
    return repo.pruneDeliveries(this.db.kysely, new Date(this.clock().getTime() - this.o.retentionMs).toISOString(), PRUNE_BATCH);
  }

  close(): void {
    this.sender.close();
  }
}
