import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { configWarnings, type Config } from '../config.js';
import { describeDatabase } from './database.js';
import { connect, type Db } from '../db/connection.js';
import { migrateToLatest } from '../db/migrate.js';
import { withSecret } from './secret.js';
import { configuredMailer, startJobs } from '../jobs/jobs.js';
import { reportRules } from '../sending/bounces/bounces.service.js';
import { InboundProcessor } from '../sending/bounces/bounces.inbound.js';
import { startInboundServer, type InboundServer } from '../sending/bounces/bounces.server.js';
import { UnsubscribeService } from '../sending/unsubscribe/unsubscribe.service.js';
import { buildApp } from '../app.js';
import { startSubmission } from '../composition/submission.js';
import { embedRuntimeWarning } from '../forms/hosted/embed.js';
import { startupDone } from '../lib/lean-heap.js';

/**
 * `formcast serve`: migrate, listen, and shut down gracefully on SIGTERM/SIGINT (stop accepting, let
 * in-flight requests finish for up to 10 s, close the database). A second signal exits at once.
 */
const SHUTDOWN_GRACE_MS = 10_000;

/** How a command that runs until stopped opens the database: SQLite's checkpoints as SQLITE_CHECKPOINTS says. */
function longRunning(config: Config, log: { warn(obj: object, msg: string): void }) {
  return { checkpoints: config.sqliteCheckpoints, log };
}

export async function serve(config: Config): Promise<void> {
  // The process's log before the app's exists: the database's checkpoint thread and the transport say things there.
  const log = pino({ level: config.logLevel }) as unknown as FastifyBaseLogger;
  const db = connect(config.databaseUrl, longRunning(config, log));
  await migrateToLatest(db);
  const appConfig = await withSecret(db, config);
  // The configuration's, and a build that is missing (embed.js would answer 503): said at start and on /readyz.
  const warnings = [...configWarnings(config), embedRuntimeWarning()].filter((w): w is string => w !== null);
  // One transport for the process: the jobs send through it, and so do test sends from the API.
  const mailer = configuredMailer(config, log);
  const app = await buildApp({
    db,
    config: appConfig,
    mailer,
    status: () => ({ transport: mailer.state(), warnings }),
  });
  await app.listen({ port: config.port, host: config.host, listenTextResolver: () => 'server started' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  // One JSON log line like the others (its msg is what scripts wait for, docs/api.md §10), whatever LOG_LEVEL says:
  // a child logger at info level writes it even when the level is warn or above.
  app.log
    .child({}, { level: 'info' })
    .info({ url, database: describeDatabase(config.databaseUrl) }, `listening on ${url}`);
  // The delivery worker, the scheduler and the other periodic jobs run in the same process (docs/api.md §10).
  for (const w of warnings) app.log.warn(`WARNING: ${w}`);
  // Without it (SERVE_WORKER=false) `formcast worker` processes do that work, and this process only serves.
  const worker = config.worker.inServe
    ? startJobs(db, appConfig, app.log, {
        mailer,
        submissions: app.services.submissions,
        emails: app.services.emails,
        broadcasts: app.services.broadcasts,
      })
    : null;
  // The inbound SMTP listener for bounce and complaint reports, when INBOUND_SMTP_PORT is set.
  const inbound = config.inboundSmtp.port === null ? null : await startInbound(db, appConfig, app.log);
  // SMTP submission of transactional email, when SUBMISSION_PORT is set (docs/smtp-submission.md).
  const submission = config.submission
    ? await startSubmission({
        settings: config.submission,
        apiKeys: app.services.apiKeys,
        emails: app.services.emails,
        log: app.log,
        name: new URL(config.publicUrl).hostname,
        messagesPerMinute: config.apiRateLimit,
      })
    : null;
  if (submission && config.submission) {
    const where = `${config.submission.host}:${submission.port}`;
    app.log.child({}, { level: 'info' }).info({ port: submission.port }, `SMTP submission listening on ${where}`);
  }
  // Started: V8 grows the young generation as it would from here on (lib/lean-heap.ts, leanWhileStarting).
  startupDone();

  // Responses being produced, so that a shutdown can tell their clients not to reuse the connection.
  const inFlight = new Set<ServerResponse>();
  app.server.on('request', (_req, res: ServerResponse) => {
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
  });

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) process.exit(1);
    closing = true;
    app.log.info({ signal }, 'shutting down');
    // app.close() stops accepting and reaps idle keep-alive connections once; a request in flight then
    // finishes, but its connection would stay open (keep-alive, 72 s) and hold the process up. Answer it
    // with `Connection: close`, and keep reaping connections as they go idle until everything is closed.
    for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
    setInterval(() => app.server.closeIdleConnections(), 100).unref();
    // A request that never finishes does not hold the process forever: after the grace period, cut it.
    setTimeout(() => {
      app.log.warn({ open: inFlight.size }, 'shutdown grace period over; closing remaining connections');
      app.server.closeAllConnections();
    }, SHUTDOWN_GRACE_MS).unref();
    app
      .close()
      .then(() => inbound?.close())
      .then(() => submission?.close())
      .then(() => worker?.stop())
      .then(() => db.close())
      .then(
        () => process.exit(0),
        (err: unknown) => {
          app.log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/** `formcast worker`: the delivery worker and scheduler without HTTP; SIGTERM/SIGINT finish the current batch. */
export async function runWorker(config: Config): Promise<void> {
  const log = pino({ level: config.logLevel }) as unknown as FastifyBaseLogger;
  const db = connect(config.databaseUrl, longRunning(config, log));
  await migrateToLatest(db);
  const worker = startJobs(db, await withSecret(db, config), log);
  process.stdout.write('worker started\n');
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) process.exit(1);
    closing = true;
    log.info({ signal }, 'worker shutting down');
    worker
      .stop()
      .then(() => db.close())
      .then(
        () => process.exit(0),
        (err: unknown) => {
          log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/** The inbound listener with its processor, as `serve` runs it and `formcast inbound` runs it alone. */
async function startInbound(
  db: Db,
  config: Config & { secret: Buffer },
  log: FastifyBaseLogger,
): Promise<InboundServer> {
  const processor = new InboundProcessor(
    db,
    config.secret,
    reportRules(config.bounces),
    new UnsubscribeService(db),
    log,
  );
  const server = await startInboundServer({
    port: config.inboundSmtp.port ?? 25,
    host: config.inboundSmtp.host,
    processor,
    log,
    banner: config.bounceMxHost,
  });
  log.info(
    { port: server.port, host: config.inboundSmtp.host },
    `inbound SMTP listening on ${config.inboundSmtp.host}:${server.port}`,
  );
  process.stdout.write(`inbound SMTP listening on ${config.inboundSmtp.host}:${server.port}\n`);
  return server;
}

/** `formcast inbound`: the inbound SMTP listener alone (on INBOUND_SMTP_PORT, 25 when unset). */
export async function runInbound(config: Config): Promise<void> {
  const log = pino({ level: config.logLevel }) as unknown as FastifyBaseLogger;
  const db = connect(config.databaseUrl, longRunning(config, log));
  await migrateToLatest(db);
  const server = await startInbound(db, await withSecret(db, config), log);
  let closing = false;
  const shutdown = () => {
    if (closing) process.exit(1);
    closing = true;
    server
      .close()
      .then(() => db.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}
