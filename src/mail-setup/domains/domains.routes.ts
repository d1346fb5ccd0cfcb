import { actorOf } from '../../outbox/index.js';
import { Type } from 'typebox';
import { paginate } from '../../http/pagination.js';
import { ListOf } from '../../http/schema-helpers.js';
import type { V1 } from '../../http/types.js';
import type { DomainsService } from './domains.service.js';
import { CreateDomainBody, DomainListQuery, DomainParams, DomainSchema, UpdateDomainBody } from './domains.schemas.js';

/**
 * Sending domains (docs/api.md §6). The response schemas list the public fields only, so nothing
 * else (the DKIM private key above all) can reach a body. The service is looked up per request, so that
 * whoever builds the app (a test, an embedding) can swap it for one with other DNS settings.
 */
export async function domainsRoutes(app: V1, { domains }: { domains: DomainsService }): Promise<void> {
  app.post(
    '/domains',
    {
      schema: {
        body: CreateDomainBody,
        response: { 201: DomainSchema },
      },
      config: { scope: 'write:domains', errors: ['domain_exists'] },
    },
    async (req, reply) => {
      const domain = await domains.create(req.auth.workspaceId, req.body, actorOf(req));
      return reply.code(201).header('location', `/v1/domains/${domain.id}`).send(domain);
    },
  );

  app.get(
    '/domains',
    {
      schema: { querystring: DomainListQuery, response: { 200: ListOf(DomainSchema) } },
      config: { scope: 'read:domains' },
    },
    async (req) => {
      return paginate(req.query, (w) => domains.list(req.auth.workspaceId, { status: req.query.status, ...w }));
    },
  );

  app.get(
    '/domains/:domainId',
    {
      schema: { params: DomainParams, response: { 200: DomainSchema } },
      config: { scope: 'read:domains' },
    },
    (req) => domains.get(req.auth.workspaceId, req.params.domainId),
  );

  app.put(
    '/domains/:domainId',
    {
      schema: { params: DomainParams, body: UpdateDomainBody, response: { 200: DomainSchema } },
      config: { scope: 'write:domains' },
    },
    (req) => domains.update(req.auth.workspaceId, req.params.domainId, req.body, actorOf(req)),
  );

  app.delete(
    '/domains/:domainId',
    {
      schema: { params: DomainParams, response: { 204: Type.Null() } },
      config: { scope: 'write:domains' },
    },
    async (req, reply) => {
      await domains.remove(req.auth.workspaceId, req.params.domainId, actorOf(req));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/domains/:domainId/verify',
    {
      schema: {
        params: DomainParams,
        response: { 200: DomainSchema },
      },
      config: { scope: 'write:domains' },
    },
    (req) => domains.verify(req.auth.workspaceId, req.params.domainId, actorOf(req)),
  );
}
