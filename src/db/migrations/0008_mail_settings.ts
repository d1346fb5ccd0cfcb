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
      await db.schema.createTable('server_secrets')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('created_at', ts, (c) => c.notNull())
        .execute();
      await db.schema.alterTable('workspaces').addColumn('settings', json).execute();
    },
  };
}
