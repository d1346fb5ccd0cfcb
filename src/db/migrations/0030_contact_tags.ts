import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * Tags and bulk actions on contacts (issue 34, contract §18; docs/contacts.md "Tags", "Bulk actions").
 *
 * `contact_tags`: one row per tag of a contact. `tag_key` is the tag lower-cased (what makes two spellings one tag:
 * the primary key (contact_id, tag_key) is the database's guard against a duplicate); `tag` the first spelling, shown;
 * `position` the order the contact's tags were given in. `contact_tags_key` (workspace_id, tag_key, contact_id)
 * serves the segment condition `{ "tag": …, "has": … }` (one index probe per contact, or a range read for a count)
 * and GET /v1/tags.
 *
 * `contact_bulk_jobs`: POST /v1/contacts/bulk's jobs, walked by the worker in batches of contacts by id: `cursor` is the
 * last contact id done (a restarted worker resumes after it), `up_to` the newest contact id when the job was created
 * (a contact created later is not in it). `ids` (JSON array) or `filter` (JSON, the segment grammar) says which.
 */
export function contactTags(dialect: Dialect) {
  const { ts, json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('contact_tags')
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('contact_id', 'text', (c) => c.notNull().references('contacts.id').onDelete('cascade'))
        .addColumn('tag_key', 'text', (c) => c.notNull())
        .addColumn('tag', 'text', (c) => c.notNull())
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('created_at', ts, (c) => c.notNull())
        .addPrimaryKeyConstraint('contact_tags_pk', ['contact_id', 'tag_key'])
        .execute();
      await db.schema
        .createIndex('contact_tags_key')
        .on('contact_tags')
        .columns(['workspace_id', 'tag_key', 'contact_id'])
        .execute();

      await db.schema
        .createTable('contact_bulk_jobs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('action', 'text', (c) =>
          c.notNull().check(sql`action in ('tag', 'untag', 'subscribe', 'unsubscribe', 'delete')`),
        )
        .addColumn('tag', 'text')
        .addColumn('topic_id', 'text')
        .addColumn('ids', json)
        .addColumn('filter', json)
        .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('RUNNING', 'COMPLETED', 'FAILED')`))
        .addColumn('matched', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('processed', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('cursor', 'text')
        .addColumn('up_to', 'text')
        .addColumn('error', 'text')
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('updated_at', ts, (c) => c.notNull())
        .addColumn('finished_at', ts)
        .addCheckConstraint('contact_bulk_jobs_target', sql`(ids is null) <> (filter is null)`)
        .execute();
      await db.schema
        .createIndex('contact_bulk_jobs_workspace')
        .on('contact_bulk_jobs')
        .columns(['workspace_id', 'id'])
        .execute();
      await db.schema
        .createIndex('contact_bulk_jobs_status')
        .on('contact_bulk_jobs')
        .columns(['status', 'id'])
        .execute();
    },
  };
}
