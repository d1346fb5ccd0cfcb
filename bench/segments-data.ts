/**
 * The data of bench/segments.bench.ts: N contacts with JSON properties and topic choices, generated from a
 * fixed seed (the same rows on SQLite and PostgreSQL), and the bulk loaders that write them straight into
 * the tables (better-sqlite3 prepared statements in large transactions; PostgreSQL multi-row `unnest`
 * inserts), not through the API.
 *
 * The shape, per contact (ids are ULIDs whose time is `createdAt`, so id order is creation order):
 * - createdAt spread evenly over 2024-01-01 .. 2026-01-01;
 * - properties `{ plan, city, score, source, company }`: plan free 50 % / pro 30 % / team 15 % / enterprise 5 %,
 *   one of 20 cities, score 0..100, about 100 bytes of JSON;
 * - status SUBSCRIBED 88 %, UNSUBSCRIBED 5 %, PENDING 4 %, BOUNCED 2 %, COMPLAINED 1 %; bounced and complained
 *   addresses, and 0.5 % of the others, are on the suppression list;
 * - three topics: `newsletter` (OPT_IN, 8 % opted out), `product` (OPT_OUT, 35 % opted in), `events`
 *   (OPT_OUT, 10 % opted in, 2 % opted out explicitly): ~550,000 contact_topics rows per million contacts.
 */
import crypto from 'node:crypto';
import type Database from 'better-sqlite3';
import type pg from 'pg';

export const START_MS = Date.parse('2024-01-01T00:00:00.000Z');
export const END_MS = Date.parse('2026-01-01T00:00:00.000Z');

export const TOPICS = [
  { key: 'newsletter', name: 'Newsletter', defaultSubscription: 'OPT_IN' },
  { key: 'product', name: 'Product updates', defaultSubscription: 'OPT_OUT' },
  { key: 'events', name: 'Events', defaultSubscription: 'OPT_OUT' },
] as const;
export type TopicKey = (typeof TOPICS)[number]['key'];

const CITIES = [
  'Berlin',
  'Paris',
  'London',
  'Madrid',
  'Rome',
  'Vienna',
  'Zurich',
  'Oslo',
  'Lisbon',
  'Prague',
  'Warsaw',
  'Dublin',
  'Amsterdam',
  'Brussels',
  'Copenhagen',
  'Helsinki',
  'Athens',
  'Budapest',
  'Stockholm',
  'Munich',
];
const SOURCES = ['form', 'import', 'api'];

/** A small fast PRNG (mulberry32): the same sequence on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A ULID for time `ms` with a random part drawn from `rnd`. */
function ulid(ms: number, rnd: () => number): string {
  let time = '';
  for (let i = 0, t = ms; i < 10; i++, t = Math.floor(t / 32)) time = CROCKFORD[t % 32]! + time;
  let random = '';
  for (let i = 0; i < 16; i++) random += CROCKFORD[Math.floor(rnd() * 32)]!;
  return time + random;
}

export interface ContactRow {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  properties: string;
  status: string;
  createdAt: string;
  /** Explicit topic choices: [topic key, subscribed]. */
  choices: [TopicKey, 0 | 1][];
  suppressed: null | 'BOUNCED' | 'COMPLAINED' | 'MANUAL';
}

/** The contacts, in id (= creation) order, `batch` at a time. */
export function* contactBatches(total: number, batch: number): Generator<ContactRow[]> {
  const rnd = prng(20260101);
  const step = (END_MS - START_MS) / total;
  for (let start = 0; start < total; start += batch) {
    const rows: ContactRow[] = [];
    for (let i = start; i < Math.min(total, start + batch); i++) {
      const ms = Math.floor(START_MS + i * step);
      const p = rnd();
      const plan = p < 0.5 ? 'free' : p < 0.8 ? 'pro' : p < 0.95 ? 'team' : 'enterprise';
      const s = rnd();
      const status =
        s < 0.88
          ? 'SUBSCRIBED'
          : s < 0.93
            ? 'UNSUBSCRIBED'
            : s < 0.97
              ? 'PENDING'
              : s < 0.99
                ? 'BOUNCED'
                : 'COMPLAINED';
      const choices: [TopicKey, 0 | 1][] = [];
      if (rnd() < 0.08) choices.push(['newsletter', 0]);
      if (rnd() < 0.35) choices.push(['product', 1]);
      const e = rnd();
      if (e < 0.1) choices.push(['events', 1]);
      else if (e < 0.12) choices.push(['events', 0]);
      const suppressed =
        status === 'BOUNCED' ? 'BOUNCED' : status === 'COMPLAINED' ? 'COMPLAINED' : rnd() < 0.005 ? 'MANUAL' : null;
      rows.push({
        id: `ct_${ulid(ms, rnd)}`,
        email: `user${i}@example-${i % 97}.com`,
        firstName: `First${i % 10_000}`,
        lastName: `Last${i % 7_919}`,
        properties: JSON.stringify({
          plan,
          city: CITIES[Math.floor(rnd() * CITIES.length)],
          score: Math.floor(rnd() * 101),
          source: SOURCES[Math.floor(rnd() * SOURCES.length)],
          company: `Company ${i % 5_000}`,
        }),
        status,
        createdAt: new Date(ms).toISOString(),
        choices,
        suppressed,
      });
    }
    yield rows;
  }
}

