import { Type } from 'typebox';
import { paginate } from '../../http/pagination.js';
import { ListOf } from '../../http/schema-helpers.js';
import type { V1 } from '../../http/types.js';
import type { WebhooksService } from './webhooks.service.js';
import {
  CreateWebhookBody, UpdateWebhookBody, WebhookDeliveryListQuery, WebhookDeliveryParams, WebhookDeliverySchema, WebhookListQuery, WebhookParams, WebhookSchema,
  WebhookWithSecretSchema,
} from './webhooks.schemas.js';

const tags = ['webhooks'];

/**
 * Webhook endpoints, their secrets and their delivery log (docs/webhooks.md; contract §13). A secret is shown only in
 * the answers of creation and rotation (write:webhooks), never by GET: issue 29 overrides §13's "GET (the secret is
 * shown to read:webhooks)", since whoever reads it can forge deliveries.
 */
export async function webhooksRoutes(app: V1, { webhooks }: { webhooks: WebhooksService }): Promise<void> {

  app.post('/webhooks', {
    schema: {
      tags, summary: 'Register a webhook endpoint',
      description: 'The URL must be https:// and its host resolve to public addresses only (422 validation_failed at /url otherwise). The answer carries the signing secret, shown this once.',
      body: CreateWebhookBody, response: { 201: WebhookWithSecretSchema },
    },
    // A replay (Idempotency-Key) answers without the secret: no secret is kept in the replay store (rotate to get a new one).
    config: { scope: 'write:webhooks', secretFields: ['secret'] },
  }, async (req, reply) => {
    const webhook = await webhooks.create(req.auth.workspaceId, req.body);
    return reply.code(201).header('location', `/v1/webhooks/${webhook.id}`).send(webhook);
  });

  app.get('/webhooks', {
    schema: { tags, summary: 'List webhook endpoints, newest first', querystring: WebhookListQuery, response: { 200: ListOf(WebhookSchema) } },
    config: { scope: 'read:webhooks' },
  }, (req) => paginate(req.query, (w) => webhooks.list(req.auth.workspaceId, w)));

  app.get('/webhooks/:webhookId', {
    schema: { tags, summary: 'Get a webhook endpoint (without its secret)', params: WebhookParams, response: { 200: WebhookSchema } },
    config: { scope: 'read:webhooks' },
  }, (req) => webhooks.get(req.auth.workspaceId, req.params.webhookId));

  app.put('/webhooks/:webhookId', {
    schema: {
      tags, summary: 'Update a webhook endpoint (partial)',
      description: 'url, eventTypes, description (null clears it), enabled. Disabling fails the deliveries waiting for it; enabling clears disabledReason and the failure count.',
      params: WebhookParams, body: UpdateWebhookBody, response: { 200: WebhookSchema },
    },
    config: { scope: 'write:webhooks' },
  }, (req) => webhooks.update(req.auth.workspaceId, req.params.webhookId, req.body));

  app.delete('/webhooks/:webhookId', {
    schema: { tags, summary: 'Delete a webhook endpoint and its delivery log', params: WebhookParams, response: { 204: Type.Null() } },
    config: { scope: 'write:webhooks' },
  }, async (req, reply) => {
    await webhooks.remove(req.auth.workspaceId, req.params.webhookId);
    return reply.code(204).send(null);
  });

  app.post('/webhooks/:webhookId/rotate-secret', {
    schema: {
      tags, summary: 'Rotate the signing secret',
      description: 'A new secret signs from now on, shown in this answer only; for 24 hours the previous one signs too (two `v1,` entries in webhook-signature), so receivers can switch without losing events. Also how a lost secret is replaced.',
      params: WebhookParams, response: { 200: WebhookWithSecretSchema },
    },
    config: { scope: 'write:webhooks', secretFields: ['secret'] },
  }, (req) => webhooks.rotateSecret(req.auth.workspaceId, req.params.webhookId));

  app.post('/webhooks/:webhookId/test', {
    schema: {
      tags, summary: 'Send a webhook.test event to the endpoint',
      description: '202 with the delivery, PENDING: the worker sends it within moments; follow it in the delivery log. 409 invalid_state when the endpoint is disabled.',
      params: WebhookParams, response: { 202: WebhookDeliverySchema },
    },
    config: { scope: 'write:webhooks', errors: ['invalid_state'] },
  }, async (req, reply) => reply.code(202).send(await webhooks.sendTest(req.auth.workspaceId, req.params.webhookId)));

  app.get('/webhooks/:webhookId/deliveries', {
    schema: {
      tags, summary: 'The delivery log of an endpoint, newest first', description: 'Each delivery with its attempts (status code, duration, error) and its next try.',
      params: WebhookParams, querystring: WebhookDeliveryListQuery, response: { 200: ListOf(WebhookDeliverySchema) },
    },
    config: { scope: 'read:webhooks' },
  }, (req) => {
    const { status, ...window } = req.query;
    return paginate(window, (w) => webhooks.listDeliveries(req.auth.workspaceId, req.params.webhookId, { status, ...w }));
  });

  app.get('/webhooks/:webhookId/deliveries/:deliveryId', {
    schema: { tags, summary: 'Get one delivery with its attempts', params: WebhookDeliveryParams, response: { 200: WebhookDeliverySchema } },
    config: { scope: 'read:webhooks' },
  }, (req) => webhooks.getDelivery(req.auth.workspaceId, req.params.webhookId, req.params.deliveryId));

  app.post('/webhooks/:webhookId/deliveries/:deliveryId/retry', {
    schema: {
      tags, summary: 'Send a delivery again',
      description: 'A SUCCEEDED or FAILED delivery becomes PENDING, due now, with the same webhook-id and body and a new round of attempts. 409 invalid_state while it is PENDING or SENDING, or when the endpoint is disabled.',
      params: WebhookDeliveryParams, response: { 202: WebhookDeliverySchema },
    },
    config: { scope: 'write:webhooks', errors: ['invalid_state'] },
  }, async (req, reply) => reply.code(202).send(await webhooks.retryDelivery(req.auth.workspaceId, req.params.webhookId, req.params.deliveryId)));
}
