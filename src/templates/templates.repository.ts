import type { Executor } from '../db/connection.js';

export async function templateExists(db: Executor, workspaceId: string, id: string): Promise<boolean> {
  const row = await db.selectFrom('templates').select('id').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return row !== undefined;
}
