import { type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * Two-factor sign-in (docs/security.md, "Two-factor sign-in"): a user's TOTP secret, sealed with the installation's
 * key (lib/seal.ts; never in the clear), the time it was confirmed (null while an enrolment waits for its first code),
 * the last time step a code was accepted for (a code is never accepted twice), and the hashes of single-use recovery
 * codes (HMAC-SHA256 under a key derived from the installation's key; the codes themselves are shown once).
 */
export function twoFactor(dialect: Dialect) {
  const { ts } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('users').addColumn('totp_secret', 'text').execute();
      await db.schema.alterTable('users').addColumn('totp_enrolled_at', ts).execute();
      await db.schema.alterTable('users').addColumn('totp_last_step', 'bigint').execute();
      await db.schema
        .createTable('user_recovery_codes')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('code_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('used_at', ts)
        .execute();
      await db.schema
        .createIndex('user_recovery_codes_user')
        .on('user_recovery_codes')
        .columns(['workspace_id', 'user_id', 'code_hash'])
        .execute();
    },
  };
}
