/**
 * A million contacts (`npm run bench:segments`, issue 13): segments, list pages and the CSV export over N
 * contacts (default 1,000,000) on SQLite, or on PostgreSQL with `--pg`.
 *
 * Setup: a fresh database (a SQLite file in a temp directory; with --pg a new database on the server of
 * --database-url or TEST_DATABASE_URL, dropped at the end), migrated by `formcast workspace create`, then seeded
 * straight into the tables by bench/segments-data.ts (contacts with JSON properties, three topics and the
 * contacts' choices, suppressions). PostgreSQL is VACUUMed and ANALYZEd after the load, as autovacuum would.
 * Then `formcast serve` on it, and a segment of three conditions created over the API:
 *   properties.plan eq "pro" ∧ topic "product" (OPT_OUT) subscribed ∧ 2025-01-01 ≤ createdAt < 2025-07-01.
 *
 * Measured, each against a baseline in the same run, on the same data:
 * - count: GET /v1/segments/{id}/count vs a hand-written SQL count (run by the driver in this process);
 * - audience materialisation: what a SENDING broadcast to the segment does (the delivery store's
 *   writeAudienceSlice, slice after slice until done, in this process) vs one hand-written SELECT of the
 *   audience whose rows are inserted into deliveries 1000 per transaction by a prepared statement;
 * - GET /v1/contacts?limit=100 at depth 900,000 (a cursor 90 % down) vs page 1, and the same for
 *   GET /v1/segments/{id}/contacts (90 % down the segment's contacts);
 * - GET /v1/contacts/export of every contact: time to the first byte, total time, and the server's RSS growth
 *   during it (VmHWM after resetting it with /proc/<pid>/clear_refs, minus VmRSS before).
 *
 * Goals: count and materialisation ≥ 0.8× the baseline's speed; deep pages ≤ 2× page 1; the export's RSS
 * growth < 150 MB and its first byte within 10 % of its total time. Printed as PASS/MISS with one JSON line;
 * a MISS does not change the exit code, which is 1 only when something did not run or gave a wrong answer.
 *
 * Options: --contacts N, --pg, --database-url URL, --rounds N (timed repetitions, median), --help.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { connect, type Db } from '../src/db/connection.js';
import { unsubscribeTokens } from '../src/sending/deliveries/deliveries.batch-sql.js';
import { DEFAULT_PIPELINE_OPTIONS } from '../src/sending/deliveries/pipeline.js';
import { SqlDeliveryStore } from '../src/composition/sql-delivery-store.js';
import { newId } from '../src/lib/ids.js';
import {
  BenchError,
  HOST,
  alive,
  atCleanup,
  expectStatus,
  fmt,
  freshPostgresDatabase,
  makeTempDir,
  memoryOf,
  parseCommandLine,
  positiveInt,
  run,
  runBench,
  startServer,
  stopChild,
  table,
  type Server,
  postgresUrlOf,
} from './harness.js';
import { seedPostgres, seedSqlite, type Seeded } from './segments-data.js';

const SPEED_GOAL = 0.8;
const DEPTH_GOAL = 2;
const EXPORT_RSS_GOAL_MB = 150;
const EXPORT_TTFB_GOAL = 0.1;
const PAGE_LIMIT = 100;
const FROM = '2025-01-01T00:00:00.000Z';
const UNTIL = '2025-07-01T00:00:00.000Z';

interface Range {
  from: string;
  until: string;
}

function parseOptions() {
  const values = parseCommandLine(
    {
      contacts: { type: 'string' },
      pg: { type: 'boolean' },
      'database-url': { type: 'string' },
      rounds: { type: 'string' },
      keep: { type: 'boolean' },
      from: { type: 'string' },
      until: { type: 'string' },
    },
    {
      example: 'npm run bench:segments -- --contacts 100000 --pg',
      usage: [
        'usage: npm run bench:segments -- [--contacts N] [--pg [--database-url URL]] [--rounds N]',
        '  --contacts N        contacts to seed (default 1000000)',
        '  --pg                PostgreSQL: a fresh database on the server of --database-url or TEST_DATABASE_URL, dropped afterwards',
        '  --database-url URL  a PostgreSQL URL whose user may CREATE DATABASE (implies --pg)',
        '  --rounds N          timed repetitions of each count and materialisation, median reported (default 3)',
        `  --from ISO, --until ISO  the segment's createdAt range (default ${FROM} .. ${UNTIL}; contacts span 2024 and 2025)`,
        "  --keep              keep the database (the SQLite file's directory, or the PostgreSQL database) and print where it is",
      ],
    },
  );
  const databaseUrl = postgresUrlOf(values);
  const iso = (name: string, raw: string | undefined, fallback: string) => {
    if (raw === undefined) return fallback;
    if (Number.isNaN(Date.parse(raw))) throw new BenchError(`--${name} must be a date-time, got "${raw}"`);
    return new Date(raw).toISOString();
  };
  const range: Range = { from: iso('from', values.from, FROM), until: iso('until', values.until, UNTIL) };
  return {
    contacts: positiveInt('contacts', values.contacts, 1_000_000),
    pgUrl: databaseUrl,
    rounds: positiveInt('rounds', values.rounds, 3),
    keep: values.keep ?? false,
    range,
  };
}

// ---------------------------------------------------------------------------------------------------
// The database: raw access for seeding and the hand-written baselines

interface Raw {
  dialect: 'sqlite' | 'postgres';
  /** The placeholder of the n-th parameter (from 1). */
  p(n: number): string;
  /** Runs one statement, returns its rows. */
  query<T>(text: string, params: unknown[]): Promise<T[]>;
  /** Runs `fn` in one transaction. */
  transaction(fn: () => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

function sqliteRaw(file: string): Raw & { db: SQLite.Database } {
  const db = new SQLite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  const statements = new Map<string, SQLite.Statement>();
  const prepared = (text: string) => {
    let s = statements.get(text);
    if (!s) statements.set(text, (s = db.prepare(text)));
    return s;
  };
  return {
    db,
    dialect: 'sqlite',
    p: () => '?',
    async query<T>(text: string, params: unknown[]) {
      const s = prepared(text);
      if (s.reader) return s.all(...params) as T[];
      s.run(...params);
      return [];
    },
    async transaction(fn) {
      db.exec('begin');
      try {
        await fn();
        db.exec('commit');
      } catch (err) {
        db.exec('rollback');
        throw err;
      }
    },
    async close() {
      db.close();
    },
  };
}

async function postgresRaw(url: string): Promise<Raw & { client: pg.Client }> {
  const client = new pg.Client({ connectionString: url, options: '-c TimeZone=UTC' });
  await client.connect();
  return {
    client,
    dialect: 'postgres',
    p: (n) => `$${n}`,
    async query<T>(text: string, params: unknown[]) {
      return (await client.query(text, params)).rows as T[];
    },
    async transaction(fn) {
      await client.query('begin');
      try {
        await fn();
        await client.query('commit');
      } catch (err) {
        await client.query('rollback');
        throw err;
      }
    },
    close: () => client.end(),
  };
}

// ---------------------------------------------------------------------------------------------------
// The hand-written queries: what a person would write for this segment, knowing that the topic is OPT_OUT.

function handWritten(dialect: Raw['dialect']) {
  const p = dialect === 'postgres' ? (n: number) => `$${n}` : () => '?';
  const plan =
    dialect === 'postgres' ? `c.properties ->> 'plan' = 'pro'` : `json_extract(c.properties, '$.plan') = 'pro'`;
  // Parameters: 1 workspace, 2 from, 3 until, 4 topic.
  const segment = `c.workspace_id = ${p(1)} and ${plan} and c.created_at >= ${p(2)} and c.created_at < ${p(3)}
    and exists (select 1 from contact_topics ct where ct.contact_id = c.id and ct.topic_id = ${p(4)} and ct.subscribed = 1)`;
  const audience = `${segment} and c.status = 'SUBSCRIBED'
    and not exists (select 1 from suppressions s where s.workspace_id = c.workspace_id and s.email = c.email)`;
  return {
    count: `select count(*) as count, coalesce(sum(case when c.status = 'SUBSCRIBED' then 1 else 0 end), 0) as subscribed from contacts c where ${segment}`,
    /** The id `offset` rows down the segment, newest first (parameter 5: the offset). */
    segmentIdAt: `select c.id from contacts c where ${segment} order by c.id desc limit 1 offset ${p(5)}`,
    audience: `select c.id, c.email from contacts c where ${audience} order by c.id`,
  };
}

const DELIVERY_COLUMNS =
  'id, workspace_id, broadcast_id, contact_id, email, status, attempts, next_attempt_at, unsubscribe_token, created_at, updated_at';

/** The baseline of materialisation: the hand-written audience query, its rows inserted 1000 per transaction. */
async function materialiseByHand(
  raw: Raw,
  workspaceId: string,
  topicId: string,
  range: Range,
  broadcastId: string,
): Promise<number> {
  const rows = await raw.query<{ id: string; email: string }>(handWritten(raw.dialect).audience, [
    workspaceId,
    range.from,
    range.until,
    topicId,
  ]);
  const now = new Date().toISOString();
  for (let i = 0; i < rows.length; i += 1000) {
    const batch = rows.slice(i, i + 1000);
    await raw.transaction(async () => {
      if (raw.dialect === 'sqlite') {
        const tokens = unsubscribeTokens(batch.length);
        for (const [n, r] of batch.entries()) {
          await raw.query(
            `insert into deliveries (${DELIVERY_COLUMNS}) values (?, ?, ?, ?, ?, 'QUEUED', 0, ?, ?, ?, ?) on conflict (broadcast_id, contact_id) where automation_run_id is null do nothing`,
            [newId('dlv'), workspaceId, broadcastId, r.id, r.email, now, tokens[n], now, now],
          );
        }
      } else {
        await raw.query(
          `insert into deliveries (${DELIVERY_COLUMNS})
          select i, $1, $2, c, e, 'QUEUED', 0, $3, t, $3, $3 from unnest($4::text[], $5::text[], $6::text[], $7::text[]) as x(i, c, e, t)
          on conflict (broadcast_id, contact_id) where automation_run_id is null do nothing`,
          [
            workspaceId,
            broadcastId,
            now,
            batch.map(() => newId('dlv')),
            batch.map((r) => r.id),
            batch.map((r) => r.email),
            unsubscribeTokens(batch.length),
          ],
        );
      }
    });
  }
  return rows.length;
}

/** What a SENDING broadcast does: the delivery store's writeAudienceSlice until the audience is written. */
async function materialiseByFormcast(db: Db, broadcastId: string): Promise<number> {
  const store = new SqlDeliveryStore(db);
  const iso = (ms: number) => new Date(ms).toISOString();
  const job = await store.claimAudience('bench', iso(Date.now()), iso(Date.now() + 60_000));
  if (!job || job.broadcastId !== broadcastId)
    throw new BenchError('the bench broadcast could not be claimed for materialisation');
  let written = 0;
  for (;;) {
    const now = Date.now();
    const slice = await store.writeAudienceSlice(
      job,
      'bench',
      DEFAULT_PIPELINE_OPTIONS.materializeBatch,
      iso(now),
      iso(now + 60_000),
    );
    written += slice.written;
    if (slice.state === 'lost') throw new BenchError('the materialisation lease was lost');
    if (slice.state === 'done') return written;
  }
}

async function insertBroadcast(raw: Raw, workspaceId: string, segmentId: string): Promise<string> {
  const id = newId('bc');
  const now = new Date().toISOString();
  const p = raw.p;
  await raw.query(
    `insert into broadcasts (id, workspace_id, name, status, segment_id, created_at, updated_at) values (${p(1)}, ${p(2)}, 'bench', 'SENDING', ${p(3)}, ${p(4)}, ${p(5)})`,
    [id, workspaceId, segmentId, now, now],
  );
  return id;
}

async function removeBroadcast(raw: Raw, id: string): Promise<void> {
  for (const table of ['deliveries', 'events'])
    await raw.query(`delete from ${table} where broadcast_id = ${raw.p(1)}`, [id]);
  await raw.query(`delete from broadcasts where id = ${raw.p(1)}`, [id]);
}

// ---------------------------------------------------------------------------------------------------
// Timing

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await fn();
  return { ms: performance.now() - started, value };
}

