import { actorOf } from '../../outbox/index.js';
import { Type } from 'typebox';
import { paginate } from '../../http/pagination.js';
import { ListOf } from '../../http/schema-helpers.js';
import type { V1 } from '../../http/types.js';
import type { SuppressionsService } from './suppressions.service.js';
import {
  BulkSuppressionBody,
  BulkSuppressionResult,
  CreateSuppressionBody,
  SuppressionListQuery,
  SuppressionParams,
  SuppressionSchema,
} from './suppressions.schemas.js';

/** The suppression list (docs/bounces.md): addresses no broadcast or automation email goes to. */
export async function suppressionsRoutes(
  app: V1,
  { suppressions }: { suppressions: SuppressionsService },
): Promise<void> {
  app.get(
    '/suppressions',
    {
      schema: { querystring: SuppressionListQuery, response: { 200: ListOf(SuppressionSchema) } },
      config: { scope: 'read:contacts' },
    },
    async (req) => {
      const { limit, cursor, ...filter } = req.query;
      const page = await paginate({ limit, cursor }, (w) =>
        suppressions.list(req.auth.workspaceId, { ...filter, ...w }),
      );
      return { ...page, data: page.data.map(({ id: _id, ...entry }) => entry) };
    },
  );

  app.post(
    '/suppressions',
    {
      schema: {
        body: CreateSuppressionBody,
        response: { 200: SuppressionSchema, 201: SuppressionSchema },
      },
      config: { scope: 'write:contacts' },
    },
    async (req, reply) => {
      const { entry, created } = await suppressions.add(req.auth.workspaceId, req.body, actorOf(req));
      if (created) reply.code(201).header('location', `/v1/suppressions/${encodeURIComponent(entry.email)}`);
      return reply.send(entry);
    },
  );

  app.post(
    '/suppressions/bulk',
    {
      schema: { body: BulkSuppressionBody, response: { 200: BulkSuppressionResult } },
      config: { scope: 'write:contacts' },
    },
    (req) => suppressions.addMany(req.auth.workspaceId, req.body, actorOf(req)),
  );

  app.get(
    '/suppressions/:email',
    {
      schema: { params: SuppressionParams, response: { 200: SuppressionSchema } },
      config: { scope: 'read:contacts' },
    },
    (req) => suppressions.get(req.auth.workspaceId, req.params.email),
  );

  app.delete(
    '/suppressions/:email',
    {
      schema: {
        params: SuppressionParams,
        response: { 204: Type.Null() },
      },
      config: { scope: 'write:contacts' },
    },
    async (req, reply) => {
      await suppressions.remove(req.auth.workspaceId, req.params.email, actorOf(req));
      return reply.code(204).send(null);
    },
  );
}
