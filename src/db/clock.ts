import { PostgresAdapter, sql, type RawBuilder } from 'kysely';
import type { Executor } from './connection.js';

/**
 * The database's clock, `secondsAgo` earlier, as a value for a timestamp column. For times that processes
 * on several hosts write and compare (an import's heartbeat against a worker's cutoff), one clock is right
 * where theirs may disagree. On SQLite it is the same ISO text (UTC, milliseconds) the service stores.
 */
export function databaseNow(db: Executor, secondsAgo = 0): RawBuilder<string> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    return secondsAgo ? sql<string>`now() - make_interval(secs => ${secondsAgo})` : sql<string>`now()`;
  }
  return secondsAgo
    ? sql<string>`strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ${`-${secondsAgo} seconds`})`
    : sql<string>`strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`;
}
