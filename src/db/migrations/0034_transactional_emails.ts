import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * Transactional email (issue 35, contract §20; docs/emails.md):
 * - `emails`: one message an application sent (`POST /v1/emails`, SMTP submission), as it was asked for and rendered
 *   (the template's version it used). Its id is also the id of its hidden broadcast row (`broadcasts.transactional = 1`),
 *   whose deliveries (one per recipient, `deliveries.lane = 1`) the delivery pipeline sends as it sends everything else.
 *   A recipient suppressed for a hard bounce or a complaint gets a SKIPPED delivery at once (its status SUPPRESSED).
 * - `email_attachments`: their bytes (BLOB / bytea), 10 MB per email in all, read by the worker that builds the MIME.
 * - `deliveries.lane`: 1 for transactional deliveries, claimed before the broadcasts' (a partial index of their own, so
 *   the claim stays an index range however long a broadcast's queue is).
 * - templates: `alias` (unique per workspace) and `version` (each content change increments it); `template_versions`
 *   keeps every version's content, so an email records which it used.
 */
export function transactionalEmails(dialect: Dialect) {
  const { ts, json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('emails')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('from_address', 'text', (c) => c.notNull())
        .addColumn('to_addresses', json, (c) => c.notNull())
        .addColumn('cc_addresses', json, (c) => c.notNull())
        .addColumn('bcc_addresses', json, (c) => c.notNull())
        .addColumn('reply_to', 'text')
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('html', 'text')
        .addColumn('text', 'text')
        .addColumn('headers', json, (c) => c.notNull())
        .addColumn('tags', json, (c) => c.notNull())
        .addColumn('track_opens', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('track_clicks', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('template_id', 'text')
        .addColumn('template_version', 'integer')
        .addColumn('api_key_id', 'text')
        .addColumn('idempotency_key', 'text')
        .addColumn('created_at', ts, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('emails_workspace').on('emails').columns(['workspace_id', 'id']).execute();
      await db.schema
        .createIndex('emails_idempotency')
        .unique()
        .on('emails')
        .columns(['workspace_id', 'idempotency_key'])
        .where(sql.ref('idempotency_key'), 'is not', null)
        .execute();
      await db.schema
        .createTable('email_attachments')
        .addColumn('email_id', 'text', (c) => c.notNull().references('emails.id').onDelete('cascade'))
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('filename', 'text', (c) => c.notNull())
        .addColumn('content_type', 'text', (c) => c.notNull())
        .addColumn('size', 'integer', (c) => c.notNull())
        .addColumn('data', dialect === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
        .addPrimaryKeyConstraint('email_attachments_pk', ['email_id', 'position'])
        .execute();
      await db.schema
        .alterTable('broadcasts')
        .addColumn('transactional', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable('deliveries')
        .addColumn('lane', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      // The transactional lane's claim: only its rows are in this index (a literal in the claim's WHERE matches it).
      await db.schema
        .createIndex('deliveries_lane_due')
        .on('deliveries')
        .columns(['status', 'next_attempt_at'])
        .where(sql.ref('lane'), '=', sql.lit(1))
        .execute();
      await db.schema.alterTable('templates').addColumn('alias', 'text').execute();
      await db.schema
        .alterTable('templates')
        .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
        .execute();
      await db.schema
        .createIndex('templates_alias')
        .unique()
        .on('templates')
        .columns(['workspace_id', 'alias'])
        .where(sql.ref('alias'), 'is not', null)
        .execute();
      await db.schema
        .createTable('template_versions')
        .addColumn('template_id', 'text', (c) => c.notNull().references('templates.id').onDelete('cascade'))
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('subject', 'text')
        .addColumn('html', 'text')
        .addColumn('text', 'text')
        .addColumn('created_at', ts, (c) => c.notNull())
        .addPrimaryKeyConstraint('template_versions_pk', ['template_id', 'version'])
        .execute();
      // Every existing template's content is its version 1.
      await sql`insert into template_versions (template_id, version, workspace_id, subject, html, text, created_at)
        select id, 1, workspace_id, subject, html, text, updated_at from templates`.execute(db);
    },
  };
}
