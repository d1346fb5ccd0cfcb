import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import {
  DEFAULT_PIPELINE_OPTIONS,
  DeliveryPipeline,
  type PipelineOptions,
} from '../../src/sending/deliveries/pipeline.js';
import { SqlDeliveryStore } from '../../src/composition/sql-delivery-store.js';
import { createMailer, type Mailer } from '../../src/mail/transport.js';
import type { Harness } from './app.js';
import { TEST_SECRET } from './secret.js';
import { startSmtpServer } from './smtp.js';

const silent = pino({ level: 'silent' });

export interface Sending {
  smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  mailer: Mailer;
  /** The pipeline `drain` runs; a test may swap it (and put it back). */
  pipeline: DeliveryPipeline;
  /** Another pipeline like this one, with other options or another transport (to swap in). */
  build(overrides?: Partial<PipelineOptions>, mailer?: Mailer): DeliveryPipeline;
  /** Runs the pipeline until no delivery is open and no broadcast is sending (retries included), or `until` says so. */
  drain(until?: () => Promise<boolean>): Promise<void>;
}

/**
 * A delivery pipeline on the suite's database sending to an SMTP server on loopback: started before the suite,
 * closed after it; the server's inbox is emptied and its policy reset before each test.
 */
export function useSending(
  h: Harness,
  options: Partial<PipelineOptions> & { workerId: string; maxConnections?: number },
): Sending {
  const { maxConnections = 3, ...pipelineOptions } = options;
  const s = {} as Sending;
  beforeAll(async () => {
    s.smtp = await startSmtpServer();
    s.mailer = createMailer({
      smtpUrl: `smtp://127.0.0.1:${s.smtp.port}`,
      outboxDir: '',
      maxConnections,
      rateLimit: 0,
    });
    s.pipeline = s.build();
  });
  s.build = (overrides = {}, mailer = s.mailer) =>
    new DeliveryPipeline(
      new SqlDeliveryStore(h.db),
      mailer,
      {
        ...DEFAULT_PIPELINE_OPTIONS,
        secret: TEST_SECRET,
        publicUrl: 'https://mail.example.test',
        backoffBaseMs: 1,
        ...pipelineOptions,
        ...overrides,
      },
      silent as never,
    );
  afterAll(async () => {
    await s.mailer?.close();
    await s.smtp?.close();
  });
  beforeEach(() => {
    s.smtp.received.length = 0;
    s.smtp.setPolicy(() => null);
  });
  s.drain = async (until = async () => false) => {
    const k = h.db.kysely;
    for (let i = 0; i < 5000; i++) {
      const busy =
        (await s.pipeline.runScheduler()) + (await s.pipeline.materialize()) + (await s.pipeline.sendBatch());
      if (await until()) return;
      if (busy) continue;
      const open = await k
        .selectFrom('deliveries')
        .select('id')
        .where('status', 'in', ['QUEUED', 'SENDING'])
        .limit(1)
        .execute();
      const sending = await k
        .selectFrom('broadcasts')
        .select('id')
        .where('status', '=', 'SENDING')
        .where('automation_id', 'is', null)
        .where('transactional', '=', 0)
        .limit(1)
        .execute();
      if (!open.length && !sending.length) return;
      await s.pipeline.sweep();
      await new Promise((r) => setTimeout(r, 2));
    }
    throw new Error('the pipeline did not settle');
  };
  return s;
}
