import { Type } from 'typebox';
import { paginate } from '../../http/pagination.js';
import { ListOf } from '../../http/schema-helpers.js';
import type { V1 } from '../../http/types.js';
import type { SuppressionsService } from './suppressions.service.js';
import { CreateSuppressionBody, SuppressionListQuery, SuppressionParams, SuppressionSchema } from './suppressions.schemas.js';

const tags = ['suppressions'];

/** The suppression list (docs/bounces.md): addresses no broadcast or automation email goes to. */
export async function suppressionsRoutes(app: V1, { suppressions }: { suppressions: SuppressionsService }): Promise<void> {

  app.get('/suppressions', {
    schema: { tags, summary: 'List suppressed addresses, newest first', querystring: SuppressionListQuery, response: { 200: ListOf(SuppressionSchema) } },
    config: { scope: 'read:contacts' },
  }, async (req) => {
    const { limit, cursor, reason } = req.query;
    const page = await paginate({ limit, cursor }, (w) => suppressions.list(req.auth.workspaceId, { reason, ...w }));
    return { ...page, data: page.data.map(({ id: _id, ...entry }) => entry) };
  });

  app.post('/suppressions', {
    schema: {
      tags, summary: 'Suppress an address by hand (MANUAL)',
      description: '201 with the new entry; 200 with the existing one when the address is already suppressed (its first reason stands).',
      body: CreateSuppressionBody, response: { 200: SuppressionSchema, 201: SuppressionSchema },
    },
    config: { scope: 'write:contacts' },
  }, async (req, reply) => {
    const { entry, created } = await suppressions.add(req.auth.workspaceId, req.body);
    if (created) reply.code(201).header('location', `/v1/suppressions/${encodeURIComponent(entry.email)}`);
    return reply.send(entry);
  });

  app.get('/suppressions/:email', {
    schema: { tags, summary: 'Get the entry of an address', params: SuppressionParams, response: { 200: SuppressionSchema } },
    config: { scope: 'read:contacts' },
  }, (req) => suppressions.get(req.auth.workspaceId, req.params.email));

  app.delete('/suppressions/:email', {
    schema: {
      tags, summary: 'Lift the suppression of an address',
      description: 'The address may be mailed again once its contact is SUBSCRIBED; its status is not changed (set it with PUT /v1/contacts/{id}).',
      params: SuppressionParams, response: { 204: Type.Null() },
    },
    config: { scope: 'write:contacts' },
  }, async (req, reply) => {
    await suppressions.remove(req.auth.workspaceId, req.params.email);
    return reply.code(204).send(null);
  });
}
