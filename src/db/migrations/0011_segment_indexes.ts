import type { Kysely } from 'kysely';
import type { Dialect } from '../connection.js';

/**
 * Indexes for segments over many contacts (issue 13; measured on bench/segments.bench.ts's 1,000,000 contacts, the
 * figures in bench/README.md, bench:segments, "Indexes").
 *
 * PostgreSQL: `(workspace_id, created_at)`, for segments with a createdAt range ("joined in the last month"):
 * their counts, pages and audiences are single statements there, and the planner reads the range from the index
 * instead of every contact (a month's count about 7 times faster). Broad ranges are unchanged (six months: the
 * planner keeps its parallel sequential scan).
 *
 * Not added, measured:
 * - SQLite: no index on created_at or on properties. Filters are evaluated there a slice of contact ids at a time
 *   (segments/slices.ts, to keep the event loop free), and each slice is read by `(workspace_id, id)`: no other
 *   index can serve it, and one on created_at would tempt the planner, which has no statistics, into reading the
 *   whole createdAt range for every slice. An expression index (`json_extract(properties, '$.plan')`) serves one
 *   property key only, and property keys are the users' own.
 * - PostgreSQL, GIN (jsonb_path_ops) on `properties`, with `@>` compiled for eq: it paid for rare values only; a
 *   common one took as long as without, the benchmark's broad segment became slower (the planner chose a bitmap
 *   scan), and inserting contacts took ~45 % longer. Segments are mostly broad and contacts are written all the time
 *   (imports, sign-ups): not worth it by default.
 */
export function segmentIndexes(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect !== 'postgres') return;
      await db.schema
        .createIndex('contacts_workspace_created')
        .on('contacts')
        .columns(['workspace_id', 'created_at'])
        .execute();
    },
  };
}
