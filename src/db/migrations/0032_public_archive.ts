import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';

/**
 * The public archive (docs/archive.md, contract §19): a workspace's `slug`, its address under `/archive/{slug}`, unique
 * across the installation (a database constraint, not only a check: two workspaces saving the same slug at once cannot
 * both win); and a broadcast's `archive` switch, with a partial index for the archive's listing (the SENT broadcasts of
 * one workspace with the switch on, newest first).
 */
export function publicArchive(_dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('workspaces').addColumn('slug', 'text').execute();
      await db.schema.createIndex('workspaces_slug').unique().on('workspaces').column('slug').execute();
      await db.schema
        .alterTable('broadcasts')
        .addColumn('archive', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createIndex('broadcasts_archive')
        .on('broadcasts')
        .columns(['workspace_id', 'sent_at'])
        .where(sql.ref('archive'), '=', 1)
        .execute();
    },
  };
}
