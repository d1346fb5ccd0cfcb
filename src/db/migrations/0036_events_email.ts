import { sql, type Kysely, type SqlBool } from 'kysely';

/**
 * `events_email` (workspace, delivery, id) only for the events of transactional emails (docs/emails.md): they have a
 * delivery and no broadcast (their hidden broadcast's id is `data.emailId`, outbox/events). An email's detail (GET
 * /v1/emails/{id}/events, the console's Emails page) reads its recipients' events by their deliveries' ids; the
 * events of broadcasts, contacts and forms are not in this index, so it costs their writers nothing.
 */
const PREDICATE = 'broadcast_id is null and delivery_id is not null';

export function eventsEmail() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createIndex('events_email')
        .on('events')
        .columns(['workspace_id', 'delivery_id', 'id'])
        .where(sql.raw<SqlBool>(PREDICATE))
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('events_email').execute();
    },
  };
}
