import type { Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * An A/B broadcast's test share, chosen exactly (contract §17, docs/ab-tests.md "The test share"): `ab_selection`, the
 * audience's size when its first pass started, the test share's size and one cut per variant (broadcasts.ab.ts
 * AbSelection), stored once so that every batch of the pass, on any worker and after a restart, gives each contact the
 * same answer. Before it, each contact's place was a coin of its own, so the test share was only about testPercent %.
 */
export function abSelection(dialect: Dialect) {
  const { json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('broadcasts').addColumn('ab_selection', json).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('broadcasts').dropColumn('ab_selection').execute();
    },
  };
}
