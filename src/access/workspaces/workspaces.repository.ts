import type { Executor } from '../../db/connection.js';
import { fromJsonColumn, toJsonColumn } from '../../lib/json.js';
import { toIso } from '../../lib/time.js';
import { DEFAULT_SETTINGS, type WorkspaceSettings } from './workspaces.schemas.js';

export interface Workspace {
  id: string;
  name: string;
  createdAt: string;
  /** The public archive's address (`/archive/{slug}`, docs/archive.md); null: the workspace has no archive. */
  slug: string | null;
  settings: WorkspaceSettings;
}

export async function insertWorkspace(db: Executor, ws: Omit<Workspace, 'settings' | 'slug'>): Promise<void> {
  await db
    .insertInto('workspaces')
    .values({ id: ws.id, name: ws.name, created_at: ws.createdAt, settings: null })
    .execute();
}

/** Workspaces are the tenants themselves: the id is the scope. */
export async function getWorkspace(db: Executor, workspaceId: string): Promise<Workspace | undefined> {
  const row = await db
    .selectFrom('workspaces')
    .select(['id', 'name', 'created_at', 'slug', 'settings'])
    .where('id', '=', workspaceId)
    .executeTakeFirst();
  return row
    ? {
        id: row.id,
        name: row.name,
        createdAt: toIso(row.created_at),
        slug: row.slug,
        settings: { ...DEFAULT_SETTINGS, ...fromJsonColumn<Partial<WorkspaceSettings>>(row.settings) },
      }
    : undefined;
}

export async function updateWorkspace(
  db: Executor,
  workspaceId: string,
  values: { name?: string; slug?: string | null; settings?: WorkspaceSettings },
): Promise<void> {
  const set = {
    ...(values.name !== undefined ? { name: values.name } : {}),
    ...(values.slug !== undefined ? { slug: values.slug } : {}),
    ...(values.settings !== undefined ? { settings: toJsonColumn(values.settings) } : {}),
  };
  if (Object.keys(set).length === 0) return; // an empty PUT changes nothing (found by test/api/openapi.fuzz.test.ts)
  await db.updateTable('workspaces').set(set).where('id', '=', workspaceId).execute();
}

/**
 * Every workspace of the installation, newest first (the operator's `formcast workspace list`, `formcast doctor`):
 * the one listing that is not of one tenant, since the tenants are what it lists.
 */
export async function listWorkspaces(db: Executor, limit: number, beforeId?: string): Promise<Workspace[]> {
  let q = db.selectFrom('workspaces').select(['id', 'name', 'created_at', 'slug', 'settings']);
  if (beforeId) q = q.where('id', '<', beforeId);
  const rows = await q.orderBy('id', 'desc').limit(limit).execute();
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    createdAt: toIso(row.created_at),
    slug: row.slug,
    settings: { ...DEFAULT_SETTINGS, ...fromJsonColumn<Partial<WorkspaceSettings>>(row.settings) },
  }));
}

/**
 * The workspace whose public archive is at `/archive/{slug}` (docs/archive.md): the slug is the tenant's public name,
 * unique across the installation, as a form's slug is.
 */
export async function workspaceBySlug(db: Executor, slug: string): Promise<Workspace | undefined> {
  const row = await db.selectFrom('workspaces').select('id').where('slug', '=', slug).executeTakeFirst();
  return row ? getWorkspace(db, row.id) : undefined;
}

/** Whether another workspace than `workspaceId` has the slug. */
export async function slugTakenByOther(db: Executor, workspaceId: string, slug: string): Promise<boolean> {
  const row = await db
    .selectFrom('workspaces')
    .select('id')
    .where('slug', '=', slug)
    .where('id', '!=', workspaceId)
    .executeTakeFirst();
  return row !== undefined;
}
