import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * Images uploaded for emails (docs/images.md; contract §16): the bytes in the database itself (BLOB on SQLite, bytea
 * on PostgreSQL), so that every process of an installation serves them (`GET /i/{id}`) with no shared disk, and a
 * backup of the database is a backup of the images. One row per image; an identical upload in the same workspace
 * finds its row again by `sha256` (of the stored bytes, also the ETag).
 */
export function images(dialect: Dialect) {
  const { ts } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('images')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('content_type', 'text', (c) =>
          c.notNull().check(sql`content_type in ('image/png', 'image/jpeg', 'image/gif', 'image/webp')`),
        )
        .addColumn('width', 'integer', (c) => c.notNull())
        .addColumn('height', 'integer', (c) => c.notNull())
        .addColumn('bytes', 'integer', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        // The uploaded file's name, sanitised (images.service.ts); null when it had none.
        .addColumn('name', 'text')
        .addColumn('data', dialect === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
        .addColumn('created_at', ts, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('images_workspace').on('images').columns(['workspace_id', 'id']).execute();
      await db.schema
        .createIndex('images_workspace_sha256')
        .on('images')
        .columns(['workspace_id', 'sha256'])
        .unique()
        .execute();
      // Images are compressed already: PostgreSQL keeps them out of line without trying to compress them again.
      if (dialect === 'postgres') await sql`alter table images alter column data set storage external`.execute(db);
    },
  };
}
