import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * Proof of consent on submissions (docs/forms.md, "Consent and retention"): the address and user agent the
 * submission came from, kept for SUBMISSION_RETENTION_DAYS and then cleared by the worker (`submission network data`
 * job), and the consent text the visitor accepted with when (kept as long as the submission). The partial index finds
 * the rows still holding network data, oldest first, so the purge never walks the purged ones again.
 */
export function submissionConsent(dialect: Dialect) {
  const { ts } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('submissions').addColumn('ip', 'text').execute();
      await db.schema.alterTable('submissions').addColumn('user_agent', 'text').execute();
      await db.schema.alterTable('submissions').addColumn('consent_text', 'text').execute();
      await db.schema.alterTable('submissions').addColumn('consent_accepted_at', ts).execute();
      await db.schema
        .createIndex('submissions_network_data')
        .on('submissions')
        .columns(['created_at'])
        .where(sql.ref('ip'), 'is not', null)
        .execute();
    },
  };
}
