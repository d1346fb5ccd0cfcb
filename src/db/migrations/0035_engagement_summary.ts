import { sql, type Kysely, type SqlBool } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * Engagement read from a per-contact summary (issue 34, contract §18; audience/segments/CONTEXT.md "Engagement";
 * bench/README.md, bench:engagement). At 1,000,000 contacts one probe of the events per contact and condition (0031's
 * `events_engagement`) cost 3–5 s a count; now:
 * - `contacts.last_sent_at`, `last_opened_at`, `last_clicked_at`: the time of the contact's latest `email.sent`, human
 *   `email.opened` and human `email.clicked` (machine = 0), kept by the writers of those events in the same transaction
 *   (audience/contacts/contacts.engagement.ts): a condition without a broadcast ("opened in the last 30 days", "never
 *   clicked") is a comparison of a column, no probe. Filled here from the events there are.
 * - `events_broadcast_engagement` (workspace_id, broadcast_id, type, contact_id, occurred_at) over the same human
 *   events replaces `events_engagement`: a condition on one broadcast ("non-openers of X", a resend's audience) reads
 *   that broadcast's openers once per statement, not a contact's events per contact.
 * The predicate is the text the queries carry (outbox/events/events.engagement.ts ENGAGEMENT_INDEX_PREDICATE).
 */
const PREDICATE = `type in ('email.sent', 'email.opened', 'email.clicked') and machine = 0`;
const KINDS = [
  ['last_sent_at', 'email.sent'],
  ['last_opened_at', 'email.opened'],
  ['last_clicked_at', 'email.clicked'],
] as const;

export function engagementSummary(dialect: Dialect) {
  const { ts } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      for (const [column] of KINDS) await db.schema.alterTable('contacts').addColumn(column, ts).execute();
      // Filled from the events through 0031's index (one probe per contact), before it is dropped.
      for (const [column, type] of KINDS)
        await sql`update contacts set ${sql.ref(column)} = (
            select max(e.occurred_at) from events as e
            where e.workspace_id = contacts.workspace_id and e.contact_id = contacts.id and e.type = ${sql.lit(type)}
              and ${sql.raw(PREDICATE.replace('type in', 'e.type in').replace('machine', 'e.machine'))})`.execute(db);
      await db.schema
        .createIndex('events_broadcast_engagement')
        .on('events')
        .columns(['workspace_id', 'broadcast_id', 'type', 'contact_id', 'occurred_at'])
        .where(sql.raw<SqlBool>(PREDICATE))
        .execute();
      await db.schema.dropIndex('events_engagement').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createIndex('events_engagement')
        .on('events')
        .columns(['workspace_id', 'contact_id', 'type', 'occurred_at', 'broadcast_id'])
        .where(sql.raw<SqlBool>(PREDICATE))
        .execute();
      await db.schema.dropIndex('events_broadcast_engagement').execute();
      for (const [column] of KINDS) await db.schema.alterTable('contacts').dropColumn(column).execute();
    },
  };
}
