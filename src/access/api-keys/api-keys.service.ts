import crypto from 'node:crypto';
import type { Db } from '../../db/connection.js';
import { conflict, notFound, unauthorized, validationFailed } from '../../errors/errors.js';
import { newId } from '../../lib/ids.js';
import { nowIso } from '../../lib/time.js';
import * as repo from './api-keys.repository.js';
import { SYSTEM_ACTOR, recordAudit, type AuditActor } from '../../outbox/index.js';
import { grants, isScope, type Scope } from '../../http/scopes.js';
import type { AuthContext } from '../../http/types.js';
import { VerifiedKeyCache, type CachedKey, type KeyCacheOptions } from './key-cache.js';

export interface CreatedApiKey {
  id: string;
  name: string;
  scopes: string[];
  key: string;
  createdAt: string;
}

/**
 * A key reads `fc_<key id without prefix>_<secret>`: the id finds the row, the secret (256 random bits)
 * is compared by SHA-256 hash in constant time. Only the hash is stored.
 */
const KEY_PATTERN = '(?:fc_([0-9A-HJKMNP-TV-Z]{26})_([A-Za-z0-9_-]{43}))';
/** `Bearer <key>` (the scheme in any case, the key exactly), in one match; malformed() says what is wrong with the rest. */
const BEARER_KEY = new RegExp(`^[Bb][Ee][Aa][Rr][Ee][Rr]\\s+${KEY_PATTERN}\\s*$`);
const LAST_USED_RESOLUTION_MS = 60_000;

function hashSecret(secret: string): Buffer {
  return crypto.hash('sha256', secret, 'buffer');
}

/** A verified key as the cache keeps it: with the context every request it authenticates gets (frozen, shared). */
interface VerifiedKey extends CachedKey {
  readonly auth: Readonly<AuthContext>;
}

/** Compared with a presented secret's hash when the key is unknown, so that a miss costs what a wrong secret does. */
const NO_HASH = Buffer.alloc(32);

/** Throws the 401 that says what is wrong with a header BEARER_KEY refused. */
function malformed(header: string): never {
  if (!/^Bearer\s+\S+\s*$/i.test(header)) throw unauthorized('the Authorization header must be "Bearer <key>"');
  throw unauthorized('the API key is malformed');
}

export class ApiKeysService {
  /** lastUsedAt is written at most once a minute per key, so authentication stays a read. */
  private readonly lastTouched = new Map<string, number>();
  /** Keys verified lately, trusted while no revocation may have happened (see VerifiedKeyCache). */
  private readonly cache: VerifiedKeyCache<VerifiedKey>;

  constructor(
    private readonly db: Db,
    cache: KeyCacheOptions = {},
  ) {
    this.cache = new VerifiedKeyCache<VerifiedKey>(() => repo.getAuthVersion(db.kysely), cache);
  }

  async create(
    workspaceId: string,
    input: { name: string; scopes: string[] },
    grantor?: readonly string[],
    actor: AuditActor = SYSTEM_ACTOR,
  ): Promise<CreatedApiKey> {
    const unknown = input.scopes.filter((s) => !isScope(s));
    if (unknown.length)
      throw validationFailed(
        unknown.map((s) => ({ path: `/scopes/${input.scopes.indexOf(s)}`, message: `unknown scope "${s}"` })),
      );
    if (grantor) {
      const beyond = input.scopes.filter((s) => !grants(grantor, s as Scope));
      if (beyond.length)
        throw validationFailed(
          beyond.map((s) => ({
            path: `/scopes/${input.scopes.indexOf(s)}`,
            message: `cannot grant "${s}", which the calling key does not hold`,
          })),
        );
    }
    const scopes = [...new Set(input.scopes)];
    const id = newId('key');
    const secret = crypto.randomBytes(32).toString('base64url');
    const createdAt = nowIso();
    await this.db.kysely.transaction().execute(async (trx) => {
      await repo.insertApiKey(trx, {
        id,
        workspaceId,
        name: input.name,
        scopes,
        keyHash: hashSecret(secret).toString('hex'),
        createdAt,
      });
      // The key itself is a secret: named only, never stored (docs/audit-log.md).
      await recordAudit(trx, workspaceId, actor, {
        action: 'api_key.created',
        target: { type: 'api_key', id, label: input.name },
        changes: { scopes: { before: null, after: scopes }, key: { secret: true } },
      });
    });
    return { id, name: input.name, scopes, key: `fc_${id.slice(4)}_${secret}`, createdAt };
  }

