import crypto from 'node:crypto';
import { SYSTEM_ACTOR, changesOf, recordAudit, type AuditActor } from '../../outbox/index.js';
import type { AuthContext } from '../../http/types.js';
import { type Db, isUniqueViolation } from '../../db/connection.js';
import { conflict, DomainError, notFound, validationFailed } from '../../errors/errors.js';
import { normalizeEmail } from '../../lib/email.js';
import { newId } from '../../lib/ids.js';
import type { Mailer } from '../../mail/transport.js';
import { FailureLimiter, LoginLimiter, type LoginTrust } from './login-limiter.js';
import { checkPassword, hashPassword, verifyPassword } from './passwords.js';
import { isRole, type Role } from './roles.js';
import { DEVICE_TTL_MS, newToken, sha256, type SessionsService } from './sessions.service.js';
import { ConsoleMail } from './users.mail.js';
import * as repo from './users.repository.js';
import { getWorkspace } from '../workspaces/workspaces.repository.js';

export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;
export const RESET_TTL_MS = 3600 * 1000;

export interface User {
  id: string;
  email: string;
  name: string | null;
  role: Role;
  createdAt: string;
  updatedAt: string;
  lastLoginAt: string | null;
}

export type InvitationStatus = 'PENDING' | 'ACCEPTED' | 'REVOKED' | 'EXPIRED';

export interface Invitation {
  id: string;
  email: string;
  role: Role;
  status: InvitationStatus;
  invitedBy: string | null;
  createdAt: string;
  expiresAt: string;
  acceptedAt: string | null;
  revokedAt: string | null;
}

export interface Meta {
  ip: string | null;
  userAgent: string | null;
  /** The known-device cookies the browser sent (SessionsService.deviceCookies). */
  devices?: string[];
}

/** What makes the pending sign-in of a person with two-factor sign-in (AccountService). */
export interface PendingSignIns {
  pendingSignIn(user: { workspaceId: string; id: string; passwordHash: string | null }): string;
}

/** An IP address counts as known to an account for this long after a sign-in from it. */
export const KNOWN_IP_MS = 90 * 24 * 3600 * 1000;
/** Accounts remembered by one browser's known-device cookie. */
const DEVICE_ENTRIES = 5;
const DEVICE_ENTRY = /^[0-9a-z]{1,12}\.[A-Za-z0-9_-]{43}$/;

export type LoginResult =
  /** `device`: the known-device cookie's new value, to set with the session cookie. */
  | { kind: 'ok'; token: string; user: User; workspaceId: string; device: string }
  /** The password was right and the user has two-factor sign-in: `pending` is the pending sign-in cookie's value. */
  | { kind: 'two-factor'; pending: string; device: string }
  | { kind: 'choose'; workspaces: { id: string; name: string }[] }
  | { kind: 'failed' }
  | { kind: 'limited'; retryAfter: number };

/** What a token of an invitation or reset link names, for its page. */
export type LinkState<T> = { state: 'valid'; value: T } | { state: 'used' | 'expired' | 'unknown' };

const toUser = (u: repo.UserRecord): User => ({
  id: u.id,
  email: u.email,
  name: u.name,
  role: u.role,
  createdAt: u.createdAt,
  updatedAt: u.updatedAt,
  lastLoginAt: u.lastLoginAt,
});

function toInvitation(i: repo.InvitationRecord, now = Date.now()): Invitation {
  const status: InvitationStatus = i.acceptedAt
    ? 'ACCEPTED'
    : i.revokedAt
      ? 'REVOKED'
      : Date.parse(i.expiresAt) <= now
        ? 'EXPIRED'
        : 'PENDING';
  return {
    id: i.id,
    email: i.email,
    role: i.role,
    status,
    invitedBy: i.invitedBy,
    createdAt: i.createdAt,
    expiresAt: i.expiresAt,
    acceptedAt: i.acceptedAt,
    revokedAt: i.revokedAt,
  };
}

function emailOf(input: string, path = '/email'): string {
  const email = normalizeEmail(input.trim());
  if (!email) throw validationFailed([{ path, message: 'must be an email address' }]);
  return email;
}

