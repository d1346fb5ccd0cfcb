import type { Executor } from '../db/connection.js';
import { toIso } from '../lib/time.js';

export interface Topic {
  id: string;
  name: string;
  defaultSubscription: 'OPT_IN' | 'OPT_OUT';
  createdAt: string;
  updatedAt: string;
}

const COLUMNS = ['id', 'name', 'default_subscription', 'created_at', 'updated_at'] as const;

export async function getTopic(db: Executor, workspaceId: string, id: string): Promise<Topic | undefined> {
  const r = await db.selectFrom('topics').select(COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return r ? { id: r.id, name: r.name, defaultSubscription: r.default_subscription, createdAt: toIso(r.created_at), updatedAt: toIso(r.updated_at) } : undefined;
}
