/**
 * The intake job across a SIGKILL (submissions/CONTEXT.md): public submissions taken in by the request path (an
 * in-process app with SUBMISSION_INTAKE=always, which runs no job), then made by a `formcast worker` child that is
 * killed with SIGKILL in the middle of the queue, and by a second worker started in its place.
 *
 * What the intake promises, checked here: an entry is removed in the transaction that makes its submission, contact
 * and events, so a kill leaves each entry either whole in the queue or wholly made, never half; and the next worker
 * makes each remaining entry once. At the kill: submissions + entries left = N, and contacts, contact.created and
 * form.submitted each equal the submissions. At the end: N of each, every submission id the one its entry was given.
 *
 * SQLite always; PostgreSQL too when TEST_DATABASE_URL is set (a database of the suite's own).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { connect, type Db } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { ownPostgresDatabase } from '../helpers/reliability.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { startWorker, stopWorker, waitFor, workers } from '../helpers/workers.js';

const PG_URL = process.env.TEST_DATABASE_URL;
const N = 4000;
/** The burst rules off: the generated visitors would be held for review, and this test is about making them. */
const NO_BURSTS = {
  SIGNUP_BURST_IP_RANGE: '0',
  SIGNUP_BURST_PATTERN: '0',
  SIGNUP_BURST_MAILBOX: '0',
  SIGNUP_BURST_DOMAIN: '0',
};

afterAll(async () => {
  for (const w of [...workers]) await stopWorker(w, 'SIGKILL');
});

const targets: { name: string; open: () => Promise<{ url: string; db: Db; drop(): Promise<void> }> }[] = [
  {
    name: 'sqlite',
    open: async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-intake-'));
      const url = path.join(dir, 'formcast.db');
      const db = connect(url);
      await migrateToLatest(db);
      return {
        url,
        db,
        drop: async () => {
          await db.close();
          fs.rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  ...(PG_URL ? [{ name: 'postgres', open: () => ownPostgresDatabase(PG_URL) }] : []),
];
if (!PG_URL)
  describe.skip('the intake job across a SIGKILL [postgres: TEST_DATABASE_URL not set]', () => {
    it('skipped', () => {});
  });

for (const target of targets) {
  describe(`the intake job across a SIGKILL [${target.name}]`, () => {
    it(`a worker killed mid-queue leaves every entry whole or made; the next makes each of ${N} once`, async () => {
      const { url, db, drop } = await target.open();
      try {
        const app = await buildApp({
          db,
          config: {
            logLevel: 'silent',
            publicUrl: 'http://localhost:3000',
            secret: TEST_SECRET,
            submissionIntake: 'always',
            signupBursts: { windowSeconds: 3600, ipRange: 0, pattern: 0, mailbox: 0, domain: 0 },
          },
          logger: false,
        });
        const { workspace } = await app.services.workspaces.createWithAdminKey('Intake');
        const form = await app.services.forms.create(workspace.id, {
          name: 'Spike',
          type: 'SIGN_UP',
          slug: `spike-${target.name}`,
          fieldMapping: { email: 'email', first_name: 'firstName' },
          settings: { doubleOptIn: false },
        } as never);
        await app.services.forms.publish(workspace.id, form.id);
        for (let i = 0; i < N; i += 50) {
          await Promise.all(
            Array.from({ length: Math.min(50, N - i) }, async (_, j) => {
              const n = i + j;
              const res = await app.inject({
                method: 'POST',
                url: `/f/spike-${target.name}`,
                remoteAddress: `10.${n >> 8}.${n & 255}.1`,
                headers: { 'content-type': 'application/x-www-form-urlencoded' },
                payload: `email=visitor${n}%40example.com&first_name=V${n}`,
              });
              expect(res.statusCode).toBe(200);
            }),
          );
        }
        await app.close();
        const k = db.kysely;
        const count = async (table: 'contacts' | 'submissions' | 'submission_intake') =>
          Number(
            (
              await k
                .selectFrom(table)
                .select((eb) => eb.fn.countAll<number>().as('n'))
                .executeTakeFirstOrThrow()
            ).n,
          );
        const events = async (type: string) =>
          Number(
            (
              await k
                .selectFrom('events')
                .select((eb) => eb.fn.countAll<number>().as('n'))
                .where('type', '=', type)
                .executeTakeFirstOrThrow()
            ).n,
          );
        const given = new Set(
          (await k.selectFrom('submission_intake').select('submission_id').execute()).map((r) => r.submission_id),
        );
        expect(given.size).toBe(N);
        expect(await count('submissions')).toBe(0);

        // SERVE_WORKER=false: on SQLite the worker runs apart only when no server runs the jobs (there is none here).
        const env = {
          DATABASE_URL: url,
          SERVE_WORKER: 'false',
          LOG_LEVEL: 'warn',
          SMTP_URL: '',
          OUTBOX_DIR: path.join(os.tmpdir(), `formcast-intake-outbox-${process.pid}`),
          ...NO_BURSTS,
        };
        const victim = await startWorker(env);
        // Killed as soon as it has made some: the queue is then part made, part waiting.
        await waitFor(
          'the first submissions made',
          60_000,
          async () => ((await count('submissions')) > 0 ? true : undefined),
          5,
        );
        victim.child.kill('SIGKILL');
        await victim.exited;
        const [made, left] = [await count('submissions'), await count('submission_intake')];
        expect(made).toBeGreaterThan(0);
        expect(left, 'the victim was killed before the end of the queue').toBeGreaterThan(0);
        expect(made + left).toBe(N);
        expect(await count('contacts')).toBe(made);
        expect(await events('contact.created')).toBe(made);
        expect(await events('form.submitted')).toBe(made);

        const heir = await startWorker(env);
        await waitFor('the queue made', 120_000, async () =>
          (await count('submission_intake')) === 0 ? true : undefined,
        );
        await stopWorker(heir);
        expect(await count('submissions')).toBe(N);
        expect(await count('contacts')).toBe(N);
        expect(await events('contact.created')).toBe(N);
        expect(await events('form.submitted')).toBe(N);
        const ids = (await k.selectFrom('submissions').select('id').execute()).map((r) => r.id);
        expect(new Set(ids).size).toBe(N);
        expect(ids.every((id) => given.has(id))).toBe(true);
      } finally {
        await drop();
      }
    }, 240_000);
  });
}
