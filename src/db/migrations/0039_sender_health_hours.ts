import type { Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * Sender health's closed hours (sending/bounces/bounces.health.ts; bench/README.md, bench:console at 1,000,000
 * contacts): `GET /v1/workspace/health` counted every delivery sent, bounced or complained about in the last 30 days at
 * each call (2,750,000 index entries, ~1.3 s on SQLite, the dashboard's longest request). An hour that ended more than
 * an hour ago no longer changes (deliveries are never deleted, and their times are written as they happen), so its
 * counts are kept here once counted, and a call counts only what came after `sender_health_rollups.until` and the
 * part-hours at its windows' starts.
 * - `sender_health_hours`: per workspace and UTC hour, the deliveries sent in it, hard-bounced in it (of them `refused`:
 *   never sent, refused at send time) and complained about in it; hours with none are left out.
 * - `sender_health_rollups`: per workspace, the hours counted: every hour in [since, until) with any is in the table.
 */
export function senderHealthHours(dialect: Dialect) {
  const { ts } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('sender_health_hours')
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('hour', ts, (c) => c.notNull())
        .addColumn('sent', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('hard_bounces', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('refused', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('complaints', 'integer', (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('sender_health_hours_pk', ['workspace_id', 'hour'])
        .execute();
      await db.schema
        .createTable('sender_health_rollups')
        .addColumn('workspace_id', 'text', (c) => c.primaryKey().references('workspaces.id').onDelete('cascade'))
        .addColumn('since', ts, (c) => c.notNull())
        .addColumn('until', ts, (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('sender_health_rollups').execute();
      await db.schema.dropTable('sender_health_hours').execute();
    },
  };
}