/** Only an owner (a holder of `admin`: the owner role, or an admin API key) gives, takes or touches the owner role. */
function requireOwner(actor: AuthContext, what: string): void {
  if (!actor.scopes.includes('admin')) {
    throw new DomainError('insufficient_scope', `only an owner can ${what}`, {
      headers: { 'www-authenticate': 'Bearer error="insufficient_scope", scope="admin"' },
    });
  }
}

/**
 * People, sign-in, invitations and password resets (src/access/users/CONTEXT.md). Sessions themselves are
 * SessionsService's; this service decides who may have one.
 */
export class UsersService {
  /** Failed sign-ins: per (address, IP), per IP, per known device, and the account-wide backoff (docs/console.md). */
  readonly loginLimiter = new LoginLimiter();
  /** Reset requests: 3 emails per address and 20 requests per IP address in 15 minutes. */
  readonly resetLimiter = new FailureLimiter({ perKey: 3, perIp: 20, windowMs: 15 * 60_000 });
  private readonly mail: ConsoleMail;

  /** The key of known-device cookies, derived from the server secret for this use only. */
  private readonly deviceKey: Buffer;

  constructor(
    private readonly db: Db,
    private readonly sessions: SessionsService,
    private readonly opts: { publicUrl: string; secret: Buffer; mailer?: Mailer },
    private readonly account?: PendingSignIns,
  ) {
    this.mail = new ConsoleMail(db, opts.mailer, opts.secret);
    this.deviceKey = crypto.createHmac('sha256', opts.secret).update('formcast known-device cookie v1').digest();
  }

  /**
   * A known-device cookie is up to DEVICE_ENTRIES entries `<issued, base 36>.<MAC>`, one per account signed in from
   * this browser: the MAC (HMAC-SHA256 under deviceKey) binds the account's address and the time, so the cookie names
   * no address and cannot be made for another account or moved to another time.
   */
  private deviceMac(email: string, issued: string): string {
    return crypto.createHmac('sha256', this.deviceKey).update(`${email}\n${issued}`).digest('base64url');
  }

  /** The entry of `email` in the cookies sent that is valid and not older than DEVICE_TTL_MS, or null. */
  private knownDevice(email: string, cookies: string[], now = Date.now()): string | null {
    for (const cookie of cookies.slice(0, 4)) {
      for (const entry of cookie.split('~').slice(0, DEVICE_ENTRIES)) {
        if (!DEVICE_ENTRY.test(entry)) continue;
        const [issued, mac] = entry.split('.') as [string, string];
        const at = parseInt(issued, 36);
        if (!(at <= now && now - at < DEVICE_TTL_MS)) continue;
        const expected = this.deviceMac(email, issued);
        if (crypto.timingSafeEqual(Buffer.from(mac), Buffer.from(expected))) return entry;
      }
    }
    return null;
  }

  /** The known-device cookie after a sign-in to `email`: its fresh entry first, then the browser's other accounts'. */
  private deviceCookieAfter(email: string, cookies: string[], now = Date.now()): string {
    const issued = now.toString(36);
    const mine = this.knownDevice(email, cookies, now);
    const others = (cookies[0] ?? '').split('~').filter((e) => DEVICE_ENTRY.test(e) && e !== mine);
    return [`${issued}.${this.deviceMac(email, issued)}`, ...others].slice(0, DEVICE_ENTRIES).join('~');
  }

