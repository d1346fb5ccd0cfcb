import { type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/** Form submissions, double opt-in confirmations, and per-form counters. */
export function submissions(dialect: Dialect) {
  const { ts, json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('submissions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('form_id', 'text', (c) => c.notNull().references('forms.id').onDelete('cascade'))
        .addColumn('form_group_id', 'text', (c) => c.notNull().references('form_groups.id').onDelete('cascade'))
        .addColumn('form_version', 'integer', (c) => c.notNull())
        .addColumn('data', json, (c) => c.notNull()) // the mapped fields only, as submitted (after trimming)
        .addColumn('contact_id', 'text', (c) => c.references('contacts.id').onDelete('set null'))
        .addColumn('source', 'text', (c) => c.notNull()) // HOSTED | EMBED | API
        .addColumn('created_at', ts, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('submissions_group')
        .on('submissions')
        .columns(['workspace_id', 'form_group_id', 'id'])
        .execute();

      await db.schema
        .createTable('confirmations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('contact_id', 'text', (c) => c.notNull().references('contacts.id').onDelete('cascade'))
        .addColumn('form_id', 'text', (c) => c.notNull().references('forms.id').onDelete('cascade'))
        .addColumn('token', 'text', (c) => c.notNull().unique())
        .addColumn('expires_at', ts, (c) => c.notNull())
        .addColumn('used_at', ts)
        .addColumn('email_sent_at', ts)
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', ts, (c) => c.notNull())
        .addColumn('last_error', 'text')
        .addColumn('created_at', ts, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('confirmations_due')
        .on('confirmations')
        .columns(['email_sent_at', 'next_attempt_at'])
        .execute();

      await db.schema
        .createTable('form_counters')
        .addColumn('form_id', 'text', (c) => c.primaryKey().references('forms.id').onDelete('cascade'))
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('views', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('submissions', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('confirmations', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  };
}
