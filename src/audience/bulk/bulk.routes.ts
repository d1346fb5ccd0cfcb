import type { V1 } from '../../http/types.js';
import { checkFilterFirst } from '../segments/segments.routes.js';
import { BulkAcceptedSchema, BulkBody, BulkJobSchema, BulkParams } from './bulk.schemas.js';
import type { BulkService } from './bulk.service.js';

export async function bulkRoutes(app: V1, { bulk }: { bulk: BulkService }): Promise<void> {
  app.post(
    '/contacts/bulk',
    {
      schema: { body: BulkBody, response: { 202: BulkAcceptedSchema } },
      config: { scope: 'write:contacts', errors: ['invalid_reference'] },
      // A bad filter is listed with the rest of the body's errors in one 422, as POST /v1/segments does.
      preValidation: checkFilterFirst,
    },
    async (req, reply) => {
      const accepted = await bulk.create(req.auth.workspaceId, req.body);
      return reply.code(202).header('location', `/v1/contacts/bulk/${accepted.jobId}`).send(accepted);
    },
  );

  app.get(
    '/contacts/bulk/:jobId',
    {
      schema: { params: BulkParams, response: { 200: BulkJobSchema } },
      config: { scope: 'read:contacts' },
    },
    (req) => bulk.get(req.auth.workspaceId, req.params.jobId),
  );
}
