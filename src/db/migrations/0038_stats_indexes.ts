import { sql, type Kysely, type SqlBool } from 'kysely';

/**
 * Two indexes that let a list of broadcasts count its stats from indexes (bench/README.md, bench:console: a page of 25
 * broadcasts of 110,000 recipients took ~2.9 s, most of it reading delivery and event rows):
 *
 * - `deliveries_broadcast_marks` (broadcast_id) over the deliveries that carry a mark the stats count apart from their
 *   status: an unsubscribe, a soft bounce, a complaint, or the outbox transport's answer. The statuses are counted from
 *   `deliveries_broadcast` (broadcast_id, status, id) alone, and only these few rows are read
 *   (sending/deliveries/deliveries.repository.ts, countDeliveriesOf; its DELIVERY_MARKS_PREDICATE is this text).
 * - `events_broadcast_tracking` (workspace_id, broadcast_id, type, machine, delivery_id) over the opens and clicks:
 *   opens, clicks, unique ones and machine opens counted without reading an event row (sending/tracking/
 *   tracking.repository.ts, engagementOf).
 *
 * Building them reads every delivery and event once: at 2,750,000 deliveries and 5,125,000 events, ~7 s and ~5–11 s
 * on SQLite.
 */
export const DELIVERY_MARKS = `unsubscribed_at is not null or soft_bounced_at is not null or complained_at is not null or smtp_response like 'OUTBOX: written to%'`;
const TRACKING = `type in ('email.opened', 'email.clicked')`;

export function statsIndexes() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createIndex('deliveries_broadcast_marks')
        .on('deliveries')
        .columns(['broadcast_id'])
        .where(sql.raw<SqlBool>(`(${DELIVERY_MARKS})`))
        .execute();
      await db.schema
        .createIndex('events_broadcast_tracking')
        .on('events')
        .columns(['workspace_id', 'broadcast_id', 'type', 'machine', 'delivery_id'])
        .where(sql.raw<SqlBool>(TRACKING))
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('events_broadcast_tracking').execute();
      await db.schema.dropIndex('deliveries_broadcast_marks').execute();
    },
  };
}
