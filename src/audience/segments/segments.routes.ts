import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { validationFailed } from '../../errors/errors.js';
import { paginate } from '../../http/pagination.js';
import { ListOf, ListQuery } from '../../http/schema-helpers.js';
import type { V1 } from '../../http/types.js';
import type { SegmentsService } from './segments.service.js';
import { toFieldErrors } from '../../http/validation.js';
import { validateFilter } from './segments.filter.js';
import {
  CreateSegmentBody,
  PreviewBody,
  PreviewSchema,
  SegmentContactSchema,
  SegmentCountSchema,
  SegmentParams,
  SegmentSchema,
  UpdateSegmentBody,
} from './segments.schemas.js';

/**
 * The body schemas leave `filter` to validateFilter. When the filter is invalid, this lists its errors
 * together with the rest of the body's (the schema alone would stop at the first failing part), so one
 * 422 names every violation.
 */
export async function checkFilterFirst(req: FastifyRequest): Promise<void> {
  const body = req.body as Record<string, unknown> | null | undefined;
  if (typeof body !== 'object' || body === null || Array.isArray(body) || !Object.hasOwn(body, 'filter')) return;
  const filterErrors = validateFilter(body.filter);
  if (filterErrors.length === 0) return;
  const validate = req.getValidationFunction('body');
  const schemaErrors = validate && !validate(body) ? toFieldErrors((validate.errors ?? []) as never, 'body') : [];
  throw validationFailed([...schemaErrors, ...filterErrors]);
}

export async function segmentsRoutes(app: V1, { segments }: { segments: SegmentsService }): Promise<void> {
  app.post(
    '/segments',
    {
      schema: { body: CreateSegmentBody, response: { 201: SegmentSchema } },
      config: { scope: 'write:contacts', errors: ['invalid_reference'] },
      preValidation: checkFilterFirst,
    },
    async (req, reply) => {
      const segment = await segments.create(req.auth.workspaceId, req.body);
      return reply.code(201).header('location', `/v1/segments/${segment.id}`).send(segment);
    },
  );

  app.get(
    '/segments',
    {
      schema: { querystring: ListQuery, response: { 200: ListOf(SegmentSchema) } },
      config: { scope: 'read:contacts' },
    },
    async (req) => {
      return paginate(req.query, (w) => segments.list(req.auth.workspaceId, { ...w }));
    },
  );

  app.post(
    '/segments/preview',
    {
      schema: { body: PreviewBody, response: { 200: PreviewSchema } },
      config: { scope: 'read:contacts', errors: ['invalid_reference'] },
      preValidation: checkFilterFirst,
    },
    (req) => segments.preview(req.auth.workspaceId, req.body.filter),
  );

  app.get(
    '/segments/:segmentId',
    {
      schema: { params: SegmentParams, response: { 200: SegmentSchema } },
      config: { scope: 'read:contacts' },
    },
    (req) => segments.get(req.auth.workspaceId, req.params.segmentId),
  );

  app.put(
    '/segments/:segmentId',
    {
      schema: { params: SegmentParams, body: UpdateSegmentBody, response: { 200: SegmentSchema } },
      config: { scope: 'write:contacts', errors: ['invalid_reference'] },
      preValidation: checkFilterFirst,
    },
    (req) => segments.update(req.auth.workspaceId, req.params.segmentId, req.body),
  );

  app.delete(
    '/segments/:segmentId',
    {
      schema: { params: SegmentParams, response: { 204: Type.Null() } },
      config: { scope: 'write:contacts', errors: ['resource_in_use'] },
    },
    async (req, reply) => {
      await segments.remove(req.auth.workspaceId, req.params.segmentId);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/segments/:segmentId/contacts',
    {
      schema: { params: SegmentParams, querystring: ListQuery, response: { 200: ListOf(SegmentContactSchema) } },
      config: { scope: 'read:contacts' },
    },
    async (req) => {
      return paginate(req.query, (w) => segments.contacts(req.auth.workspaceId, req.params.segmentId, { ...w }));
    },
  );

  app.get(
    '/segments/:segmentId/count',
    {
      schema: { params: SegmentParams, response: { 200: SegmentCountSchema } },
      config: { scope: 'read:contacts' },
    },
    (req) => segments.count(req.auth.workspaceId, req.params.segmentId),
  );
}
