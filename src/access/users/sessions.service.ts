import crypto from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthContext } from '../../http/types.js';
import type { Db } from '../../db/connection.js';
import { DomainError, notFound, unauthorized } from '../../errors/errors.js';
import { newId } from '../../lib/ids.js';
import * as repo from './users.repository.js';
import { scopesOf, type Role } from './roles.js';

/** The session cookie's name where the origin is http:// loopback; `__Host-fc_session` wherever the cookie is Secure. */
export const SESSION_COOKIE = 'fc_session';
/** The known-device cookie's name (the same rule): see UsersService.login. */
export const DEVICE_COOKIE = 'fc_device';
/** The pending sign-in cookie's name (the same rule): a right password waiting for its two-factor code. */
export const PENDING_COOKIE = 'fc_2fa';
/** A known-device cookie lasts a year from the last sign-in that set it. */
export const DEVICE_TTL_MS = 365 * 24 * 3600 * 1000;
/** Cookies of the session's name tried per request at most (each is one lookup). */
const MAX_SESSION_COOKIES = 4;
/** Sessions last 30 days from the last request (sliding). */
export const SESSION_TTL_MS = 30 * 24 * 3600 * 1000;
/** last_seen_at (and the sliding expiry) are written at most once a minute per session. */
const TOUCH_RESOLUTION_MS = 60_000;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function sha256(text: string): string {
  return crypto.createHash('sha256').update(text).digest('hex');
}

/** 32 random bytes, base64url: the secret of a cookie, an invitation or a reset link. Only its hash is stored. */
export function newToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

export function isToken(value: string): boolean {
  return TOKEN.test(value);
}

function equalSecrets(a: string, b: string): boolean {
  const x = Buffer.from(sha256(a), 'hex');
  const y = Buffer.from(sha256(b), 'hex');
  return crypto.timingSafeEqual(x, y);
}

/**
 * Every value of one cookie name in a Cookie header, in the order sent (no dependency needed for one name). A browser
 * sends several cookies of one name when they were set for different domains or paths (a parent domain's, a longer
 * path's first): which one is ours cannot be told from the header, so each is tried.
 */
export function readCookies(header: string | undefined, name: string): string[] {
  if (!header) return [];
  const values: string[] = [];
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) values.push(part.slice(eq + 1).trim());
  }
  return values;
}

/** The first value of one cookie name, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  return readCookies(header, name)[0];
}

/**
 * The name a cookie is set and read under: `__Host-<name>` when it is Secure, which browsers only accept from a
 * secure origin, for Path=/ and without Domain, so that no other host (a sibling subdomain) or path can set one of
 * that name; the bare name on http:// loopback, where Secure (and so the prefix) is not possible.
 */
export function cookieName(name: string, secure: boolean): string {
  return secure ? `__Host-${name}` : name;
}

/** Secure everywhere except a PUBLIC_URL of http:// on a loopback host (a developer's machine). */
export function cookieIsSecure(publicUrl: string): boolean {
  const url = new URL(publicUrl);
  if (url.protocol === 'https:') return true;
  return !['localhost', '127.0.0.1', '[::1]', '::1'].includes(url.hostname) && !url.hostname.endsWith('.localhost');
}

export interface SessionAuth extends AuthContext {
  sessionId: string;
  userId: string;
  role: Role;
  csrfToken: string;
  expiresAt: string;
  /** The workspace requires two-factor sign-in and the user has not set it up: only set-up routes answer. */
  twoFactorMissing: boolean;
}

export class SessionsService {
  private readonly secure: boolean;
  /** The session cookie's name here (cookieName). */
  readonly cookieName: string;
  readonly deviceCookieName: string;
  readonly pendingCookieName: string;

  constructor(
    private readonly db: Db,
    publicUrl: string,
  ) {
    this.secure = cookieIsSecure(publicUrl);
    this.cookieName = cookieName(SESSION_COOKIE, this.secure);
    this.deviceCookieName = cookieName(DEVICE_COOKIE, this.secure);
    this.pendingCookieName = cookieName(PENDING_COOKIE, this.secure);
  }

  /** Set-Cookie for a pending sign-in (10 minutes, this site's own pages only) or, with null, the header that clears it. */
  pendingCookie(value: string | null): string {
    const flags = `Path=/; HttpOnly; SameSite=Strict${this.secure ? '; Secure' : ''}`;
    return value
      ? `${this.pendingCookieName}=${value}; Max-Age=600; ${flags}`
      : `${this.pendingCookieName}=; Max-Age=0; ${flags}`;
  }

  /** Set-Cookie for a session token (30 days, sliding) or, with null, the header that clears the cookie. */
  cookie(token: string | null): string {
    const flags = `Path=/; HttpOnly; SameSite=Lax${this.secure ? '; Secure' : ''}`;
    return token
      ? `${this.cookieName}=${token}; Max-Age=${SESSION_TTL_MS / 1000}; ${flags}`
      : `${this.cookieName}=; Max-Age=0; ${flags}`;
  }

  /** Set-Cookie for the known-device cookie (a year; sent only by this site's own pages: SameSite=Strict). */
  deviceCookie(value: string): string {
    return `${this.deviceCookieName}=${value}; Max-Age=${DEVICE_TTL_MS / 1000}; Path=/; HttpOnly; SameSite=Strict${this.secure ? '; Secure' : ''}`;
  }

