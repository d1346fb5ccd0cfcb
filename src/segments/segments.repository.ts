import type { Executor } from '../db/connection.js';
import { fromJsonColumn } from '../lib/json.js';
import { toIso } from '../lib/time.js';

export interface Segment {
  id: string;
  name: string;
  filter: unknown; // see segments/CONTEXT.md for the grammar
  createdAt: string;
  updatedAt: string;
}

const COLUMNS = ['id', 'name', 'filter', 'created_at', 'updated_at'] as const;

export async function getSegment(db: Executor, workspaceId: string, id: string): Promise<Segment | undefined> {
  const r = await db.selectFrom('segments').select(COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return r ? { id: r.id, name: r.name, filter: fromJsonColumn(r.filter), createdAt: toIso(r.created_at), updatedAt: toIso(r.updated_at) } : undefined;
}
