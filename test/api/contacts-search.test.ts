import fc from 'fast-check';
import { CompiledQuery, sql } from 'kysely';
import { expect, it } from 'vitest';
import { contactsPageQuery } from '../../src/audience/contacts/contacts.repository.js';
import { describeApi, type Harness, type TestWorkspace } from '../helpers/app.js';

/**
 * The contact list's search (`?q=`) through its index (migration 0037; docs/contacts.md "Search"): on SQLite the
 * trigram FTS5 table names the candidates, on PostgreSQL pg_trgm's indexes serve the LIKE; either way the answers are
 * the substring rule's, the index follows every write, and a workspace sees only its own contacts.
 */

async function importNdjson(h: Harness, ws: TestWorkspace, rows: Record<string, unknown>[]) {
  const res = await h.call(ws.key, 'POST', '/v1/contacts/imports', rows.map((r) => JSON.stringify(r)).join('\n'), {
    'content-type': 'application/x-ndjson',
  });
  expect(res.statusCode, res.body).toBe(201);
  expect(res.json()).toMatchObject({ status: 'COMPLETED', skipped: 0 });
}

/** The emails the list gives for `q` over all its pages, and the count's answer. */
async function search(h: Harness, key: string, q: string) {
  const emails: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await h.call(
      key,
      'GET',
      `/v1/contacts?q=${encodeURIComponent(q)}&limit=3${cursor ? `&cursor=${cursor}` : ''}`,
    );
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json() as { data: { email: string }[]; nextCursor: string | null };
    emails.push(...page.data.map((c) => c.email));
    cursor = page.nextCursor;
  } while (cursor);
  const count = await h.call(key, 'GET', `/v1/contacts/count?q=${encodeURIComponent(q)}`);
  expect(count.statusCode, count.body).toBe(200);
  return { emails: emails.sort(), count: (count.json() as { count: number }).count };
}

/** The rule (docs/contacts.md): a substring of the email, first or last name, letter case folded (every letter). */
function reference(people: { email: string; firstName?: string; lastName?: string }[], q: string): string[] {
  const fold = (s: string) => s.toLowerCase();
  const needle = fold(q);
  return people
    .filter((p) => [p.email, p.firstName ?? '', p.lastName ?? ''].some((v) => fold(v).includes(needle)))
    .map((p) => p.email)
    .sort();
}

