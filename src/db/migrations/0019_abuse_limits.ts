import type { Kysely } from 'kysely';
import type { Dialect } from '../connection.js';

/**
 * Limits against replays and floods (issue 29, items 5 and 14), kept in the database so that they hold across
 * processes and restarts:
 * - `tracking_hits`: the opens and clicks of a delivery that reached the tracking writer (docs/tracking.md,
 *   "Replays and floods"); at most TRACKING_MAX_HITS_PER_DELIVERY of each are stored as events. One small row per
 *   delivery that was opened or clicked, upserted in the writer's transaction.
 * - `track_quota`: a workspace's POST /v1/events/track use in the current minute (docs/automations.md, "Custom
 *   events"): one row per workspace, its counters started over when the minute changes.
 */
export function abuseLimits(_dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('tracking_hits')
        .addColumn('delivery_id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('opens', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('clicks', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createTable('track_quota')
        .addColumn('workspace_id', 'text', (c) => c.primaryKey().references('workspaces.id').onDelete('cascade'))
        // The minute counted: Unix time in minutes.
        .addColumn('minute', 'integer', (c) => c.notNull())
        .addColumn('events', 'integer', (c) => c.notNull())
        .addColumn('bytes', 'bigint', (c) => c.notNull())
        .execute();
    },
  };
}
