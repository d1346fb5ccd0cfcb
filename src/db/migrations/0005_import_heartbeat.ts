import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * Imports run inside the request that uploads them; a server that dies mid-import used to leave its job
 * RUNNING for good. The running import now touches `heartbeat_at`, and the worker fails jobs whose
 * heartbeat has stopped (contacts.service.ts, failInterruptedImports).
 */
export function importHeartbeat(dialect: Dialect) {
  const { ts } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('contact_imports').addColumn('heartbeat_at', ts).execute();
      await sql`update contact_imports set heartbeat_at = coalesce(finished_at, created_at)`.execute(db);
      await db.schema
        .createIndex('contact_imports_running')
        .on('contact_imports')
        .columns(['status', 'heartbeat_at'])
        .execute();
    },
  };
}
