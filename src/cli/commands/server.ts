import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import { isPostgresUrl } from '../../db/connection.js';
import { runInbound, runWorker, serve } from '../serve.js';
import { jsonOption, migrateOnly } from '../context.js';
import { CliError, EXIT, print } from '../output.js';

/** serve, worker, inbound, migrate: the processes of the service and its schema. */
export function registerServer(program: Command): void {
  program
    .command('serve')
    .description(
      'serve the HTTP API with the delivery worker and jobs (applies migrations first); what `npm start` runs',
    )
    .action(async () => {
      await serve(loadConfig());
    });

  program
    .command('worker')
    .description(
      'run the delivery worker and scheduler only, without HTTP (PostgreSQL: more of them scale sending out)',
    )
    .addHelpText(
      'after',
      '\nOn SQLite the server runs the worker itself, and one process writes to the file: this command is refused\nunless the server runs with SERVE_WORKER=false and this worker is started with SERVE_WORKER=false too.',
    )
    .action(async () => {
      const config = loadConfig();
      if (!isPostgresUrl(config.databaseUrl) && config.worker.inServe) {
        throw new CliError(
          'formcast worker is for PostgreSQL: on SQLite `formcast serve` already runs the worker (one process per SQLite file). To run the worker apart, start the server with SERVE_WORKER=false and one worker with SERVE_WORKER=false',
          EXIT.CONFIG,
        );
      }
      await runWorker(config);
    });

  program
    .command('inbound')
    .description(
      'run the inbound SMTP listener alone (bounce and complaint reports, unsubscribe mail) on INBOUND_SMTP_PORT (25 when unset)',
    )
    .action(async () => {
      await runInbound(loadConfig());
    });

  program
    .command('migrate')
    .description('apply pending database migrations and say which (the server applies them at start too)')
    .addOption(jsonOption())
    .action(async (opts: { json?: boolean }) => {
      // Migrations only: the installation's key is read (and, on an upgrade, moved out of the database) by the processes
      // of the service, never by a release step that may run elsewhere (docs/domains.md, "Secrets at rest").
      const { applied, database } = await migrateOnly();
      print(
        { applied, database },
        opts.json,
        applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date (no migration pending)',
      );
    });
}
