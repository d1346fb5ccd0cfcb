import type { SelectQueryBuilder } from 'kysely';
import type { Dialect, Executor } from '../db/connection.js';
import type { Database } from '../db/schema.js';
import { unprocessable, type FieldError } from '../http/errors.js';
import { getTopic } from '../topics/topics.repository.js';
import { compileFilter, type Filter } from './segments.filter.js';
import { getSegment } from './segments.repository.js';

export interface AudienceSpec {
  segmentId: string | null;
  topicId: string | null;
}

/**
 * The contacts a broadcast goes to (contract section 5), as one query: the segment's contacts (all the
 * workspace's contacts when segmentId is null) ∩ status SUBSCRIBED ∩, when topicId is given, effectively
 * subscribed to the topic (the contact's explicit choice, else the topic's default). Callers add their
 * own select, order, limit or count; the conditions reference `contacts` by name, unaliased.
 * Throws 422 invalid_reference (paths /segmentId, /topicId) if the segment or topic is not in the workspace.
 */
export async function audienceQuery(db: Executor, dialect: Dialect, workspaceId: string, spec: AudienceSpec): Promise<SelectQueryBuilder<Database, 'contacts', object>> {
  const errors: FieldError[] = [];
  const segment = spec.segmentId === null ? undefined : await getSegment(db, workspaceId, spec.segmentId);
  if (spec.segmentId !== null && !segment) errors.push({ path: '/segmentId', message: 'names no segment of this workspace' });
  if (spec.topicId !== null && !(await getTopic(db, workspaceId, spec.topicId))) errors.push({ path: '/topicId', message: 'names no topic of this workspace' });
  if (errors.length) throw unprocessable('invalid_reference', errors.map((e) => `${e.path.slice(1)} ${e.message}`).join('; '), errors);

  let q = db.selectFrom('contacts').where('contacts.workspace_id', '=', workspaceId).where('contacts.status', '=', 'SUBSCRIBED');
  if (segment) q = q.where(compileFilter(segment.filter as Filter, dialect, workspaceId));
  if (spec.topicId !== null) q = q.where(compileFilter({ topic: spec.topicId, subscribed: true }, dialect, workspaceId));
  return q;
}
