import type { Db, Executor } from '../../db/connection.js';
import type { WebhookDeliveryStatus } from '../../db/schema.js';
import { conflict, notFound, validationFailed } from '../../errors/errors.js';
import { SYSTEM_ACTOR, changesOf, recordAudit, type AuditActor, type EventType } from '../../outbox/index.js';
import { newId } from '../../lib/ids.js';
import { sealer, type Sealer } from '../../lib/seal.js';
import { toIso } from '../../lib/time.js';
import { UrlGuard, UrlRefused, type Resolver } from './webhooks.guard.js';
import * as repo from './webhooks.repository.js';
import type { CreateWebhookInput, UpdateWebhookInput, Webhook, WebhookWithSecret } from './webhooks.schemas.js';
import { newSecret } from './webhooks.sender.js';
import { webhookTransition } from './webhooks.state.js';

export interface WebhooksOptions {
  /** The server secret: endpoint secrets are sealed with a key derived from it (lib/seal.ts). */
  secret: Buffer;
  /** WEBHOOKS_ALLOW_HTTP: http:// URLs too. */
  allowHttp: boolean;
  /** WEBHOOKS_ALLOW_PRIVATE: hosts on private, loopback, link-local… addresses too. */
  allowPrivate: boolean;
  /** DNS, for the SSRF guard (tests inject one). */
  resolve?: Resolver;
  /** The clock (tests control it). */
  now?: () => Date;
}

/** How long a rotated-out secret keeps signing alongside the new one. */
export const PREVIOUS_SECRET_MS = 24 * 3_600_000;

/** The sealing purpose of endpoint secrets (the dispatcher opens them with the same). */
export const SECRET_PURPOSE = 'webhook endpoint secret';

export function webhookSealer(secret: Buffer): Sealer {
  return sealer(secret, SECRET_PURPOSE);
}

/** Why an endpoint disabled through the API is disabled. */
export const DISABLED_BY_HAND = 'disabled through the API';

/**
 * Webhook endpoints and their delivery log (docs/webhooks.md, CONTEXT.md): the rules of the API. The URL passes
 * the SSRF guard whenever it is set; the secret is stored sealed, shown once, in the answer that made it (creation,
 * rotation: write:webhooks), and opened otherwise only to sign (the dispatcher). Reading an endpoint never shows it:
 * whoever has the secret can forge deliveries to the receiver (issue 29, a departure from contract §13's "GET").
 */
export class WebhooksService {
  private readonly sealer: Sealer;
  private readonly guard: UrlGuard;
  private readonly now: () => Date;

  constructor(
    private readonly db: Db,
    opts: WebhooksOptions,
  ) {
    this.sealer = webhookSealer(opts.secret);
    this.guard = new UrlGuard({ allowHttp: opts.allowHttp, allowPrivate: opts.allowPrivate, resolve: opts.resolve });
    this.now = opts.now ?? (() => new Date());
  }

  /** An endpoint as GET, list and PUT show it: without its secret. */
  private present(row: repo.EndpointRow): Webhook {
    return {
      id: row.id,
      url: row.url,
      eventTypes: JSON.parse(row.event_types) as EventType[],
      description: row.description,
      enabled: Boolean(Number(row.enabled)),
      disabledReason: row.disabled_reason,
      createdAt: toIso(row.created_at),
      updatedAt: toIso(row.updated_at),
    };
  }

  private async checkUrl(url: string): Promise<void> {
    try {
      await this.guard.check(url);
    } catch (err) {
      if (err instanceof UrlRefused) throw validationFailed([{ path: '/url', message: err.message }]);
      throw err;
    }
  }

  private async row(workspaceId: string, id: string): Promise<repo.EndpointRow> {
    const row = await repo.getEndpoint(this.db.kysely, workspaceId, id);
    if (!row) throw notFound('webhook');
    return row;
  }

  /** A new endpoint, with its secret: the only answer but a rotation's that shows it. */
  async create(
    workspaceId: string,
    input: CreateWebhookInput,
    actor: AuditActor = SYSTEM_ACTOR,
  ): Promise<WebhookWithSecret> {
    await this.checkUrl(input.url);
    const id = newId('wh');
    const now = this.now().toISOString();
    const secret = newSecret();
    await this.db.kysely.transaction().execute(async (trx) => {
      await repo.insertEndpoint(trx, {
        id,
        workspace_id: workspaceId,
        url: input.url,
        event_types: JSON.stringify(input.eventTypes),
        description: input.description ?? null,
        enabled: 1,
        disabled_reason: null,
        secret: this.sealer.seal(secret, id),
        previous_secret: null,
        previous_secret_until: null,
        failing_since: null,
        created_at: now,
        updated_at: now,
      });
      await recordAudit(trx, workspaceId, actor, {
        action: 'webhook.created',
        target: { type: 'webhook', id, label: input.url },
        changes: {
          url: { before: null, after: input.url },
          eventTypes: { before: null, after: input.eventTypes },
          ...(input.description ? { description: { before: null, after: input.description } } : {}),
          secret: { secret: true },
        },
      });
    });
    return { ...(await this.get(workspaceId, id)), secret };
  }