/**
 * Runs `a` and `b` once each untimed (caches warm, plans made), then `rounds` times each, alternating which goes
 * first; the median time of each and their last values.
 */
async function alternate<A, B>(rounds: number, a: () => Promise<A>, b: () => Promise<B>) {
  const as: number[] = [];
  const bs: number[] = [];
  let lastA: A = await a();
  let lastB: B = await b();
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? ['a', 'b'] : ['b', 'a'];
    for (const which of order) {
      if (which === 'a') {
        const r = await timed(a);
        as.push(r.ms);
        lastA = r.value;
      } else {
        const r = await timed(b);
        bs.push(r.ms);
        lastB = r.value;
      }
    }
  }
  return { a: median(as), b: median(bs), lastA, lastB };
}

// ---------------------------------------------------------------------------------------------------
// HTTP

const cursorOf = (id: string) => Buffer.from(id, 'utf8').toString('base64url');

async function getJson<T>(server: Server, key: string, url: string): Promise<T> {
  const res = await fetch(new URL(url, server.url), { headers: { authorization: `Bearer ${key}` } });
  return JSON.parse(await expectStatus(res, 200, `GET ${url}`)) as T;
}

/** The median time of `rounds` GETs of each URL, alternating; checks each page has `PAGE_LIMIT` items. */
async function pageTimes(server: Server, key: string, first: string, deep: string, rounds = 15) {
  const check = (r: { data: unknown[] }, url: string) => {
    if (r.data.length !== PAGE_LIMIT)
      throw new BenchError(`GET ${url}: ${r.data.length} items, expected ${PAGE_LIMIT}`);
    return r.data as { id: string }[];
  };
  // Warm both up once (plans, caches).
  check(await getJson(server, key, first), first);
  check(await getJson(server, key, deep), deep);
  const r = await alternate(
    rounds,
    () => getJson<{ data: unknown[] }>(server, key, first),
    () => getJson<{ data: unknown[] }>(server, key, deep),
  );
  return { firstMs: r.a, deepMs: r.b, firstItems: check(r.lastA, first), deepItems: check(r.lastB, deep) };
}

