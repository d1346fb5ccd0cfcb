import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/** Contacts, topics and subscriptions, segments, imports, broadcasts. */
export function audienceAndBroadcasts(dialect: Dialect) {
  const { ts, json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('contacts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('email', 'text', (c) => c.notNull()) // normalised: lower-case, see lib/email.ts
        .addColumn('first_name', 'text')
        .addColumn('last_name', 'text')
        .addColumn('properties', json, (c) => c.notNull())
        .addColumn('status', 'text', (c) =>
          c.notNull().check(sql`status in ('SUBSCRIBED', 'PENDING', 'UNSUBSCRIBED', 'BOUNCED', 'COMPLAINED')`),
        )
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('updated_at', ts, (c) => c.notNull())
        .addUniqueConstraint('contacts_workspace_email', ['workspace_id', 'email'])
        .execute();
      await db.schema.createIndex('contacts_workspace').on('contacts').columns(['workspace_id', 'id']).execute();
      await db.schema
        .createIndex('contacts_workspace_status')
        .on('contacts')
        .columns(['workspace_id', 'status', 'id'])
        .execute();

      await db.schema
        .createTable('topics')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('default_subscription', 'text', (c) =>
          c.notNull().check(sql`default_subscription in ('OPT_IN', 'OPT_OUT')`),
        )
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('updated_at', ts, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('topics_workspace').on('topics').columns(['workspace_id', 'id']).execute();

      // A contact's explicit choice about a topic. No row: the topic's defaultSubscription applies
      // (OPT_IN: subscribed unless they opted out; OPT_OUT: not subscribed unless they opted in).
      await db.schema
        .createTable('contact_topics')
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('contact_id', 'text', (c) => c.notNull().references('contacts.id').onDelete('cascade'))
        .addColumn('topic_id', 'text', (c) => c.notNull().references('topics.id').onDelete('cascade'))
        .addColumn('subscribed', 'integer', (c) => c.notNull().check(sql`subscribed in (0, 1)`))
        .addColumn('updated_at', ts, (c) => c.notNull())
        .addPrimaryKeyConstraint('contact_topics_pk', ['contact_id', 'topic_id'])
        .execute();
      await db.schema
        .createIndex('contact_topics_topic')
        .on('contact_topics')
        .columns(['topic_id', 'subscribed', 'contact_id'])
        .execute();

      await db.schema
        .createTable('segments')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('filter', json, (c) => c.notNull())
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('updated_at', ts, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('segments_workspace').on('segments').columns(['workspace_id', 'id']).execute();

      await db.schema
        .createTable('contact_imports')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('format', 'text', (c) => c.notNull().check(sql`format in ('CSV', 'NDJSON')`))
        .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('RUNNING', 'COMPLETED', 'FAILED')`))
        .addColumn('total', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('updated', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('skipped', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('errors', json, (c) => c.notNull()) // [{ line, reason }], capped
        .addColumn('error', 'text') // why a FAILED import stopped
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('finished_at', ts)
        .execute();
      await db.schema
        .createIndex('contact_imports_workspace')
        .on('contact_imports')
        .columns(['workspace_id', 'id'])
        .execute();

      await db.schema
        .createTable('broadcasts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) =>
          c.notNull().check(sql`status in ('DRAFT', 'SCHEDULED', 'SENDING', 'SENT', 'CANCELED', 'FAILED')`),
        )
        .addColumn('from_address', 'text')
        .addColumn('reply_to', 'text')
        .addColumn('subject', 'text')
        .addColumn('html', 'text')
        .addColumn('text', 'text')
        .addColumn('preview_text', 'text')
        .addColumn('editor_content', json)
        // A topic or segment a broadcast points at cannot be deleted from under it.
        .addColumn('topic_id', 'text', (c) => c.references('topics.id').onDelete('restrict'))
        .addColumn('segment_id', 'text', (c) => c.references('segments.id').onDelete('restrict'))
        .addColumn('send_at', ts)
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('updated_at', ts, (c) => c.notNull())
        .addColumn('sent_at', ts)
        .execute();
      await db.schema.createIndex('broadcasts_workspace').on('broadcasts').columns(['workspace_id', 'id']).execute();
      await db.schema
        .createIndex('broadcasts_workspace_status')
        .on('broadcasts')
        .columns(['workspace_id', 'status', 'id'])
        .execute();
      await db.schema.createIndex('broadcasts_due').on('broadcasts').columns(['status', 'send_at']).execute();
    },
  };
}
