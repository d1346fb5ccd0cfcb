import { type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * Mail that inboxes trust (docs/bounces.md): the server secret that signs VERP and unsubscribe tokens, the
 * workspace's settings (postal address, locale, sender of system mail), and what the inbound listener could
 * not read (kept 30 days and listed).
 */
export function mailSettings(dialect: Dialect) {
  const { ts, json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('server_secrets')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('created_at', ts, (c) => c.notNull())
        .execute();
      await db.schema.alterTable('workspaces').addColumn('settings', json).execute();
      // Mail the inbound listener received at a valid bounce address and could not read (kept 30 days).
      await db.schema
        .createTable('inbound_messages')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('rcpt_to', 'text', (c) => c.notNull())
        .addColumn('mail_from', 'text')
        .addColumn('subject', 'text')
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('size', 'integer', (c) => c.notNull())
        .addColumn('raw', 'text', (c) => c.notNull()) // the first 256 KiB, base64
        .addColumn('received_at', ts, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('inbound_messages_workspace')
        .on('inbound_messages')
        .columns(['workspace_id', 'id'])
        .execute();
      await db.schema.createIndex('inbound_messages_received').on('inbound_messages').column('received_at').execute();
    },
  };
}
