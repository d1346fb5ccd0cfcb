/**
 * The sending claim over a backlog (`npm run bench:claim`, issue 36 goal 3): what one claim of a batch of due
 * deliveries costs as a broadcast's deliveries are claimed, from the first to the last, run in this process with the
 * real claim (deliveries.repository.ts claimDeliveries) on SQLite, or on PostgreSQL with `--pg`.
 *
 * Setup: a fresh database; a workspace (the CLI), N contacts and one SENDING broadcast with a delivery for each,
 * written by the materialisation's own insert (deliveries.batch-sql.ts insertDeliveries) a thousand at a time, each
 * thousand due a little after the one before, as a materialisation writes them.
 *
 * Measured, each from the same fresh queue (every delivery QUEUED again, then VACUUM on PostgreSQL):
 *   - `start`: every claim looks from the start of the due range, as the claim did before `from` (the baseline);
 *   - `from`: as the pipeline claims (claim-cursor.ts): each claim from the latest due time the one before took, from the
 *     start every 5 s and whenever nothing is due past it;
 * each alone and, on PostgreSQL, with a snapshot held open beside it (a REPEATABLE READ transaction on another
 * connection, as a report, a backup or a long read holds): PostgreSQL cannot then mark the index entries of the
 * deliveries already claimed dead, and a claim from the start walks and visits them all.
 *
 * Printed per case: the median claim in the first and the last tenth of the claims, and the last tenth against the
 * first (how the claim's cost grows with what was claimed before it); the slowest claim; the looks from the start and
 * their time (they still walk the dead entries: `from` bounds how often, not what one costs). Goal: `from`'s last tenth at most 1.5× its first
 * in every case (the claim's cost does not grow with the deliveries claimed before it), with `start`, measured in the
 * same run, as the baseline it is read against. One JSON line. Exit 1 when a claim took a delivery twice or left one.
 *
 * Options: --rows N (default 100,000), --batch N (default 100), --pg, --database-url URL, --help.
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { sql } from 'kysely';
import { connect, type Db } from '../src/db/connection.js';
import { ClaimCursor, RANGE_EVERY_MS } from '../src/sending/deliveries/claim-cursor.js';
import { claimDeliveries } from '../src/sending/deliveries/deliveries.repository.js';
import { insertDeliveries } from '../src/sending/deliveries/deliveries.batch-sql.js';
import {
  atCleanup,
  contactEmail,
  contactId,
  createSendingWorkspace,
  fmt,
  freshPostgresDatabase,
  makeTempDir,
  median,
  parseCommandLine,
  POSTGRES_OPTIONS,
  positiveInt,
  postgresUrlOf,
  runBench,
  seedContacts,
  sendingEnv,
  table,
} from './harness.js';

/** `from`'s last tenth against its first: the goal's line. */
const GOAL_GROWTH = 1.5;

function parseOptions() {
  const values = parseCommandLine(
    { rows: { type: 'string' }, batch: { type: 'string' }, ...POSTGRES_OPTIONS },
    {
      example: 'npm run bench:claim -- --pg',
      usage: [
        'npm run bench:claim -- [--rows N] [--batch N] [--pg] [--database-url URL]',
        '  --rows N    deliveries in the queue (default 100000)',
        '  --batch N   deliveries a claim takes (default 100, the pipeline default)',
        '  a claim from the start of the due range against one from where the last stopped, as the queue is claimed',
      ],
    },
  );
  return {
    rows: positiveInt('--rows', values.rows, 100_000),
    batch: positiveInt('--batch', values.batch, 100),
    pgUrl: postgresUrlOf(values),
  };
}

interface CaseResult {
  claims: number;
  firstTenthMs: number;
  lastTenthMs: number;
  /** The slowest claim; the looks from the range's start and their time (the dead entries they walk). */
  slowestMs: number;
  wholeLooks: number;
  wholeMs: number;
  growth: number;
  totalMs: number;
}

