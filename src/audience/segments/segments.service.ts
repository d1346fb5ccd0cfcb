import type { ContactPages } from '../contacts/contacts.service.js';
import { isForeignKeyViolation, type Db, type Executor } from '../../db/connection.js';
import { conflict, notFound, unprocessable, validationFailed } from '../../errors/errors.js';
import { newId } from '../../lib/ids.js';
import { nowIso } from '../../lib/time.js';
import { broadcastReferences, topicReferences, validateFilter, type Filter } from './segments.filter.js';
import { existingTopicIds } from '../topics/topics.repository.js';
import * as repo from './segments.repository.js';
import type { Segment, SegmentContact } from './segments.repository.js';
import type { CreateSegmentInput, UpdateSegmentInput } from './segments.schemas.js';

export const PREVIEW_SAMPLE_SIZE = 10;

export interface SegmentCount {
  count: number;
  subscribed: number;
}

/**
 * The contacts' CSV export reads its pages here (contacts.service.ts ContactPages): the segment looked up first
 * (404), then its contacts a page at a time (segments.repository.ts pagesOfMatchingContacts).
 */
export function contactPagesOf(db: Db): ContactPages {
  return async (workspaceId, segmentId) => {
    let filter: Filter | null = null;
    if (segmentId !== undefined) {
      const segment = await repo.getSegment(db.kysely, workspaceId, segmentId);
      if (!segment) throw notFound('segment');
      filter = segment.filter as Filter;
    }
    return repo.pagesOfMatchingContacts(db.kysely, db.dialect, workspaceId, filter);
  };
}

/** A topic or broadcast a filter names that is not one of the workspace's, at the path of its key. */
export interface UnknownReference {
  path: string;
  name: string;
  what: 'topic' | 'broadcast';
}

/**
 * The topics and broadcasts a valid filter names that are not the workspace's (another workspace's broadcast is
 * unknown here, like a missing one). Every writer of a filter checks them (segments, bulk actions, automations): an
 * engagement condition on a broadcast that does not exist would match everyone with `happened: false`.
 */
export async function unknownFilterReferences(
  db: Executor,
  workspaceId: string,
  filter: Filter,
  basePath = '/filter',
): Promise<UnknownReference[]> {
  const topics = topicReferences(filter, basePath);
  const broadcasts = broadcastReferences(filter, basePath);
  const known = await existingTopicIds(
    db,
    workspaceId,
    topics.map((t) => t.topic),
  );
  const knownBroadcasts = await repo.existingBroadcastIds(
    db,
    workspaceId,
    broadcasts.map((b) => b.broadcastId),
  );
  return [
    ...topics.filter((t) => !known.has(t.topic)).map((t) => ({ path: t.path, name: t.topic, what: 'topic' as const })),
    ...broadcasts
      .filter((b) => !knownBroadcasts.has(b.broadcastId))
      .map((b) => ({ path: b.path, name: b.broadcastId, what: 'broadcast' as const })),
  ];
}

/** 422 invalid_reference, one entry per unknown name at its path, when the filter names anything unknown. */
export async function checkFilterReferences(db: Executor, workspaceId: string, filter: Filter): Promise<void> {
  const unknown = await unknownFilterReferences(db, workspaceId, filter);
  if (unknown.length) {
    throw unprocessable(
      'invalid_reference',
      `the filter names a ${unknown[0]!.what} that is not in this workspace: ${unknown[0]!.name}`,
      unknown.map((u) => ({ path: u.path, message: `names no ${u.what} of this workspace` })),
    );
  }
}

export class SegmentsService {
  constructor(readonly db: Db) {}

  private tx<T>(fn: (trx: Executor) => Promise<T>): Promise<T> {
    return this.db.kysely.transaction().execute(fn);
  }

  /** The grammar (422 validation_failed); returns the filter, for checkFilterReferences. */
  private parse(raw: unknown): { filter: Filter } {
    const errors = validateFilter(raw);
    if (errors.length) throw validationFailed(errors);
    return { filter: raw as Filter };
  }

