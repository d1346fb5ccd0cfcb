import type { SelectQueryBuilder } from 'kysely';
import type { Dialect, Executor } from '../db/connection.js';
import type { Database } from '../db/schema.js';

export interface AudienceSpec {
  segmentId: string | null;
  topicId: string | null;
}

/**
 * STUB (to be completed with the segment filter compiler): the contacts a broadcast goes to, as one query:
 * the segment's contacts (all contacts when no segment) ∩ SUBSCRIBED ∩ subscribed to the topic (if any).
 * Callers add their own select, order, limit or count. Throws invalid_reference if the segment or topic
 * is not in the workspace.
 */
export async function audienceQuery(db: Executor, _dialect: Dialect, workspaceId: string, _spec: AudienceSpec): Promise<SelectQueryBuilder<Database, 'contacts', object>> {
  return db.selectFrom('contacts').where('contacts.workspace_id', '=', workspaceId).where('contacts.status', '=', 'SUBSCRIBED');
}
