import type { Executor } from '../db/connection.js';
import { toIso } from '../lib/time.js';

export interface Workspace {
  id: string;
  name: string;
  createdAt: string;
}

export async function insertWorkspace(db: Executor, ws: Workspace): Promise<void> {
  await db.insertInto('workspaces').values({ id: ws.id, name: ws.name, created_at: ws.createdAt }).execute();
}

/** Workspaces are the tenants themselves: the id is the scope. */
export async function getWorkspace(db: Executor, workspaceId: string): Promise<Workspace | undefined> {
  const row = await db.selectFrom('workspaces').select(['id', 'name', 'created_at']).where('id', '=', workspaceId).executeTakeFirst();
  return row ? { id: row.id, name: row.name, createdAt: toIso(row.created_at) } : undefined;
}
