import type { Db } from '../db/connection.js';
import { validationFailed } from '../errors/errors.js';
import { normalizeDateTime } from '../lib/time.js';
import { listEvents, pruneEvents, type EventFilter } from './events.repository.js';
import type { EventRecord } from './events.types.js';

/** Events pruned per statement: retention never runs one long delete. */
const PRUNE_BATCH = 1000;
/** Batches per run of the retention job; it runs again at once while there is more (jobs/runner.ts). */
const PRUNE_BATCHES_PER_RUN = 20;

/** The event stream's API side (docs/events.md): list a workspace's events, and retention. */
export class EventsService {
  constructor(private readonly db: Db) {}

  async list(workspaceId: string, f: Omit<EventFilter, 'since'> & { since?: string }): Promise<EventRecord[]> {
    let since: string | undefined;
    if (f.since !== undefined) {
      since = normalizeDateTime(f.since);
      if (since === undefined) throw validationFailed([{ path: '/query/since', message: 'must be an RFC 3339 date-time' }]);
    }
    return listEvents(this.db.kysely, workspaceId, { ...f, since });
  }

  /**
   * Deletes events older than `retentionDays` (EVENTS_RETENTION_DAYS), PRUNE_BATCH at a time, so that no
   * statement holds the database for long. Returns how many were deleted (the job runs again while > 0).
   */
  async prune(retentionDays: number, now = Date.now()): Promise<number> {
    const before = new Date(now - retentionDays * 86_400_000).toISOString();
    let total = 0;
    for (let i = 0; i < PRUNE_BATCHES_PER_RUN; i++) {
      const n = await pruneEvents(this.db.kysely, before, PRUNE_BATCH);
      total += n;
      if (n < PRUNE_BATCH) break;
    }
    return total;
  }
}
