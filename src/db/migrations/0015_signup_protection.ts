import { type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * Sign-up protection (docs/bot-protection.md): a submission can be HELD for review (a burst of sign-ups from
 * one network or of one address pattern), and is then RELEASED or DISCARDED; the signals bursts are counted from; and
 * the single-use tokens already spent (proof-of-work solutions, embed impression tokens), kept until they expire.
 */
export function signupProtection(dialect: Dialect) {
  const { ts, json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('submissions')
        .addColumn('status', 'text', (c) => c.notNull().defaultTo('ACCEPTED'))
        .execute();
      await db.schema.alterTable('submissions').addColumn('held_reasons', json).execute();
      await db.schema.alterTable('submissions').addColumn('reviewed_at', ts).execute();
      await db.schema
        .createIndex('submissions_status')
        .on('submissions')
        .columns(['workspace_id', 'status', 'id'])
        .execute();

      await db.schema
        .createTable('signup_signals')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('kind', 'text', (c) => c.notNull()) // ip_range | pattern | mailbox | domain
        .addColumn('key', 'text', (c) => c.notNull()) // a keyed hash of the range or the pattern, never the address
        .addColumn('submission_id', 'text', (c) => c.notNull())
        .addColumn('created_at', ts, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('signup_signals_key')
        .on('signup_signals')
        .columns(['workspace_id', 'kind', 'key', 'created_at'])
        .execute();
      await db.schema.createIndex('signup_signals_age').on('signup_signals').columns(['created_at']).execute();

      await db.schema
        .createTable('spent_tokens')
        .addColumn('kind', 'text', (c) => c.notNull()) // pow | impression
        .addColumn('token', 'text', (c) => c.notNull())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('expires_at', ts, (c) => c.notNull())
        .addPrimaryKeyConstraint('spent_tokens_pk', ['kind', 'token'])
        .execute();
      await db.schema.createIndex('spent_tokens_expiry').on('spent_tokens').columns(['expires_at']).execute();
    },
  };
}
