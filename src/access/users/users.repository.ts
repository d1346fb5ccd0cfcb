import type { Executor } from '../../db/connection.js';
import type { UserRole } from '../../db/schema.js';
import { fromJsonColumn } from '../../lib/json.js';
import { toIso } from '../../lib/time.js';

/** Queries of the people of a workspace (src/access/users/CONTEXT.md). Every one is scoped by workspace except the
 * lookups by a presented token or a login address, which are what tell the workspace. */

export interface UserRecord {
  id: string;
  workspaceId: string;
  email: string;
  name: string | null;
  role: UserRole;
  createdAt: string;
  updatedAt: string;
  lastLoginAt: string | null;
}

const userColumns = [
  'id',
  'workspace_id',
  'email',
  'name',
  'role',
  'created_at',
  'updated_at',
  'last_login_at',
] as const;
type UserRow = {
  id: string;
  workspace_id: string;
  email: string;
  name: string | null;
  role: UserRole;
  created_at: string;
  updated_at: string;
  last_login_at: string | null;
};

function toUser(row: UserRow): UserRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    email: row.email,
    name: row.name,
    role: row.role,
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
    lastLoginAt: toIso(row.last_login_at),
  };
}

export async function insertUser(
  db: Executor,
  u: {
    id: string;
    workspaceId: string;
    email: string;
    name: string | null;
    role: UserRole;
    passwordHash: string | null;
    at: string;
  },
): Promise<void> {
  await db
    .insertInto('users')
    .values({
      id: u.id,
      workspace_id: u.workspaceId,
      email: u.email,
      name: u.name,
      role: u.role,
      password_hash: u.passwordHash,
      created_at: u.at,
      updated_at: u.at,
      last_login_at: null,
      totp_secret: null,
      totp_enrolled_at: null,
      totp_last_step: null,
    })
    .execute();
}

export async function getUser(db: Executor, workspaceId: string, id: string): Promise<UserRecord | undefined> {
  const row = await db
    .selectFrom('users')
    .select(userColumns)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toUser(row) : undefined;
}

export async function getUserByEmail(
  db: Executor,
  workspaceId: string,
  email: string,
): Promise<UserRecord | undefined> {
  const row = await db
    .selectFrom('users')
    .select(userColumns)
    .where('workspace_id', '=', workspaceId)
    .where('email', '=', email)
    .executeTakeFirst();
  return row ? toUser(row) : undefined;
}

export async function listUsers(
  db: Executor,
  workspaceId: string,
  limit: number,
  beforeId?: string,
): Promise<UserRecord[]> {
  let q = db.selectFrom('users').select(userColumns).where('workspace_id', '=', workspaceId);
  if (beforeId) q = q.where('id', '<', beforeId);
  return (await q.orderBy('id', 'desc').limit(limit).execute()).map(toUser);
}

/** The workspace's owners and admins, owners first (whom the console tells people without a permission to ask). */
export async function listManagers(db: Executor, workspaceId: string, limit: number): Promise<UserRecord[]> {
  const byRole = (role: 'owner' | 'admin') =>
    db
      .selectFrom('users')
      .select(userColumns)
      .where('workspace_id', '=', workspaceId)
      .where('role', '=', role)
      .orderBy('id', 'asc')
      .limit(limit)
      .execute();
  const owners = await byRole('owner');
  const admins = owners.length < limit ? await byRole('admin') : [];
  return [...owners, ...admins].slice(0, limit).map(toUser);
}

/** Login: every user with the address, in any workspace, with the password hash and the workspace's name. */
export async function findLoginCandidates(
  db: Executor,
  email: string,
): Promise<(UserRecord & { passwordHash: string | null; workspaceName: string; totpEnrolledAt: string | null })[]> {
  const rows = await db
    .selectFrom('users')
    .innerJoin('workspaces', 'workspaces.id', 'users.workspace_id')
    .select([
      'users.id',
      'users.workspace_id',
      'users.email',
      'users.name',
      'users.role',
      'users.created_at',
      'users.updated_at',
      'users.last_login_at',
      'users.password_hash',
      'users.totp_enrolled_at',
      'workspaces.name as workspace_name',
    ])
    .where('users.email', '=', email)
    .orderBy('users.id')
    .limit(50)
    .execute();
  return rows.map((r) => ({
    ...toUser(r),
    passwordHash: r.password_hash,
    workspaceName: r.workspace_name,
    totpEnrolledAt: toIso(r.totp_enrolled_at),
  }));
}