  /** The known-device cookies a request carries (every one of the name: see readCookies). */
  deviceCookies(header: string | undefined): string[] {
    return readCookies(header, this.deviceCookieName);
  }

  /**
   * The live session of a request's cookies: each cookie of the session's name is tried in turn (at most
   * MAX_SESSION_COOKIES), so a duplicate planted for a parent domain or another path, sent first, neither hides nor
   * replaces the real one. With `accept`, the first live session it accepts (a write's CSRF token names its own
   * session); `live` says whether any session was live at all.
   */
  async fromCookies(
    header: string | undefined,
    accept: (auth: SessionAuth) => boolean = () => true,
  ): Promise<{ found: { auth: SessionAuth; refreshed: boolean; token: string } | null; live: boolean }> {
    const tokens = [...new Set(readCookies(header, this.cookieName))].filter(isToken).slice(0, MAX_SESSION_COOKIES);
    let live = false;
    for (const token of tokens) {
      const found = await this.resolve(token);
      if (!found) continue;
      live = true;
      if (accept(found.auth)) return { found: { ...found, token }, live };
    }
    return { found: null, live };
  }

  async create(
    user: { id: string; workspaceId: string },
    meta: { ip: string | null; userAgent: string | null },
  ): Promise<{ token: string; id: string; csrfToken: string }> {
    const token = newToken();
    const csrfToken = crypto.randomBytes(32).toString('base64url');
    const now = Date.now();
    const id = newId('ses');
    await repo.insertSession(this.db.kysely, {
      id,
      workspaceId: user.workspaceId,
      userId: user.id,
      tokenHash: sha256(token),
      csrfToken,
      at: new Date(now).toISOString(),
      expiresAt: new Date(now + SESSION_TTL_MS).toISOString(),
      ip: meta.ip,
      userAgent: meta.userAgent?.slice(0, 500) ?? null,
    });
    return { token, id, csrfToken };
  }

  /** The live session a token names, or null (unknown, revoked, expired). Slides the expiry at most once a minute. */
  async resolve(token: string | undefined): Promise<{ auth: SessionAuth; refreshed: boolean } | null> {
    if (!token || !isToken(token)) return null;
    const row = await repo.findSessionByTokenHash(this.db.kysely, sha256(token));
    const now = Date.now();
    if (!row || row.revokedAt || Date.parse(row.expiresAt) <= now) return null;
    let expiresAt = row.expiresAt;
    let refreshed = false;
    if (Date.parse(row.lastSeenAt) + TOUCH_RESOLUTION_MS < now) {
      expiresAt = new Date(now + SESSION_TTL_MS).toISOString();
      await repo.touchSession(this.db.kysely, row.workspaceId, row.id, new Date(now).toISOString(), expiresAt);
      refreshed = true;
    }
    return {
      auth: {
        workspaceId: row.workspaceId,
        keyId: null,
        scopes: scopesOf(row.role),
        sessionId: row.id,
        userId: row.userId,
        role: row.role,
        label: row.email,
        csrfToken: row.csrfToken,
        expiresAt,
        twoFactorMissing: row.twoFactorMissing,
      },
      refreshed,
    };
  }

  /**
   * The /v1 authentication of a request that carries no Authorization header but the session cookie: 401 for a
   * dead session; 403 csrf_failed for an unsafe method without the session's X-CSRF-Token. A refreshed
   * session gets its cookie again (the sliding 30 days).
   */
  async authenticate(req: FastifyRequest, reply: FastifyReply): Promise<SessionAuth> {
    const given = req.headers['x-csrf-token'];
    const accept = UNSAFE.has(req.method)
      ? (auth: SessionAuth) => typeof given === 'string' && equalSecrets(given, auth.csrfToken)
      : undefined;
    const { found, live } = await this.fromCookies(req.headers.cookie, accept);
    if (!found && live)
      throw new DomainError(
        'csrf_failed',
        "a console write must carry the session's CSRF token in X-CSRF-Token (GET /v1/session returns it)",
      );
    if (!found) throw unauthorized('the console session is not valid (signed out, expired or revoked): sign in again');
    if (found.refreshed) reply.header('set-cookie', this.cookie(found.token));
    if (found.auth.twoFactorMissing && !req.routeOptions.config.twoFactorSetup)
      throw new DomainError(
        'two_factor_required',
        'the workspace requires two-factor sign-in: set it up first (POST /v1/me/two-factor/setup, then /confirm)',
      );
    return found.auth;
  }

  /** The CSRF check of the console's own forms (logout): the hidden `_csrf` field or the header. */
  static csrfMatches(given: unknown, expected: string): boolean {
    return typeof given === 'string' && equalSecrets(given, expected);
  }

  list(workspaceId: string, userId: string) {
    return repo.listActiveSessions(this.db.kysely, workspaceId, userId, new Date().toISOString());
  }

  async revoke(workspaceId: string, userId: string, id: string): Promise<void> {
    if (!(await repo.revokeSession(this.db.kysely, workspaceId, userId, id, new Date().toISOString())))
      throw notFound('session');
  }

  async revokeByToken(token: string | undefined): Promise<void> {
    const found = await this.resolve(token);
    if (found)
      await repo.revokeSession(
        this.db.kysely,
        found.auth.workspaceId,
        found.auth.userId,
        found.auth.sessionId,
        new Date().toISOString(),
      );
  }
}