describeApi('contacts search', (h) => {
  it('finds a piece of an email, a first or a last name in any case; % and _ match themselves', async () => {
    const ws = await h.workspace();
    const people = [
      { email: 'ada@lovelace.example', firstName: 'Ada', lastName: 'Lovelace' },
      { email: 'grace@navy.example', firstName: 'Grace', lastName: 'Hopper' },
      { email: 'alan_turing@bletchley.example', firstName: 'Alan', lastName: 'Turing' },
      { email: 'percent@example.com', firstName: '100%', lastName: 'Sure' },
      { email: 'quote@example.com', firstName: 'Said "hi"', lastName: "O'Neil" },
      { email: 'nobody@example.com' },
    ];
    await importNdjson(h, ws, people);
    for (const q of [
      'LOVE',
      'lace.ex',
      'hopper',
      'n_t',
      '_tu',
      '0%',
      '%',
      '"hi"',
      "o'ne",
      'example',
      'ada',
      'ad',
      'zzz-none',
      'a',
    ]) {
      const got = await search(h, ws.key, q);
      expect(got.emails, q).toEqual(reference(people, q));
      expect(got.count, q).toBe(got.emails.length);
    }
  });

  it('folds the case of every letter, not only ASCII ones (contract §18: a case-insensitive substring)', async () => {
    const ws = await h.workspace();
    const people = [
      { email: 'elodie@example.com', firstName: 'Élodie', lastName: 'Dupré' },
      { email: 'ozturk@example.com', firstName: 'Ayşe', lastName: 'ÖZTÜRK' },
      { email: 'strasse@example.com', firstName: 'Jürgen', lastName: 'Straße' },
      { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' },
    ];
    await importNdjson(h, ws, people);
    for (const q of [
      'élodie',
      'ÉLODIE',
      'Élo',
      'LODIE',
      'öztürk',
      'ÖzT',
      'türk',
      'DUPRÉ',
      'straße',
      'STRAßE',
      'ayşe',
      'ada',
    ]) {
      const got = await search(h, ws.key, q);
      expect(got.emails, q).toEqual(reference(people, q));
      expect(got.emails.length, q).toBeGreaterThan(0);
      expect(got.count, q).toBe(got.emails.length);
    }
  });

  it('answers what the substring rule answers, for any names and words (property)', async () => {
    const ws = await h.workspace();
    const char = fc.constantFrom(...'aAbBcC _%."\'-1');
    const text = fc.string({ unit: char, minLength: 1, maxLength: 8 });
    const people = fc.sample(fc.tuple(text, text), { numRuns: 40, seed: 31 }).map(([firstName, lastName], i) => ({
      email: `p${i}${firstName.replace(/[^a-z0-9]/gi, '').toLowerCase()}@ex.test`,
      firstName,
      lastName,
    }));
    const res = await h.call(ws.key, 'POST', '/v1/contacts/imports', people.map((r) => JSON.stringify(r)).join('\n'), {
      'content-type': 'application/x-ndjson',
    });
    expect(res.json(), res.body).toMatchObject({ status: 'COMPLETED', skipped: 0 });
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: char, minLength: 1, maxLength: 4 }), async (q) => {
        const got = await search(h, ws.key, q);
        expect(got.emails, q).toEqual(reference(people, q));
        expect(got.count, q).toBe(got.emails.length);
      }),
      { numRuns: 25, seed: 36 },
    );
  });

  it('words with a NUL or other control characters are answered, never a 500', async () => {
    const ws = await h.workspace();
    await importNdjson(h, ws, [{ email: 'ctrl@example.com', firstName: 'Control' }]);
    for (const q of ['con\u0000trol', 'abc\u0000', '\u0001\u0002\u0003', '"quoted" words']) {
      const list = await h.call(ws.key, 'GET', `/v1/contacts?q=${encodeURIComponent(q)}`);
      const count = await h.call(ws.key, 'GET', `/v1/contacts/count?q=${encodeURIComponent(q)}`);
      for (const res of [list, count]) {
        expect(res.statusCode, `${JSON.stringify(q)}: ${res.body}`).toBeLessThan(500);
        if (res.statusCode >= 400) expect(res.headers['content-type']).toContain('application/problem+json');
      }
    }
  });

  it('follows every write: a renamed contact under its new name only, a deleted one nowhere', async () => {
    const ws = await h.workspace();
    await importNdjson(h, ws, [
      { email: 'mary@example.com', firstName: 'Mary', lastName: 'Somerville' },
      { email: 'emmy@example.com', firstName: 'Emmy', lastName: 'Noether' },
    ]);
    const mary = (await h.call(ws.key, 'GET', '/v1/contacts?email=mary@example.com')).json().data[0];
    const put = await h.call(ws.key, 'PUT', `/v1/contacts/${mary.id}`, { firstName: 'Marie', lastName: 'Curie' });
    expect(put.statusCode, put.body).toBe(200);
    expect(await search(h, ws.key, 'somer')).toEqual({ emails: [], count: 0 });
    expect(await search(h, ws.key, 'curie')).toEqual({ emails: ['mary@example.com'], count: 1 });
    // A status change leaves the names (and the index) alone.
    await h.call(ws.key, 'PUT', `/v1/contacts/${mary.id}`, { status: 'UNSUBSCRIBED' });
    expect(await search(h, ws.key, 'curie')).toEqual({ emails: ['mary@example.com'], count: 1 });
    // An import that changes a name.
    await importNdjson(h, ws, [{ email: 'emmy@example.com', lastName: 'Noether-Hilbert' }]);
    expect(await search(h, ws.key, 'hilbert')).toEqual({ emails: ['emmy@example.com'], count: 1 });
    expect((await h.call(ws.key, 'DELETE', `/v1/contacts/${mary.id}`)).statusCode).toBe(204);
    expect(await search(h, ws.key, 'curie')).toEqual({ emails: [], count: 0 });
    expect(await search(h, ws.key, 'noether')).toEqual({ emails: ['emmy@example.com'], count: 1 });
  });

  it("a workspace's search never lists nor counts another's contacts", async () => {
    const a = await h.workspace();
    const b = await h.workspace();
    await importNdjson(h, a, [{ email: 'kovalevskaya@a.example', firstName: 'Sofia' }]);
    await importNdjson(h, b, [
      { email: 'kovalevskaya@b.example', firstName: 'Sofia' },
      { email: 'sofia2@b.example', firstName: 'Sofia' },
    ]);
    expect(await search(h, a.key, 'sofia')).toEqual({ emails: ['kovalevskaya@a.example'], count: 1 });
    expect(await search(h, b.key, 'kovalev')).toEqual({ emails: ['kovalevskaya@b.example'], count: 1 });
  });

  it('has its index: SQLite reads the candidates by rowid, and keeps them through VACUUM; PostgreSQL has pg_trgm', async () => {
    const ws = await h.workspace();
    await importNdjson(
      h,
      ws,
      Array.from({ length: 30 }, (_, i) => ({ email: `reader${i}@example.com`, lastName: `Surname${i}` })),
    );
    if (h.db.dialect === 'postgres') {
      const { rows } = await sql<{ name: string }>`select indexname as name from pg_indexes
        where schemaname = current_schema() and indexname like 'contacts_search_%' order by 1`.execute(h.db.kysely);
      expect(rows.map((r) => r.name)).toEqual([
        'contacts_search_email',
        'contacts_search_first_name',
        'contacts_search_last_name',
      ]);
      return;
    }
    for (const beforeId of [undefined, 'ct_7ZZZZZZZZZZZZZZZZZZZZZZZZZ']) {
      const page = contactsPageQuery(h.db.kysely, ws.id, { q: 'surname12', limit: 50, beforeId }, [1, 2, 3]).compile();
      const plan = await h.db.kysely.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${page.sql}`, [...page.parameters]),
      );
      expect(plan.rows.map((r) => r.detail).join('\n')).toMatch(
        /^SEARCH contacts USING INTEGER PRIMARY KEY \(rowid=\?\)/m,
      );
    }
    // Some rows deleted, the file vacuumed (rowids of a table without an INTEGER PRIMARY KEY may be renumbered by it):
    // every contact left is still found by its own name.
    for (const i of [0, 5, 7, 20]) {
      const c = (await h.call(ws.key, 'GET', `/v1/contacts?email=reader${i}@example.com`)).json().data[0];
      expect((await h.call(ws.key, 'DELETE', `/v1/contacts/${c.id}`)).statusCode).toBe(204);
    }
    await sql`vacuum`.execute(h.db.kysely);
    const left = Array.from({ length: 30 }, (_, i) => i).filter((i) => ![0, 5, 7, 20].includes(i));
    for (const q of ['surname1', 'surname12', 'surname29', 'surname2'])
      expect(await search(h, ws.key, q)).toEqual({
        emails: left
          .filter((i) => `surname${i}`.includes(q))
          .map((i) => `reader${i}@example.com`)
          .sort(),
        count: left.filter((i) => `surname${i}`.includes(q)).length,
      });
  });
});