  /** A user with a password at once (the CLI's `formcast user create`). */
  async create(
    workspaceId: string,
    input: { email: string; role: string; password: string; name?: string | null },
    by: AuditActor = SYSTEM_ACTOR,
  ): Promise<User & { workspaceId: string }> {
    const email = emailOf(input.email);
    if (!isRole(input.role))
      throw validationFailed([{ path: '/role', message: 'must be one of owner, admin, editor, viewer' }]);
    const passwordHash = await hashPassword(checkPassword(input.password));
    const id = newId('usr');
    const at = new Date().toISOString();
    const role = input.role;
    try {
      await this.db.kysely.transaction().execute(async (trx) => {
        await repo.insertUser(trx, { id, workspaceId, email, name: input.name ?? null, role, passwordHash, at });
        await recordAudit(trx, workspaceId, by, {
          action: 'user.created',
          target: { type: 'user', id, label: email },
          changes: { role: { before: null, after: role }, password: { secret: true } },
        });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('user_exists', `${email} is already a user of the workspace`);
      throw err;
    }
    return { ...toUser((await repo.getUser(this.db.kysely, workspaceId, id))!), workspaceId };
  }

  async get(workspaceId: string, id: string): Promise<User> {
    const user = await repo.getUser(this.db.kysely, workspaceId, id);
    if (!user) throw notFound('user');
    return toUser(user);
  }

  async list(workspaceId: string, limit: number, beforeId?: string): Promise<User[]> {
    return (await repo.listUsers(this.db.kysely, workspaceId, limit, beforeId)).map(toUser);
  }

  /** Up to `limit` owners and admins, owners first: whom a person without a permission can ask. */
  async managers(workspaceId: string, limit = 5): Promise<User[]> {
    return (await repo.listManagers(this.db.kysely, workspaceId, limit)).map(toUser);
  }

  /** Name and role. The owner role is an owner's to give or take; the last owner stays an owner (409 invalid_state). */
  async update(
    actor: AuthContext,
    id: string,
    input: { name?: string | null; role?: Role },
    by: AuditActor = SYSTEM_ACTOR,
  ): Promise<User> {
    const ws = actor.workspaceId;
    return this.db.kysely.transaction().execute(async (trx) => {
      const owners = await repo.lockAndCountOwners(trx, ws);
      const user = await repo.getUser(trx, ws, id);
      if (!user) throw notFound('user');
      if (user.role === 'owner' || input.role === 'owner')
        requireOwner(actor, 'change an owner or give the owner role');
      if (user.role === 'owner' && input.role !== undefined && input.role !== 'owner' && owners <= 1) {
        throw conflict(
          'invalid_state',
          'the last owner of the workspace cannot be demoted: make another person an owner first',
        );
      }
      const set: { name?: string | null; role?: Role } = {};
      if (input.name !== undefined) set.name = input.name === null ? null : input.name.trim() || null;
      if (input.role !== undefined) set.role = input.role;
      if (Object.keys(set).length) await repo.updateUser(trx, ws, id, set, new Date().toISOString());
      const updated = (await repo.getUser(trx, ws, id))!;
      const changes = changesOf(user, updated, ['name', 'role']);
      if (changes)
        await recordAudit(trx, ws, by, {
          action: changes.role ? 'user.role_changed' : 'user.updated',
          target: { type: 'user', id, label: user.email },
          changes,
        });
      return toUser(updated);
    });
  }

  /** Removes a person: their sessions die with them (cascade), at once. */
  async remove(actor: AuthContext, id: string, by: AuditActor = SYSTEM_ACTOR): Promise<void> {
    const ws = actor.workspaceId;
    await this.db.kysely.transaction().execute(async (trx) => {
      const owners = await repo.lockAndCountOwners(trx, ws);
      const user = await repo.getUser(trx, ws, id);
      if (!user) throw notFound('user');
      if (user.role === 'owner') {
        requireOwner(actor, 'remove an owner');
        if (owners <= 1)
          throw conflict(
            'invalid_state',
            'the last owner of the workspace cannot be removed: make another person an owner first',
          );
      }
      await repo.revokeUserSessions(trx, ws, id, new Date().toISOString());
      await repo.deleteUser(trx, ws, id);
      await recordAudit(trx, ws, by, {
        action: 'user.removed',
        target: { type: 'user', id, label: user.email },
        changes: { role: { before: user.role, after: null } },
      });
    });
  }

  /**
   * Checks an address and password; every workspace where both match is a candidate (the same person may
   * belong to several). One: a session. Several: the caller asks which (`workspace`). Failures are counted
   * per address and per IP address; over the limit nothing is checked at all.
   */
  async login(input: { email: string; password: string; workspace?: string }, meta: Meta): Promise<LoginResult> {
    const email = normalizeEmail(input.email.trim()) ?? input.email.trim().toLowerCase().slice(0, 320);
    const ip = meta.ip ?? 'unknown';
    const devices = meta.devices ?? [];
    // How far the attempt is trusted (LoginLimiter): a known device of the account, else, while the account-wide
    // backoff holds, an address the account signed in from before.
    const device = this.knownDevice(email, devices);
    let trust: LoginTrust = device ? { kind: 'device', device } : { kind: 'none' };
    let found: Awaited<ReturnType<typeof repo.findLoginCandidates>> | undefined;
    if (!device && this.loginLimiter.accountWaitMs(email) > 0) {
      found = await repo.findLoginCandidates(this.db.kysely, email);
      const since = new Date(Date.now() - KNOWN_IP_MS).toISOString();
      if (
        await repo.signedInFrom(
          this.db.kysely,
          found.map((c) => ({ workspaceId: c.workspaceId, id: c.id })),
          ip,
          since,
        )
      )
        trust = { kind: 'ip' };
    }
    // Counted before the check, taken back on success: parallel guesses cannot all pass while argon2 runs.
    const attempt = this.loginLimiter.begin(email, ip, trust);
    if (attempt.retryAfter) return { kind: 'limited', retryAfter: attempt.retryAfter };
    const candidates = (found ?? (await repo.findLoginCandidates(this.db.kysely, email))).filter(
      (c) => !input.workspace || c.workspaceId === input.workspace,
    );
    const matches: typeof candidates = [];
    if (!candidates.some((c) => c.passwordHash)) await verifyPassword(null, input.password);
    for (const c of candidates) {
      if (c.passwordHash && (await verifyPassword(c.passwordHash, input.password))) matches.push(c);
    }
    if (!matches.length) return { kind: 'failed' };
    attempt.cleared();
    if (matches.length > 1)
      return { kind: 'choose', workspaces: matches.map((m) => ({ id: m.workspaceId, name: m.workspaceName })) };
    const user = matches[0]!;
    if (user.totpEnrolledAt && this.account)
      return {
        kind: 'two-factor',
        pending: this.account.pendingSignIn(user),
        device: this.deviceCookieAfter(email, devices),
      };
    const session = await this.sessions.create({ id: user.id, workspaceId: user.workspaceId }, meta);
    await repo.touchLogin(this.db.kysely, user.workspaceId, user.id, new Date().toISOString());
    return {
      kind: 'ok',
      token: session.token,
      user: toUser(user),
      workspaceId: user.workspaceId,
      device: this.deviceCookieAfter(email, devices),
    };
  }

  // Invitations

  async invite(
    actor: AuthContext,
    input: { email: string; role: Role },
    by: AuditActor = SYSTEM_ACTOR,
  ): Promise<Invitation & { emailSent: boolean }> {
    const ws = actor.workspaceId;
    const email = emailOf(input.email);
    if (input.role === 'owner') requireOwner(actor, 'invite an owner');
    if (await repo.getUserByEmail(this.db.kysely, ws, email))
      throw conflict('user_exists', `${email} is already a user of the workspace`);
    const token = newToken();
    const id = newId('inv');
    const now = Date.now();
    const at = new Date(now).toISOString();
    await this.db.kysely.transaction().execute(async (trx) => {
      await repo.revokePendingInvitations(trx, ws, email, at);
      await repo.insertInvitation(trx, {
        id,
        workspaceId: ws,
        email,
        role: input.role,
        tokenHash: sha256(token),
        invitedBy: actor.userId ?? null,
        at,
        expiresAt: new Date(now + INVITATION_TTL_MS).toISOString(),
      });
      await recordAudit(trx, ws, by, {
        action: 'user.invited',
        target: { type: 'invitation', id, label: email },
        changes: { role: { before: null, after: input.role } },
      });
    });
    const invitation = toInvitation((await repo.getInvitation(this.db.kysely, ws, id))!);
    const workspace =
      (await this.db.kysely.selectFrom('workspaces').select('name').where('id', '=', ws).executeTakeFirst())?.name ??
      'Formcast';
    const url = `${this.opts.publicUrl}/app/invite/${token}`;
    const emailSent = await this.mail
      .send(
        ws,
        id,
        email,
        `You are invited to ${workspace} on Formcast`,
        [
          `You have been invited to join ${workspace} on Formcast as ${/^[aeiou]/.test(input.role) ? 'an' : 'a'} ${input.role}.`,
          'Follow the link to choose your name and password. It works once, for 7 days.',
          'If you did not expect this invitation, ignore this email.',
        ],
        { url, label: 'Accept the invitation' },
      )
      .catch(() => false); // a relay that fails: the invitation stands, unsent (emailSent: false)
    return { ...invitation, emailSent };
  }

  async listInvitations(workspaceId: string, limit: number, beforeId?: string): Promise<Invitation[]> {
    const now = Date.now();
    return (await repo.listInvitations(this.db.kysely, workspaceId, limit, beforeId)).map((i) => toInvitation(i, now));
  }

  async revokeInvitation(actor: AuthContext, id: string, by: AuditActor = SYSTEM_ACTOR): Promise<void> {
    const inv = await repo.getInvitation(this.db.kysely, actor.workspaceId, id);
    if (!inv) throw notFound('invitation');
    if (inv.role === 'owner') requireOwner(actor, 'revoke an invitation to be an owner');
    if (inv.acceptedAt) throw conflict('invalid_state', 'the invitation was accepted already');
    await this.db.kysely.transaction().execute(async (trx) => {
      await repo.revokeInvitation(trx, actor.workspaceId, id, new Date().toISOString());
      await recordAudit(trx, actor.workspaceId, by, {
        action: 'user.invitation_revoked',
        target: { type: 'invitation', id, label: inv.email },
        changes: { role: { before: inv.role, after: null } },
      });
    });
  }

  async invitation(
    token: string,
  ): Promise<LinkState<{ email: string; role: Role; workspaceName: string; brandColor: string | null }>> {
    const inv = await repo.findInvitationByTokenHash(this.db.kysely, sha256(token));
    if (!inv) return { state: 'unknown' };
    if (inv.acceptedAt || inv.revokedAt) return { state: 'used' };
    if (Date.parse(inv.expiresAt) <= Date.now()) return { state: 'expired' };
    // The invitation page wears the workspace's brand colour (docs/console.md, "Public pages").
    const brandColor = (await getWorkspace(this.db.kysely, inv.workspaceId))?.settings.brandColor ?? null;
    return {
      state: 'valid',
      value: { email: inv.email, role: inv.role, workspaceName: inv.workspaceName, brandColor },
    };
  }

  /** Accepts an invitation once: the user is created with the password and signed in. */
  async acceptInvitation(
    token: string,
    input: { name: string; password: string },
    meta: Meta,
  ): Promise<LinkState<{ token: string }>> {
    const password = checkPassword(input.password);
    const state = await this.invitation(token);
    if (state.state !== 'valid') return state;
    const inv = (await repo.findInvitationByTokenHash(this.db.kysely, sha256(token)))!;
    const passwordHash = await hashPassword(password);
    const id = newId('usr');
    const at = new Date().toISOString();
    const accepted = await this.db.kysely.transaction().execute(async (trx) => {
      if (!(await repo.acceptInvitation(trx, inv.workspaceId, inv.id, at))) return false;
      if (await repo.getUserByEmail(trx, inv.workspaceId, inv.email))
        throw conflict('user_exists', `${inv.email} is already a user of the workspace`);
      await repo.insertUser(trx, {
        id,
        workspaceId: inv.workspaceId,
        email: inv.email,
        name: input.name.trim().slice(0, 200) || null,
        role: inv.role,
        passwordHash,
        at,
      });
      // The person joins by themself: they are the actor (docs/audit-log.md).
      await recordAudit(
        trx,
        inv.workspaceId,
        { type: 'user', id, label: inv.email, ip: meta.ip ?? null, userAgent: meta.userAgent?.slice(0, 300) ?? null },
        {
          action: 'user.joined',
          target: { type: 'user', id, label: inv.email },
          changes: { role: { before: null, after: inv.role } },
        },
      );
      return true;
    });
    if (!accepted) return { state: 'used' };
    const session = await this.sessions.create({ id, workspaceId: inv.workspaceId }, meta);
    await repo.touchLogin(this.db.kysely, inv.workspaceId, id, at);
    return { state: 'valid', value: { token: session.token } };
  }

  // Password resets

  /**
   * Sends a reset link to every account of the address (one per workspace). Answers nothing either way: the
   * caller shows the same page whether the address has an account or not. False when the IP is over its limit.
   */
  async requestReset(emailInput: string, meta: Meta): Promise<boolean> {
    const ip = meta.ip ?? 'unknown';
    const email = normalizeEmail(emailInput.trim());
    if (this.resetLimiter.retryAfter('', ip)) return false;
    if (!email) {
      this.resetLimiter.fail(`ip-only:${ip}`, ip);
      return true;
    }
    if (this.resetLimiter.retryAfter(email, ip)) return true;
    this.resetLimiter.fail(email, ip);
    // The lookup and the emails happen after the answer, so its timing says nothing about which addresses have accounts.
    void this.sendResets(email).catch(() => {});
    return true;
  }

  private async sendResets(email: string): Promise<void> {
    const now = Date.now();
    for (const user of await repo.findLoginCandidates(this.db.kysely, email)) {
      const token = newToken();
      const id = newId('pwr');
      await repo.insertPasswordReset(this.db.kysely, {
        id,
        workspaceId: user.workspaceId,
        userId: user.id,
        tokenHash: sha256(token),
        at: new Date(now).toISOString(),
        expiresAt: new Date(now + RESET_TTL_MS).toISOString(),
      });
      await this.mail
        .send(
          user.workspaceId,
          id,
          user.email,
          `Reset your Formcast password for ${user.workspaceName}`,
          [
            `Someone asked to reset the password of ${user.email} in ${user.workspaceName} on Formcast.`,
            'Follow the link to choose a new one. It works once, for one hour, and signs you out everywhere else.',
            'If it was not you, ignore this email: your password stays as it is.',
          ],
          { url: `${this.opts.publicUrl}/app/reset/${token}`, label: 'Choose a new password' },
        )
        .catch(() => false);
    }
  }

  async reset(token: string): Promise<LinkState<{ email: string }>> {
    const r = await repo.findPasswordReset(this.db.kysely, sha256(token));
    if (!r) return { state: 'unknown' };
    if (r.usedAt) return { state: 'used' };
    if (Date.parse(r.expiresAt) <= Date.now()) return { state: 'expired' };
    return { state: 'valid', value: { email: r.email } };
  }

  /** Sets the new password once, revokes every session of the user, and signs in anew. */
  /**
   * Sets the new password of a valid reset link, spends the link and signs every session of the user out. The user is
   * then signed in (`token`: a new session), unless they have two-factor sign-in: then `pending` is the pending sign-in
   * cookie's value and the code is still asked for (a reset link proves the mailbox, not the second factor).
   */
  async completeReset(
    token: string,
    passwordInput: string,
    meta: Meta,
  ): Promise<LinkState<{ token: string } | { pending: string }>> {
    const password = checkPassword(passwordInput);
    const r = await repo.findPasswordReset(this.db.kysely, sha256(token));
    if (!r) return { state: 'unknown' };
    const passwordHash = await hashPassword(password);
    const at = new Date().toISOString();
    const used = await this.db.kysely.transaction().execute(async (trx) => {
      if (!(await repo.usePasswordReset(trx, r.workspaceId, r.id, at))) return false;
      await repo.spendPasswordResets(trx, r.workspaceId, r.userId, at);
      await repo.setPasswordHash(trx, r.workspaceId, r.userId, passwordHash, at);
      await repo.revokeUserSessions(trx, r.workspaceId, r.userId, at);
      return true;
    });
    if (!used) return { state: r.usedAt ? 'used' : Date.parse(r.expiresAt) <= Date.now() ? 'expired' : 'used' };
    const enrolled = this.account && (await repo.getAccount(this.db.kysely, r.workspaceId, r.userId))?.totpEnrolledAt;
    if (enrolled && this.account)
      return {
        state: 'valid',
        value: { pending: this.account.pendingSignIn({ workspaceId: r.workspaceId, id: r.userId, passwordHash }) },
      };
    const session = await this.sessions.create({ id: r.userId, workspaceId: r.workspaceId }, meta);
    await repo.touchLogin(this.db.kysely, r.workspaceId, r.userId, at);
    return { state: 'valid', value: { token: session.token } };
  }
}
