/**
 * Reliability of A/B broadcasts (issue 34, docs/ab-tests.md "Exactly one message each"), run for real as
 * test/reliability/workers.test.ts runs the pipeline: `formcast worker` child processes against one PostgreSQL database
 * (a fresh `formcast_rel_<random>`, dropped afterwards) and an SMTP server on loopback in this process that records
 * every message it accepts by recipient, subject and Message-ID.
 *
 * The victim worker sends the test share; then the wait is made to have ended (the test share's queueing moved back
 * 31 minutes) while the test holds the events table (SHARE ROW EXCLUSIVE: every insert into it waits). The victim's
 * timer sets the winner and waits at the insert of `broadcast.ab_winner_chosen`, in the same transaction: it is killed
 * there with SIGKILL. Nothing of the choice may remain; a new worker chooses again and sends the rest. Every recipient
 * must get exactly one message (nothing was in flight at the kill), the rest the winner's, with one event.
 *
 * Without TEST_DATABASE_URL the suite is skipped (the title says so).
 */
import crypto from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { Db } from '../../src/db/connection.js';
import { createServices } from '../../src/app.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { ownPostgresDatabase, startSmtp, type Smtp } from '../helpers/reliability.js';
import { startWorker, stopWorker, waitFor, workers } from '../helpers/workers.js';

const PG_URL = process.env.TEST_DATABASE_URL;

const RECIPIENTS = 500;
const DOMAIN = 'acme.test';
const VICTIM_APP = 'formcast-rel-ab-victim';

const describePg = PG_URL ? describe : describe.skip;
const title = PG_URL
  ? 'A/B broadcasts: a worker killed with SIGKILL during the choice; each recipient exactly one message [postgres]'
  : 'A/B broadcasts: a worker killed with SIGKILL during the choice [skipped: TEST_DATABASE_URL not set; needs PostgreSQL]';

