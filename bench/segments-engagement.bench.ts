/**
 * Engagement segments at scale (`npm run bench:engagement`, issue 34, contract §18): the segment count of engagement
 * conditions (audience/segments/segments.repository.ts countMatchingContacts: the code GET /v1/segments/{id}/count
 * and the console's live count run), over --contacts contacts (default 1,000,000, the data of bench/segments-data.ts)
 * and --events events (default 50,000,000) in one workspace, on SQLite, or on PostgreSQL with `--pg`.
 *
 * The events are written by bulk SQL (INSERT … SELECT over the contacts × a series), with the events table's indexes
 * dropped while they load and made again after (as a restore does): each contact gets events/contacts events, 60 %
 * `email.sent`, 25 % `email.opened` (a third of them by a machine), 15 % `email.clicked` (a tenth by a machine), of
 * 100 broadcasts, spread over the last events/contacts × 7 days.
 *
 * Goal: each count < 2 s. Baseline, in the same run on the same data: the same count as one hand-written statement
 * (`select count(*) … where exists (…)`, no slices). Printed as a table with PASS/MISS per count and one JSON line;
 * exit 1 only when something did not run or two answers differ.
 *
 * Options: --contacts N, --events N, --pg, --database-url URL, --rounds N, --keep, --help.
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { sql } from 'kysely';
import { countMatchingContacts } from '../src/audience/segments/segments.repository.js';
import type { Filter } from '../src/audience/segments/segments.filter.js';
import { connect, type Db } from '../src/db/connection.js';
import {
  BenchError,
  atCleanup,
  fmt,
  freshPostgresDatabase,
  makeTempDir,
  median,
  parseCommandLine,
  positiveInt,
  run,
  runBench,
  table,
} from './harness.js';
import { seedPostgres, seedSqlite } from './segments-data.js';

const GOAL_MS = 2000;
const BROADCASTS = 100;
const DAY_S = 86_400;

function parseOptions() {
  const values = parseCommandLine(
    {
      contacts: { type: 'string' },
      events: { type: 'string' },
      pg: { type: 'boolean' },
      'database-url': { type: 'string' },
      rounds: { type: 'string' },
      keep: { type: 'boolean' },
    },
    {
      example: 'npm run bench:engagement -- --contacts 100000 --events 5000000 --pg',
      usage: [
        'npm run bench:engagement -- [--contacts N] [--events N] [--pg] [--database-url URL] [--rounds N] [--keep]',
        '  engagement segment counts over N contacts (default 1,000,000) and M events (default 50,000,000); goal < 2 s',
      ],
    },
  );
  const pgUrl = values.pg ? (values['database-url'] ?? process.env.TEST_DATABASE_URL) : undefined;
  if (values.pg && !pgUrl) throw new BenchError('--pg needs --database-url or TEST_DATABASE_URL');
  const contacts = positiveInt('--contacts', values.contacts, 1_000_000);
  const events = positiveInt('--events', values.events, 50_000_000);
  if (events % contacts) throw new BenchError('--events must be a multiple of --contacts (events per contact)');
  return { contacts, events, rounds: positiveInt('--rounds', values.rounds, 3), keep: Boolean(values.keep), pgUrl };
}

/**
 * The events' columns from a contact's number `c` (0-based, in id order) and its event's number `k`. Plain integer
 * arithmetic, the same on both databases: a multiplicative hash of (c, k) picks the type and whether a machine did it.
 */
function eventSelect(dialect: 'sqlite' | 'postgres', workspaceId: string, nowS: number) {
  const h = `((c * 2654435761 + k * 40503) % 1000003 % 100)`;
  const type = `case when ${h} < 60 then 'email.sent' when ${h} < 85 then 'email.opened' else 'email.clicked' end`;
  const machine = `case when ${h} >= 60 and ${h} < 68 then 1 when ${h} >= 85 and ${h} < 87 then 1 else 0 end`;
  const seconds = `(${nowS} - k * ${7 * DAY_S} - (c * 977) % ${7 * DAY_S})`;
  const occurred =
    dialect === 'sqlite' ? `strftime('%Y-%m-%dT%H:%M:%fZ', ${seconds}, 'unixepoch')` : `to_timestamp(${seconds})`;
  const pad = (e: string, n: number) =>
    dialect === 'sqlite' ? `printf('%0${n}d', ${e})` : `lpad((${e})::text, ${n}, '0')`;
  return `select 'evt_' || ${pad('c', 8)} || '_' || ${pad('k', 4)}, '${workspaceId}', ${type}, ${occurred}, id,
      'bc_bench_' || ${pad(`(k + c) % ${BROADCASTS}`, 3)}, null, '{}', ${machine}, null, 1, 1`;
}

