import crypto from 'node:crypto';
import os from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import { ContactsService } from '../contacts/contacts.service.js';
import type { Db } from '../db/connection.js';
import { createMailer, type Mailer } from '../mail/transport.js';
import { ConfirmationSender } from '../submissions/confirmations.sender.js';
import { DEFAULT_PIPELINE_OPTIONS, DeliveryPipeline, type PipelineOptions } from './pipeline.js';

/**
 * Runs the pipeline in a loop: scheduler, a few materialisation batches, one delivery batch; it sleeps
 * only when there was nothing to do. stop() lets the current round finish (its claims are recorded).
 */
export class DeliveryWorker {
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;

  constructor(
    private readonly pipeline: DeliveryPipeline,
    private readonly log: FastifyBaseLogger,
    private readonly pollMs = 500,
    /** Other small jobs of the same loop (double opt-in emails); each returns how much it did. */
    private readonly jobs: (() => Promise<number>)[] = [],
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    let round = 0;
    while (this.running) {
      let busy = false;
      try {
        busy = (await this.pipeline.runScheduler()) > 0 || busy;
        busy = (await this.pipeline.materialize()) > 0 || busy;
        busy = (await this.pipeline.sendBatch()) > 0 || busy;
        for (const job of this.jobs) busy = (await job()) > 0 || busy;
        if (++round % 20 === 0) await this.pipeline.sweep();
      } catch (err) {
        this.log.error({ err }, 'delivery worker round failed');
      }
      if (!busy && this.running) await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.pollMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
  }
}

const IMPORT_SWEEP_EVERY_MS = 60_000;

/** Fails imports that a dead server left RUNNING (ContactsService.failInterruptedImports), once a minute. */
function interruptedImportsSweep(db: Db, log: FastifyBaseLogger): () => Promise<number> {
  const contacts = new ContactsService(db);
  let last = 0;
  return async () => {
    if (Date.now() - last < IMPORT_SWEEP_EVERY_MS) return 0;
    last = Date.now();
    try {
      const failed = await contacts.failInterruptedImports();
      if (failed) log.warn({ imports: failed }, 'imports left RUNNING by a stopped server marked FAILED');
      return failed;
    } catch (err) {
      // Not the delivery round's business: log it and let the round go on; the next sweep tries again.
      log.error({ err }, 'sweep of interrupted imports failed');
      return 0;
    }
  };
}

/** Builds the pipeline from the configuration and starts it: what `serve` and `formcast worker` run. */
export function startDeliveryWorker(db: Db, config: Config, log: FastifyBaseLogger, overrides: Partial<PipelineOptions> = {}): { stop(): Promise<void>; mailer: Mailer } {
  const mailer = createMailer({ smtpUrl: config.smtpUrl, outboxDir: config.outboxDir, maxConnections: config.smtpMaxConnections, rateLimit: config.smtpRateLimit });
  const workerId = `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
  const pipeline = new DeliveryPipeline(db, mailer, {
    ...DEFAULT_PIPELINE_OPTIONS,
    concurrency: Math.max(DEFAULT_PIPELINE_OPTIONS.concurrency, config.smtpMaxConnections * 2),
    workerId,
    publicUrl: config.publicUrl,
    batchSize: config.worker.batchSize,
    leaseMs: config.worker.leaseMs,
    maxAttempts: config.worker.maxAttempts,
    backoffBaseMs: config.worker.backoffBaseMs,
    ...overrides,
  }, log);
  const confirmations = new ConfirmationSender(db, mailer, config.publicUrl, log);
  const worker = new DeliveryWorker(pipeline, log, config.worker.pollMs, [() => confirmations.sendDue(), interruptedImportsSweep(db, log)]);
  worker.start();
  log.info({ workerId, transport: mailer.description }, `delivery worker started; mail goes to ${mailer.description}`);
  return {
    mailer,
    async stop() {
      await worker.stop();
      await mailer.close();
    },
  };
}
