import crypto from 'node:crypto';
import os from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import {
  AutomationEngine,
  DEFAULT_ENGINE,
  type EngineOptions,
} from '../integrations/automations/automations.engine.js';
import { ContactsService } from '../audience/contacts/contacts.service.js';
import { BulkService } from '../audience/bulk/bulk.service.js';
import { contactPagesOf } from '../audience/segments/segments.service.js';
import type { Db } from '../db/connection.js';
import { pruneOldEvents } from '../outbox/events/events.service.js';
import { pruneOldAudit } from '../outbox/audit/audit.service.js';
import { DEFAULT_PIPELINE_OPTIONS, DeliveryPipeline, type PipelineOptions } from '../sending/deliveries/pipeline.js';
import { SqlDeliveryStore } from '../composition/sql-delivery-store.js';
import { reportRules } from '../sending/bounces/bounces.service.js';
import { purgeInboundMessages } from '../sending/bounces/bounces.inbound.js';
import { purgeIdempotencyKeys } from '../http/idempotency.js';
import { createMailer, type Mailer } from '../mail/transport.js';
import { pruneOutbox } from '../mail/outbox.js';
import { parseDnsServers, resolverLookup } from '../mail-setup/domains/domains.dns.js';
import { ConfirmationSender } from '../forms/submissions/confirmations.sender.js';
import { purgeSubmissionNetworkData, SubmissionsService } from '../forms/submissions/submissions.service.js';
import { WebhookDispatcher } from '../integrations/webhooks/webhooks.dispatcher.js';
import { ProtectionService } from '../forms/protection/protection.service.js';
import { WebhooksService } from '../integrations/webhooks/webhooks.service.js';
import { createSendingHeap } from '../lib/lean-heap.js';
import { JobRunner, type Job } from './runner.js';
import type { EmailsService } from '../sending/emails/emails.service.js';
import type { BroadcastsService } from '../sending/broadcasts/broadcasts.service.js';

/**
 * The periodic work of `formcast serve` and `formcast worker`, in runners (runner.ts): delivery batches in
 * WORKER_BATCHES loops of their own (one batch goes out over SMTP while the next is claimed and its messages made in
 * the send threads), webhook deliveries in a loop of their own (a receiver that takes 15 s to time out never delays
 * mail), the webhook fan-out in another (new events are turned into deliveries meanwhile), everything else in the last.
 *
 * | job | every | what |
 * |---|---|---|
 * | scheduler | poll | due SCHEDULED broadcasts start |
 * | materialise | poll | writes SENDING broadcasts' audiences into deliveries |
 * | ab winners | poll | A/B broadcasts whose wait ended get their winner, then sent to the rest (docs/ab-tests.md) |
 * | *delivery loops:* deliveries | poll | claims a batch of due deliveries (transactional ones first) and sends it |
 * | *emails loop:* emails | 100 ms | claims a small batch of due transactional deliveries only and sends it (docs/emails.md) |
 * | confirmations | poll | sends double opt-in emails |
 * | settle | 10 s | finishes (or pauses, by the circuit breaker) SENDING broadcasts no batch touched last |
 * | import sweep | 1 min | fails imports a dead server left RUNNING |
 * | contact bulk actions | poll | a batch of the oldest RUNNING bulk action on contacts (audience/bulk), its cursor moved in the batch's transaction |
 * | idempotency purge | 1 h | deletes Idempotency-Key records older than 24 h, in batches |
 * | inbound purge | 1 day | deletes unreadable inbound messages older than 30 days, in batches |
 * | events retention | 1 h | deletes events older than EVENTS_RETENTION_DAYS, 1,000 a statement |
 * | audit retention | 1 h | deletes audit log entries older than AUDIT_RETENTION_DAYS, 1,000 a statement (docs/audit-log.md) |
 * | submission network data | 1 h | clears the IP address and user agent of submissions older than SUBMISSION_RETENTION_DAYS (docs/forms.md) |
 * | protection purge | 1 h | deletes spent proof-of-work solutions and impression tokens past their expiry, and sign-up burst signals older than a day |
 * | *fan-out loop:* webhook fan-out | 100 ms | turns new events into one webhook delivery per subscribed endpoint (webhooks/CONTEXT.md) |
 * | *webhooks loop:* webhooks | 100 ms | claims a batch of due webhook deliveries and POSTs it |
 * | *webhooks loop:* webhook prune | 1 day | deletes webhook deliveries older than 30 days, in batches |
 * | *automations loop:* automation intake | 100 ms | starts the runs new events trigger, ends those of contacts that left (automations/CONTEXT.md) |
 * | *automations loop:* automation runs | 100 ms | claims due runs and walks each through its steps until it waits or ends |
 * | *intake loop:* submission intake | 1 s, and at once when this process takes one in | makes the public submissions taken in during a spike into their submissions and contacts (submissions/CONTEXT.md) |
 */
