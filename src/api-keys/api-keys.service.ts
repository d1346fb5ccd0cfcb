import crypto from 'node:crypto';
import type { Db } from '../db/connection.js';
import { notFound, unauthorized, validationFailed } from '../errors/errors.js';
import { newId } from '../lib/ids.js';
import { nowIso } from '../lib/time.js';
import * as repo from './api-keys.repository.js';
import { grants, isScope, type Scope } from '../http/scopes.js';
import type { AuthContext } from '../http/types.js';


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
const KEY_PATTERN = /^fc_([0-9A-HJKMNP-TV-Z]{26})_([A-Za-z0-9_-]{43})$/;
const LAST_USED_RESOLUTION_MS = 60_000;

function hashSecret(secret: string): string {
  return crypto.createHash('sha256').update(secret).digest('hex');
}

export class ApiKeysService {
  /** lastUsedAt is written at most once a minute per key, so authentication stays a read. */
  private readonly lastTouched = new Map<string, number>();

  constructor(private readonly db: Db) {}

  async create(workspaceId: string, input: { name: string; scopes: string[] }, grantor?: readonly string[]): Promise<CreatedApiKey> {
    const unknown = input.scopes.filter((s) => !isScope(s));
    if (unknown.length) throw validationFailed(unknown.map((s) => ({ path: `/scopes/${input.scopes.indexOf(s)}`, message: `unknown scope "${s}"` })));
    if (grantor) {
      const beyond = input.scopes.filter((s) => !grants(grantor, s as Scope));
      if (beyond.length) throw validationFailed(beyond.map((s) => ({ path: `/scopes/${input.scopes.indexOf(s)}`, message: `cannot grant "${s}", which the calling key does not hold` })));
    }
    const scopes = [...new Set(input.scopes)];
    const id = newId('key');
    const secret = crypto.randomBytes(32).toString('base64url');
    const createdAt = nowIso();
    await repo.insertApiKey(this.db.kysely, { id, workspaceId, name: input.name, scopes, keyHash: hashSecret(secret), createdAt });
    return { id, name: input.name, scopes, key: `fc_${id.slice(4)}_${secret}`, createdAt };
  }

  list(workspaceId: string, limit: number, beforeId?: string) {
    return repo.listApiKeys(this.db.kysely, workspaceId, limit, beforeId);
  }

  async revoke(workspaceId: string, id: string): Promise<void> {
    const key = await repo.getApiKey(this.db.kysely, workspaceId, id);
    if (!key) throw notFound('API key');
    await repo.revokeApiKey(this.db.kysely, workspaceId, id, nowIso());
  }

  /** Resolves an Authorization header to the key's workspace and scopes, or throws 401. */
  async authenticate(header: string | undefined): Promise<AuthContext> {
    if (!header) throw unauthorized('an API key is required: Authorization: Bearer <key>');
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw unauthorized('the Authorization header must be "Bearer <key>"');
    const parts = KEY_PATTERN.exec(match[1]!);
    if (!parts) throw unauthorized('the API key is malformed');
    const row = await repo.findKeyForAuthentication(this.db.kysely, `key_${parts[1]}`);
    const presented = Buffer.from(hashSecret(parts[2]!), 'hex');
    // Compare even when the row is missing, so a miss costs the same as a wrong secret.
    const stored = Buffer.from(row?.keyHash ?? '0'.repeat(64), 'hex');
    const equal = crypto.timingSafeEqual(presented, stored);
    if (!row || !equal) throw unauthorized('the API key is not valid');
    if (row.revokedAt) throw unauthorized('the API key has been revoked');
    const now = Date.now();
    if ((this.lastTouched.get(row.id) ?? 0) + LAST_USED_RESOLUTION_MS < now) {
      this.lastTouched.set(row.id, now);
      await repo.touchApiKey(this.db.kysely, row.workspaceId, row.id, new Date(now).toISOString());
    }
    return { workspaceId: row.workspaceId, keyId: row.id, scopes: row.scopes };
  }
}
