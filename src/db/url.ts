import { ConfigError } from '../errors/config-error.js';

/**
 * DATABASE_URL is `postgres://…` / `postgresql://…` (PostgreSQL) or a file path (SQLite, `:memory:` too). Anything
 * else with a scheme (`mysql://…`, `sqlite://…`) is refused: it would otherwise be taken for a file path and
 * quietly create a file named after the scheme. A one-letter "scheme" is a Windows drive (`C:\…`).
 */
export function checkDatabaseUrl(url: string): void {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]+):/.exec(url)?.[1];
  if (scheme && !/^postgres(ql)?$/i.test(scheme)) {
    throw new ConfigError(
      `DATABASE_URL: unsupported scheme "${scheme}:" (use postgres://user:password@host:5432/database for PostgreSQL, or a file path such as ./data/formcast.db for SQLite)`,
    );
  }
  if (scheme && !/^postgres(ql)?:\/\//.test(url))
    throw new ConfigError('DATABASE_URL: a PostgreSQL URL starts with postgres:// or postgresql:// (lower case)');
}
