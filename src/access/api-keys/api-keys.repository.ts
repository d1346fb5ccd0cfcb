import type { Executor } from '../../db/connection.js';
import { Precompiled } from '../../db/precompiled.js';
import { toIso } from '../../lib/time.js';

export interface ApiKeyRecord {
  id: string;
  workspaceId: string;
  name: string;
  scopes: string[];
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

const columns = ['id', 'workspace_id', 'name', 'scopes', 'created_at', 'last_used_at', 'revoked_at'] as const;

type Row = {
  id: string;
  workspace_id: string;
  name: string;
  scopes: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
};

function toRecord(row: Row): ApiKeyRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    name: row.name,
    scopes: JSON.parse(row.scopes) as string[],
    createdAt: toIso(row.created_at),
    lastUsedAt: toIso(row.last_used_at),
    revokedAt: toIso(row.revoked_at),
  };
}

export async function insertApiKey(
  db: Executor,
  key: { id: string; workspaceId: string; name: string; scopes: string[]; keyHash: string; createdAt: string },
): Promise<void> {
  await db
    .insertInto('api_keys')
    .values({
      id: key.id,
      workspace_id: key.workspaceId,
      name: key.name,
      scopes: JSON.stringify(key.scopes),
      key_hash: key.keyHash,
      created_at: key.createdAt,
      last_used_at: null,
      revoked_at: null,
    })
    .execute();
}

const keyForAuthentication = new Precompiled((db, param) =>
  db
    .selectFrom('api_keys')
    .select([...columns, 'key_hash'])
    .where('id', '=', param('id')),
);

/**
 * The one lookup not scoped by workspace: a presented key is what tells us its workspace. The caller
 * compares the hash in constant time before trusting anything in the row.
 */
export async function findKeyForAuthentication(
  db: Executor,
  id: string,
): Promise<(ApiKeyRecord & { keyHash: string }) | undefined> {
  // Every authenticated request runs this: precompiled (see Precompiled).
  const row = await keyForAuthentication.executeTakeFirst(db, { id });
  return row ? { ...toRecord(row), keyHash: row.key_hash } : undefined;
}

/**
 * The counter every change to a key's authority moves (migration 0012): not scoped by workspace, it counts
 * for all of them. Read by the verified-key cache a few times a second at most (key-cache.ts). Should its row
 * ever be gone, NaN: it equals nothing, so every reading empties the cache (no key is kept longer than a reading).
 */
export async function getAuthVersion(db: Executor): Promise<number> {
  const row = await db.selectFrom('auth_version').select('version').where('id', '=', 1).executeTakeFirst();
  return row ? Number(row.version) : Number.NaN;
}

export async function listApiKeys(
  db: Executor,
  workspaceId: string,
  limit: number,
  beforeId?: string,
): Promise<ApiKeyRecord[]> {
  let q = db.selectFrom('api_keys').select(columns).where('workspace_id', '=', workspaceId);
  if (beforeId) q = q.where('id', '<', beforeId);
  const rows = await q.orderBy('id', 'desc').limit(limit).execute();
  return rows.map(toRecord);
}

export async function getApiKey(db: Executor, workspaceId: string, id: string): Promise<ApiKeyRecord | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .select(columns)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toRecord(row) : undefined;
}

export async function revokeApiKey(db: Executor, workspaceId: string, id: string, at: string): Promise<boolean> {
  const res = await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Serialises changes to a workspace's keys (a transaction's lock on its row, held until commit; SQLite has one writer). */
export async function lockWorkspaceKeys(db: Executor, workspaceId: string): Promise<void> {
  await db
    .updateTable('workspaces')
    .set((eb) => ({ name: eb.ref('name') }))
    .where('id', '=', workspaceId)
    .execute();
}

/** Active (not revoked) keys of the workspace that hold `admin`. */
export async function countActiveAdminKeys(db: Executor, workspaceId: string): Promise<number> {
  const rows = await db
    .selectFrom('api_keys')
    .select('scopes')
    .where('workspace_id', '=', workspaceId)
    .where('revoked_at', 'is', null)
    .execute();
  return rows.filter((r) => (JSON.parse(r.scopes) as string[]).includes('admin')).length;
}

export async function touchApiKey(db: Executor, workspaceId: string, id: string, at: string): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .execute();
}