export interface Seeded {
  topicIds: Record<TopicKey, string>;
  contacts: number;
  contactTopics: number;
  suppressions: number;
}

const topicIdsFor = (): Record<TopicKey, string> => {
  const rnd = prng(7);
  return Object.fromEntries(TOPICS.map((t, i) => [t.key, `topic_${ulid(START_MS - 1000 + i, rnd)}`])) as Record<
    TopicKey,
    string
  >;
};
const token = () => crypto.randomBytes(12).toString('hex');

/** Writes the contacts, topics, choices and suppressions into a migrated SQLite database. */
export function seedSqlite(db: Database.Database, workspaceId: string, total: number): Seeded {
  const topicIds = topicIdsFor();
  const now = new Date().toISOString();
  const insertTopic = db.prepare(
    'insert into topics (id, workspace_id, name, default_subscription, created_at, updated_at) values (?, ?, ?, ?, ?, ?)',
  );
  const insertContact = db.prepare(
    'insert into contacts (id, workspace_id, email, first_name, last_name, properties, status, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const insertChoice = db.prepare(
    'insert into contact_topics (workspace_id, contact_id, topic_id, subscribed, updated_at) values (?, ?, ?, ?, ?)',
  );
  const insertSuppression = db.prepare(
    'insert into suppressions (id, workspace_id, email, reason, created_at) values (?, ?, ?, ?, ?)',
  );
  let contactTopics = 0;
  let suppressions = 0;
  db.transaction(() => {
    for (const t of TOPICS) insertTopic.run(topicIds[t.key], workspaceId, t.name, t.defaultSubscription, now, now);
  })();
  const batchOf = db.transaction((rows: ContactRow[]) => {
    for (const c of rows) {
      insertContact.run(
        c.id,
        workspaceId,
        c.email,
        c.firstName,
        c.lastName,
        c.properties,
        c.status,
        c.createdAt,
        c.createdAt,
      );
      for (const [key, subscribed] of c.choices) {
        insertChoice.run(workspaceId, c.id, topicIds[key], subscribed, c.createdAt);
        contactTopics++;
      }
      if (c.suppressed) {
        insertSuppression.run(`sup_${token()}`, workspaceId, c.email, c.suppressed, c.createdAt);
        suppressions++;
      }
    }
  });
  for (const rows of contactBatches(total, 50_000)) batchOf(rows);
  return { topicIds, contacts: total, contactTopics, suppressions };
}

/** Writes the same rows into a migrated PostgreSQL database: one multi-row `insert … select from unnest(…)` per table and batch. */
export async function seedPostgres(client: pg.Client, workspaceId: string, total: number): Promise<Seeded> {
  const topicIds = topicIdsFor();
  const now = new Date().toISOString();
  let contactTopics = 0;
  let suppressions = 0;
  await client.query('begin');
  for (const t of TOPICS) {
    await client.query(
      'insert into topics (id, workspace_id, name, default_subscription, created_at, updated_at) values ($1, $2, $3, $4, $5, $5)',
      [topicIds[t.key], workspaceId, t.name, t.defaultSubscription, now],
    );
  }
  for (const rows of contactBatches(total, 20_000)) {
    const col = <K extends keyof ContactRow>(k: K) => rows.map((r) => r[k]);
    await client.query(
      `insert into contacts (id, workspace_id, email, first_name, last_name, properties, status, created_at, updated_at)
      select id, $1, email, fn, ln, props::jsonb, st, ca::timestamptz, ca::timestamptz
      from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) as t(id, email, fn, ln, props, st, ca)`,
      [
        workspaceId,
        col('id'),
        col('email'),
        col('firstName'),
        col('lastName'),
        col('properties'),
        col('status'),
        col('createdAt'),
      ],
    );
    const choices = rows.flatMap((r) =>
      r.choices.map(([key, subscribed]) => [r.id, topicIds[key], subscribed, r.createdAt] as const),
    );
    await client.query(
      `insert into contact_topics (workspace_id, contact_id, topic_id, subscribed, updated_at)
      select $1, c, t, s, u::timestamptz from unnest($2::text[], $3::text[], $4::int[], $5::text[]) as x(c, t, s, u)`,
      [
        workspaceId,
        choices.map((c) => c[0]),
        choices.map((c) => c[1]),
        choices.map((c) => c[2]),
        choices.map((c) => c[3]),
      ],
    );
    contactTopics += choices.length;
    const suppressed = rows.filter((r) => r.suppressed);
    await client.query(
      `insert into suppressions (id, workspace_id, email, reason, created_at)
      select i, $1, e, r, c::timestamptz from unnest($2::text[], $3::text[], $4::text[], $5::text[]) as x(i, e, r, c)`,
      [
        workspaceId,
        suppressed.map(() => `sup_${token()}`),
        suppressed.map((r) => r.email),
        suppressed.map((r) => r.suppressed),
        suppressed.map((r) => r.createdAt),
      ],
    );
    suppressions += suppressed.length;
  }
  await client.query('commit');
  return { topicIds, contacts: total, contactTopics, suppressions };
}
