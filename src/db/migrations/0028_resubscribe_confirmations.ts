import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * A confirmation without a form (docs/bounces.md, "The unsubscribe page"): an UNSUBSCRIBED contact who asks on the
 * unsubscribe page to receive emails again is sent a double opt-in confirmation, which no form asked for, so
 * `confirmations.form_id` may be null. PostgreSQL drops the constraint; SQLite cannot, so the table is rebuilt as it
 * was (0004, 0006) with the column nullable. Running it again changes nothing.
 */
export function resubscribeConfirmations(dialect: Dialect) {
  const { ts, json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect === 'postgres') {
        await sql`alter table confirmations alter column form_id drop not null`.execute(db);
        return;
      }
      await db.schema
        .createTable('confirmations_0028')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('contact_id', 'text', (c) => c.notNull().references('contacts.id').onDelete('cascade'))
        .addColumn('form_id', 'text', (c) => c.references('forms.id').onDelete('cascade'))
        .addColumn('token', 'text', (c) => c.notNull().unique())
        .addColumn('expires_at', ts, (c) => c.notNull())
        .addColumn('used_at', ts)
        .addColumn('email_sent_at', ts)
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', ts, (c) => c.notNull())
        .addColumn('last_error', 'text')
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('data', json)
        .execute();
      await sql`insert into confirmations_0028 (id, workspace_id, contact_id, form_id, token, expires_at, used_at,
        email_sent_at, attempts, next_attempt_at, last_error, created_at, data)
        select id, workspace_id, contact_id, form_id, token, expires_at, used_at, email_sent_at, attempts,
        next_attempt_at, last_error, created_at, data from confirmations`.execute(db);
      await db.schema.dropTable('confirmations').execute();
      await sql`alter table confirmations_0028 rename to confirmations`.execute(db);
      await db.schema
        .createIndex('confirmations_due')
        .on('confirmations')
        .columns(['email_sent_at', 'next_attempt_at'])
        .execute();
      await db.schema
        .createIndex('confirmations_contact')
        .on('confirmations')
        .columns(['workspace_id', 'contact_id', 'created_at'])
        .execute();
    },
  };
}
