import { type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * Templates keep the editor's document (contract §16; docs/email-documents-api.md): `editor_content`, the JSON an
 * editor stores (a block document, whose rendered HTML and text are `html` and `text`), null for the templates before.
 */
export function templateDocuments(dialect: Dialect) {
  const { json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('templates').addColumn('editor_content', json).execute();
    },
  };
}