interface ExportFigures {
  status: number;
  ttfbMs: number;
  totalMs: number;
  bytes: number;
  rows: number;
  rssBeforeMb: number;
  peakRssMb: number;
  growthMb: number;
  peakResetWorked: boolean;
  /** The highest RSS sampled while the first quarter of the rows arrived, and while the last quarter did: equal when memory does not grow with the rows sent. */
  firstQuarterPeakMb: number;
  lastQuarterPeakMb: number;
}

/** GET /v1/contacts/export read to the end, with the server's memory watched. */
async function exportAll(server: Server, key: string, expectedRows: number): Promise<ExportFigures> {
  const pid = server.child.pid!;
  const before = memoryOf(pid);
  // Resets VmHWM to the current RSS (Linux ≥ 4.0): the peak read afterwards is the export's own.
  let peakResetWorked = true;
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    peakResetWorked = false;
  }
  let sampledPeak = before.rssMb;
  let rows = 0;
  const quarterPeaks = [0, 0, 0, 0];
  const sampler = setInterval(() => {
    if (!alive(server.child)) return;
    const rss = memoryOf(pid).rssMb;
    sampledPeak = Math.max(sampledPeak, rss);
    const quarter = Math.min(3, Math.floor((rows / expectedRows) * 4));
    quarterPeaks[quarter] = Math.max(quarterPeaks[quarter]!, rss);
  }, 50);
  const url = new URL('/v1/contacts/export', server.url);
  const started = performance.now();
  try {
    return await new Promise<ExportFigures>((resolve, reject) => {
      const req = http.get(
        { hostname: url.hostname, port: url.port, path: url.pathname, headers: { authorization: `Bearer ${key}` } },
        (res) => {
          let ttfbMs = -1;
          let bytes = 0;
          res.on('data', (chunk: Buffer) => {
            if (ttfbMs < 0) ttfbMs = performance.now() - started;
            bytes += chunk.length;
            // No field of the seeded data holds a line break: each CRLF ends a row.
            for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) rows++;
          });
          res.on('end', () => {
            const totalMs = performance.now() - started;
            const mem = memoryOf(pid);
            const peakRssMb = peakResetWorked ? Math.max(mem.peakRssMb, sampledPeak) : sampledPeak;
            resolve({
              status: res.statusCode ?? 0,
              ttfbMs,
              totalMs,
              bytes,
              rows: rows - 1,
              rssBeforeMb: before.rssMb,
              peakRssMb,
              growthMb: peakRssMb - before.rssMb,
              peakResetWorked,
              firstQuarterPeakMb: quarterPeaks[0]!,
              lastQuarterPeakMb: quarterPeaks[3]!,
            });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
    });
  } finally {
    clearInterval(sampler);
  }
}

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const opts = parseOptions();
  const dir = makeTempDir('segments', { keep: opts.keep });
  const databaseUrl = opts.pgUrl
    ? await freshPostgresDatabase(opts.pgUrl, 'segments', opts.keep)
    : path.join(dir, 'formcast.db');
  const dialect = opts.pgUrl ? 'postgres' : 'sqlite';
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    HOST,
    LOG_LEVEL: 'warn',
    DATABASE_URL: databaseUrl,
    OUTBOX_DIR: path.join(dir, 'outbox'),
  };
  delete env.PUBLIC_URL;
  delete env.SMTP_URL;
  const created = JSON.parse(
    await run('formcast workspace create', ['bin/formcast', 'workspace', 'create', 'bench', '--json'], env),
  ) as { workspace: { id: string }; apiKey: { key: string } };
  const workspaceId = created.workspace.id;
  const key = created.apiKey.key;

  const raw = dialect === 'postgres' ? await postgresRaw(databaseUrl) : sqliteRaw(databaseUrl);
  atCleanup(() => raw.close());
  process.stderr.write(`seeding ${fmt(opts.contacts)} contacts (${dialect}) ...`);
  const seeding = await timed(async (): Promise<Seeded> => {
    if (raw.dialect === 'postgres') {
      const seeded = await seedPostgres(
        (raw as Awaited<ReturnType<typeof postgresRaw>>).client,
        workspaceId,
        opts.contacts,
      );
      // What autovacuum does after a bulk load (PostgreSQL 13+ vacuums on inserts too): statistics, and the
      // visibility map that index-only scans need (without it, each slice edge of a materialisation read the heap).
      await raw.query('vacuum analyze', []);
      return seeded;
    }
    return seedSqlite((raw as ReturnType<typeof sqliteRaw>).db, workspaceId, opts.contacts);
  });
  const seeded = seeding.value;
  process.stderr.write(
    ` ${fmt(seeding.ms / 1000, 1)} s (${fmt(seeded.contactTopics)} topic choices, ${fmt(seeded.suppressions)} suppressions)\n`,
  );
  const topicId = seeded.topicIds.product;
  const q = handWritten(raw.dialect);

  let server = await startServer('formcast serve', ['bin/formcast', 'serve'], env);
  const filter = {
    all: [
      { field: 'properties.plan', op: 'eq', value: 'pro' },
      { topic: topicId, subscribed: true },
      { field: 'createdAt', op: 'gte', value: opts.range.from },
      { field: 'createdAt', op: 'lt', value: opts.range.until },
    ],
  };
  const segmentRes = await fetch(new URL('/v1/segments', server.url), {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Pro, product updates, joined in the range', filter }),
  });
  const segmentId = (JSON.parse(await expectStatus(segmentRes, 201, 'POST /v1/segments')) as { id: string }).id;

  // ---- count
  process.stderr.write('count ...');
  const count = await alternate(
    opts.rounds,
    async () => {
      const r = (
        await raw.query<{ count: number | string; subscribed: number | string }>(q.count, [
          workspaceId,
          opts.range.from,
          opts.range.until,
          topicId,
        ])
      )[0]!;
      return { count: Number(r.count), subscribed: Number(r.subscribed) };
    },
    () => getJson<{ count: number; subscribed: number }>(server, key, `/v1/segments/${segmentId}/count`),
  );
  if (count.lastA.count !== count.lastB.count || count.lastA.subscribed !== count.lastB.subscribed) {
    throw new BenchError(
      `counts differ: hand-written ${JSON.stringify(count.lastA)}, formcast ${JSON.stringify(count.lastB)}`,
    );
  }
  const matches = count.lastB.count;
  process.stderr.write(` ${fmt(matches)} contacts: ${fmt(count.a)} ms by hand, ${fmt(count.b)} ms formcast\n`);

  // ---- pages
  process.stderr.write('pages ...');
  const depth = Math.min(900_000, Math.floor(opts.contacts * 0.9));
  const [{ id: deepId }] = (await raw.query<{ id: string }>(
    `select id from contacts where workspace_id = ${raw.p(1)} order by id desc limit 1 offset ${depth - 1}`,
    [workspaceId],
  )) as [{ id: string }];
  const contactsPages = await pageTimes(
    server,
    key,
    `/v1/contacts?limit=${PAGE_LIMIT}`,
    `/v1/contacts?limit=${PAGE_LIMIT}&cursor=${cursorOf(deepId)}`,
  );
  const segmentDepth = Math.floor(matches * 0.9);
  const [{ id: segmentDeepId }] = (await raw.query<{ id: string }>(q.segmentIdAt, [
    workspaceId,
    opts.range.from,
    opts.range.until,
    topicId,
    segmentDepth - 1,
  ])) as [{ id: string }];
  const segmentPages = await pageTimes(
    server,
    key,
    `/v1/segments/${segmentId}/contacts?limit=${PAGE_LIMIT}`,
    `/v1/segments/${segmentId}/contacts?limit=${PAGE_LIMIT}&cursor=${cursorOf(segmentDeepId)}`,
  );
  const expectedDeep = await raw.query<{ id: string }>(
    `select id from contacts where workspace_id = ${raw.p(1)} and id < ${raw.p(2)} order by id desc limit ${PAGE_LIMIT}`,
    [workspaceId, deepId],
  );
  if (expectedDeep.map((r) => r.id).join() !== contactsPages.deepItems.map((r) => r.id).join())
    throw new BenchError('the deep page of /v1/contacts is not the contacts after its cursor');
  process.stderr.write(
    ` contacts ${fmt(contactsPages.firstMs, 1)} / ${fmt(contactsPages.deepMs, 1)} ms, segment ${fmt(segmentPages.firstMs, 1)} / ${fmt(segmentPages.deepMs, 1)} ms\n`,
  );

  // ---- export
  process.stderr.write('export ...');
  const exported = await exportAll(server, key, opts.contacts);
  if (exported.status !== 200 || exported.rows !== opts.contacts)
    throw new BenchError(
      `the export answered ${exported.status} with ${exported.rows} rows, expected 200 with ${opts.contacts}`,
    );
  process.stderr.write(
    ` ${fmt(exported.totalMs / 1000, 1)} s, ${fmt(exported.bytes / 1024 / 1024, 1)} MB, first byte at ${fmt(exported.ttfbMs)} ms, RSS ${exported.rssBeforeMb} → ${exported.peakRssMb} MB\n`,
  );
  if (!alive(server.child)) throw new BenchError(`formcast serve died\n${server.output()}`);
  const idle = memoryOf(server.child.pid!);
  await stopChild(server.child);

  // ---- materialisation (the server is stopped: its worker would claim the bench broadcasts)
  process.stderr.write('materialisation ...');
  const db = connect(databaseUrl);
  atCleanup(() => db.close());
  const mat = await alternate(
    opts.rounds,
    async () => {
      const id = await insertBroadcast(raw, workspaceId, segmentId);
      try {
        return await materialiseByHand(raw, workspaceId, topicId, opts.range, id);
      } finally {
        await removeBroadcast(raw, id);
      }
    },
    async () => {
      const id = await insertBroadcast(raw, workspaceId, segmentId);
      try {
        return await materialiseByFormcast(db, id);
      } finally {
        await removeBroadcast(raw, id);
      }
    },
  );
  if (mat.lastA !== mat.lastB)
    throw new BenchError(`audiences differ: hand-written ${mat.lastA}, formcast ${mat.lastB}`);
  process.stderr.write(` ${fmt(mat.lastB)} recipients: ${fmt(mat.a)} ms by hand, ${fmt(mat.b)} ms formcast\n`);
  server = undefined as unknown as Server;

  // ---- report
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');
  const countRatio = count.a / count.b;
  const matRatio = mat.a / mat.b;
  const contactsDepth = contactsPages.deepMs / contactsPages.firstMs;
  const segmentDepthRatio = segmentPages.deepMs / segmentPages.firstMs;
  const ttfbShare = exported.ttfbMs / exported.totalMs;
  const goals = {
    count: { min: SPEED_GOAL, value: round(countRatio, 3), pass: countRatio >= SPEED_GOAL },
    materialisation: { min: SPEED_GOAL, value: round(matRatio, 3), pass: matRatio >= SPEED_GOAL },
    contactsDeepPage: { max: DEPTH_GOAL, value: round(contactsDepth, 3), pass: contactsDepth <= DEPTH_GOAL },
    segmentDeepPage: { max: DEPTH_GOAL, value: round(segmentDepthRatio, 3), pass: segmentDepthRatio <= DEPTH_GOAL },
    exportRssGrowthMb: {
      max: EXPORT_RSS_GOAL_MB,
      value: exported.growthMb,
      pass: exported.growthMb < EXPORT_RSS_GOAL_MB,
    },
    exportFirstByteShare: { max: EXPORT_TTFB_GOAL, value: round(ttfbShare, 4), pass: ttfbShare <= EXPORT_TTFB_GOAL },
  };
  const verdict = (pass: boolean) => (pass ? 'PASS' : 'MISS');
  const ms = (n: number) => fmt(n, n < 100 ? 1 : 0);
  process.stdout.write(
    [
      '',
      `A million contacts: ${fmt(opts.contacts)} contacts on ${dialect}; segment plan = pro ∧ product topic ∧ ${opts.range.from} ≤ createdAt < ${opts.range.until}`,
      `  matches ${fmt(matches)} (${fmt(count.lastB.subscribed)} subscribed), audience ${fmt(mat.lastB)}`,
      `node ${process.version}, ${os.cpus().length} CPU(s), load average ${load}; medians of ${opts.rounds} rounds (pages: 15)`,
      '',
      ...table(
        ['measure', 'baseline', 'formcast', 'ratio', 'goal', ''],
        [
          [
            [
              'segment count (ms)',
              ms(count.a),
              ms(count.b),
              `${countRatio.toFixed(2)}×`,
              `≥ ${SPEED_GOAL}×`,
              verdict(goals.count.pass),
            ],
            [
              'audience materialisation (ms)',
              ms(mat.a),
              ms(mat.b),
              `${matRatio.toFixed(2)}×`,
              `≥ ${SPEED_GOAL}×`,
              verdict(goals.materialisation.pass),
            ],
          ],
          [
            [
              `GET /v1/contacts page 1 vs depth ${fmt(depth)} (ms)`,
              ms(contactsPages.firstMs),
              ms(contactsPages.deepMs),
              `${contactsDepth.toFixed(2)}×`,
              `≤ ${DEPTH_GOAL}×`,
              verdict(goals.contactsDeepPage.pass),
            ],
            [
              `GET /v1/segments/{id}/contacts page 1 vs depth ${fmt(segmentDepth)} (ms)`,
              ms(segmentPages.firstMs),
              ms(segmentPages.deepMs),
              `${segmentDepthRatio.toFixed(2)}×`,
              `≤ ${DEPTH_GOAL}×`,
              verdict(goals.segmentDeepPage.pass),
            ],
          ],
        ],
        1,
      ),
      '',
      `(count and materialisation: baseline = hand-written SQL, ratio = baseline time / formcast time; pages: baseline = page 1, ratio = deep / page 1)`,
      '',
      `GET /v1/contacts/export: ${fmt(exported.rows)} rows, ${fmt(exported.bytes / 1024 / 1024, 1)} MB in ${fmt(exported.totalMs / 1000, 1)} s (${fmt(exported.rows / (exported.totalMs / 1000))} rows/s)`,
      `  first byte after ${ms(exported.ttfbMs)} ms = ${(ttfbShare * 100).toFixed(2)} % of the total   goal ≤ ${EXPORT_TTFB_GOAL * 100} %   ${verdict(goals.exportFirstByteShare.pass)}`,
      `  server RSS ${exported.rssBeforeMb} MB before, peak ${exported.peakRssMb} MB during${exported.peakResetWorked ? '' : ' (sampled every 50 ms)'}: growth ${exported.growthMb} MB   goal < ${EXPORT_RSS_GOAL_MB} MB   ${verdict(goals.exportRssGrowthMb.pass)}`,
      `  highest RSS sampled while the first quarter of the rows was sent ${exported.firstQuarterPeakMb} MB, the last quarter ${exported.lastQuarterPeakMb} MB; after the export ${idle.rssMb} MB`,
      ...(opts.keep ? [`kept: ${databaseUrl} (workspace ${workspaceId}, API key ${key})`] : []),
      '',
    ].join('\n'),
  );
  process.stdout.write(
    `${JSON.stringify({
      bench: 'segments',
      node: process.version,
      cpus: os.cpus().length,
      loadavg: os.loadavg().map((l) => round(l, 2)),
      dialect,
      contacts: opts.contacts,
      seeded: {
        seconds: round(seeding.ms / 1000, 1),
        contactTopics: seeded.contactTopics,
        suppressions: seeded.suppressions,
      },
      segment: {
        from: opts.range.from,
        until: opts.range.until,
        matches,
        subscribed: count.lastB.subscribed,
        audience: mat.lastB,
      },
      count: { baselineMs: round(count.a, 1), formcastMs: round(count.b, 1) },
      materialisation: { baselineMs: round(mat.a, 1), formcastMs: round(mat.b, 1) },
      contactsPages: { depth, firstMs: round(contactsPages.firstMs, 2), deepMs: round(contactsPages.deepMs, 2) },
      segmentPages: {
        depth: segmentDepth,
        firstMs: round(segmentPages.firstMs, 2),
        deepMs: round(segmentPages.deepMs, 2),
      },
      export: { ...exported, ttfbMs: round(exported.ttfbMs, 1), totalMs: round(exported.totalMs, 0) },
      goals,
    })}\n`,
  );
  return 0;
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

await runBench('bench:segments', main);
