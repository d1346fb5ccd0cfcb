/**
 * What the bare comparison servers (baseline-server.ts, floor-server.ts) share: the pragmas of
 * src/db/connection.ts, and listening the way `formcast serve` does (a `listening on http://HOST:PORT`
 * line on stdout once ready; SIGTERM/SIGINT close the server, then the database).
 */
import SQLite from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';

export function openDatabase(name: string): SQLite.Database {
  const file = process.env.DATABASE_URL;
  if (!file) {
    process.stderr.write(`${name}: DATABASE_URL (a SQLite file path) is required\n`);
    process.exit(1);
  }
  const db = new SQLite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  return db;
}

/** Listens on HOST (default 127.0.0.1) and PORT (default 0) until SIGTERM/SIGINT. */
export async function serveUntilSignal(app: FastifyInstance, db: SQLite.Database): Promise<void> {
  const host = process.env.HOST || '127.0.0.1';
  const port = Number(process.env.PORT || 0);
  await app.listen({ port, host });
  const address = app.server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  process.stdout.write(`listening on http://${host}:${actualPort}\n`);

  let closing = false;
  const shutdown = () => {
    if (closing) process.exit(1);
    closing = true;
    app.close().then(
      () => {
        db.close();
        process.exit(0);
      },
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}
