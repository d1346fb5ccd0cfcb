import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * The intake of public submissions during a spike (docs/forms.md, "A spike of submissions"; submissions/CONTEXT.md):
 * a submission checked and stored here is answered at once, and made into its submission, contact, confirmation and
 * events by the intake job moments later. One row per submission, an integer key in arrival order and no other index:
 * the cheapest durable write there is (SQLite appends to one B-tree), since the spike's answers wait on it. The row
 * goes in the transaction that does what it asks; a row that failed waits for `next_attempt_at`.
 */
export function submissionIntake(dialect: Dialect) {
  const { ts, json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('submission_intake')
        .addColumn('id', dialect === 'postgres' ? sql`bigserial` : 'integer', (c) => c.primaryKey())
        .addColumn('submission_id', 'text', (c) => c.notNull())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('form_id', 'text', (c) => c.notNull().references('forms.id').onDelete('cascade'))
        .addColumn('source', 'text', (c) => c.notNull().check(sql`source in ('HOSTED', 'EMBED')`))
        .addColumn('data', json, (c) => c.notNull())
        .addColumn('consented', 'integer', (c) =>
          c
            .notNull()
            .defaultTo(0)
            .check(sql`consented in (0, 1)`),
        )
        .addColumn('ip', 'text')
        .addColumn('user_agent', 'text')
        .addColumn('received_at', ts, (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', ts)
        .addColumn('last_error', 'text')
        .execute();
    },
  };
}
