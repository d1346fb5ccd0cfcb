import { conflict } from '../../errors/errors.js';
import type { V1 } from '../../http/types.js';
import { actorOf } from '../../outbox/index.js';
import type { WorkspacesService } from './workspaces.service.js';
import { UpdateWorkspaceBody, WorkspaceSchema } from './workspaces.schemas.js';

export async function workspacesRoutes(
  app: V1,
  {
    workspaces,
    twoFactorEnabled,
  }: {
    workspaces: WorkspacesService;
    /** Whether a person has two-factor sign-in on (a person requiring it of everyone must have it first). */
    twoFactorEnabled?: (workspaceId: string, userId: string) => Promise<boolean>;
  },
): Promise<void> {
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
      config: { scope: 'manage:workspace', errors: ['sender_domain_not_verified', 'invalid_state', 'slug_taken'] },
    },
    async (req) => {
      const { workspaceId, userId } = req.auth;
      if (req.body.settings?.requireTwoFactor === true && userId && twoFactorEnabled) {
        const current = await workspaces.get(workspaceId);
        if (!current.settings.requireTwoFactor && !(await twoFactorEnabled(workspaceId, userId)))
          throw conflict(
            'invalid_state',
            'set up two-factor sign-in for yourself first (your profile), then require it of everyone',
          );
      }
      return workspaces.update(workspaceId, req.body, actorOf(req));
    },
  );
}