async function seedEvents(db: Db, workspaceId: string, perContact: number): Promise<void> {
  const nowS = Math.floor(Date.now() / 1000);
  const cols = `(id, workspace_id, type, occurred_at, contact_id, broadcast_id, delivery_id, data, machine, url, dispatched, routed)`;
  const k = db.kysely;
  if (db.dialect === 'sqlite') {
    const defs = (
      await sql<{
        name: string;
        sql: string;
      }>`select name, sql from sqlite_master where type = 'index' and tbl_name = 'events' and sql is not null`.execute(
        k,
      )
    ).rows;
    for (const d of defs) await sql.raw(`drop index ${d.name}`).execute(k);
    await sql
      .raw(
        `insert into events ${cols}
         with recursive ks(k) as (select 0 union all select k + 1 from ks where k < ${perContact - 1}),
         cs as (select id, row_number() over (order by id) - 1 as c from contacts where workspace_id = '${workspaceId}')
         ${eventSelect('sqlite', workspaceId, nowS)} from cs, ks`,
      )
      .execute(k);
    for (const d of defs) {
      const t0 = performance.now();
      await sql.raw(d.sql).execute(k);
      process.stderr.write(` ${d.name} ${fmt((performance.now() - t0) / 1000, 1)} s;`);
    }
    await sql`analyze`.execute(k);
  } else {
    const defs = (
      await sql<{
        indexname: string;
        indexdef: string;
      }>`select indexname, indexdef from pg_indexes where tablename = 'events' and indexname <> 'events_pkey'`.execute(
        k,
      )
    ).rows;
    for (const d of defs) await sql.raw(`drop index ${d.indexname}`).execute(k);
    await sql
      .raw(
        `insert into events ${cols}
         ${eventSelect('postgres', workspaceId, nowS)}
         from (select id, (row_number() over (order by id) - 1)::bigint as c from contacts where workspace_id = '${workspaceId}') cs,
              generate_series(0, ${perContact - 1}) as ks(k)`,
      )
      .execute(k);
    for (const d of defs) {
      const t0 = performance.now();
      await sql.raw(d.indexdef).execute(k);
      process.stderr.write(` ${d.indexname} ${fmt((performance.now() - t0) / 1000, 1)} s;`);
    }
    await sql`vacuum analyze events`.execute(k);
  }
}

/**
 * The contacts' engagement summary (migration 0035; kept by the event writers as they write, audience/contacts/
 * contacts.engagement.ts): for the events written in bulk above, filled in one aggregate pass, as a restore would.
 */
async function fillSummary(db: Db, workspaceId: string): Promise<void> {
  const latest = (type: string) => `max(case when type = '${type}' and machine = 0 then occurred_at end)`;
  await sql
    .raw(
      `update contacts set last_sent_at = m.sent, last_opened_at = m.opened, last_clicked_at = m.clicked
       from (select contact_id, ${latest('email.sent')} as sent, ${latest('email.opened')} as opened,
               ${latest('email.clicked')} as clicked
             from events where workspace_id = '${workspaceId}' and contact_id is not null group by contact_id) as m
       where contacts.workspace_id = '${workspaceId}' and contacts.id = m.contact_id`,
    )
    .execute(db.kysely);
  await sql.raw(db.dialect === 'postgres' ? 'vacuum analyze contacts' : 'analyze').execute(db.kysely);
}

/** The same condition as one hand-written statement (the baseline). */
function handWritten(db: Db, workspaceId: string, conditions: string[]): Promise<number> {
  return sql
    .raw<{ n: number }>(
      `select count(*) as n from contacts where workspace_id = '${workspaceId}' and ${conditions.join(' and ')}`,
    )
    .execute(db.kysely)
    .then((r) => Number(r.rows[0]!.n));
}