  list(workspaceId: string, limit: number, beforeId?: string) {
    return repo.listApiKeys(this.db.kysely, workspaceId, limit, beforeId);
  }

  /**
   * Revokes a key at once. The last active key holding `admin` is not revoked (409 last_admin_key): the workspace
   * would be left without a key that can manage keys. The workspace's row is locked meanwhile, so that two
   * revocations of its last two admin keys cannot both pass.
   */
  async revoke(workspaceId: string, id: string, actor: AuditActor = SYSTEM_ACTOR): Promise<void> {
    await this.db.kysely.transaction().execute(async (trx) => {
      await repo.lockWorkspaceKeys(trx, workspaceId);
      const key = await repo.getApiKey(trx, workspaceId, id);
      if (!key) throw notFound('API key');
      if (!key.revokedAt && key.scopes.includes('admin') && (await repo.countActiveAdminKeys(trx, workspaceId)) <= 1) {
        throw conflict(
          'last_admin_key',
          `${id} is the last active API key with the admin scope of the workspace: create another admin key first, then revoke this one`,
        );
      }
      if (key.revokedAt) return; // revoked already: nothing changes, nothing to record
      await repo.revokeApiKey(trx, workspaceId, id, nowIso());
      await recordAudit(trx, workspaceId, actor, {
        action: 'api_key.revoked',
        target: { type: 'api_key', id, label: key.name },
        changes: { scopes: { before: key.scopes, after: null } },
      });
    });
    // At once in this process; other processes see the counter the revocation moved (key-cache.ts).
    this.cache.evict(id);
  }

  /**
   * The context of a key this process verified lately, when that is known without waiting: the cache may be
   * trusted now, holds the key, the presented secret's hash matches (constant time) and lastUsedAt needs no
   * write. Undefined otherwise, for authenticate to decide (and to say why it refuses). Every API request
   * with a key tries this first (http/auth.ts): no promise, no database.
   */
  authenticateNow(header: string | undefined): AuthContext | undefined {
    if (header === undefined) return undefined;
    const parts = BEARER_KEY.exec(header);
    if (!parts || this.cache.fresh()) return undefined;
    const cached = this.cache.get(`key_${parts[1]}`);
    if (!cached || !crypto.timingSafeEqual(hashSecret(parts[2]!), cached.keyHash)) return undefined;
    if ((this.lastTouched.get(cached.id) ?? 0) + LAST_USED_RESOLUTION_MS < Date.now()) return undefined;
    return cached.auth;
  }

  /** Resolves an Authorization header to the key's workspace and scopes, or throws 401. */
  async authenticate(header: string | undefined): Promise<AuthContext> {
    if (!header) throw unauthorized('an API key is required: Authorization: Bearer <key>');
    const parts = BEARER_KEY.exec(header) ?? malformed(header);
    const id = `key_${parts[1]}`;
    const presented = hashSecret(parts[2]!);
    const stale = this.cache.fresh();
    if (stale) await stale;
    const cached = this.cache.get(id);
    if (cached) {
      if (!crypto.timingSafeEqual(presented, cached.keyHash)) throw unauthorized('the API key is not valid');
      return this.authenticated(cached);
    }
    const generation = this.cache.generation;
    const row = await repo.findKeyForAuthentication(this.db.kysely, id);
    const stored = row ? Buffer.from(row.keyHash, 'hex') : NO_HASH;
    // Compare even when the row is missing, so a miss costs the same as a wrong secret.
    const equal = stored.length === presented.length && crypto.timingSafeEqual(presented, stored);
    if (!row || !equal) throw unauthorized('the API key is not valid');
    if (row.revokedAt) throw unauthorized('the API key has been revoked');
    const auth: AuthContext = Object.freeze({
      workspaceId: row.workspaceId,
      keyId: row.id,
      scopes: Object.freeze(row.scopes) as string[],
      label: row.name,
    });
    const key: VerifiedKey = { id: row.id, keyHash: stored, auth };
    this.cache.add(key, generation);
    return this.authenticated(key);
  }

  /** The caller's context; lastUsedAt written first if its last write is a minute old (a promise then, else no promise). */
  private authenticated({ id, auth }: VerifiedKey): AuthContext | Promise<AuthContext> {
    const now = Date.now();
    if ((this.lastTouched.get(id) ?? 0) + LAST_USED_RESOLUTION_MS >= now) return auth;
    this.lastTouched.set(id, now);
    return repo.touchApiKey(this.db.kysely, auth.workspaceId, id, new Date(now).toISOString()).then(() => auth);
  }
}
