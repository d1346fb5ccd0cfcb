import { instantOfWallTime, isTimeZone } from '../../lib/zones.js';
import type { MaterializedRecipient } from './deliveries.batch-sql.js';
import type { MaterializationJob } from './store.js';

/**
 * Local-time sending (issue 34, contract §19, docs/sending.md "Local-time sending"), the materialiser's part: each
 * recipient's delivery is written due (`next_attempt_at`) at the instant the broadcast's wall-clock time comes in the
 * recipient's zone (the workspace's for a contact without one, or with one this runtime no longer knows). A zone whose
 * time has already passed is due at once (Mailchimp's behaviour). The pipeline claims only due deliveries, and the
 * broadcast completes only once none is open, so it stays SENDING until the last zone's turn.
 */
export function withLocalReleases(
  job: Pick<MaterializationJob, 'local'>,
  rows: MaterializedRecipient[],
  now: string,
): MaterializedRecipient[] {
  const local = job.local;
  if (!local) return rows;
  const byZone = new Map<string, string>();
  const nowMs = Date.parse(now);
  for (const row of rows) {
    const zone = row.timezone && isTimeZone(row.timezone) ? row.timezone : local.defaultZone;
    let at = byZone.get(zone);
    if (at === undefined) {
      at = new Date(Math.max(nowMs, instantOfWallTime(local.wallTime, zone))).toISOString();
      byZone.set(zone, at);
    }
    row.releaseAt = at;
    row.localZone = zone;
  }
  return rows;
}