async function main(): Promise<number> {
  const opts = parseOptions();
  const perContact = opts.events / opts.contacts;
  const dir = makeTempDir('engagement', { keep: opts.keep });
  if (opts.keep) process.stderr.write(`keeping ${dir}\n`);
  const databaseUrl = opts.pgUrl
    ? await freshPostgresDatabase(opts.pgUrl, 'engagement', opts.keep)
    : path.join(dir, 'formcast.db');
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' };
  delete env.PUBLIC_URL;
  const created = JSON.parse(
    await run('formcast workspace create', ['bin/formcast', 'workspace', 'create', 'bench', '--json'], env),
  ) as { workspace: { id: string } };
  const workspaceId = created.workspace.id;

  const dialect = opts.pgUrl ? 'postgres' : 'sqlite';
  process.stderr.write(`seeding ${fmt(opts.contacts)} contacts (${dialect}) ...`);
  let t0 = performance.now();
  if (opts.pgUrl) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await seedPostgres(client, workspaceId, opts.contacts);
    await client.query('vacuum analyze contacts');
    await client.end();
  } else {
    const raw = new SQLite(databaseUrl);
    raw.pragma('journal_mode = WAL');
    seedSqlite(raw, workspaceId, opts.contacts);
    raw.close();
  }
  const seedContactsS = (performance.now() - t0) / 1000;
  process.stderr.write(` ${fmt(seedContactsS, 1)} s\n`);

  const db = connect(databaseUrl);
  atCleanup(() => db.close());
  process.stderr.write(`seeding ${fmt(opts.events)} events (${perContact} a contact) ...`);
  t0 = performance.now();
  await seedEvents(db, workspaceId, perContact);
  const seedEventsS = (performance.now() - t0) / 1000;
  process.stderr.write(` ${fmt(seedEventsS, 1)} s\n`);
  process.stderr.write(`filling the contacts' engagement summary ...`);
  t0 = performance.now();
  await fillSummary(db, workspaceId);
  const fillSummaryS = (performance.now() - t0) / 1000;
  process.stderr.write(` ${fmt(fillSummaryS, 1)} s\n`);

  const since = (days: number) => new Date(Date.now() - days * DAY_S * 1000).toISOString();
  const lit = (iso: string) => (db.dialect === 'postgres' ? `'${iso}'::timestamptz` : `'${iso}'`);
  const exists = (type: string, extra = '') =>
    `exists (select 1 from events e where e.workspace_id = '${workspaceId}' and e.contact_id = contacts.id and e.type = '${type}' and e.machine = 0${extra})`;
  const b = 'bc_bench_042';
  const cases: { name: string; filter: Filter; sql: () => string[] }[] = [
    {
      name: 'opened in the last 30 days',
      filter: { engagement: 'opened', withinDays: 30, happened: true },
      sql: () => [exists('email.opened', ` and e.occurred_at >= ${lit(since(30))}`)],
    },
    {
      name: 'not opened in the last 90 days',
      filter: { engagement: 'opened', withinDays: 90, happened: false },
      sql: () => [`not ${exists('email.opened', ` and e.occurred_at >= ${lit(since(90))}`)}`],
    },
    {
      name: 'clicked ever',
      filter: { engagement: 'clicked', happened: true },
      sql: () => [exists('email.clicked')],
    },
    {
      name: 'non-openers of one broadcast',
      filter: {
        all: [
          { engagement: 'delivered', broadcastId: b, happened: true },
          { engagement: 'opened', broadcastId: b, happened: false },
        ],
      },
      sql: () => [
        exists('email.sent', ` and e.broadcast_id = '${b}'`),
        `not ${exists('email.opened', ` and e.broadcast_id = '${b}'`)}`,
      ],
    },
    {
      name: 'pro plan, opened in 30 d, not clicked in 30 d',
      filter: {
        all: [
          { field: 'properties.plan', op: 'eq', value: 'pro' },
          { engagement: 'opened', withinDays: 30, happened: true },
          { engagement: 'clicked', withinDays: 30, happened: false },
        ],
      },
      sql: () => [
        db.dialect === 'postgres'
          ? `contacts.properties -> 'plan' = '"pro"'::jsonb`
          : `json_extract(contacts.properties, '$.plan') = 'pro' and json_type(contacts.properties, '$.plan') = 'text'`,
        exists('email.opened', ` and e.occurred_at >= ${lit(since(30))}`),
        `not ${exists('email.clicked', ` and e.occurred_at >= ${lit(since(30))}`)}`,
      ],
    },
  ];

  const rows: string[][] = [];
  const results: Record<string, { count: number; medianMs: number; baselineMs: number; pass: boolean }> = {};
  let wrong = 0;
  for (const c of cases) {
    const times: number[] = [];
    const base: number[] = [];
    let count = 0;
    let expected = 0;
    // Alternately, after one warm-up of each.
    for (let i = 0; i < opts.rounds + 1; i++) {
      let s = performance.now();
      count = (await countMatchingContacts(db.kysely, db.dialect, workspaceId, c.filter)).count;
      if (i > 0) times.push(performance.now() - s);
      s = performance.now();
      expected = await handWritten(db, workspaceId, c.sql());
      if (i > 0) base.push(performance.now() - s);
    }
    if (count !== expected) {
      process.stderr.write(`WRONG: ${c.name}: ${count}, hand-written ${expected}\n`);
      wrong++;
    }
    const pass = median(times) < GOAL_MS;
    results[c.name] = { count, medianMs: median(times), baselineMs: median(base), pass };
    rows.push([
      c.name,
      fmt(count),
      fmt(median(times)),
      fmt(median(base)),
      `${fmt(median(base) / median(times), 2)}×`,
      pass ? 'PASS' : 'MISS',
    ]);
  }
  const lines = table(['count', 'matches', 'formcast ms', 'hand-written ms', 'speed', `< ${GOAL_MS} ms`], [rows], 1);
  process.stdout.write(`${lines.join('\n')}\n`);
  process.stdout.write(
    `${JSON.stringify({
      bench: 'engagement',
      dialect: db.dialect,
      contacts: opts.contacts,
      events: opts.events,
      seedContactsS: Math.round(seedContactsS),
      seedEventsS: Math.round(seedEventsS),
      fillSummaryS: Math.round(fillSummaryS),
      results,
    })}\n`,
  );
  return wrong ? 1 : 0;
}

await runBench('engagement', main);
