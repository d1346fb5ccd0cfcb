import { sql, type Kysely } from 'kysely';

/**
 * `events_broadcast` (workspace, broadcast, type, id) only for events of a broadcast (issue 13). Every query that
 * reads it names the broadcast (`broadcast_id = ?` or `in (…)`, which imply it is not null, so both databases still
 * use the index: stats, links, timeline, GET /v1/events?broadcastId=), and the events of contacts and forms have no
 * broadcast: each of them was an entry under NULL that nothing reads. One B-tree fewer for every contact.created,
 * contact.subscribed and form.submitted: ~2-3.5 µs of ~20 µs per event, SQLite, 25 events per transaction (an import
 * writes two per row, a sign-up two; bench/README.md, bench:import and bench:submit).
 */
export function eventsBroadcastPartial() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('events_broadcast').execute();
      await db.schema
        .createIndex('events_broadcast')
        .on('events')
        .columns(['workspace_id', 'broadcast_id', 'type', 'id'])
        .where(sql.ref('broadcast_id'), 'is not', null)
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('events_broadcast').execute();
      await db.schema
        .createIndex('events_broadcast')
        .on('events')
        .columns(['workspace_id', 'broadcast_id', 'type', 'id'])
        .execute();
    },
  };
}