  private async mustGet(db: Executor, workspaceId: string, id: string): Promise<Segment> {
    const segment = await repo.getSegment(db, workspaceId, id);
    if (!segment) throw notFound('segment');
    return segment;
  }

  async create(workspaceId: string, input: CreateSegmentInput): Promise<Segment> {
    const { filter } = this.parse(input.filter);
    const id = newId('seg');
    await this.tx(async (trx) => {
      await checkFilterReferences(trx, workspaceId, filter);
      await repo.insertSegment(trx, workspaceId, { id, name: input.name, filter, createdAt: nowIso() });
    });
    return this.get(workspaceId, id);
  }

  get(workspaceId: string, id: string): Promise<Segment> {
    return this.mustGet(this.db.kysely, workspaceId, id);
  }

  list(workspaceId: string, opts: { limit: number; beforeId?: string }): Promise<Segment[]> {
    return repo.listSegments(this.db.kysely, workspaceId, opts);
  }

  /** Partial: an omitted field is unchanged; a filter given replaces the stored one whole. updatedAt is refreshed. */
  async update(workspaceId: string, id: string, input: UpdateSegmentInput): Promise<Segment> {
    if (input.id !== undefined && input.id !== id)
      throw validationFailed([{ path: '/id', message: 'must equal the segment id in the path' }]);
    const parsed = input.filter !== undefined ? this.parse(input.filter) : undefined;
    return this.tx(async (trx) => {
      await this.mustGet(trx, workspaceId, id);
      if (parsed) await checkFilterReferences(trx, workspaceId, parsed.filter);
      const updated = await repo.updateSegment(
        trx,
        workspaceId,
        id,
        { name: input.name, filter: parsed?.filter },
        nowIso(),
      );
      if (!updated) throw notFound('segment');
      return updated;
    });
  }

  /** 204; a segment a broadcast points at stays (409 resource_in_use). */
  async remove(workspaceId: string, id: string): Promise<void> {
    try {
      await this.tx(async (trx) => {
        await this.mustGet(trx, workspaceId, id);
        const users = await repo.broadcastsUsingSegment(trx, workspaceId, id, 10);
        if (users.length) {
          throw conflict(
            'resource_in_use',
            `the segment is used by broadcast ${users[0]}${users.length > 1 ? ' and others' : ''}; delete those broadcasts or point them at another segment first`,
            { broadcastIds: users },
          );
        }
        await repo.deleteSegment(trx, workspaceId, id);
      });
    } catch (err) {
      if (isForeignKeyViolation(err))
        throw conflict(
          'resource_in_use',
          'the segment is used by a broadcast; delete the broadcast or point it at another segment first',
        );
      throw err;
    }
  }

  /** The contacts the segment matches, whatever their status, newest first. */
  async contacts(
    workspaceId: string,
    id: string,
    opts: { limit: number; beforeId?: string },
  ): Promise<SegmentContact[]> {
    const segment = await this.get(workspaceId, id);
    return repo.listMatchingContacts(this.db.kysely, this.db.dialect, workspaceId, segment.filter, opts);
  }

  async count(workspaceId: string, id: string): Promise<SegmentCount> {
    const segment = await this.get(workspaceId, id);
    return repo.countMatchingContacts(this.db.kysely, this.db.dialect, workspaceId, segment.filter);
  }

  /** What a filter would match, before it is saved: the counts and the first contacts. */
  async preview(workspaceId: string, raw: unknown): Promise<SegmentCount & { sample: SegmentContact[] }> {
    const { filter } = this.parse(raw);
    const k = this.db.kysely;
    await checkFilterReferences(k, workspaceId, filter);
    // One after the other: should the count give up (too costly), no second evaluation goes on without it.
    const counts = await repo.countMatchingContacts(k, this.db.dialect, workspaceId, filter);
    const sample = await repo.listMatchingContacts(k, this.db.dialect, workspaceId, filter, {
      limit: PREVIEW_SAMPLE_SIZE,
    });
    return { ...counts, sample };
  }
}
