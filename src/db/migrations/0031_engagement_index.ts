import { sql, type Kysely, type SqlBool } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * Engagement segments (issue 34, contract §18; audience/segments/CONTEXT.md, "Engagement"): whether a contact was sent,
 * opened or clicked a message (of one broadcast, within some days) is read from the events table by
 * outbox/events/events.engagement.ts, one probe per contact: `events_engagement` (workspace_id, contact_id, type,
 * occurred_at, broadcast_id) over the human `email.sent`, `email.opened` and `email.clicked` events only. It covers
 * the probe (the broadcast is the last column so that a window without a broadcast is one range, and a broadcast is
 * checked in the index, not by reading the event), and leaves out the contact, form and broadcast-status events and
 * every machine open or click. Measured on bench/segments-engagement.bench.ts (bench/README.md, bench:engagement).
 *
 * The predicate is the text the queries carry (ENGAGEMENT_INDEX_PREDICATE): SQLite uses a partial index only when the
 * query has its terms.
 *
 * And a broadcast made by `POST /v1/broadcasts/{id}/resend` (docs/sending.md, "Resend to non-openers") says where
 * it came from: `resend_of` (the original), `resend_to` (NON_OPENERS | NON_CLICKERS) and `resend_as_of` (the instant
 * of the resend: its audience is the original's recipients without a human open, or click, up to then).
 */
export const ENGAGEMENT_INDEX_PREDICATE_0031 = `type in ('email.sent', 'email.opened', 'email.clicked') and machine = 0`;

export function engagementIndex(dialect: Dialect) {
  const { ts } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('broadcasts').addColumn('resend_of', 'text').execute();
      await db.schema.alterTable('broadcasts').addColumn('resend_to', 'text').execute();
      await db.schema.alterTable('broadcasts').addColumn('resend_as_of', ts).execute();
      await db.schema
        .createIndex('events_engagement')
        .on('events')
        .columns(['workspace_id', 'contact_id', 'type', 'occurred_at', 'broadcast_id'])
        .where(sql.raw<SqlBool>(ENGAGEMENT_INDEX_PREDICATE_0031))
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('events_engagement').execute();
      for (const c of ['resend_as_of', 'resend_to', 'resend_of'])
        await db.schema.alterTable('broadcasts').dropColumn(c).execute();
    },
  };
}