async function main(): Promise<number> {
  const opts = parseOptions();
  const dir = makeTempDir('claim');
  const database = opts.pgUrl ? await freshPostgresDatabase(opts.pgUrl, 'claim') : path.join(dir, 'formcast.db');
  const env = sendingEnv(dir, database, 'http://127.0.0.1:1', 1);
  const { workspaceId } = await createSendingWorkspace(env, 'claim.example.test');
  process.stderr.write(`seeding ${fmt(opts.rows)} contacts and deliveries (${opts.pgUrl ? 'postgres' : 'sqlite'}) ...`);
  const t0 = performance.now();
  await seedContacts(database, workspaceId, opts.rows);
  const db = connect(database);
  atCleanup(() => db.close());
  const k = db.kysely;
  const broadcastId = 'bc_CLAIMBENCH';
  const created = new Date(Date.now() - 3_600_000);
  await k
    .insertInto('broadcasts')
    .values({
      id: broadcastId,
      workspace_id: workspaceId,
      name: 'claim',
      status: 'SENDING',
      created_at: created.toISOString(),
      updated_at: created.toISOString(),
    } as never)
    .execute();
  // A thousand at a time, each thousand due 10 ms after the one before (a materialisation's batches).
  for (let from = 0, n = 0; from < opts.rows; from += 1000, n++) {
    const recipients = [];
    for (let i = from; i < Math.min(opts.rows, from + 1000); i++)
      recipients.push({ contactId: contactId(i), email: contactEmail(i) });
    await insertDeliveries(k, workspaceId, broadcastId, recipients, new Date(created.getTime() + n * 10).toISOString());
  }
  process.stderr.write(` ${fmt((performance.now() - t0) / 1000, 1)} s\n`);

  const cases: { name: string; from: boolean; held: boolean }[] = [
    { name: 'start', from: false, held: false },
    { name: 'from', from: true, held: false },
  ];
  if (opts.pgUrl)
    cases.push(
      { name: 'start, a snapshot held', from: false, held: true },
      { name: 'from, a snapshot held', from: true, held: true },
    );
  const results: Record<string, CaseResult> = {};
  let wrong = 0;
  for (const c of cases) {
    await requeue(db);
    const holder = c.held ? await holdSnapshot(database) : null;
    try {
      const r = await claimAll(db, opts.batch, c.from);
      if (r.taken !== opts.rows || r.twice) {
        process.stderr.write(`WRONG: ${c.name}: ${r.taken} of ${opts.rows} taken, ${r.twice} twice\n`);
        wrong++;
      }
      results[c.name] = r.result;
    } finally {
      await holder?.end();
    }
  }

  const rows = cases.map((c) => {
    const r = results[c.name]!;
    return [
      c.name,
      fmt(r.claims),
      fmt(r.firstTenthMs, 2),
      fmt(r.lastTenthMs, 2),
      `${r.growth.toFixed(2)}x`,
      fmt(r.slowestMs, 1),
      `${fmt(r.wholeLooks)} (${fmt(r.wholeMs / 1000, 1)} s)`,
      fmt(r.totalMs / 1000, 1),
    ];
  });
  const lines = table(
    [
      'claims look from',
      'claims',
      'first tenth ms',
      'last tenth ms',
      'last / first',
      'slowest ms',
      'looks from the start',
      'total s',
    ],
    [rows],
    1,
  );
  const fromCases = cases.filter((c) => c.from).map((c) => results[c.name]!);
  const worst = Math.max(...fromCases.map((r) => r.growth));
  const pass = worst <= GOAL_GROWTH;
  const against = cases
    .filter((c) => c.from)
    .map((c) => {
      const base = results[c.name.replace('from', 'start')]!;
      return `${c.name}: last tenth ${(results[c.name]!.lastTenthMs / base.lastTenthMs).toFixed(2)}x the start's`;
    });
  process.stdout.write(
    [
      `claims of ${opts.batch} over ${fmt(opts.rows)} due deliveries (${db.dialect}); node ${process.version}`,
      '',
      ...lines,
      '',
      `goal: a claim from where the last stopped costs as much at the end as at the start (last tenth <= ${GOAL_GROWTH}x the first): ${worst.toFixed(2)}x   ${pass ? 'PASS' : 'MISS'}`,
      `against the baseline (claims from the start, the same run): ${against.join('; ')}`,
      '',
    ].join('\n'),
  );
  process.stdout.write(
    `${JSON.stringify({ bench: 'claim', dialect: db.dialect, rows: opts.rows, batch: opts.batch, results, goal: { growth: worst, line: GOAL_GROWTH, pass } })}\n`,
  );
  return wrong ? 1 : 0;
}

/** Every delivery QUEUED again, without a lease; on PostgreSQL a VACUUM after, so each case starts on a clean index. */
async function requeue(db: Db): Promise<void> {
  await db.kysely
    .updateTable('deliveries')
    .set({ status: 'QUEUED', lease_owner: null, lease_expires_at: null, attempts: 0 })
    .execute();
  if (db.dialect === 'postgres') await sql`vacuum analyze deliveries`.execute(db.kysely);
}

/** A REPEATABLE READ transaction on a connection of its own that has read the deliveries: its snapshot stays. */
async function holdSnapshot(database: string): Promise<{ end(): Promise<void> }> {
  const client = new pg.Client({ connectionString: database });
  await client.connect();
  await client.query('begin isolation level repeatable read');
  await client.query('select count(*) from deliveries');
  return {
    async end() {
      await client.query('commit');
      await client.end();
    },
  };
}

/** Claims the whole queue a batch at a time, as one worker's pipeline would, timing each claim. */
async function claimAll(db: Db, batch: number, useFrom: boolean) {
  const times: number[] = [];
  const seen = new Set<string>();
  let twice = 0;
  // `from`: the pipeline's own bookkeeping (claim-cursor.ts), with its interval between looks from the start.
  const cursor = useFrom ? new ClaimCursor(RANGE_EVERY_MS) : null;
  let wholeLooks = 0;
  let wholeMs = 0;
  const started = performance.now();
  for (;;) {
    const now = new Date().toISOString();
    const until = new Date(Date.now() + 600_000).toISOString();
    const began = performance.now();
    const ticket = cursor?.begin(began);
    const got = await claimDeliveries(db.kysely, db.dialect, 'bench', now, until, batch, 'all', {
      lapsed: false,
      ...(ticket?.from === undefined ? {} : { from: ticket.from }),
    });
    const ms = performance.now() - began;
    if (ticket) cursor!.note(ticket, got, batch, performance.now());
    if (!got.length) break;
    times.push(ms);
    // A look from the start: every claim of `start`; the timer's of `from`, and one that found nothing past `from` (it
    // took deliveries due before it).
    if (!ticket || ticket.whole || got.some((d) => d.dueAt !== undefined && d.dueAt < ticket.from!)) {
      wholeLooks++;
      wholeMs += ms;
    }
    for (const d of got) {
      if (seen.has(d.id)) twice++;
      seen.add(d.id);
    }
  }
  const totalMs = performance.now() - started;
  const tenth = Math.max(1, Math.floor(times.length / 10));
  const firstTenthMs = median(times.slice(0, tenth));
  const lastTenthMs = median(times.slice(-tenth));
  return {
    taken: seen.size,
    twice,
    result: {
      claims: times.length,
      firstTenthMs,
      lastTenthMs,
      growth: lastTenthMs / firstTenthMs,
      slowestMs: Math.max(...times),
      wholeLooks,
      wholeMs,
      totalMs,
    },
  };
}

await runBench('claim', main);