  /**
   * The endpoint an automation's `webhook` step posts to (docs/automations.md), in the caller's transaction: the
   * workspace's endpoint of that exact URL if there is one (its secret signs), or a new one subscribed to no event
   * type, which GET /v1/webhooks lists with its delivery log and its retries like any other (its secret is shown to
   * no one until someone who manages webhooks rotates it). Check the
   * URL with checkStepUrl first (outside the transaction: it resolves the host); the dispatcher checks it again at
   * every delivery.
   */
  async stepEndpoint(trx: Executor, workspaceId: string, url: string, description: string): Promise<string> {
    const existing = await repo.endpointByUrl(trx, workspaceId, url);
    if (existing) return existing;
    const id = newId('wh');
    const now = this.now().toISOString();
    await repo.insertEndpoint(trx, {
      id,
      workspace_id: workspaceId,
      url,
      event_types: '[]',
      description: description.slice(0, 500),
      enabled: 1,
      disabled_reason: null,
      secret: this.sealer.seal(newSecret(), id),
      previous_secret: null,
      previous_secret_until: null,
      failing_since: null,
      created_at: now,
      updated_at: now,
    });
    return id;
  }

  /** The SSRF guard on an automation webhook step's URL (422 validation_failed at `path`). */
  async checkStepUrl(url: string, path: string): Promise<void> {
    try {
      await this.guard.check(url);
    } catch (err) {
      if (err instanceof UrlRefused) throw validationFailed([{ path, message: err.message }]);
      throw err;
    }
  }

  /** Whether the workspace still has the endpoint (an automation's webhook step checks before it queues). */
  async endpointExists(trx: Executor, workspaceId: string, endpointId: string): Promise<boolean> {
    return (await repo.getEndpoint(trx, workspaceId, endpointId)) !== undefined;
  }

  /** A signed POST of an automation's `webhook` step: a delivery of the endpoint, due now, in the caller's transaction. */
  async queueStepDelivery(
    trx: Executor,
    workspaceId: string,
    endpointId: string,
    body: { type: string; timestamp: string; data: unknown },
    now: string,
  ): Promise<string> {
    const id = newId('whd');
    await repo.insertDeliveries(
      trx,
      [{ id, workspaceId, endpointId, eventId: null, eventType: body.type, payload: JSON.stringify(body) }],
      now,
    );
    return id;
  }

  async get(workspaceId: string, id: string): Promise<Webhook> {
    return this.present(await this.row(workspaceId, id));
  }

  async list(workspaceId: string, opts: { limit: number; beforeId?: string }): Promise<Webhook[]> {
    return (await repo.listEndpoints(this.db.kysely, workspaceId, opts)).map((r) => this.present(r));
  }

  /**
   * PUT (partial). Disabling fails the deliveries waiting for the endpoint; enabling it again clears its
   * disabledReason and forgets its failures (the 5-day count starts over).
   */
  async update(
    workspaceId: string,
    id: string,
    input: UpdateWebhookInput,
    actor: AuditActor = SYSTEM_ACTOR,
  ): Promise<Webhook> {
    if (input.id !== undefined && input.id !== id)
      throw validationFailed([{ path: '/id', message: 'must equal the webhook id in the path' }]);
    const current = await this.row(workspaceId, id);
    if (input.url !== undefined) await this.checkUrl(input.url);
    const now = this.now().toISOString();
    const set: Parameters<typeof repo.updateEndpoint>[3] = { updated_at: now };
    if (input.url !== undefined) set.url = input.url;
    if (input.eventTypes !== undefined) set.event_types = JSON.stringify(input.eventTypes);
    if (input.description !== undefined) set.description = input.description;
    const wasEnabled = Boolean(Number(current.enabled));
    if (input.enabled === true && !wasEnabled)
      Object.assign(set, { enabled: 1, disabled_reason: null, failing_since: null });
    const row = await this.db.kysely.transaction().execute(async (trx) => {
      let updated = await repo.updateEndpoint(trx, workspaceId, id, set);
      if (updated && input.enabled === false && wasEnabled) {
        await repo.disableEndpoint(trx, workspaceId, id, DISABLED_BY_HAND, now);
        updated = await repo.getEndpoint(trx, workspaceId, id);
      }
      if (!updated) return updated;
      const fields = ['url', 'eventTypes', 'description', 'enabled'] as const;
      const changes = changesOf(this.present(current), this.present(updated), [...fields]);
      if (changes)
        await recordAudit(trx, workspaceId, actor, {
          action: 'webhook.updated',
          target: { type: 'webhook', id, label: updated.url },
          changes,
        });
      return updated;
    });
    if (!row) throw notFound('webhook');
    return this.present(row);
  }

