import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/** Workspaces, API keys, forms with their versions and slugs, templates, domains, idempotency keys. */
export function foundation(dialect: Dialect) {
  const { ts, json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('workspaces')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', ts, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('scopes', json, (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('last_used_at', ts)
        .addColumn('revoked_at', ts)
        .execute();
      await db.schema.createIndex('api_keys_workspace').on('api_keys').columns(['workspace_id', 'id']).execute();

      await db.schema
        .createTable('form_groups')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('lock_version', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('last_version', 'integer', (c) => c.notNull().defaultTo(1))
        .execute();

      await db.schema
        .createTable('templates')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('subject', 'text')
        .addColumn('html', 'text')
        .addColumn('text', 'text')
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('updated_at', ts, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('templates_workspace').on('templates').columns(['workspace_id', 'id']).execute();

      await db.schema
        .createTable('forms')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('form_group_id', 'text', (c) => c.notNull().references('form_groups.id').onDelete('cascade'))
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('DRAFT', 'PUBLISHED', 'ARCHIVED')`))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('type', 'text', (c) => c.notNull().check(sql`type in ('SIGN_UP', 'SURVEY')`))
        .addColumn('display', 'text', (c) => c.check(sql`display in ('POPUP', 'INLINE_EMBED')`))
        .addColumn('field_mapping', json, (c) => c.notNull())
        .addColumn('settings', json, (c) => c.notNull())
        .addColumn('double_opt_in_email_id', 'text', (c) => c.references('templates.id').onDelete('restrict'))
        .addColumn('seo_title', 'text')
        .addColumn('seo_description', 'text')
        .addColumn('seo_image_url', 'text')
        .addColumn('seo_favicon_url', 'text')
        .addColumn('slug', 'text')
        .addColumn('previous_version_id', 'text', (c) => c.references('forms.id').onDelete('set null'))
        .addColumn('html', 'text')
        .addColumn('html_deployed_at', ts)
        .addColumn('html_validation', json)
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('updated_at', ts, (c) => c.notNull())
        .addColumn('published_at', ts)
        .addColumn('archived_at', ts)
        .addUniqueConstraint('forms_group_version', ['form_group_id', 'version'])
        .execute();
      await db.schema.createIndex('forms_workspace').on('forms').columns(['workspace_id', 'id']).execute();
      await db.schema
        .createIndex('forms_workspace_status')
        .on('forms')
        .columns(['workspace_id', 'status', 'id'])
        .execute();
      // The invariants of versioning, held by the database itself: a group has at most one PUBLISHED
      // version and at most one DRAFT version at any time, whatever races between requests.
      await db.schema
        .createIndex('forms_one_published')
        .on('forms')
        .column('form_group_id')
        .unique()
        .where(sql.ref('status'), '=', 'PUBLISHED')
        .execute();
      await db.schema
        .createIndex('forms_one_draft')
        .on('forms')
        .column('form_group_id')
        .unique()
        .where(sql.ref('status'), '=', 'DRAFT')
        .execute();

      await db.schema
        .createTable('form_slugs')
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('slug', 'text', (c) => c.notNull())
        .addColumn('form_group_id', 'text', (c) => c.notNull().references('form_groups.id').onDelete('cascade'))
        // A slug is the form's public address (/f/{slug}), which names no workspace: unique across all of them.
        .addPrimaryKeyConstraint('form_slugs_pk', ['slug'])
        .execute();

      await db.schema
        .createTable('domains')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('PENDING', 'VERIFIED', 'FAILED')`))
        .addColumn('verification_token', 'text', (c) => c.notNull())
        .addColumn('dkim_selector', 'text', (c) => c.notNull())
        .addColumn('dkim_public_key', 'text', (c) => c.notNull())
        .addColumn('dkim_private_key', 'text', (c) => c.notNull())
        .addColumn('verification', json)
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('verified_at', ts)
        .addUniqueConstraint('domains_workspace_name', ['workspace_id', 'name'])
        .execute();

      await db.schema
        .createTable('idempotency_keys')
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('request_hash', 'text', (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('response_body', 'text')
        .addColumn('response_headers', json)
        .addColumn('created_at', ts, (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['workspace_id', 'key'])
        .execute();
    },
  };
}
