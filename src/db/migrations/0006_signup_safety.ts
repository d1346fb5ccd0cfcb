import { type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * Anonymous sign-ups may no longer overwrite what a confirmed contact has, nor re-subscribe an address
 * without its owner: what such a sign-up asks for waits on its confirmation (`data`, applied when the link
 * is followed), and confirmations are looked up per contact to send at most one per address per window.
 */
export function signupSafety(dialect: Dialect) {
  const { json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('confirmations').addColumn('data', json).execute();
      await db.schema
        .createIndex('confirmations_contact')
        .on('confirmations')
        .columns(['workspace_id', 'contact_id', 'created_at'])
        .execute();
    },
  };
}
