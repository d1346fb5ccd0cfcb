import { type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * Time zones (issue 34, contract §19; docs/contacts.md "Time zone", docs/sending.md "Local-time sending"):
 * - `contacts.timezone`: the contact's IANA zone, or null (the workspace's `settings.timezone` stands in);
 * - `broadcasts.local_send_time`: for a broadcast scheduled with `sendAtLocal: true`, the wall-clock time every
 *   recipient gets it at in their own zone (`YYYY-MM-DDTHH:mm:ss`, `sendAt` read in the workspace's zone when it was
 *   scheduled); null for every other broadcast;
 * - `broadcasts.local_start_at`: when such a broadcast starts (the scheduler's time instead of `send_at`): the
 *   earliest of its zones' instants, so the first zone's deliveries are written before their turn;
 * - `deliveries.local_zone`: the zone whose turn a local-time delivery waits for (the report's `stats.zones`).
 */
export function timeZones(dialect: Dialect) {
  const { ts } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('contacts').addColumn('timezone', 'text').execute();
      await db.schema.alterTable('broadcasts').addColumn('local_send_time', 'text').execute();
      await db.schema.alterTable('broadcasts').addColumn('local_start_at', ts).execute();
      await db.schema.alterTable('deliveries').addColumn('local_zone', 'text').execute();
    },
  };
}
