import { Type } from 'typebox';
import { actorOf } from '../../outbox/index.js';
import type { V1 } from '../../http/types.js';
import type { AccountService } from './account.service.js';
import type { SessionsService } from './sessions.service.js';
import type { UsersService } from './users.service.js';
import type { WorkspacesService } from '../workspaces/workspaces.service.js';
import { paginate } from '../../http/pagination.js';
import { ListOf, ListQuery, Nullable, PathId } from '../../http/schema-helpers.js';
import { notFound } from '../../errors/errors.js';
import { grants, INTERNAL_SCOPES, SCOPES } from '../../http/scopes.js';
import {
  CreateInvitationBody,
  CreatedInvitationSchema,
  InvitationSchema,
  SessionInfoSchema,
  SessionSchema,
  UpdateUserBody,
  UserSchema,
} from './users.schemas.js';

/** The caller's session, the people of the workspace and their invitations (docs/console.md, contract §14). */
export async function usersRoutes(
  app: V1,
  {
    sessions,
    users,
    workspaces,
    account,
  }: { sessions: SessionsService; users: UsersService; workspaces: WorkspacesService; account: AccountService },
): Promise<void> {
  app.get(
    '/session',
    {
      schema: {
        response: { 200: SessionInfoSchema },
      },
      config: { scope: 'any', twoFactorSetup: true },
    },
    async (req) => {
      const a = req.auth;
      const ws = await workspaces.get(a.workspaceId);
      const workspace = { id: ws.id, name: ws.name };
      const granted = [...SCOPES, ...INTERNAL_SCOPES].filter((scope) => grants(a.scopes, scope));
      if (!a.sessionId || !a.userId)
        return {
          user: null,
          workspace,
          role: null,
          scopes: a.scopes,
          grants: granted,
          managers: [],
          csrfToken: null,
          expiresAt: null,
          twoFactor: null,
        };
      const [u, managers, twoFactor] = await Promise.all([
        users.get(a.workspaceId, a.userId),
        users.managers(a.workspaceId),
        account.twoFactorStatus(a.workspaceId, a.userId),
      ]);
      const s = a as typeof a & { csrfToken: string; expiresAt: string };
      return {
        user: {
          id: u.id,
          email: u.email,
          name: u.name,
          role: u.role,
          createdAt: u.createdAt,
          lastLoginAt: u.lastLoginAt,
        },
        workspace,
        role: u.role,
        scopes: a.scopes,
        grants: granted,
        managers: managers.map((m) => ({ name: m.name, email: m.email, role: m.role })),
        csrfToken: s.csrfToken,
        expiresAt: s.expiresAt,
        twoFactor: { enabled: twoFactor.enabled, required: twoFactor.required },
      };
    },
  );

  app.get(
    '/session/sessions',
    {
      schema: {
        response: { 200: Type.Object({ data: Type.Array(SessionSchema), nextCursor: Nullable(Type.String()) }) },
      },
      config: { scope: 'any' },
    },
    async (req) => {
      const a = req.auth;
      if (!a.userId) return { data: [], nextCursor: null };
      const rows = await sessions.list(a.workspaceId, a.userId);
      return {
        data: rows.map((s) => ({
          id: s.id,
          createdAt: s.createdAt,
          lastSeenAt: s.lastSeenAt,
          expiresAt: s.expiresAt,
          ip: s.ip,
          userAgent: s.userAgent,
          current: s.id === a.sessionId,
        })),
        nextCursor: null,
      };
    },
  );

  app.delete(
    '/session/sessions/:sessionId',
    {
      schema: {
        params: Type.Object({ sessionId: PathId }),
        response: { 204: Type.Null() },
      },
      config: { scope: 'any' },
    },
    async (req, reply) => {
      const a = req.auth;
      if (!a.userId) throw notFound('session');
      await sessions.revoke(a.workspaceId, a.userId, req.params.sessionId);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/users',
    {
      schema: { querystring: ListQuery, response: { 200: ListOf(UserSchema) } },
      config: { scope: 'manage:people' },
    },
    (req) => paginate(req.query, (w) => users.list(req.auth.workspaceId, w.limit, w.beforeId)),
  );

  app.get(
    '/users/:userId',
    {
      schema: { params: Type.Object({ userId: PathId }), response: { 200: UserSchema } },
      config: { scope: 'manage:people' },
    },
    (req) => users.get(req.auth.workspaceId, req.params.userId),
  );

  app.put(
    '/users/:userId',
    {
      schema: {
        params: Type.Object({ userId: PathId }),
        body: UpdateUserBody,
        response: { 200: UserSchema },
      },
      config: { scope: 'manage:people', errors: ['invalid_state'] },
    },
    (req) => users.update(req.auth, req.params.userId, req.body, actorOf(req)),
  );

  app.delete(
    '/users/:userId',
    {
      schema: {
        params: Type.Object({ userId: PathId }),
        response: { 204: Type.Null() },
      },
      config: { scope: 'manage:people', errors: ['invalid_state'] },
    },
    async (req, reply) => {
      await users.remove(req.auth, req.params.userId, actorOf(req));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/invitations',
    {
      schema: {
        body: CreateInvitationBody,
        response: { 201: CreatedInvitationSchema },
      },
      config: { scope: 'manage:people', errors: ['user_exists'] },
    },
    async (req, reply) => {
      const inv = await users.invite(req.auth, req.body, actorOf(req));
      return reply.code(201).header('location', `/v1/invitations/${inv.id}`).send(inv);
    },
  );

  app.get(
    '/invitations',
    {
      schema: { querystring: ListQuery, response: { 200: ListOf(InvitationSchema) } },
      config: { scope: 'manage:people' },
    },
    (req) => paginate(req.query, (w) => users.listInvitations(req.auth.workspaceId, w.limit, w.beforeId)),
  );

  app.delete(
    '/invitations/:invitationId',
    {
      schema: {
        params: Type.Object({ invitationId: PathId }),
        response: { 204: Type.Null() },
      },
      config: { scope: 'manage:people', errors: ['invalid_state'] },
    },
    async (req, reply) => {
      await users.revokeInvitation(req.auth, req.params.invitationId, actorOf(req));
      return reply.code(204).send(null);
    },
  );
}
