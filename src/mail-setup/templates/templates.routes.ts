import { actorOf } from '../../outbox/index.js';
import { Type } from 'typebox';
import type { V1 } from '../../http/types.js';
import type { TemplatesService } from './templates.service.js';
import { paginate } from '../../http/pagination.js';
import { ListOf, ListQuery } from '../../http/schema-helpers.js';
import {
  CreateTemplateBody,
  GallerySchema,
  TemplateParams,
  TemplateSchema,
  UpdateTemplateBody,
} from './templates.schemas.js';
import { GALLERY } from './templates.gallery.js';

const bodyLimit = 5 * 1024 * 1024; // html and text of 2 MiB each, JSON-escaped

/** Templates are email content, so they go with the broadcasts scopes. */
export async function templatesRoutes(app: V1, { templates }: { templates: TemplatesService }): Promise<void> {
  app.post(
    '/templates',
    {
      schema: { body: CreateTemplateBody, response: { 201: TemplateSchema } },
      config: { scope: 'write:broadcasts' },
      bodyLimit,
    },
    async (req, reply) => {
      const t = await templates.create(req.auth.workspaceId, req.body);
      return reply.code(201).header('location', `/v1/templates/${t.id}`).send(t);
    },
  );

  app.get(
    '/templates',
    {
      schema: { querystring: ListQuery, response: { 200: ListOf(TemplateSchema) } },
      config: { scope: 'read:broadcasts' },
    },
    async (req) => {
      return paginate(req.query, (w) => templates.list(req.auth.workspaceId, w.limit, w.beforeId));
    },
  );

  // The starter gallery: fixed documents, the same for every workspace (templates.gallery.ts).
  const gallery = { data: GALLERY, nextCursor: null };
  app.get(
    '/templates/gallery',
    { schema: { response: { 200: GallerySchema } }, config: { scope: 'read:broadcasts' } },
    async () => gallery,
  );

  app.get(
    '/templates/:templateId',
    {
      schema: { params: TemplateParams, response: { 200: TemplateSchema } },
      config: { scope: 'read:broadcasts' },
    },
    (req) => templates.get(req.auth.workspaceId, req.params.templateId),
  );

  app.put(
    '/templates/:templateId',
    {
      schema: { params: TemplateParams, body: UpdateTemplateBody, response: { 200: TemplateSchema } },
      config: { scope: 'write:broadcasts' },
      bodyLimit,
    },
    (req) => templates.update(req.auth.workspaceId, req.params.templateId, req.body),
  );

  app.delete(
    '/templates/:templateId',
    {
      schema: { params: TemplateParams, response: { 204: Type.Null() } },
      config: { scope: 'write:broadcasts', errors: ['resource_in_use'] },
    },
    async (req, reply) => {
      await templates.remove(req.auth.workspaceId, req.params.templateId, actorOf(req));
      return reply.code(204).send(null);
    },
  );
}
