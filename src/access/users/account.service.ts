import crypto from 'node:crypto';
import { type Db, isUniqueViolation } from '../../db/connection.js';
import { conflict, DomainError, notFound, validationFailed } from '../../errors/errors.js';
import type { AuthContext } from '../../http/types.js';
import { normalizeEmail } from '../../lib/email.js';
import { newId } from '../../lib/ids.js';
import { sealer, type Sealer } from '../../lib/seal.js';
import type { Mailer } from '../../mail/transport.js';
import { recordAudit, type AuditActor } from '../../outbox/index.js';
import { getWorkspace } from '../workspaces/workspaces.repository.js';
import { FailureLimiter } from './login-limiter.js';
import { checkPassword, hashPassword, verifyPassword } from './passwords.js';
import type { SessionsService } from './sessions.service.js';
import {
  newRecoveryCodes,
  newTotpSecret,
  qrDataUrl,
  recoveryCodeHash,
  recoveryCodeOf,
  totpCodeOf,
  totpStep,
  totpUri,
} from './two-factor.js';
import { ConsoleMail } from './users.mail.js';
import * as repo from './users.repository.js';
import type { Meta, User } from './users.service.js';

/** The seal of TOTP secrets (lib/seal.ts): its own key, the user's id as context. */
export const TOTP_SEAL_PURPOSE = 'user totp secret';
/** How long the second step of a sign-in waits for its code after the password was right. */
export const PENDING_SIGN_IN_MS = 10 * 60_000;

export interface TwoFactorStatus {
  enabled: boolean;
  enrolledAt: string | null;
  /** Unused recovery codes left (0 while off). */
  recoveryCodesLeft: number;
  /** The workspace requires two-factor sign-in of everyone (its `requireTwoFactor` setting). */
  required: boolean;
}

export interface TwoFactorSetup {
  /** The secret in Base32, for typing into an app that cannot scan. */
  secret: string;
  /** The otpauth:// address the QR code holds. */
  uri: string;
  /** The QR code as an SVG data URL. */
  qrCode: string;
}

/** The signed-in person acting on their own account (a console session; an API key is no person). */
type Self = AuthContext;

/** Which kind of code passed a check. */
export type CodeKind = 'totp' | 'recovery';

export type SecondStepResult =
  | { kind: 'ok'; token: string; workspaceId: string; userId: string; used: CodeKind }
  /** The pending sign-in is unknown, too old, or its password changed since: start again. */
  | { kind: 'expired' }
  | { kind: 'failed'; replayed: boolean }
  | { kind: 'limited'; retryAfter: number };

const rateLimited = (retryAfter: number, what: string) =>
  new DomainError('rate_limited', `too many wrong ${what}; try again in ${retryAfter} seconds`, {
    headers: { 'retry-after': String(retryAfter) },
  });

function self(actor: Self): { workspaceId: string; userId: string; sessionId: string } {
  if (!actor.userId || !actor.sessionId)
    throw new DomainError('forbidden', 'an API key has no profile: sign in to the console as the person');
  return { workspaceId: actor.workspaceId, userId: actor.userId, sessionId: actor.sessionId };
}

/**
 * One's own account (docs/console.md, "Your profile"; docs/security.md): name, email, password, and two-factor
 * sign-in (TOTP and recovery codes) with the sign-in's second step. Each change is one method, so that an audit log
 * can record it beside the call: updateProfile, changePassword, confirmTwoFactor (enabled), disableTwoFactor,
 * regenerateRecoveryCodes, and completeSignIn's `used: 'recovery'`.
 */
export class AccountService {
  /** Wrong current passwords on the profile: 5 per user and 20 per IP address in 15 minutes. */
  readonly passwordLimiter = new FailureLimiter({ perKey: 5, perIp: 20, windowMs: 15 * 60_000 });
  /** Wrong two-factor codes (sign-in, enrolment, turning off): 5 per user and 20 per IP address in 15 minutes. */
  readonly codeLimiter = new FailureLimiter({ perKey: 5, perIp: 20, windowMs: 15 * 60_000 });
  private readonly seal: Sealer;
  private readonly recoveryKey: Buffer;
  private readonly pendingKey: Buffer;
  private readonly mail: ConsoleMail;

