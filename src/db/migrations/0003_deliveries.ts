import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/** The delivery pipeline: one row per recipient of a broadcast, and the broadcast's materialisation progress. */
export function deliveries(dialect: Dialect) {
  const { ts } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('deliveries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('broadcast_id', 'text', (c) => c.notNull().references('broadcasts.id').onDelete('cascade'))
        .addColumn('contact_id', 'text', (c) => c.references('contacts.id').onDelete('set null'))
        .addColumn('email', 'text', (c) => c.notNull()) // the address at the time the audience was taken
        .addColumn('status', 'text', (c) =>
          c.notNull().check(sql`status in ('QUEUED', 'SENDING', 'SENT', 'FAILED', 'BOUNCED', 'CANCELED', 'SKIPPED')`),
        )
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', ts, (c) => c.notNull())
        .addColumn('lease_owner', 'text')
        .addColumn('lease_expires_at', ts)
        .addColumn('handed_off_at', ts) // set just before the message goes to the transport
        .addColumn('last_error', 'text')
        .addColumn('smtp_response', 'text')
        .addColumn('message_id', 'text')
        .addColumn('unsubscribe_token', 'text', (c) => c.notNull())
        .addColumn('unsubscribed_at', ts)
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('updated_at', ts, (c) => c.notNull())
        .addColumn('sent_at', ts)
        .execute();
      // One delivery per recipient, held by the database whatever the workers do.
      await db.schema
        .createIndex('deliveries_one_per_recipient')
        .on('deliveries')
        .columns(['broadcast_id', 'contact_id'])
        .unique()
        .execute();
      await db.schema
        .createIndex('deliveries_unsubscribe_token')
        .on('deliveries')
        .column('unsubscribe_token')
        .unique()
        .execute();
      await db.schema.createIndex('deliveries_due').on('deliveries').columns(['status', 'next_attempt_at']).execute();
      await db.schema
        .createIndex('deliveries_broadcast')
        .on('deliveries')
        .columns(['broadcast_id', 'status', 'id'])
        .execute();

      await db.schema.alterTable('broadcasts').addColumn('materialized_at', ts).execute();
      await db.schema.alterTable('broadcasts').addColumn('materialize_cursor', 'text').execute();
      await db.schema.alterTable('broadcasts').addColumn('materialize_owner', 'text').execute();
      await db.schema.alterTable('broadcasts').addColumn('materialize_lease_until', ts).execute();
    },
  };
}
