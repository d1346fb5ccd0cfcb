import { Type } from 'typebox';
import type { V1 } from '../../http/types.js';
import type { SessionsService } from './sessions.service.js';
import type { UsersService } from './users.service.js';
import type { WorkspacesService } from '../workspaces/workspaces.service.js';
import { paginate } from '../../http/pagination.js';
import { ListOf, ListQuery, Nullable, PathId } from '../../http/schema-helpers.js';
import { notFound } from '../../errors/errors.js';
import { grants, INTERNAL_SCOPES, SCOPES } from '../../http/scopes.js';
import { CreateInvitationBody, CreatedInvitationSchema, InvitationSchema, SessionInfoSchema, SessionSchema, UpdateUserBody, UserSchema } from './users.schemas.js';

const sessionTags = ['session'];
const peopleTags = ['people'];

/** The caller's session, the people of the workspace and their invitations (docs/console.md, contract §14). */
export async function usersRoutes(app: V1, { sessions, users, workspaces }: { sessions: SessionsService; users: UsersService; workspaces: WorkspacesService }): Promise<void> {
  app.get('/session', {
    schema: {
      tags: sessionTags, summary: 'Who is calling: the signed-in user, the workspace, the scopes and the CSRF token',
      description: 'With the console\'s session cookie: the user, their role, the scopes the role grants, the CSRF token every write must send as X-CSRF-Token, and when the session expires (30 days after its last use). With an API key: `user`, `role`, `csrfToken` and `expiresAt` are null and `scopes` are the key\'s. `grants` lists every scope those scopes grant.',
      response: { 200: SessionInfoSchema },
    },
    config: { scope: 'any' },
  }, async (req) => {
    const a = req.auth;
    const ws = await workspaces.get(a.workspaceId);
    const workspace = { id: ws.id, name: ws.name };
    const granted = [...SCOPES, ...INTERNAL_SCOPES].filter((scope) => grants(a.scopes, scope));
    if (!a.sessionId || !a.userId) return { user: null, workspace, role: null, scopes: a.scopes, grants: granted, csrfToken: null, expiresAt: null };
    const u = await users.get(a.workspaceId, a.userId);
    const s = a as typeof a & { csrfToken: string; expiresAt: string };
    return {
      user: { id: u.id, email: u.email, name: u.name, role: u.role, createdAt: u.createdAt, lastLoginAt: u.lastLoginAt },
      workspace, role: u.role, scopes: a.scopes, grants: granted, csrfToken: s.csrfToken, expiresAt: s.expiresAt,
    };
  });

  app.get('/session/sessions', {
    schema: {
      tags: sessionTags, summary: 'The signed-in user\'s live sessions (the browsers they are signed in on)',
      description: 'Newest first, at most 200; revoked and expired sessions are left out. An API key has no sessions: the list is empty.',
      response: { 200: Type.Object({ data: Type.Array(SessionSchema), nextCursor: Nullable(Type.String()) }) },
    },
    config: { scope: 'any' },
  }, async (req) => {
    const a = req.auth;
    if (!a.userId) return { data: [], nextCursor: null };
    const rows = await sessions.list(a.workspaceId, a.userId);
    return {
      data: rows.map((s) => ({ id: s.id, createdAt: s.createdAt, lastSeenAt: s.lastSeenAt, expiresAt: s.expiresAt, ip: s.ip, userAgent: s.userAgent, current: s.id === a.sessionId })),
      nextCursor: null,
    };
  });

  app.delete('/session/sessions/:sessionId', {
    schema: {
      tags: sessionTags, summary: 'Sign one of your own sessions out, at once',
      description: 'The session\'s cookie is refused from the next request on (revoking the current session signs this browser out). Another user\'s session, or a revoked one, is 404.',
      params: Type.Object({ sessionId: PathId }), response: { 204: Type.Null() },
    },
    config: { scope: 'any' },
  }, async (req, reply) => {
    const a = req.auth;
    if (!a.userId) throw notFound('session');
    await sessions.revoke(a.workspaceId, a.userId, req.params.sessionId);
    return reply.code(204).send(null);
  });

  app.get('/users', {
    schema: { tags: peopleTags, summary: 'The people of the workspace', description: 'Newest first, with their role and last sign-in.', querystring: ListQuery, response: { 200: ListOf(UserSchema) } },
    config: { scope: 'manage:people' },
  }, (req) => paginate(req.query, (w) => users.list(req.auth.workspaceId, w.limit, w.beforeId)));

  app.get('/users/:userId', {
    schema: { tags: peopleTags, summary: 'A person of the workspace', params: Type.Object({ userId: PathId }), response: { 200: UserSchema } },
    config: { scope: 'manage:people' },
  }, (req) => users.get(req.auth.workspaceId, req.params.userId));

  app.put('/users/:userId', {
    schema: {
      tags: peopleTags, summary: 'Rename a person or change their role',
      description: 'A role change is effective on their next request. Only an owner gives or takes the owner role or changes an owner (403 insufficient_scope otherwise); the last owner cannot be demoted (409 invalid_state).',
      params: Type.Object({ userId: PathId }), body: UpdateUserBody, response: { 200: UserSchema },
    },
    config: { scope: 'manage:people', errors: ['invalid_state'] },
  }, (req) => users.update(req.auth, req.params.userId, req.body));

  app.delete('/users/:userId', {
    schema: {
      tags: peopleTags, summary: 'Remove a person from the workspace (their sessions end at once)',
      description: 'Only an owner removes an owner; the last owner cannot be removed (409 invalid_state).',
      params: Type.Object({ userId: PathId }), response: { 204: Type.Null() },
    },
    config: { scope: 'manage:people', errors: ['invalid_state'] },
  }, async (req, reply) => {
    await users.remove(req.auth, req.params.userId);
    return reply.code(204).send(null);
  });

  app.post('/invitations', {
    schema: {
      tags: peopleTags, summary: 'Invite a person by email',
      description: 'Emails a single-use link, `PUBLIC_URL/app/invite/{token}`, valid 7 days, where they choose their name and password. A new invitation replaces the address\'s pending ones. Inviting an owner needs an owner. `emailSent` is false when no email could be sent (no mail transport, or no verified sending domain): the invitation exists all the same. 409 user_exists when the address is already a user of the workspace.',
      body: CreateInvitationBody, response: { 201: CreatedInvitationSchema },
    },
    config: { scope: 'manage:people', errors: ['user_exists'] },
  }, async (req, reply) => {
    const inv = await users.invite(req.auth, req.body);
    return reply.code(201).header('location', `/v1/invitations/${inv.id}`).send(inv);
  });

  app.get('/invitations', {
    schema: { tags: peopleTags, summary: 'Invitations, newest first, with their status', querystring: ListQuery, response: { 200: ListOf(InvitationSchema) } },
    config: { scope: 'manage:people' },
  }, (req) => paginate(req.query, (w) => users.listInvitations(req.auth.workspaceId, w.limit, w.beforeId)));

  app.delete('/invitations/:invitationId', {
    schema: {
      tags: peopleTags, summary: 'Revoke an invitation (its link stops working at once)',
      description: '409 invalid_state when it was accepted already; revoking a revoked or expired invitation is a no-op.',
      params: Type.Object({ invitationId: PathId }), response: { 204: Type.Null() },
    },
    config: { scope: 'manage:people', errors: ['invalid_state'] },
  }, async (req, reply) => {
    await users.revokeInvitation(req.auth, req.params.invitationId);
    return reply.code(204).send(null);
  });
}