  constructor(
    private readonly db: Db,
    private readonly sessions: SessionsService,
    private readonly opts: { publicUrl: string; secret: Buffer; mailer?: Mailer },
  ) {
    this.seal = sealer(opts.secret, TOTP_SEAL_PURPOSE);
    const derive = (label: string) => crypto.createHmac('sha256', opts.secret).update(label).digest();
    this.recoveryKey = derive('formcast recovery codes v1');
    this.pendingKey = derive('formcast pending sign-in v1');
    this.mail = new ConsoleMail(db, opts.mailer, opts.secret);
  }

  private async account(workspaceId: string, userId: string): Promise<repo.AccountRecord> {
    const a = await repo.getAccount(this.db.kysely, workspaceId, userId);
    if (!a) throw notFound('user');
    return a;
  }

  /** The current password, checked under passwordLimiter: 422 at `path` when wrong, 429 past the limit. */
  private async checkCurrentPassword(a: repo.AccountRecord, given: unknown, meta: Meta, path = '/currentPassword') {
    if (typeof given !== 'string' || !given)
      throw validationFailed([{ path, message: 'is required: enter your current password' }]);
    const attempt = this.passwordLimiter.begin(a.id, meta.ip ?? 'unknown');
    if (attempt.retryAfter) throw rateLimited(attempt.retryAfter, 'passwords');
    if (!(await verifyPassword(a.passwordHash, given)))
      throw validationFailed([{ path, message: 'is not your current password' }]);
    attempt.cleared();
  }

  /**
   * A TOTP code (never one of a step already used: replay) or an unused recovery code (spent here), checked under
   * codeLimiter. With `executor` (a transaction) the code is recorded there. Null: wrong, or `replayed`.
   */
  private async useCode(
    a: repo.AccountRecord,
    given: string,
    meta: Meta,
    opts: { recovery: boolean },
  ): Promise<{ ok: true; kind: CodeKind } | { ok: false; replayed: boolean; retryAfter?: number }> {
    const attempt = this.codeLimiter.begin(a.id, meta.ip ?? 'unknown');
    if (attempt.retryAfter) return { ok: false, replayed: false, retryAfter: attempt.retryAfter };
    const totp = totpCodeOf(given);
    if (totp && a.totpSecret) {
      const secret = this.seal.open(a.totpSecret, a.id);
      const step = await totpStep(secret, totp, null);
      if (step !== null) {
        if (await repo.useTotpStep(this.db.kysely, a.workspaceId, a.id, step)) {
          attempt.cleared();
          return { ok: true, kind: 'totp' };
        }
        return { ok: false, replayed: true };
      }
      return { ok: false, replayed: false };
    }
    const recovery = opts.recovery ? recoveryCodeOf(given) : null;
    if (recovery && a.totpEnrolledAt) {
      const hash = recoveryCodeHash(this.recoveryKey, a.id, recovery);
      if (await repo.useRecoveryCode(this.db.kysely, a.workspaceId, a.id, hash, new Date().toISOString())) {
        attempt.cleared();
        return { ok: true, kind: 'recovery' };
      }
    }
    return { ok: false, replayed: false };
  }

  /** useCode for the API: 422 at /code when wrong (or used already), 429 past the limit. */
  private async requireCode(a: repo.AccountRecord, given: unknown, meta: Meta, recovery: boolean): Promise<CodeKind> {
    if (typeof given !== 'string' || !given.trim())
      throw validationFailed([{ path: '/code', message: 'is required: enter the code your app shows' }]);
    const r = await this.useCode(a, given, meta, { recovery });
    if (r.ok) return r.kind;
    if (r.retryAfter) throw rateLimited(r.retryAfter, 'codes');
    throw validationFailed([
      {
        path: '/code',
        message: r.replayed
          ? 'was used already: wait for the next code your app shows'
          : recovery
            ? 'is not valid: enter the current code of your app, or an unused recovery code'
            : 'is not valid: enter the current code your app shows',
      },
    ]);
  }

