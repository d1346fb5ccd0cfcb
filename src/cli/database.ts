import path from 'node:path';
import { isPostgresUrl } from '../db/connection.js';

/**
 * The database a command uses, said to the operator: a SQLite file as its absolute path, a PostgreSQL URL without
 * its password. Said so that a command run from the wrong folder, or with another DATABASE_URL than the server's,
 * shows it at once (docs/cli.md, "Which database").
 */
export function describeDatabase(url: string): string {
  if (isPostgresUrl(url)) {
    try {
      const u = new URL(url);
      if (u.password) u.password = '';
      // The driver also reads a password (and TLS key material) from the query: none of it is said.
      u.search = '';
      return `${u.toString().replace(/:@/, '@')} (PostgreSQL)`;
    } catch {
      return 'PostgreSQL (DATABASE_URL)';
    }
  }
  return `${url === ':memory:' ? url : path.resolve(url)} (SQLite)`;
}
