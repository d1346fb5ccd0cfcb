import type { Kysely } from 'kysely';
import type { Dialect } from '../connection.js';

/**
 * Indexes for segments over many contacts (issue 13; figures from bench/segments.bench.ts's data: 1,000,000
 * contacts, 2024–2025, on the development machine).
 *
 * PostgreSQL: `(workspace_id, created_at)`, for segments with a createdAt range ("joined in the last month"):
 * their counts, pages and audiences are single statements there, and the planner reads the range from the index
 * instead of every contact. Counting the contacts of one month (41,000) with plan = "pro": 140 ms → 19 ms (33,000
 * buffers read → 1,665); the benchmark's segment narrowed to that month (property, topic, createdAt): 213 ms → 52 ms.
 * Broad ranges are unchanged (six months: the planner keeps its parallel sequential scan).
 *
 * Not added, measured:
 * - SQLite: no index on created_at or on properties. Filters are evaluated there a slice of contact ids at a time
 *   (segments/slices.ts, to keep the event loop free), and each slice is read by `(workspace_id, id)`: no other
 *   index can serve it, and one on created_at would tempt the planner, which has no statistics, into reading the
 *   whole createdAt range for every slice. An expression index (`json_extract(properties, '$.plan')`) serves one
 *   property key only, and property keys are the users' own.
 * - PostgreSQL, GIN (jsonb_path_ops) on `properties`, with `@>` compiled for eq: a property value held by 200 of
 *   1,000,000 contacts was counted in 5.6 ms instead of 345 ms, but one held by 5 % took as long as without
 *   (550 vs 536 ms), the benchmark's segment (plan = "pro", 30 %) became ~15 % slower (the planner chose a bitmap
 *   scan), and inserting 200,000 contacts took 6.0 s instead of 4.1 s. Segments are mostly broad and contacts are
 *   written all the time (imports, sign-ups): not worth it by default.
 */
export function segmentIndexes(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect !== 'postgres') return;
      await db.schema.createIndex('contacts_workspace_created').on('contacts').columns(['workspace_id', 'created_at']).execute();
    },
  };
}
