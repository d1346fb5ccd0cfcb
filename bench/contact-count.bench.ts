/**
 * Contact counts at a million contacts (`npm run bench:contact-count`, issue 33 item 12): what the console's
 * "1,234 contacts" costs, GET /v1/contacts/count's query (contacts.repository.ts countContacts) run in this process
 * on the data of bench/segments-data.ts (default 1,000,000 contacts), on SQLite, or on PostgreSQL with `--pg`.
 *
 * Measured for each filter the console offers (none, a status, a topic, a status and a topic, an email): the
 * median time of a count over `--rounds` runs, and on SQLite the longest the event loop was held meanwhile (the
 * longest gap between two ticks of a 1 ms timer): the count walks the contacts a slice at a time, so that other
 * requests are served in between. Printed as a table and one JSON line. Exit 1 only when a count is wrong.
 *
 * Options: --contacts N, --pg, --database-url URL, --rounds N, --keep, --help.
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { countContacts } from '../src/audience/contacts/contacts.repository.js';
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

function parseOptions() {
  const values = parseCommandLine(
    {
      contacts: { type: 'string' },
      pg: { type: 'boolean' },
      'database-url': { type: 'string' },
      rounds: { type: 'string' },
      keep: { type: 'boolean' },
      reuse: { type: 'string' },
    },
    {
      example: 'npm run bench:contact-count -- --contacts 100000 --pg',
      usage: [
        'npm run bench:contact-count -- [--contacts N] [--pg] [--database-url URL] [--rounds N] [--keep] [--reuse FILE]',
        '  --reuse FILE: count in a SQLite file a --keep run seeded (its directory is printed), without seeding again',
        '  GET /v1/contacts/count over N contacts (default 1,000,000): median time and longest event-loop hold',
      ],
    },
  );
  const pgUrl = values.pg ? (values['database-url'] ?? process.env.TEST_DATABASE_URL) : undefined;
  if (values.pg && !pgUrl) throw new BenchError('--pg needs --database-url or TEST_DATABASE_URL');
  return {
    contacts: positiveInt('--contacts', values.contacts, 1_000_000),
    rounds: positiveInt('--rounds', values.rounds, 5),
    keep: Boolean(values.keep),
    reuse: values.reuse,
    pgUrl,
  };
}

/** The longest gap between two ticks of a 1 ms timer while `fn` runs: how long the event loop was held at once. */
async function withLongestHold<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number; holdMs: number }> {
  let last = performance.now();
  let hold = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    hold = Math.max(hold, now - last);
    last = now;
  }, 1);
  const started = performance.now();
  try {
    const value = await fn();
    const ms = performance.now() - started;
    hold = Math.max(hold, performance.now() - last);
    return { value, ms, holdMs: hold };
  } finally {
    clearInterval(timer);
  }
}

async function main(): Promise<number> {
  const opts = parseOptions();
  if (opts.reuse) {
    const db = connect(opts.reuse);
    atCleanup(() => db.close());
    const ws = await db.kysely.selectFrom('workspaces').select('id').executeTakeFirstOrThrow();
    const topic = await db.kysely
      .selectFrom('topics')
      .select('id')
      .where('name', '=', 'Product updates')
      .executeTakeFirstOrThrow();
    return measure(db, ws.id, topic.id, opts.rounds);
  }
  const dir = makeTempDir('contact-count', { keep: opts.keep });
  if (opts.keep) process.stderr.write(`keeping ${dir}\n`);
  const databaseUrl = opts.pgUrl
    ? await freshPostgresDatabase(opts.pgUrl, 'contact_count', opts.keep)
    : path.join(dir, 'formcast.db');
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' };
  delete env.PUBLIC_URL;
  const created = JSON.parse(
    await run('formcast workspace create', ['bin/formcast', 'workspace', 'create', 'bench', '--json'], env),
  ) as { workspace: { id: string } };
  const workspaceId = created.workspace.id;

  process.stderr.write(`seeding ${fmt(opts.contacts)} contacts (${opts.pgUrl ? 'postgres' : 'sqlite'}) ...`);
  const t0 = performance.now();
  let seeded;
  if (opts.pgUrl) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    seeded = await seedPostgres(client, workspaceId, opts.contacts);
    await client.query('vacuum analyze'); // what autovacuum does after a bulk load
    await client.end();
  } else {
    const raw = new SQLite(databaseUrl);
    raw.pragma('journal_mode = WAL');
    seeded = seedSqlite(raw, workspaceId, opts.contacts);
    raw.close();
  }
  process.stderr.write(` ${fmt((performance.now() - t0) / 1000, 1)} s\n`);

  const db = connect(databaseUrl);
  atCleanup(() => db.close());
  return measure(db, workspaceId, seeded.topicIds.product, opts.rounds);
}

async function measure(db: Db, workspaceId: string, productTopic: string, rounds: number): Promise<number> {
  const k = db.kysely;
  const topic = { id: productTopic, defaultSubscription: 'OPT_OUT' as const };
  const someone = await k
    .selectFrom('contacts')
    .select('email')
    .where('workspace_id', '=', workspaceId)
    .limit(1)
    .executeTakeFirstOrThrow();
  const cases = [
    { name: 'all contacts', filter: {} },
    { name: 'status SUBSCRIBED', filter: { status: 'SUBSCRIBED' as const } },
    { name: 'status BOUNCED', filter: { status: 'BOUNCED' as const } },
    { name: 'topic (OPT_OUT)', filter: { topic } },
    { name: 'topic + SUBSCRIBED', filter: { topic, status: 'SUBSCRIBED' as const } },
    { name: 'one email', filter: { email: someone.email } },
  ];

  const rows: string[][] = [];
  const results: Record<string, { count: number; medianMs: number; longestHoldMs: number }> = {};
  let wrong = 0;
  for (const c of cases) {
    // The answer checked against one plain count.
    let check = k.selectFrom('contacts').where('workspace_id', '=', workspaceId);
    if ('status' in c.filter && c.filter.status) check = check.where('status', '=', c.filter.status);
    if ('email' in c.filter && c.filter.email) check = check.where('email', '=', c.filter.email);
    const times: number[] = [];
    let hold = 0;
    let count = 0;
    for (let i = 0; i < rounds + 1; i++) {
      const began = performance.now();
      const r = await withLongestHold(() => countContacts(k, db.dialect, workspaceId, c.filter)).catch((err: Error) => {
        throw new BenchError(`${c.name}: ${err.message} (after ${fmt(performance.now() - began)} ms)`);
      });
      count = r.value;
      if (i === 0) continue; // warm-up
      times.push(r.ms);
      hold = Math.max(hold, r.holdMs);
    }
    if (!('topic' in c.filter)) {
      const expected = Number(
        (await check.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n,
      );
      if (expected !== count) {
        process.stderr.write(`WRONG: ${c.name}: ${count}, expected ${expected}\n`);
        wrong++;
      }
    }
    results[c.name] = { count, medianMs: median(times), longestHoldMs: hold };
    rows.push([c.name, fmt(count), fmt(median(times), 1), db.dialect === 'sqlite' ? fmt(hold, 1) : '—']);
  }
  const lines = table(['filter', 'count', 'median ms', 'longest hold ms'], [rows], 1);
  process.stdout.write(`${lines.join('\n')}\n`);
  process.stdout.write(`${JSON.stringify({ bench: 'contact-count', dialect: db.dialect, results })}\n`);
  return wrong ? 1 : 0;
}

await runBench('contact-count', main);
