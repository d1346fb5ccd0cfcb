import { actorOf } from '../../outbox/index.js';
import { Type } from 'typebox';
import type { V1 } from '../../http/types.js';
import type { FormsService } from './forms.service.js';
import { paginate } from '../../http/pagination.js';
import { ListOf } from '../../http/schema-helpers.js';
import {
  CreateFormBody,
  DeployHtmlBody,
  FormHtmlSchema,
  FormListQuery,
  FormParams,
  FormSchema,
  UpdateFormBody,
} from './forms.schemas.js';

export async function formsRoutes(app: V1, { forms }: { forms: FormsService }): Promise<void> {
  app.post(
    '/forms',
    {
      schema: { body: CreateFormBody, response: { 201: FormSchema } },
      config: { scope: 'write:forms', errors: ['slug_taken', 'invalid_reference'] },
    },
    async (req, reply) => {
      const form = await forms.create(req.auth.workspaceId, req.body);
      return reply.code(201).header('location', `/v1/forms/${form.id}`).send(form);
    },
  );

  app.get(
    '/forms',
    {
      schema: { querystring: FormListQuery, response: { 200: ListOf(FormSchema) } },
      config: { scope: 'read:forms' },
    },
    async (req) => {
      return paginate(req.query, (w) => forms.list(req.auth.workspaceId, { status: req.query.status, ...w }));
    },
  );

  app.get(
    '/forms/:formId',
    {
      schema: { params: FormParams, response: { 200: FormSchema } },
      config: { scope: 'read:forms' },
    },
    (req) => forms.getWithStats(req.auth.workspaceId, req.params.formId),
  );

  app.put(
    '/forms/:formId',
    {
      schema: { params: FormParams, body: UpdateFormBody, response: { 200: FormSchema } },
      config: { scope: 'write:forms', errors: ['form_not_editable', 'slug_taken', 'invalid_reference'] },
    },
    (req) => forms.update(req.auth.workspaceId, req.params.formId, req.body),
  );

  app.delete(
    '/forms/:formId',
    {
      schema: { params: FormParams, response: { 204: Type.Null() } },
      config: { scope: 'write:forms', errors: ['form_not_editable'] },
    },
    async (req, reply) => {
      await forms.remove(req.auth.workspaceId, req.params.formId, actorOf(req));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/forms/:formId/html',
    {
      schema: { params: FormParams, response: { 200: FormHtmlSchema } },
      config: { scope: 'read:forms' },
    },
    (req) => forms.getHtml(req.auth.workspaceId, req.params.formId),
  );

  app.put(
    '/forms/:formId/html',
    {
      schema: { params: FormParams, body: DeployHtmlBody, response: { 200: FormHtmlSchema } },
      config: { scope: 'write:forms', errors: ['form_not_editable'] },
      // 512 KiB of HTML can take up to six times that once escaped into a JSON string.
      bodyLimit: 4 * 1024 * 1024,
    },
    (req) => forms.deployHtml(req.auth.workspaceId, req.params.formId, req.body.html),
  );

  app.post(
    '/forms/:formId/versions',
    {
      schema: { params: FormParams, response: { 201: FormSchema } },
      config: { scope: 'write:forms', errors: ['form_not_published', 'draft_version_exists'] },
    },
    async (req, reply) => {
      const form = await forms.createVersion(req.auth.workspaceId, req.params.formId);
      return reply.code(201).header('location', `/v1/forms/${form.id}`).send(form);
    },
  );

  app.get(
    '/forms/:formId/versions',
    {
      schema: { params: FormParams, response: { 200: ListOf(FormSchema) } },
      config: { scope: 'read:forms' },
    },
    async (req) => ({ data: await forms.listVersions(req.auth.workspaceId, req.params.formId), nextCursor: null }),
  );

  app.post(
    '/forms/:formId/publish',
    {
      schema: { params: FormParams, response: { 200: FormSchema } },
      config: { scope: 'write:forms', errors: ['form_already_published', 'form_incomplete', 'slug_taken'] },
    },
    (req) => forms.publish(req.auth.workspaceId, req.params.formId),
  );
}