export interface RunningJobs {
  mailer: Mailer;
  stop(): Promise<void>;
}

export function buildPipeline(
  db: Db,
  mailer: Mailer,
  config: Config & { secret: Buffer },
  log: FastifyBaseLogger,
  overrides: Partial<PipelineOptions> = {},
): DeliveryPipeline {
  const workerId = `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
  const store = new SqlDeliveryStore(db, reportRules(config.bounces));
  return new DeliveryPipeline(
    store,
    mailer,
    {
      ...DEFAULT_PIPELINE_OPTIONS,
      // Messages in flight from a batch: twice the SMTP pool, at least 16.
      concurrency: Math.max(DEFAULT_PIPELINE_OPTIONS.concurrency, config.smtpMaxConnections * 2),
      workerId,
      publicUrl: config.publicUrl,
      secret: config.secret,
      relayProfile: config.relayProfile,
      batchSize: config.worker.batchSize,
      // Writing a large audience leaves the send most of the thread (bench:send --million; docs/sending.md).
      materializeShare: 0.1,
      // and no further ahead of it than ~10-25 s of sending: its cost spread over the whole send (docs/sending.md).
      materializeLead: Math.max(20_000, 10 * config.worker.batches * config.worker.batchSize),
      leaseMs: config.worker.leaseMs,
      maxAttempts: config.worker.maxAttempts,
      backoffBaseMs: config.worker.backoffBaseMs,
      emails: {
        ...DEFAULT_PIPELINE_OPTIONS.emails,
        maxAttempts: config.worker.emailsMaxAttempts,
        backoffBaseMs: config.worker.emailsBackoffBaseMs,
        backoffMaxMs: config.worker.emailsBackoffMaxMs,
      },
      // Recipient domains are grouped by their MX, looked up through DNS_SERVERS (docs/sending.md).
      pacing: config.sendPacing,
      mxLookup: resolverLookup(parseDnsServers(config.dnsServers), config.dnsTimeoutMs).mx,
      sendThreads: config.worker.sendThreads,
      sendThreadsNice: config.worker.sendThreadsNice,
      ...overrides,
    },
    log,
  );
}

/** The mail transport from the configuration, checked at once (warn, not fail), its repeated failures logged. */
export function configuredMailer(config: Config, log: FastifyBaseLogger): Mailer {
  const mailer = createMailer({
    smtpUrl: config.smtpUrl,
    relays: config.smtpRelays,
    outboxDir: config.outboxDir,
    maxConnections: config.smtpMaxConnections,
    rateLimit: config.smtpRateLimit,
    heloName: config.smtpHeloName,
    allowPlaintextAuth: config.smtpAllowPlaintextAuth,
    relayProfile: config.relayProfile,
    // Said at the first failure and then at every tenth in a row, with the reason, until a send succeeds.
    onFailure: (state, consecutive) => {
      if (consecutive === 1 || consecutive % 10 === 0)
        log.error(
          { transport: state.description, consecutive, reason: state.detail },
          `the mail transport fails: ${state.detail}`,
        );
    },
  });
  // Checked at start: a transport that cannot be reached is said at once (the service still starts: it may come up later).
  mailer.verify().then(
    (state) => {
      if (state.mode === 'outbox') log.warn({ transport: state.description }, state.description);
      else if (!state.ok)
        log.warn(
          { transport: state.description, reason: state.detail },
          `the mail transport cannot be reached: ${state.detail}; sending will be retried`,
        );
      else log.info({ transport: state.description }, 'the mail transport answers');
    },
    () => {},
  );
  return mailer;
}

/**
 * `submissions`: the service whose requests take submissions in (serve's), so that its intake job is woken by them and
 * tells them when the queue is empty; a worker without HTTP makes its own.
 */
export function startJobs(
  db: Db,
  config: Config & { secret: Buffer },
  log: FastifyBaseLogger,
  opts: {
    mailer?: Mailer;
    overrides?: Partial<PipelineOptions>;
    automations?: Partial<EngineOptions>;
    submissions?: SubmissionsService;
    /** The API's emails service in the same process: an accepted email wakes the transactional lane. */
    emails?: Pick<EmailsService, 'attachSender'>;
    /** The API's broadcasts service in the same process: a broadcast sent, resumed or given its winner wakes the loops. */
    broadcasts?: Pick<BroadcastsService, 'attachSender'>;
  } = {},
): RunningJobs {
  const mailer = opts.mailer ?? configuredMailer(config, log);
  const overrides = opts.overrides ?? {};
  // While batches go out, the heap is kept leaner than V8 would keep it (lib/lean-heap.ts, createSendingHeap).
  const sendingHeap = createSendingHeap();
  const pipeline = buildPipeline(db, mailer, config, log, { onBatch: () => sendingHeap.sending(), ...overrides });
  const confirmations = new ConfirmationSender(db, mailer, config.publicUrl, log, config.secret);
  const contacts = new ContactsService(db, { contactPages: contactPagesOf(db) });
  const bulk = new BulkService(db);
  const protection = new ProtectionService(db, {
    secret: config.secret,
    bursts: config.signupBursts,
    pow: config.proofOfWork,
  });
  const poll = config.worker.pollMs;
  // After 30 s with nothing to do (WORKER_IDLE_AFTER_MS), a loop looks every WORKER_IDLE_POLL_MS (1 s) instead of every
  // 100-500 ms (docs/sending.md, "Idle").
  const idle =
    config.worker.idlePollMs > 0 ? { afterMs: config.worker.idleAfterMs, pollMs: config.worker.idlePollMs } : null;
  const webhooks = new WebhookDispatcher(db, {
    workerId: `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`,
    secret: config.secret,
    allowHttp: config.webhooks.allowHttp,
    allowPrivate: config.webhooks.allowPrivate,
    leaseMs: config.worker.leaseMs,
    log,
  });
  const jobs: Job[] = [
    { name: 'scheduler', everyMs: poll, run: () => pipeline.runScheduler() },
    { name: 'ab winners', everyMs: poll, run: () => pipeline.chooseWinners() },
    { name: 'confirmations', everyMs: poll, run: () => confirmations.sendDue() },
    { name: 'settle', everyMs: 10_000, run: async () => (await pipeline.sweep(), 0) },
    {
      name: 'import sweep',
      everyMs: 60_000,
      run: async () => {
        const failed = await contacts.failInterruptedImports();
        if (failed) log.warn({ imports: failed }, 'imports left RUNNING by a stopped server marked FAILED');
        return 0;
      },
    },
    // A busy round (a batch done) runs again at once: a job of 100,000 contacts is 200 batches back to back.
    { name: 'contact bulk actions', everyMs: poll, run: () => bulk.runBatch() },
    { name: 'idempotency purge', everyMs: 3_600_000, run: async () => (await purgeIdempotencyKeys(db), 0) },
    { name: 'inbound purge', everyMs: 86_400_000, run: async () => (await purgeInboundMessages(db), 0) },
    { name: 'events retention', everyMs: 3_600_000, run: () => pruneOldEvents(db, config.eventsRetentionDays) },
    { name: 'audit retention', everyMs: 3_600_000, run: () => pruneOldAudit(db, config.auditRetentionDays) },
    // Single-use tokens past their expiry and burst signals past the window (docs/bot-protection.md).
    { name: 'protection purge', everyMs: 3_600_000, run: () => protection.purge() }, // a busy round (rows deleted) runs again at once
    {
      name: 'submission network data',
      everyMs: 3_600_000,
      run: () => purgeSubmissionNetworkData(db, config.submissionRetentionDays),
    },
  ];
  // Without SMTP_URL every message is a file in the outbox: kept OUTBOX_RETENTION_DAYS, at most OUTBOX_MAX_FILES.
  if (mailer.kind === 'outbox') {
    jobs.push({
      name: 'outbox retention',
      everyMs: 3_600_000,
      run: async () => {
        const removed = await pruneOutbox(config.outboxDir, config.outboxRetention);
        if (removed) log.info({ removed, outbox: config.outboxDir }, `outbox: ${removed} old message files removed`);
        return 0;
      },
    });
  }
  // Webhooks run in a loop of their own: a slow or dead endpoint (15 s a timeout) never holds up sending mail.
  const webhookJobs: Job[] = [
    // Polled more often than the rest (at most every 100 ms): an event's lag to its endpoint is two polls at worst,
    // and an idle poll is one index probe each.
    { name: 'webhooks', everyMs: Math.min(poll, 100), run: () => webhooks.dispatch() },
    { name: 'webhook prune', everyMs: 86_400_000, run: () => webhooks.prune() },
  ];
  // Fan-out in a loop of its own too: a round of deliveries waiting on a slow receiver does not hold new events back.
  const fanOutJobs: Job[] = [{ name: 'webhook fan-out', everyMs: Math.min(poll, 100), run: () => webhooks.fanOut() }];
  // Automations in a loop of their own: a step's message joins the delivery queue, so sending never waits on it.
  const engine = new AutomationEngine(
    db,
    new WebhooksService(db, {
      secret: config.secret,
      allowHttp: config.webhooks.allowHttp,
      allowPrivate: config.webhooks.allowPrivate,
    }),
    {
      ...DEFAULT_ENGINE,
      ...config.automations,
      workerId: `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`,
      clock: Date.now,
      // The lease of deliveries is that of runs too: a dead worker's runs are taken over as soon as its deliveries.
      leaseMs: config.worker.leaseMs,
      ...opts.automations,
    },
    log,
  );
  const automationJobs: Job[] = [
    { name: 'automation intake', everyMs: Math.min(poll, 100), run: () => engine.intake() },
    { name: 'automation runs', everyMs: Math.min(poll, 100), run: () => engine.runDue() },
  ];
  const automationRunner = new JobRunner(automationJobs, log, Math.min(poll, 100), idle);
  // The intake in a loop of its own, woken by the requests that take a submission in; polled every second for those of
  // other processes and for retries. During a spike it lets entries wait (up to a lag) and pauses between its looks:
  // answering comes first (submissions/CONTEXT.md).
  const submissions = opts.submissions ?? new SubmissionsService(db, { protection });
  const intakeRunner = new JobRunner(
    [
      {
        name: 'submission intake',
        everyMs: 1000,
        run: async () => {
          const n = await submissions.processIntake();
          const pause = submissions.intakePauseMs();
          if (pause) await new Promise((resolve) => setTimeout(resolve, pause));
          // During a spike the loop keeps looking (after its pause), so that the queue is made as soon as the spike ends.
          return n || (pause ? 1 : 0);
        },
      },
    ],
    log,
    1000,
  );
  submissions.attachIntakeJob(() => intakeRunner.wake(), log);
  const runner = new JobRunner(jobs, log, poll, idle);
  // Delivery batches in loops of their own (WORKER_BATCHES): while one batch's messages go out over SMTP, the next
  // one is claimed and its messages made in the send threads; and materialising an audience never holds sending up.
  const deliveryRunners = Array.from(
    { length: config.worker.batches },
    () => new JobRunner([{ name: 'deliveries', everyMs: poll, run: () => pipeline.sendBatch() }], log, poll, idle),
  );
  // The transactional lane in a loop of its own (docs/emails.md): small batches of emails only, looked for every 100 ms,
  // so that a receipt never waits for a broadcast's batch to go out (the delivery loops take emails first as well).
  const emailsRunner = new JobRunner(
    [{ name: 'emails', everyMs: Math.min(poll, 100), run: () => pipeline.sendBatch('transactional') }],
    log,
    Math.min(poll, 100),
    idle,
  );
  // Audiences written in a loop of their own: its pauses while a send is busy (materializeShare) hold nothing else up.
  const materialiseRunner = new JobRunner(
    [{ name: 'materialise', everyMs: poll, run: () => pipeline.materialize() }],
    log,
    poll,
    idle,
  );
  // Work given by the API of this process is taken at once, idle or not (docs/sending.md, "Idle").
  opts.emails?.attachSender(() => emailsRunner.wake());
  // (Not the periodic jobs' loop: a wake runs every job of a loop, its hourly purges too; a send now needs no scheduler.)
  opts.broadcasts?.attachSender(() => {
    materialiseRunner.wake();
    for (const r of deliveryRunners) r.wake();
  });
  const webhookRunner = new JobRunner(webhookJobs, log, Math.min(poll, 100), idle);
  const fanOutRunner = new JobRunner(fanOutJobs, log, Math.min(poll, 100), idle);
  runner.start();
  for (const r of deliveryRunners) r.start();
  materialiseRunner.start();
  emailsRunner.start();
  webhookRunner.start();
  fanOutRunner.start();
  automationRunner.start();
  intakeRunner.start();
  log.info({ transport: mailer.description }, `jobs started; mail goes to ${mailer.description}`);
  return {
    mailer,
    async stop() {
      await Promise.all([
        runner.stop(),
        ...deliveryRunners.map((r) => r.stop()),
        materialiseRunner.stop(),
        emailsRunner.stop(),
        webhookRunner.stop(),
        fanOutRunner.stop(),
        automationRunner.stop(),
        intakeRunner.stop(),
      ]);
      await pipeline.close();
      sendingHeap.close();
      await webhooks.close();
      await mailer.close();
    },
  };
}