  // Profile

  /**
   * Name and email. A new email needs the current password, must be free in the workspace (409 user_exists), and
   * changes at once (no confirmation mail); the old address is told (when the workspace can send).
   */
  async updateProfile(
    actor: Self,
    input: { name?: string | null; email?: string; currentPassword?: string },
    meta: Meta,
  ): Promise<User & { emailChanged: boolean; previousEmail: string | null }> {
    const me = self(actor);
    const a = await this.account(me.workspaceId, me.userId);
    const at = new Date().toISOString();
    let email: string | null = null;
    if (input.email !== undefined) {
      const normalised = normalizeEmail(input.email.trim());
      if (!normalised) throw validationFailed([{ path: '/email', message: 'must be an email address' }]);
      if (normalised !== a.email) email = normalised;
    }
    if (email) {
      await this.checkCurrentPassword(a, input.currentPassword, meta);
      if (await repo.getUserByEmail(this.db.kysely, me.workspaceId, email))
        throw conflict('user_exists', `${email} is already a user of the workspace`);
    }
    try {
      await this.db.kysely.transaction().execute(async (trx) => {
        if (input.name !== undefined)
          await repo.updateUser(trx, me.workspaceId, me.userId, { name: input.name?.trim() || null }, at);
        if (email) await repo.setEmail(trx, me.workspaceId, me.userId, email, at);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('user_exists', `${email} is already a user of the workspace`);
      throw err;
    }
    if (email) {
      const workspace = (await getWorkspace(this.db.kysely, me.workspaceId))?.name ?? 'Formcast';
      void this.mail
        .send(
          me.workspaceId,
          newId('ntc'),
          a.email,
          `Your Formcast sign-in address was changed`,
          [
            `The address you sign in to ${workspace} on Formcast with was changed from ${a.email} to ${email}.`,
            'If it was not you, reset your password and tell the owner of the workspace at once.',
          ],
          { url: `${this.opts.publicUrl}/app/reset`, label: 'Reset the password' },
        )
        .catch(() => false);
    }
    const u = await this.account(me.workspaceId, me.userId);
    return {
      id: u.id,
      email: u.email,
      name: u.name,
      role: u.role,
      createdAt: u.createdAt,
      updatedAt: u.updatedAt,
      lastLoginAt: u.lastLoginAt,
      emailChanged: email !== null,
      previousEmail: email ? a.email : null,
    };
  }

  /**
   * A new password, the current one required: every other session of the user ends (this one stays) and the user's
   * unused reset links are spent. Returns how many sessions ended.
   */
  async changePassword(
    actor: Self,
    input: { currentPassword: string; newPassword: string },
    meta: Meta,
  ): Promise<{ sessionsEnded: number }> {
    const me = self(actor);
    const password = checkPassword(input.newPassword, '/newPassword');
    const a = await this.account(me.workspaceId, me.userId);
    await this.checkCurrentPassword(a, input.currentPassword, meta);
    const hash = await hashPassword(password);
    const at = new Date().toISOString();
    const sessionsEnded = await this.db.kysely.transaction().execute(async (trx) => {
      await repo.setPasswordHash(trx, me.workspaceId, me.userId, hash, at);
      await repo.spendPasswordResets(trx, me.workspaceId, me.userId, at);
      await recordAudit(trx, me.workspaceId, this.auditActor(me.userId, a.email, meta), {
        action: 'user.password_changed',
        target: { type: 'user', id: me.userId, label: a.email },
        changes: { password: { secret: true } },
      });
      return repo.revokeUserSessions(trx, me.workspaceId, me.userId, at, me.sessionId);
    });
    return { sessionsEnded };
  }

  /** The audit log's actor of a change a person makes to their own account (docs/audit-log.md). */
  private auditActor(userId: string, email: string, meta: Meta): AuditActor {
    return { type: 'user', id: userId, label: email, ip: meta.ip, userAgent: meta.userAgent?.slice(0, 300) ?? null };
  }

  // Two-factor sign-in

  async twoFactorStatus(workspaceId: string, userId: string): Promise<TwoFactorStatus> {
    const a = await this.account(workspaceId, userId);
    const ws = await getWorkspace(this.db.kysely, workspaceId);
    const enabled = a.totpEnrolledAt !== null;
    return {
      enabled,
      enrolledAt: a.totpEnrolledAt,
      recoveryCodesLeft: enabled ? await repo.countUnusedRecoveryCodes(this.db.kysely, workspaceId, userId) : 0,
      required: ws?.settings.requireTwoFactor === true,
    };
  }

  /** Whether the user has two-factor sign-in on (the workspace setting's own check). */
  async twoFactorEnabled(workspaceId: string, userId: string): Promise<boolean> {
    return (await repo.getAccount(this.db.kysely, workspaceId, userId))?.totpEnrolledAt != null;
  }

  /**
   * Starts an enrolment (the current password required): a new secret, sealed, waiting for its first code. Again
   * before confirming replaces it. 409 invalid_state when two-factor sign-in is on already.
   */
  async startTwoFactor(actor: Self, input: { currentPassword: string }, meta: Meta): Promise<TwoFactorSetup> {
    const me = self(actor);
    const a = await this.account(me.workspaceId, me.userId);
    if (a.totpEnrolledAt)
      throw conflict('invalid_state', 'two-factor sign-in is on already: turn it off first to use another app');
    await this.checkCurrentPassword(a, input.currentPassword, meta);
    const secret = await newTotpSecret();
    await repo.setPendingTotp(
      this.db.kysely,
      me.workspaceId,
      me.userId,
      this.seal.seal(secret, me.userId),
      new Date().toISOString(),
    );
    const ws = (await getWorkspace(this.db.kysely, me.workspaceId))?.name ?? '';
    const issuer = `Formcast${ws ? ` ${ws}` : ''}`.replace(/[:\r\n]/g, ' ').slice(0, 100);
    const uri = await totpUri(secret, a.email, issuer);
    return { secret, uri, qrCode: await qrDataUrl(uri) };
  }

  /** Confirms an enrolment with a code of the app: two-factor sign-in is on; returns the recovery codes, shown once. */
  async confirmTwoFactor(actor: Self, input: { code: string }, meta: Meta): Promise<{ recoveryCodes: string[] }> {
    const me = self(actor);
    const a = await this.account(me.workspaceId, me.userId);
    if (a.totpEnrolledAt) throw conflict('invalid_state', 'two-factor sign-in is on already');
    if (!a.totpSecret)
      throw conflict(
        'invalid_state',
        'no enrolment is waiting for a code: start the set-up again (POST /v1/me/two-factor/setup)',
      );
    await this.requireCode(a, input.code, meta, false);
    const codes = newRecoveryCodes();
    const at = new Date().toISOString();
    await this.db.kysely.transaction().execute(async (trx) => {
      if (!(await repo.confirmTotp(trx, me.workspaceId, me.userId, at)))
        throw conflict('invalid_state', 'two-factor sign-in is on already');
      await repo.replaceRecoveryCodes(trx, me.workspaceId, me.userId, this.hashes(me.userId, codes), at);
      await recordAudit(trx, me.workspaceId, this.auditActor(me.userId, a.email, meta), {
        action: 'user.2fa_enabled',
        target: { type: 'user', id: me.userId, label: a.email },
      });
    });
    return { recoveryCodes: codes };
  }

  private hashes(userId: string, codes: string[]): { id: string; hash: string }[] {
    return codes.map((c) => ({
      id: newId('rcv'),
      hash: recoveryCodeHash(this.recoveryKey, userId, recoveryCodeOf(c)!),
    }));
  }

  /** Turns two-factor sign-in off: the current password and a code (of the app, or a recovery code). */
  async disableTwoFactor(actor: Self, input: { currentPassword: string; code: string }, meta: Meta): Promise<void> {
    const me = self(actor);
    const a = await this.account(me.workspaceId, me.userId);
    if (!a.totpEnrolledAt) throw conflict('invalid_state', 'two-factor sign-in is not on');
    await this.checkCurrentPassword(a, input.currentPassword, meta);
    await this.requireCode(a, input.code, meta, true);
    await this.db.kysely.transaction().execute(async (trx) => {
      await repo.clearTotp(trx, me.workspaceId, me.userId, new Date().toISOString());
      await recordAudit(trx, me.workspaceId, this.auditActor(me.userId, a.email, meta), {
        action: 'user.2fa_disabled',
        target: { type: 'user', id: me.userId, label: a.email },
      });
    });
  }

  /** New recovery codes (the old ones stop working): the current password and a code of the app. */
  async regenerateRecoveryCodes(
    actor: Self,
    input: { currentPassword: string; code: string },
    meta: Meta,
  ): Promise<{ recoveryCodes: string[] }> {
    const me = self(actor);
    const a = await this.account(me.workspaceId, me.userId);
    if (!a.totpEnrolledAt) throw conflict('invalid_state', 'two-factor sign-in is not on');
    await this.checkCurrentPassword(a, input.currentPassword, meta);
    await this.requireCode(a, input.code, meta, false);
    const codes = newRecoveryCodes();
    const at = new Date().toISOString();
    await this.db.kysely
      .transaction()
      .execute((trx) => repo.replaceRecoveryCodes(trx, me.workspaceId, me.userId, this.hashes(me.userId, codes), at));
    return { recoveryCodes: codes };
  }

  // The sign-in's second step

  private pendingMac(payload: string, passwordHash: string | null): string {
    return crypto
      .createHmac('sha256', this.pendingKey)
      .update(`${payload}\n${passwordHash ?? ''}`)
      .digest('base64url');
  }

  /**
   * The value of the pending sign-in cookie after a right password of a user with two-factor sign-in: who and when,
   * MACed with the user's password hash too, so that it dies with a password change. It is no session.
   */
  pendingSignIn(user: { workspaceId: string; id: string; passwordHash: string | null }, now = Date.now()): string {
    const payload = Buffer.from(JSON.stringify({ w: user.workspaceId, u: user.id, t: now })).toString('base64url');
    return `${payload}.${this.pendingMac(payload, user.passwordHash)}`;
  }

  /** The user a pending sign-in cookie names while it is valid, or null. */
  async readPending(value: string | undefined, now = Date.now()): Promise<repo.AccountRecord | null> {
    if (!value || value.length > 1000) return null;
    const [payload, mac, extra] = value.split('.');
    if (!payload || !mac || extra !== undefined) return null;
    let p: { w?: unknown; u?: unknown; t?: unknown };
    try {
      p = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as typeof p;
    } catch {
      return null;
    }
    if (typeof p.w !== 'string' || typeof p.u !== 'string' || typeof p.t !== 'number') return null;
    if (!(p.t <= now && now - p.t < PENDING_SIGN_IN_MS)) return null;
    const a = await repo.getAccount(this.db.kysely, p.w, p.u);
    if (!a || !a.totpEnrolledAt) return null;
    const expected = this.pendingMac(payload, a.passwordHash);
    if (mac.length !== expected.length || !crypto.timingSafeEqual(Buffer.from(mac), Buffer.from(expected))) return null;
    return a;
  }

  /** The second step: a code of the app or a recovery code for a pending sign-in; right, a session. */
  async completeSignIn(pending: string | undefined, code: string, meta: Meta): Promise<SecondStepResult> {
    const a = await this.readPending(pending);
    if (!a) return { kind: 'expired' };
    const r = await this.useCode(a, code, meta, { recovery: true });
    if (!r.ok)
      return r.retryAfter ? { kind: 'limited', retryAfter: r.retryAfter } : { kind: 'failed', replayed: r.replayed };
    const session = await this.sessions.create({ id: a.id, workspaceId: a.workspaceId }, meta);
    await repo.touchLogin(this.db.kysely, a.workspaceId, a.id, new Date().toISOString());
    return { kind: 'ok', token: session.token, workspaceId: a.workspaceId, userId: a.id, used: r.kind };
  }
}