  async remove(workspaceId: string, id: string, actor: AuditActor = SYSTEM_ACTOR): Promise<void> {
    await this.db.kysely.transaction().execute(async (trx) => {
      const current = await repo.getEndpoint(trx, workspaceId, id);
      if (!current || !(await repo.deleteEndpoint(trx, workspaceId, id))) throw notFound('webhook');
      await recordAudit(trx, workspaceId, actor, {
        action: 'webhook.deleted',
        target: { type: 'webhook', id, label: current.url },
        changes: null,
      });
    });
  }

  /**
   * A new secret, shown in this answer only; the previous one keeps signing alongside it for 24 hours (two signatures
   * per request). Also how a lost secret is replaced.
   */
  async rotateSecret(workspaceId: string, id: string, actor: AuditActor = SYSTEM_ACTOR): Promise<WebhookWithSecret> {
    const current = await this.row(workspaceId, id);
    const now = this.now();
    const secret = newSecret();
    const row = await this.db.kysely.transaction().execute(async (trx) => {
      const row = await repo.updateEndpoint(trx, workspaceId, id, {
        secret: this.sealer.seal(secret, id),
        previous_secret: current.secret,
        previous_secret_until: new Date(now.getTime() + PREVIOUS_SECRET_MS).toISOString(),
        updated_at: now.toISOString(),
      });
      if (row)
        await recordAudit(trx, workspaceId, actor, {
          action: 'webhook.secret_rotated',
          target: { type: 'webhook', id, label: row.url },
          changes: { secret: { secret: true } },
        });
      return row;
    });
    if (!row) throw notFound('webhook');
    return { ...this.present(row), secret };
  }

  /** Queues a `webhook.test` event for the endpoint alone (not in the event stream); the delivery, PENDING. */
  async sendTest(workspaceId: string, id: string): Promise<repo.WebhookDeliveryRecord> {
    const endpoint = await this.row(workspaceId, id);
    if (!Number(endpoint.enabled))
      throw conflict('invalid_state', 'the endpoint is disabled; enable it first (PUT with enabled: true)');
    const now = this.now().toISOString();
    const deliveryId = newId('whd');
    const data = {
      id: newId('evt'),
      type: 'webhook.test',
      occurredAt: now,
      contactId: null,
      broadcastId: null,
      deliveryId: null,
      data: { webhookId: id },
    };
    await repo.insertDeliveries(
      this.db.kysely,
      [
        {
          id: deliveryId,
          workspaceId,
          endpointId: id,
          eventId: null,
          eventType: 'webhook.test',
          payload: JSON.stringify({ type: 'webhook.test', timestamp: now, data }),
        },
      ],
      now,
    );
    return (await repo.getDelivery(this.db.kysely, workspaceId, id, deliveryId))!;
  }

  async listDeliveries(
    workspaceId: string,
    id: string,
    opts: { status?: WebhookDeliveryStatus; limit: number; beforeId?: string },
  ): Promise<repo.WebhookDeliveryRecord[]> {
    await this.row(workspaceId, id);
    return repo.listDeliveries(this.db.kysely, workspaceId, id, opts);
  }

  async getDelivery(workspaceId: string, id: string, deliveryId: string): Promise<repo.WebhookDeliveryRecord> {
    const delivery = await repo.getDelivery(this.db.kysely, workspaceId, id, deliveryId);
    if (!delivery) throw notFound('webhook delivery');
    return delivery;
  }

  /** Sends a finished (SUCCEEDED or FAILED) delivery again, due now, with the same webhook-id; 409 while it waits or is being sent. */
  async retryDelivery(workspaceId: string, id: string, deliveryId: string): Promise<repo.WebhookDeliveryRecord> {
    const endpoint = await this.row(workspaceId, id);
    const status = await repo.deliveryStatus(this.db.kysely, workspaceId, id, deliveryId);
    if (!status) throw notFound('webhook delivery');
    webhookTransition(status, 'resend');
    if (!Number(endpoint.enabled))
      throw conflict('invalid_state', 'the endpoint is disabled; enable it first (PUT with enabled: true)');
    if (!(await repo.resendDelivery(this.db.kysely, workspaceId, id, deliveryId, this.now().toISOString()))) {
      // It moved meanwhile (a dispatcher claimed it): say so from its new status.
      webhookTransition(
        (await repo.deliveryStatus(this.db.kysely, workspaceId, id, deliveryId)) ?? 'PENDING',
        'resend',
      );
    }
    return this.getDelivery(workspaceId, id, deliveryId);
  }
}
