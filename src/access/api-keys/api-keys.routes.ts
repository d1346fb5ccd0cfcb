import { Type } from 'typebox';
import type { V1 } from '../../http/types.js';
import { actorOf } from '../../outbox/index.js';
import type { ApiKeysService } from './api-keys.service.js';
import { paginate } from '../../http/pagination.js';
import { PathId, ListOf, ListQuery, Nullable, StringEnum, Timestamp } from '../../http/schema-helpers.js';
import { SCOPES } from '../../http/scopes.js';

const ApiKeySchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  createdAt: Timestamp,
  lastUsedAt: Nullable(Timestamp),
  revokedAt: Nullable(Timestamp),
});
const CreatedSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  key: Nullable(
    Type.String({
      description: 'the key, shown once; null in a replay of the request (Idempotency-Key), which never holds it',
    }),
  ),
  createdAt: Timestamp,
});
const CreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    scopes: Type.Array(StringEnum(SCOPES), { minItems: 1, maxItems: SCOPES.length }),
  },
  { additionalProperties: false },
);

export async function apiKeysRoutes(app: V1, { apiKeys }: { apiKeys: ApiKeysService }): Promise<void> {
  app.post(
    '/api-keys',
    {
      schema: { body: CreateBody, response: { 201: CreatedSchema } },
      config: { scope: 'manage:keys', secretFields: ['key'] },
    },
    async (req, reply) => {
      const key = await apiKeys.create(req.auth.workspaceId, req.body, req.auth.scopes, actorOf(req));
      return reply.code(201).header('location', `/v1/api-keys/${key.id}`).send(key);
    },
  );

  app.get(
    '/api-keys',
    {
      schema: { querystring: ListQuery, response: { 200: ListOf(ApiKeySchema) } },
      config: { scope: 'manage:keys' },
    },
    async (req) => {
      return paginate(req.query, (w) => apiKeys.list(req.auth.workspaceId, w.limit, w.beforeId));
    },
  );

  app.delete(
    '/api-keys/:keyId',
    {
      schema: { params: Type.Object({ keyId: PathId }), response: { 204: Type.Null() } },
      config: { scope: 'manage:keys', errors: ['last_admin_key'] },
    },
    async (req, reply) => {
      await apiKeys.revoke(req.auth.workspaceId, req.params.keyId, actorOf(req));
      return reply.code(204).send(null);
    },
  );
}
