import { type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * A/B broadcasts (contract §17, docs/ab-tests.md): a broadcast's test (`ab_test`: its variants, the test share, the
 * metric and the wait, as JSON), the variant that won (`ab_winner`, set once, with `ab_winner_at`); and each delivery's
 * variant (`variant`: whose message it got) and group (`ab_group`: TEST, the test share, or REST, the rest of the
 * audience that got the winner), so that stats and the report group by them.
 */
export function abTests(dialect: Dialect) {
  const { ts, json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('broadcasts').addColumn('ab_test', json).execute();
      await db.schema.alterTable('broadcasts').addColumn('ab_winner', 'text').execute();
      await db.schema.alterTable('broadcasts').addColumn('ab_winner_at', ts).execute();
      await db.schema.alterTable('deliveries').addColumn('variant', 'text').execute();
      await db.schema.alterTable('deliveries').addColumn('ab_group', 'text').execute();
    },
  };
}
