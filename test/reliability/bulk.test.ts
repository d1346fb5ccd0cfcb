/**
 * Reliability of bulk actions on contacts (issue 34; docs/contacts.md "Bulk actions"), run for real as
 * test/reliability/workers.test.ts runs the delivery pipeline: `formcast worker` child processes against one PostgreSQL
 * database of the test's own (a fresh `formcast_rel_<random>`, dropped afterwards).
 *
 * A job tags every contact of a workspace of CONTACTS contacts. The worker walking it is killed with SIGKILL part-way;
 * what it committed must be whole batches with their cursor (the tags, their contact.updated events and the job's
 * `processed` agree exactly), and a worker started in its place must finish the job from the cursor: every contact
 * tagged once, one event per contact, COMPLETED with processed = matched.
 *
 * Without TEST_DATABASE_URL the suite is skipped (the title says so).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connection.js';
import { createServices } from '../../src/app.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { ownPostgresDatabase } from '../helpers/reliability.js';
import { startWorker, stopWorker, waitFor, workers } from '../helpers/workers.js';

const PG_URL = process.env.TEST_DATABASE_URL;
const CONTACTS = 30_000;

const describePg = PG_URL ? describe : describe.skip;
const title = PG_URL
  ? 'bulk actions: a worker killed mid-job, the job resumed from its cursor [postgres]'
  : 'bulk actions: a worker killed mid-job [skipped: TEST_DATABASE_URL not set; needs PostgreSQL]';

describePg(title, () => {
  let db: Db;
  let dbUrl: string;
  let tmp: string;
  let own: Awaited<ReturnType<typeof ownPostgresDatabase>>;

  beforeAll(async () => {
    own = await ownPostgresDatabase(PG_URL!);
    ({ url: dbUrl, db } = own);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-bulk-rel-'));
  });

  afterAll(async () => {
    await Promise.all([...workers].map((w) => stopWorker(w, 'SIGKILL')));
    await own?.drop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  const env = () => ({
    DATABASE_URL: dbUrl,
    PUBLIC_URL: 'http://localhost:3000',
    LOG_LEVEL: 'warn',
    OUTBOX_DIR: path.join(tmp, 'outbox'),
    WORKER_POLL_MS: '100',
  });

  it('SIGKILL part-way leaves whole batches; a new worker finishes: every contact tagged once, one event each', async () => {
    const services = createServices(db, {
      logLevel: 'silent',
      publicUrl: 'http://localhost:3000',
      secret: TEST_SECRET,
    });
    const { workspace } = await services.workspaces.createWithAdminKey('bulk reliability');
    const now = new Date().toISOString();
    await db.kysely.transaction().execute(async (trx) => {
      for (let i = 0; i < CONTACTS; i += 1000)
        await trx
          .insertInto('contacts')
          .values(
            Array.from({ length: Math.min(1000, CONTACTS - i) }, (_, j) => ({
              id: `ct_${String(i + j).padStart(8, '0')}${crypto.randomBytes(9).toString('hex').toUpperCase()}`,
              workspace_id: workspace.id,
              email: `c${i + j}@example.test`,
              first_name: null,
              last_name: null,
              properties: '{}',
              status: 'SUBSCRIBED' as const,
              created_at: now,
              updated_at: now,
            })),
          )
          .execute();
    });
    const { jobId, matched } = await services.bulk.create(workspace.id, {
      action: 'tag',
      tag: 'Wave',
      filter: { all: [] },
    });
    expect(matched).toBe(CONTACTS);

    const state = async () => {
      const job = await services.bulk.get(workspace.id, jobId);
      const tagged = Number(
        (
          await db.kysely
            .selectFrom('contact_tags')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where('workspace_id', '=', workspace.id)
            .where('tag_key', '=', 'wave')
            .executeTakeFirstOrThrow()
        ).n,
      );
      const events = Number(
        (
          await db.kysely
            .selectFrom('events')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where('workspace_id', '=', workspace.id)
            .where('type', '=', 'contact.updated')
            .executeTakeFirstOrThrow()
        ).n,
      );
      return { job, tagged, events };
    };

    const victim = await startWorker(env());
    await waitFor(
      'the job to be part-way',
      60_000,
      async () => {
        const { job } = await state();
        return job.processed >= 1000 ? true : undefined;
      },
      10,
    );
    await stopWorker(victim, 'SIGKILL');
    const cut = await state();
    expect(cut.job.status).toBe('RUNNING');
    expect(cut.job.processed).toBeLessThan(CONTACTS);
    // What was committed is whole batches, each with its cursor and its events.
    expect(cut.tagged).toBe(cut.job.processed);
    expect(cut.events).toBe(cut.job.processed);

    const replacement = await startWorker(env());
    const done = await waitFor('the job to complete', 120_000, async () => {
      const s = await state();
      return s.job.status === 'RUNNING' ? undefined : s;
    });
    await stopWorker(replacement);
    expect(done.job).toMatchObject({ status: 'COMPLETED', matched: CONTACTS, processed: CONTACTS, failed: 0 });
    expect(done.tagged).toBe(CONTACTS);
    expect(done.events).toBe(CONTACTS);
  }, 240_000);
});
