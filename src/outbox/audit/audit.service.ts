import type { Db } from '../../db/connection.js';
import { validationFailed } from '../../errors/errors.js';
import { normalizeDateTime } from '../../lib/time.js';
import { listAudit, pruneAudit, type AuditFilter } from './audit.repository.js';
import type { AuditEntry } from './audit.types.js';

/** Entries pruned per statement, and statements per run (the job runs again at once while there is more). */
const PRUNE_BATCH = 1000;
const PRUNE_BATCHES_PER_RUN = 20;

/** The audit log's API side (docs/audit-log.md): a workspace's entries, filtered. Writing is `recordAudit`'s. */
export class AuditService {
  constructor(private readonly db: Db) {}

  list(workspaceId: string, filter: AuditFilter): Promise<AuditEntry[]> {
    const at = (name: 'from' | 'to') => {
      const text = filter[name];
      if (text === undefined) return undefined;
      const iso = normalizeDateTime(text);
      if (!iso) throw validationFailed([{ path: `/query/${name}`, message: 'must be an RFC 3339 date-time' }]);
      return iso;
    };
    return listAudit(this.db.kysely, workspaceId, { ...filter, from: at('from'), to: at('to') });
  }
}

/**
 * Deletes entries older than `retentionDays` (AUDIT_RETENTION_DAYS), PRUNE_BATCH at a time. Returns how many were
 * deleted (the retention job runs again at once while > 0).
 */
export async function pruneOldAudit(db: Db, retentionDays: number, now = Date.now()): Promise<number> {
  const before = new Date(now - retentionDays * 86_400_000).toISOString();
  let total = 0;
  for (let i = 0; i < PRUNE_BATCHES_PER_RUN; i++) {
    const n = await pruneAudit(db.kysely, before, PRUNE_BATCH);
    total += n;
    if (n < PRUNE_BATCH) break;
  }
  return total;
}