export async function updateUser(
  db: Executor,
  workspaceId: string,
  id: string,
  set: { name?: string | null; role?: UserRole },
  at: string,
): Promise<void> {
  await db
    .updateTable('users')
    .set({ ...set, updated_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .execute();
}

export async function setPasswordHash(
  db: Executor,
  workspaceId: string,
  id: string,
  passwordHash: string,
  at: string,
): Promise<void> {
  await db
    .updateTable('users')
    .set({ password_hash: passwordHash, updated_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .execute();
}

export async function touchLogin(db: Executor, workspaceId: string, id: string, at: string): Promise<void> {
  await db
    .updateTable('users')
    .set({ last_login_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .execute();
}

export async function deleteUser(db: Executor, workspaceId: string, id: string): Promise<void> {
  await db.deleteFrom('users').where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
}

/**
 * Locks the workspace's owners (PostgreSQL: row locks until the transaction ends; SQLite: the write lock) and
 * counts them, so two concurrent demotions cannot both see "another owner is left".
 */
export async function lockAndCountOwners(db: Executor, workspaceId: string): Promise<number> {
  const res = await db
    .updateTable('users')
    .set((eb) => ({ updated_at: eb.ref('updated_at') }))
    .where('workspace_id', '=', workspaceId)
    .where('role', '=', 'owner')
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

// Sessions

export interface SessionRecord {
  id: string;
  workspaceId: string;
  userId: string;
  csrfToken: string;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  revokedAt: string | null;
  ip: string | null;
  userAgent: string | null;
}

const sessionColumns = [
  'sessions.id',
  'sessions.workspace_id',
  'sessions.user_id',
  'sessions.csrf_token',
  'sessions.created_at',
  'sessions.last_seen_at',
  'sessions.expires_at',
  'sessions.revoked_at',
  'sessions.ip',
  'sessions.user_agent',
] as const;
type SessionRow = {
  id: string;
  workspace_id: string;
  user_id: string;
  csrf_token: string;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  revoked_at: string | null;
  ip: string | null;
  user_agent: string | null;
};

function toSession(r: SessionRow): SessionRecord {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    userId: r.user_id,
    csrfToken: r.csrf_token,
    createdAt: toIso(r.created_at),
    lastSeenAt: toIso(r.last_seen_at),
    expiresAt: toIso(r.expires_at),
    revokedAt: toIso(r.revoked_at),
    ip: r.ip,
    userAgent: r.user_agent,
  };
}

export async function insertSession(
  db: Executor,
  s: {
    id: string;
    workspaceId: string;
    userId: string;
    tokenHash: string;
    csrfToken: string;
    at: string;
    expiresAt: string;
    ip: string | null;
    userAgent: string | null;
  },
): Promise<void> {
  await db
    .insertInto('sessions')
    .values({
      id: s.id,
      workspace_id: s.workspaceId,
      user_id: s.userId,
      token_hash: s.tokenHash,
      csrf_token: s.csrfToken,
      created_at: s.at,
      last_seen_at: s.at,
      expires_at: s.expiresAt,
      revoked_at: null,
      ip: s.ip,
      user_agent: s.userAgent,
    })
    .execute();
}

/**
 * Whether one of these users (each in its own workspace: a person's accounts) signed in from `ip` since `sinceIso`:
 * sessions are kept after they end, with the address they were created from.
 */
export async function signedInFrom(
  db: Executor,
  users: { workspaceId: string; id: string }[],
  ip: string,
  sinceIso: string,
): Promise<boolean> {
  if (!users.length) return false;
  const row = await db
    .selectFrom('sessions')
    .select('id')
    .where('ip', '=', ip)
    .where('created_at', '>=', sinceIso)
    .where((eb) => eb.or(users.map((u) => eb.and([eb('workspace_id', '=', u.workspaceId), eb('user_id', '=', u.id)]))))
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The session a cookie's token names, with its user's role (read on every request: a role change is effective at
 * once) and whether the user still has to enrol in two-factor sign-in that the workspace requires.
 */
export async function findSessionByTokenHash(
  db: Executor,
  tokenHash: string,
): Promise<(SessionRecord & { role: UserRole; email: string; twoFactorMissing: boolean }) | undefined> {
  const row = await db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .innerJoin('workspaces', 'workspaces.id', 'sessions.workspace_id')
    .select([...sessionColumns, 'users.role', 'users.email', 'users.totp_enrolled_at', 'workspaces.settings'])
    .where('sessions.token_hash', '=', tokenHash)
    .executeTakeFirst();
  if (!row) return undefined;
  const required = fromJsonColumn<{ requireTwoFactor?: boolean }>(row.settings)?.requireTwoFactor === true;
  return {
    ...toSession(row),
    role: row.role,
    email: row.email,
    twoFactorMissing: required && !row.totp_enrolled_at,
  };
}

export async function touchSession(
  db: Executor,
  workspaceId: string,
  id: string,
  at: string,
  expiresAt: string,
): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ last_seen_at: at, expires_at: expiresAt })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute();
}

/** A user's live sessions (neither revoked nor expired), newest first. */
export async function listActiveSessions(
  db: Executor,
  workspaceId: string,
  userId: string,
  now: string,
): Promise<SessionRecord[]> {
  const rows = await db
    .selectFrom('sessions')
    .select(sessionColumns)
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('id', 'desc')
    .limit(200)
    .execute();
  return rows.map(toSession);
}

export async function revokeSession(
  db: Executor,
  workspaceId: string,
  userId: string,
  id: string,
  at: string,
): Promise<boolean> {
  const res = await db
    .updateTable('sessions')
    .set({ revoked_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function revokeUserSessions(
  db: Executor,
  workspaceId: string,
  userId: string,
  at: string,
  exceptId?: string,
): Promise<number> {
  let q = db
    .updateTable('sessions')
    .set({ revoked_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null);
  if (exceptId) q = q.where('id', '!=', exceptId);
  return Number((await q.executeTakeFirst()).numUpdatedRows);
}

// Invitations

export interface InvitationRecord {
  id: string;
  workspaceId: string;
  email: string;
  role: UserRole;
  invitedBy: string | null;
  createdAt: string;
  expiresAt: string;
  acceptedAt: string | null;
  revokedAt: string | null;
}

const invitationColumns = [
  'id',
  'workspace_id',
  'email',
  'role',
  'invited_by',
  'created_at',
  'expires_at',
  'accepted_at',
  'revoked_at',
] as const;
type InvitationRow = {
  id: string;
  workspace_id: string;
  email: string;
  role: UserRole;
  invited_by: string | null;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  revoked_at: string | null;
};

function toInvitation(r: InvitationRow): InvitationRecord {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    email: r.email,
    role: r.role,
    invitedBy: r.invited_by,
    createdAt: toIso(r.created_at),
    expiresAt: toIso(r.expires_at),
    acceptedAt: toIso(r.accepted_at),
    revokedAt: toIso(r.revoked_at),
  };
}

export async function insertInvitation(
  db: Executor,
  i: {
    id: string;
    workspaceId: string;
    email: string;
    role: UserRole;
    tokenHash: string;
    invitedBy: string | null;
    at: string;
    expiresAt: string;
  },
): Promise<void> {
  await db
    .insertInto('invitations')
    .values({
      id: i.id,
      workspace_id: i.workspaceId,
      email: i.email,
      role: i.role,
      token_hash: i.tokenHash,
      invited_by: i.invitedBy,
      created_at: i.at,
      expires_at: i.expiresAt,
      accepted_at: null,
      revoked_at: null,
    })
    .execute();
}

export async function listInvitations(
  db: Executor,
  workspaceId: string,
  limit: number,
  beforeId?: string,
): Promise<InvitationRecord[]> {
  let q = db.selectFrom('invitations').select(invitationColumns).where('workspace_id', '=', workspaceId);
  if (beforeId) q = q.where('id', '<', beforeId);
  return (await q.orderBy('id', 'desc').limit(limit).execute()).map(toInvitation);
}

export async function getInvitation(
  db: Executor,
  workspaceId: string,
  id: string,
): Promise<InvitationRecord | undefined> {
  const row = await db
    .selectFrom('invitations')
    .select(invitationColumns)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toInvitation(row) : undefined;
}

export async function findInvitationByTokenHash(
  db: Executor,
  tokenHash: string,
): Promise<(InvitationRecord & { workspaceName: string }) | undefined> {
  const row = await db
    .selectFrom('invitations')
    .innerJoin('workspaces', 'workspaces.id', 'invitations.workspace_id')
    .select([
      'invitations.id',
      'invitations.workspace_id',
      'invitations.email',
      'invitations.role',
      'invitations.invited_by',
      'invitations.created_at',
      'invitations.expires_at',
      'invitations.accepted_at',
      'invitations.revoked_at',
      'workspaces.name as workspace_name',
    ])
    .where('invitations.token_hash', '=', tokenHash)
    .executeTakeFirst();
  return row ? { ...toInvitation(row), workspaceName: row.workspace_name } : undefined;
}

/** Marks a pending invitation accepted; false when it was accepted, revoked or expired in the meantime (single use). */
export async function acceptInvitation(db: Executor, workspaceId: string, id: string, at: string): Promise<boolean> {
  const res = await db
    .updateTable('invitations')
    .set({ accepted_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', at)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function revokeInvitation(db: Executor, workspaceId: string, id: string, at: string): Promise<boolean> {
  const res = await db
    .updateTable('invitations')
    .set({ revoked_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** A new invitation replaces the address's pending ones. */
export async function revokePendingInvitations(
  db: Executor,
  workspaceId: string,
  email: string,
  at: string,
): Promise<void> {
  await db
    .updateTable('invitations')
    .set({ revoked_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('email', '=', email)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .execute();
}

// Password resets

export async function insertPasswordReset(
  db: Executor,
  r: { id: string; workspaceId: string; userId: string; tokenHash: string; at: string; expiresAt: string },
): Promise<void> {
  await db
    .insertInto('password_resets')
    .values({
      id: r.id,
      workspace_id: r.workspaceId,
      user_id: r.userId,
      token_hash: r.tokenHash,
      created_at: r.at,
      expires_at: r.expiresAt,
      used_at: null,
    })
    .execute();
}

export async function findPasswordReset(
  db: Executor,
  tokenHash: string,
): Promise<
  | { id: string; workspaceId: string; userId: string; email: string; expiresAt: string; usedAt: string | null }
  | undefined
> {
  const row = await db
    .selectFrom('password_resets')
    .innerJoin('users', 'users.id', 'password_resets.user_id')
    .select([
      'password_resets.id',
      'password_resets.workspace_id',
      'password_resets.user_id',
      'users.email',
      'password_resets.expires_at',
      'password_resets.used_at',
    ])
    .where('password_resets.token_hash', '=', tokenHash)
    .executeTakeFirst();
  return row
    ? {
        id: row.id,
        workspaceId: row.workspace_id,
        userId: row.user_id,
        email: row.email,
        expiresAt: toIso(row.expires_at),
        usedAt: toIso(row.used_at),
      }
    : undefined;
}

export async function usePasswordReset(db: Executor, workspaceId: string, id: string, at: string): Promise<boolean> {
  const res = await db
    .updateTable('password_resets')
    .set({ used_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('expires_at', '>', at)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Every other pending reset of the user is spent with the one used. */
export async function spendPasswordResets(
  db: Executor,
  workspaceId: string,
  userId: string,
  at: string,
): Promise<void> {
  await db
    .updateTable('password_resets')
    .set({ used_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .execute();
}

// Profile and two-factor sign-in (account.service.ts)

/** What the account's own checks need: the password hash and the two-factor state. */
export interface AccountRecord extends UserRecord {
  passwordHash: string | null;
  totpSecret: string | null;
  totpEnrolledAt: string | null;
  totpLastStep: number | null;
}

export async function getAccount(db: Executor, workspaceId: string, id: string): Promise<AccountRecord | undefined> {
  const row = await db
    .selectFrom('users')
    .select([...userColumns, 'password_hash', 'totp_secret', 'totp_enrolled_at', 'totp_last_step'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row
    ? {
        ...toUser(row),
        passwordHash: row.password_hash,
        totpSecret: row.totp_secret,
        totpEnrolledAt: toIso(row.totp_enrolled_at),
        totpLastStep: row.totp_last_step === null ? null : Number(row.totp_last_step),
      }
    : undefined;
}

export async function setEmail(
  db: Executor,
  workspaceId: string,
  id: string,
  email: string,
  at: string,
): Promise<void> {
  await db
    .updateTable('users')
    .set({ email, updated_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .execute();
}

/** Starts (or restarts) an enrolment: the sealed secret, not yet confirmed. */
export async function setPendingTotp(
  db: Executor,
  workspaceId: string,
  id: string,
  sealedSecret: string,
  at: string,
): Promise<void> {
  await db
    .updateTable('users')
    .set({ totp_secret: sealedSecret, totp_enrolled_at: null, totp_last_step: null, updated_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('totp_enrolled_at', 'is', null)
    .execute();
}

/**
 * Records that a code of `step` was accepted: only when no code of that step or a later one was before (atomic, so
 * two requests with the same code cannot both pass). False: a replay.
 */
export async function useTotpStep(db: Executor, workspaceId: string, id: string, step: number): Promise<boolean> {
  const res = await db
    .updateTable('users')
    .set({ totp_last_step: step })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function confirmTotp(db: Executor, workspaceId: string, id: string, at: string): Promise<boolean> {
  const res = await db
    .updateTable('users')
    .set({ totp_enrolled_at: at, updated_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('totp_secret', 'is not', null)
    .where('totp_enrolled_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function clearTotp(db: Executor, workspaceId: string, id: string, at: string): Promise<void> {
  await db
    .updateTable('users')
    .set({ totp_secret: null, totp_enrolled_at: null, totp_last_step: null, updated_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .execute();
  await db
    .deleteFrom('user_recovery_codes')
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', id)
    .execute();
}

/** Replaces a user's recovery codes with new ones (their hashes). */
export async function replaceRecoveryCodes(
  db: Executor,
  workspaceId: string,
  userId: string,
  codes: { id: string; hash: string }[],
  at: string,
): Promise<void> {
  await db
    .deleteFrom('user_recovery_codes')
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .execute();
  await db
    .insertInto('user_recovery_codes')
    .values(
      codes.map((c) => ({
        id: c.id,
        workspace_id: workspaceId,
        user_id: userId,
        code_hash: c.hash,
        created_at: at,
        used_at: null,
      })),
    )
    .execute();
}

/** Spends an unused recovery code of the user once (atomic). False: no such unused code. */
export async function useRecoveryCode(
  db: Executor,
  workspaceId: string,
  userId: string,
  hash: string,
  at: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('user_recovery_codes')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .where('code_hash', '=', hash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  if (!row) return false;
  const res = await db
    .updateTable('user_recovery_codes')
    .set({ used_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', row.id)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function countUnusedRecoveryCodes(db: Executor, workspaceId: string, userId: string): Promise<number> {
  const row = await db
    .selectFrom('user_recovery_codes')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
