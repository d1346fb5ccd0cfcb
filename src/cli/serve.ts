import type { Config } from '../config.js';
import { connect } from '../db/connection.js';
import { migrateToLatest } from '../db/migrate.js';
import { buildApp } from '../http/server.js';

/**
 * `formcast serve`: migrate, listen, and shut down gracefully on SIGTERM/SIGINT (stop accepting, let
 * in-flight requests finish, close the database). A second signal exits at once.
 */
export async function serve(config: Config): Promise<void> {
  const db = connect(config.databaseUrl);
  await migrateToLatest(db);
  const app = await buildApp({ db, config });
  await app.listen({ port: config.port, host: config.host, listenTextResolver: () => 'server started' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  app.log.info({ url, database: db.dialect }, `listening on ${url}`);
  // A plain line as well, for scripts and people who wait for it (the log line above is JSON).
  process.stdout.write(`listening on ${url}\n`);

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) process.exit(1);
    closing = true;
    app.log.info({ signal }, 'shutting down');
    app.close()
      .then(() => db.close())
      .then(() => process.exit(0), (err: unknown) => {
        app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}
