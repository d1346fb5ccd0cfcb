import type { V1 } from '../../http/types.js';
import { LIMITS } from '../../mail/blocks/grammar.js';
import type { DocumentsService } from './documents.service.js';
import { RenderDocumentBody, RenderedDocumentSchema } from './documents.schemas.js';

/** A document of up to LIMITS.documentBytes, and the request around it. */
const bodyLimit = LIMITS.documentBytes + 64 * 1024;

export async function documentsRoutes(app: V1, { documents }: { documents: DocumentsService }): Promise<void> {
  app.post(
    '/email-documents/render',
    {
      schema: { body: RenderDocumentBody, response: { 200: RenderedDocumentSchema } },
      config: { scope: 'read:broadcasts', errors: ['not_found'] },
      bodyLimit,
    },
    (req) => documents.render(req.auth.workspaceId, req.body),
  );
}
