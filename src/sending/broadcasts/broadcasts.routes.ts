import { actorOf } from '../../outbox/index.js';
import { Type } from 'typebox';
import type { V1 } from '../../http/types.js';
import type { BroadcastsService } from './broadcasts.service.js';
import { paginate } from '../../http/pagination.js';
import { ListOf, ListQuery } from '../../http/schema-helpers.js';
import {
  ArchiveBody,
  AudienceSchema,
  BroadcastListQuery,
  BroadcastParams,
  BroadcastSchema,
  CreateBroadcastBody,
  DeliveryListQuery,
  DeliverySchema,
  PreviewBody,
  PreviewSchema,
  PreflightSchema,
  PickWinnerBody,
  ResendBody,
  TestSendBody,
  TestSendResult,
  UpdateBroadcastBody,
  LinkStatsSchema,
  TimelineQuery,
  TimelineSchema,
} from './broadcasts.schemas.js';

const bodyLimit = 5 * 1024 * 1024; // html and text of up to 2 MiB each, JSON-escaped

export async function broadcastsRoutes(app: V1, { broadcasts }: { broadcasts: BroadcastsService }): Promise<void> {
  app.post(
    '/broadcasts',
    {
      schema: { body: CreateBroadcastBody, response: { 201: BroadcastSchema } },
      config: { scope: 'write:broadcasts', errors: ['sender_domain_not_verified', 'invalid_reference'] },
      bodyLimit,
    },
    async (req, reply) => {
      const b = await broadcasts.create(req.auth.workspaceId, req.body);
      return reply.code(201).header('location', `/v1/broadcasts/${b.id}`).send(b);
    },
  );

  app.get(
    '/broadcasts',
    {
      schema: { querystring: BroadcastListQuery, response: { 200: ListOf(BroadcastSchema) } },
      config: { scope: 'read:broadcasts' },
    },
    async (req) => {
      return paginate(req.query, (w) => broadcasts.list(req.auth.workspaceId, { status: req.query.status, ...w }));
    },
  );

  app.get(
    '/broadcasts/:broadcastId',
    {
      schema: { params: BroadcastParams, response: { 200: BroadcastSchema } },
      config: { scope: 'read:broadcasts' },
    },
    (req) => broadcasts.get(req.auth.workspaceId, req.params.broadcastId),
  );

  app.put(
    '/broadcasts/:broadcastId',
    {
      schema: { params: BroadcastParams, body: UpdateBroadcastBody, response: { 200: BroadcastSchema } },
      config: {
        scope: 'write:broadcasts',
        errors: [
          'broadcast_not_editable',
          'sender_domain_not_verified',
          'invalid_reference',
          'broadcast_incomplete',
          'invalid_state',
        ],
      },
      bodyLimit,
    },
    (req) => broadcasts.update(req.auth.workspaceId, req.params.broadcastId, req.body, actorOf(req)),
  );

  app.put(
    '/broadcasts/:broadcastId/archive',
    {
      schema: { params: BroadcastParams, body: ArchiveBody, response: { 200: BroadcastSchema } },
      config: { scope: 'write:broadcasts' },
    },
    (req) => broadcasts.setArchive(req.auth.workspaceId, req.params.broadcastId, req.body.archive, actorOf(req)),
  );

  app.delete(
    '/broadcasts/:broadcastId',
    {
      schema: { params: BroadcastParams, response: { 204: Type.Null() } },
      config: { scope: 'write:broadcasts', errors: ['invalid_state'] },
    },
    async (req, reply) => {
      await broadcasts.remove(req.auth.workspaceId, req.params.broadcastId);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/broadcasts/:broadcastId/send',
    {
      schema: { params: BroadcastParams, response: { 202: BroadcastSchema } },
      config: {
        scope: 'write:broadcasts',
        errors: ['invalid_state', 'broadcast_incomplete', 'sender_domain_not_verified'],
      },
    },
    async (req, reply) =>
      reply.code(202).send(await broadcasts.send(req.auth.workspaceId, req.params.broadcastId, actorOf(req))),
  );

  app.get(
    '/broadcasts/:broadcastId/deliveries',
    {
      schema: { params: BroadcastParams, querystring: DeliveryListQuery, response: { 200: ListOf(DeliverySchema) } },
      config: { scope: 'read:broadcasts' },
    },
    async (req) => {
      return paginate(req.query, (w) =>
        broadcasts.listDeliveries(req.auth.workspaceId, req.params.broadcastId, { status: req.query.status, ...w }),
      );
    },
  );

  app.get(
    '/broadcasts/:broadcastId/links',
    {
      schema: {
        params: BroadcastParams,
        response: { 200: LinkStatsSchema },
      },
      config: { scope: 'read:broadcasts' },
    },
    (req) => broadcasts.links(req.auth.workspaceId, req.params.broadcastId),
  );

  app.get(
    '/broadcasts/:broadcastId/timeline',
    {
      schema: {
        params: BroadcastParams,
        querystring: TimelineQuery,
        response: { 200: TimelineSchema },
      },
      config: { scope: 'read:broadcasts' },
    },
    (req) => broadcasts.timeline(req.auth.workspaceId, req.params.broadcastId, req.query.bucket, req.query.tz),
  );

  app.post(
    '/broadcasts/:broadcastId/cancel',
    {
      schema: { params: BroadcastParams, response: { 200: BroadcastSchema } },
      config: { scope: 'write:broadcasts', errors: ['invalid_state'] },
    },
    (req) => broadcasts.cancel(req.auth.workspaceId, req.params.broadcastId, actorOf(req)),
  );

  app.post(
    '/broadcasts/:broadcastId/pause',
    {
      schema: {
        params: BroadcastParams,
        response: { 200: BroadcastSchema },
      },
      config: { scope: 'write:broadcasts', errors: ['invalid_state'] },
    },
    (req) => broadcasts.pause(req.auth.workspaceId, req.params.broadcastId, actorOf(req)),
  );

  app.post(
    '/broadcasts/:broadcastId/ab/winner',
    {
      schema: { params: BroadcastParams, body: PickWinnerBody, response: { 200: BroadcastSchema } },
      config: { scope: 'write:broadcasts', errors: ['ab_winner_chosen', 'ab_test_missing', 'invalid_state'] },
    },
    (req) => broadcasts.pickWinner(req.auth.workspaceId, req.params.broadcastId, req.body.variant, actorOf(req)),
  );

  app.post(
    '/broadcasts/:broadcastId/resume',
    {
      schema: { params: BroadcastParams, response: { 200: BroadcastSchema } },
      config: { scope: 'write:broadcasts', errors: ['invalid_state'] },
    },
    (req) => broadcasts.resume(req.auth.workspaceId, req.params.broadcastId, actorOf(req)),
  );

  app.post(
    '/broadcasts/:broadcastId/resend',
    {
      schema: {
        params: BroadcastParams,
        body: ResendBody,
        response: { 201: BroadcastSchema },
      },
      config: { scope: 'write:broadcasts', errors: ['invalid_state'] },
    },
    async (req, reply) => {
      const created = await broadcasts.resend(req.auth.workspaceId, req.params.broadcastId, req.body, actorOf(req));
      return reply.code(201).header('location', `/v1/broadcasts/${created.id}`).send(created);
    },
  );

  app.post(
    '/broadcasts/:broadcastId/preflight',
    {
      schema: {
        params: BroadcastParams,
        response: { 200: PreflightSchema },
      },
      config: { scope: 'read:broadcasts' },
    },
    (req) => broadcasts.preflight(req.auth.workspaceId, req.params.broadcastId),
  );

  app.post(
    '/broadcasts/:broadcastId/test',
    {
      schema: {
        params: BroadcastParams,
        body: TestSendBody,
        response: { 200: TestSendResult },
      },
      config: {
        scope: 'write:broadcasts',
        errors: ['broadcast_incomplete', 'sender_domain_not_verified', 'invalid_reference'],
      },
    },
    (req) => broadcasts.sendTest(req.auth.workspaceId, req.params.broadcastId, req.body),
  );

  app.post(
    '/broadcasts/:broadcastId/preview',
    {
      schema: { params: BroadcastParams, body: PreviewBody, response: { 200: PreviewSchema } },
      config: { scope: 'read:broadcasts', errors: ['invalid_reference'] },
      // The body is optional here: none at all means sample data.
      preValidation: async (req) => {
        req.body ??= {};
      },
    },
    (req) => broadcasts.preview(req.auth.workspaceId, req.params.broadcastId, req.body.contactId),
  );

  app.get(
    '/broadcasts/:broadcastId/audience',
    {
      schema: { params: BroadcastParams, querystring: ListQuery, response: { 200: AudienceSchema } },
      config: { scope: 'read:broadcasts', errors: ['invalid_reference'] },
    },
    async (req) => {
      let count = 0;
      const listed = await paginate(req.query, async (w) => {
        const found = await broadcasts.audience(req.auth.workspaceId, req.params.broadcastId, w.limit, w.beforeId);
        count = found.count;
        return found.rows;
      });
      return { count, ...listed };
    },
  );
}
