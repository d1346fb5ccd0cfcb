import { type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * Secrets at rest (db/secrets.ts; docs/domains.md, "Secrets at rest"): the installation's key lives outside the database
 * (SECRET_KEY or the key file), and the database keeps only its fingerprint here, so that a process started with
 * another key refuses to start. Nothing secret is in this table.
 *
 * The rows of the layout before it are converted by the first start after it, which has the key (a migration has
 * not): the generated secret that server_secrets held is adopted as the key file and deleted, and every DKIM private
 * key still in clear is sealed (domains/domains.keys.ts). Both steps are idempotent and safe when two processes start
 * at once.
 */
export function secretsAtRest(dialect: Dialect) {
  const { ts } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('installation_keys')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('created_at', ts, (c) => c.notNull())
        .execute();
    },
  };
}