describePg(title, () => {
  let dbUrl: string;
  let db: Db;
  let own: Awaited<ReturnType<typeof ownPostgresDatabase>>;

  beforeAll(async () => {
    own = await ownPostgresDatabase(PG_URL!);
    ({ url: dbUrl, db } = own);
  });

  afterAll(async () => {
    await Promise.all([...workers].map((w) => stopWorker(w, 'SIGKILL')));
    await own?.drop();
  });

  function workerEnv(smtp: Smtp, extra: Record<string, string> = {}): Record<string, string> {
    return {
      DATABASE_URL: dbUrl,
      SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
      PUBLIC_URL: 'http://localhost:3000',
      LOG_LEVEL: 'warn',
      WORKER_BATCH_SIZE: '50',
      WORKER_BATCHES: '2',
      WORKER_LEASE_MS: '2000',
      WORKER_POLL_MS: '100',
      ...extra,
    };
  }

  it('the choice is all or nothing across a SIGKILL; the rest gets the winner once', async () => {
    const smtp = await startSmtp(null);
    const locker = new pg.Client({ connectionString: dbUrl });
    let locked = false;
    try {
      const services = createServices(db, {
        logLevel: 'silent',
        publicUrl: 'http://localhost:3000',
        secret: TEST_SECRET,
      });
      const { workspace } = await services.workspaces.createWithAdminKey('reliability ab');
      await services.domains.add(workspace.id, DOMAIN, { verified: true });
      const now = new Date().toISOString();
      const emails = Array.from({ length: RECIPIENTS }, (_, n) => `ab-${String(n).padStart(4, '0')}@example.test`);
      await db.kysely
        .insertInto('contacts')
        .values(
          emails.map((email, n) => ({
            id: `ct_${crypto.randomBytes(16).toString('hex').toUpperCase().slice(0, 26)}`,
            workspace_id: workspace.id,
            email,
            first_name: `First${n}`,
            last_name: null,
            properties: '{}',
            status: 'SUBSCRIBED' as const,
            created_at: now,
            updated_at: now,
          })),
        )
        .execute();
      const b = await services.broadcasts.create(workspace.id, {
        name: 'Reliability A/B',
        from: `Acme <news@${DOMAIN}>`,
        emailContent: { subject: 'Base', html: '<p>Hi {{ contact.firstName }}</p>' },
        abTest: {
          variants: [
            { id: 'a', subject: 'Subject A' },
            { id: 'b', subject: 'Subject B' },
            { id: 'c', subject: 'Subject C' },
          ],
          testPercent: 30,
          winnerBy: 'OPENS',
          waitMinutes: 30,
        },
      });
      const victim = await startWorker(workerEnv(smtp, { PGAPPNAME: VICTIM_APP }));
      await services.broadcasts.send(workspace.id, b.id);

      // The test share, sent; the broadcast waits, SENDING.
      const testShare = await waitFor(
        'the test share to be sent',
        60_000,
        async () => {
          const row = await db.kysely
            .selectFrom('broadcasts')
            .select(['materialized_at', 'status'])
            .where('id', '=', b.id)
            .executeTakeFirstOrThrow();
          const rows = await db.kysely
            .selectFrom('deliveries')
            .select(['status', 'variant', 'ab_group'])
            .where('broadcast_id', '=', b.id)
            .execute();
          return row.materialized_at && rows.length && rows.every((r) => r.status === 'SENT') ? rows : undefined;
        },
        100,
      );
      expect(testShare.every((r) => r.ab_group === 'TEST')).toBe(true);
      // Exactly 30 % of the audience (docs/ab-tests.md, "The test share"), split evenly: 50 each of three variants.
      expect(testShare).toHaveLength(150);
      for (const v of ['a', 'b', 'c']) expect(testShare.filter((r) => r.variant === v)).toHaveLength(50);
      expect(smtp.total()).toBe(testShare.length);

      // Hold the events table, then end the wait: the victim's choice sets the winner and waits at its event's insert.
      await locker.connect();
      await locker.query('begin');
      await locker.query('lock table events in share row exclusive mode');
      locked = true;
      await sql`update broadcasts set materialized_at = now() - interval '31 minutes' where id = ${b.id}`.execute(
        db.kysely,
      );
      await waitFor(
        "the victim's choice waiting at its event",
        30_000,
        async () =>
          Number(
            (
              await locker.query(
                `select count(*) as n from pg_locks l join pg_stat_activity a on a.pid = l.pid
                 where not l.granted and l.relation = 'events'::regclass and a.application_name = $1`,
                [VICTIM_APP],
              )
            ).rows[0].n,
          ) > 0 || undefined,
        20,
      );
      await stopWorker(victim, 'SIGKILL');
      await locker.query('rollback');
      locked = false;

      // Nothing of the choice remains: no winner, no event, no delivery for the rest.
      const after = await db.kysely
        .selectFrom('broadcasts')
        .select(['ab_winner', 'status'])
        .where('id', '=', b.id)
        .executeTakeFirstOrThrow();
      expect(after).toEqual({ ab_winner: null, status: 'SENDING' });
      const chosenEvents = () =>
        db.kysely
          .selectFrom('events')
          .select('data')
          .where('broadcast_id', '=', b.id)
          .where('type', '=', 'broadcast.ab_winner_chosen')
          .execute();
      expect(await chosenEvents()).toHaveLength(0);

      // Another worker chooses again and sends the rest.
      const survivor = await startWorker(workerEnv(smtp));
      await waitFor(
        'the broadcast to be SENT',
        90_000,
        async () => {
          if (survivor.child.exitCode !== null) throw new Error(`the worker exited:\n${survivor.output()}`);
          const r = await db.kysely.selectFrom('broadcasts').select('status').where('id', '=', b.id).executeTakeFirst();
          return r?.status === 'SENT' ? true : undefined;
        },
        200,
      );
      const events = await chosenEvents();
      expect(events).toHaveLength(1);
      const winner = (
        await db.kysely.selectFrom('broadcasts').select('ab_winner').where('id', '=', b.id).executeTakeFirstOrThrow()
      ).ab_winner!;
      // Nobody opened: a tie, which goes to the first variant.
      expect(winner).toBe('a');

      const rows = await db.kysely
        .selectFrom('deliveries')
        .select(['id', 'email', 'status', 'variant', 'ab_group'])
        .where('broadcast_id', '=', b.id)
        .execute();
      expect(rows).toHaveLength(RECIPIENTS);
      expect(new Set(rows.map((r) => r.email)).size).toBe(RECIPIENTS);
      expect(rows.every((r) => r.status === 'SENT')).toBe(true);
      // Exactly one message each, with the delivery's variant (the rest: the winner's).
      expect(smtp.total()).toBe(RECIPIENTS);
      expect(smtp.received.size).toBe(RECIPIENTS);
      const byEmail = new Map(rows.map((r) => [r.email, r]));
      const wrong = [...smtp.received].filter(([email, copies]) => {
        const d = byEmail.get(email)!;
        return copies.length !== 1 || copies[0]!.subject !== `Subject ${d.variant!.toUpperCase()}`;
      });
      expect(wrong.slice(0, 5)).toEqual([]);
      expect(rows.filter((r) => r.ab_group === 'REST').every((r) => r.variant === winner)).toBe(true);
      await stopWorker(survivor);
    } finally {
      if (locked) await locker.query('rollback').catch(() => {});
      await locker.end().catch(() => {});
      await smtp.close();
    }
  }, 240_000);
});
