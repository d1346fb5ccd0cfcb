import type { V1 } from '../../http/types.js';
import { actorOf } from '../../outbox/index.js';
import type { WorkspacesService } from './workspaces.service.js';
import { UpdateWorkspaceBody, WorkspaceSchema } from './workspaces.schemas.js';

export async function workspacesRoutes(app: V1, { workspaces }: { workspaces: WorkspacesService }): Promise<void> {
  app.get(
    '/workspace',
    {
      schema: { response: { 200: WorkspaceSchema } },
      config: { scope: 'any' },
    },
    (req) => workspaces.get(req.auth.workspaceId),
  );

  app.put(
    '/workspace',
    {
      schema: {
        body: UpdateWorkspaceBody,
        response: { 200: WorkspaceSchema },
      },
      config: { scope: 'manage:workspace', errors: ['sender_domain_not_verified'] },
    },
    (req) => workspaces.update(req.auth.workspaceId, req.body, actorOf(req)),
  );
}
