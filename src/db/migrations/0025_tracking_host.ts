import { type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * A tracking host per sending domain (docs/deliverability.md, "Tracking host"): the host its messages' links and open
 * pixel use instead of PUBLIC_URL's, a CNAME to the service, set by `PUT /v1/domains/{id}` and used once its CNAME is
 * verified (`tracking_verified_at`, set and cleared by each DNS check).
 */
export function trackingHost(dialect: Dialect) {
  const { ts } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('domains').addColumn('tracking_host', 'text').execute();
      await db.schema.alterTable('domains').addColumn('tracking_verified_at', ts).execute();
    },
  };
}
