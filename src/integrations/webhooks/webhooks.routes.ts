import { actorOf } from '../../outbox/index.js';
import { Type } from 'typebox';
import { paginate } from '../../http/pagination.js';
import { ListOf } from '../../http/schema-helpers.js';
import type { V1 } from '../../http/types.js';
import type { WebhooksService } from './webhooks.service.js';
import {
  CreateWebhookBody,
  UpdateWebhookBody,
  WebhookDeliveryListQuery,
  WebhookDeliveryParams,
  WebhookDeliverySchema,
  WebhookListQuery,
  WebhookParams,
  WebhookSchema,
  WebhookWithSecretSchema,
} from './webhooks.schemas.js';

/**
 * Webhook endpoints, their secrets and their delivery log (docs/webhooks.md; contract §13). A secret is shown only in
 * the answers of creation and rotation (write:webhooks), never by GET: issue 29 overrides §13's "GET (the secret is
 * shown to read:webhooks)", since whoever reads it can forge deliveries.
 */
export async function webhooksRoutes(app: V1, { webhooks }: { webhooks: WebhooksService }): Promise<void> {
  app.post(
    '/webhooks',
    {
      schema: {
        body: CreateWebhookBody,
        response: { 201: WebhookWithSecretSchema },
      },
      // A replay (Idempotency-Key) answers without the secret: no secret is kept in the replay store (rotate to get a new one).
      config: { scope: 'write:webhooks', secretFields: ['secret'] },
    },
    async (req, reply) => {
      const webhook = await webhooks.create(req.auth.workspaceId, req.body, actorOf(req));
      return reply.code(201).header('location', `/v1/webhooks/${webhook.id}`).send(webhook);
    },
  );

  app.get(
    '/webhooks',
    {
      schema: { querystring: WebhookListQuery, response: { 200: ListOf(WebhookSchema) } },
      config: { scope: 'read:webhooks' },
    },
    (req) => paginate(req.query, (w) => webhooks.list(req.auth.workspaceId, w)),
  );

  app.get(
    '/webhooks/:webhookId',
    {
      schema: { params: WebhookParams, response: { 200: WebhookSchema } },
      config: { scope: 'read:webhooks' },
    },
    (req) => webhooks.get(req.auth.workspaceId, req.params.webhookId),
  );

  app.put(
    '/webhooks/:webhookId',
    {
      schema: {
        params: WebhookParams,
        body: UpdateWebhookBody,
        response: { 200: WebhookSchema },
      },
      config: { scope: 'write:webhooks' },
    },
    (req) => webhooks.update(req.auth.workspaceId, req.params.webhookId, req.body, actorOf(req)),
  );

  app.delete(
    '/webhooks/:webhookId',
    {
      schema: { params: WebhookParams, response: { 204: Type.Null() } },
      config: { scope: 'write:webhooks' },
    },
    async (req, reply) => {
      await webhooks.remove(req.auth.workspaceId, req.params.webhookId, actorOf(req));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/webhooks/:webhookId/rotate-secret',
    {
      schema: {
        params: WebhookParams,
        response: { 200: WebhookWithSecretSchema },
      },
      config: { scope: 'write:webhooks', secretFields: ['secret'] },
    },
    (req) => webhooks.rotateSecret(req.auth.workspaceId, req.params.webhookId, actorOf(req)),
  );

  app.post(
    '/webhooks/:webhookId/test',
    {
      schema: {
        params: WebhookParams,
        response: { 202: WebhookDeliverySchema },
      },
      config: { scope: 'write:webhooks', errors: ['invalid_state'] },
    },
    async (req, reply) => reply.code(202).send(await webhooks.sendTest(req.auth.workspaceId, req.params.webhookId)),
  );

  app.get(
    '/webhooks/:webhookId/deliveries',
    {
      schema: {
        params: WebhookParams,
        querystring: WebhookDeliveryListQuery,
        response: { 200: ListOf(WebhookDeliverySchema) },
      },
      config: { scope: 'read:webhooks' },
    },
    (req) => {
      const { status, ...window } = req.query;
      return paginate(window, (w) =>
        webhooks.listDeliveries(req.auth.workspaceId, req.params.webhookId, { status, ...w }),
      );
    },
  );

  app.get(
    '/webhooks/:webhookId/deliveries/:deliveryId',
    {
      schema: { params: WebhookDeliveryParams, response: { 200: WebhookDeliverySchema } },
      config: { scope: 'read:webhooks' },
    },
    (req) => webhooks.getDelivery(req.auth.workspaceId, req.params.webhookId, req.params.deliveryId),
  );

  app.post(
    '/webhooks/:webhookId/deliveries/:deliveryId/retry',
    {
      schema: {
        params: WebhookDeliveryParams,
        response: { 202: WebhookDeliverySchema },
      },
      config: { scope: 'write:webhooks', errors: ['invalid_state'] },
    },
    async (req, reply) =>
      reply
        .code(202)
        .send(await webhooks.retryDelivery(req.auth.workspaceId, req.params.webhookId, req.params.deliveryId)),
  );
}
