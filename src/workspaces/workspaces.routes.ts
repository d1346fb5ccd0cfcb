import { Type } from 'typebox';
import type { V1 } from '../http/server.js';
import { Timestamp } from '../http/schema-helpers.js';

const WorkspaceSchema = Type.Object({ id: Type.String(), name: Type.String(), createdAt: Timestamp });

export async function workspacesRoutes(app: V1): Promise<void> {
  app.get('/workspace', {
    schema: { tags: ['workspace'], summary: 'The workspace of the calling key', response: { 200: WorkspaceSchema } },
    config: { scope: 'any' },
  }, (req) => app.services.workspaces.get(req.auth.workspaceId));
}
