import fc from 'fast-check';
import { beforeAll, expect, it } from 'vitest';
import type { ContactStatus } from '../../src/db/schema.js';
import { DomainError } from '../../src/errors/errors.js';
import { newId } from '../../src/lib/ids.js';
import { audienceQuery } from '../../src/audience/segments/audience.js';
import { describeApi, type Harness, type TestWorkspace } from '../helpers/app.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const SEGMENT_KEYS = ['createdAt', 'filter', 'id', 'name', 'updatedAt'];
const CONTACT_KEYS = ['email', 'firstName', 'id', 'lastName', 'status'];
const STATUSES: ContactStatus[] = ['SUBSCRIBED', 'PENDING', 'UNSUBSCRIBED', 'BOUNCED', 'COMPLAINED'];

interface SeedContact {
  email: string;
  firstName?: string | null;
  lastName?: string | null;
  status?: ContactStatus;
  properties?: Record<string, unknown>;
  createdAt?: string;
}

/** Inserts contacts directly (the contacts API is another feature); ids in insertion order, so later = newer. */
async function seed(h: Harness, ws: TestWorkspace, contacts: SeedContact[]): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  if (contacts.length === 0) return ids;
  const now = new Date().toISOString();
  await h.db.kysely
    .insertInto('contacts')
    .values(
      contacts.map((c) => {
        const id = newId('ct');
        ids[c.email] = id;
        return {
          id,
          workspace_id: ws.id,
          email: c.email,
          first_name: c.firstName ?? null,
          last_name: c.lastName ?? null,
          properties: JSON.stringify(c.properties ?? {}),
          status: c.status ?? 'SUBSCRIBED',
          created_at: c.createdAt ?? now,
          updated_at: now,
        };
      }),
    )
    .execute();
  return ids;
}

async function topic(h: Harness, ws: TestWorkspace, defaultSubscription: 'OPT_IN' | 'OPT_OUT'): Promise<string> {
  const id = newId('topic');
  const now = new Date().toISOString();
  await h.db.kysely
    .insertInto('topics')
    .values({
      id,
      workspace_id: ws.id,
      name: `Topic ${defaultSubscription}`,
      default_subscription: defaultSubscription,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

async function choose(
  h: Harness,
  ws: TestWorkspace,
  contactId: string,
  topicId: string,
  subscribed: boolean,
): Promise<void> {
  await h.db.kysely
    .insertInto('contact_topics')
    .values({
      workspace_id: ws.id,
      contact_id: contactId,
      topic_id: topicId,
      subscribed: subscribed ? 1 : 0,
      updated_at: new Date().toISOString(),
    })
    .execute();
}

async function createSegment(h: Harness, ws: TestWorkspace, filter: unknown, name = 'Segment') {
  const res = await h.call(ws.key, 'POST', '/v1/segments', { name, filter });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** The local parts of the emails a filter matches (via preview; fixtures stay at 10 contacts or fewer). */
async function matching(h: Harness, ws: TestWorkspace, filter: unknown): Promise<string[]> {
  const res = await h.call(ws.key, 'POST', '/v1/segments/preview', { filter });
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json();
  expect(body.sample.length).toBe(body.count);
  return body.sample.map((c: { email: string }) => c.email.split('@')[0]).sort();
}

const segmentRows = (h: Harness, ws: TestWorkspace) =>
  h.db.kysely.selectFrom('segments').selectAll().where('workspace_id', '=', ws.id).orderBy('id').execute();

// ---------------------------------------------------------------------------------------------------
// Every operator on every field kind, against one fixture of five contacts.
// ---------------------------------------------------------------------------------------------------

const FIXTURE: SeedContact[] = [
  {
    email: 'ann@example.com',
    firstName: 'Ann',
    lastName: 'Lee',
    status: 'SUBSCRIBED',
    createdAt: '2026-01-01T00:00:00.000Z',
    properties: {
      age: 30,
      plan: 'pro',
      vip: true,
      score: 2.5,
      city: 'Berlin',
      tags: ['a'],
      note: null,
      code: '30',
      big: 1e21,
    },
  },
  {
    email: 'bob@example.org',
    firstName: 'Bob',
    lastName: null,
    status: 'UNSUBSCRIBED',
    createdAt: '2026-02-01T00:00:00.000Z',
    properties: { age: 45, plan: 'free', vip: false, city: 'berlin' },
  },
  {
    email: 'cat@test.example.com',
    firstName: null,
    lastName: 'Smith',
    status: 'PENDING',
    createdAt: '2026-03-01T00:00:00.000Z',
    properties: { age: '30', plan: 'Pro', code: 30 },
  },
  {
    email: 'dan@example.com',
    firstName: 'Dan',
    lastName: 'Lee',
    status: 'BOUNCED',
    createdAt: '2026-04-01T12:00:00.000Z',
    properties: {},
  },
  {
    email: 'eve_99@sample.net',
    firstName: 'Éve',
    lastName: "O'Brien",
    status: 'COMPLAINED',
    createdAt: '2026-05-01T00:00:00.000Z',
    properties: { age: 29.5, plan: 'PRO-plus', obj: { a: 1 }, tags: '["a"]' },
  },
];
const ALL = ['ann', 'bob', 'cat', 'dan', 'eve_99'];
const but = (...names: string[]) => ALL.filter((n) => !names.includes(n));
const f = (field: string, op: string, value?: unknown) => (value === undefined ? { field, op } : { field, op, value });

const OPERATOR_CASES: [string, unknown, string[]][] = [
  // email: compared lower-cased, like stored emails
  ['email eq (any case)', f('email', 'eq', 'ANN@Example.COM'), ['ann']],
  ['email neq', f('email', 'neq', 'ann@example.com'), but('ann')],
  ['email contains', f('email', 'contains', 'EXAMPLE'), ['ann', 'bob', 'cat', 'dan']],
  ['email startsWith', f('email', 'startsWith', 'Da'), ['dan']],
  ['email endsWith', f('email', 'endsWith', '.COM'), ['ann', 'cat', 'dan']],
  ['email in', f('email', 'in', ['bob@example.org', 'EVE_99@sample.net', 'nobody@example.com']), ['bob', 'eve_99']],
  ['email gt', f('email', 'gt', 'cat@test.example.com'), ['dan', 'eve_99']],
  ['email gte', f('email', 'gte', 'CAT@test.example.com'), ['cat', 'dan', 'eve_99']],
  ['email lt', f('email', 'lt', 'bob@example.org'), ['ann']],
  ['email lte', f('email', 'lte', 'bob@example.org'), ['ann', 'bob']],
  ['email exists', f('email', 'exists'), ALL],
  ['email notExists', f('email', 'notExists'), []],
  ['email contains _ (no LIKE wildcard)', f('email', 'contains', '_'), ['eve_99']],
  ['email contains % (no LIKE wildcard)', f('email', 'contains', '%'), []],
  ['email startsWith _ (no LIKE wildcard)', f('email', 'startsWith', '_'), []],
  // firstName: eq is exact; contains/startsWith/endsWith ignore ASCII case only
  ['firstName eq', f('firstName', 'eq', 'Ann'), ['ann']],
  ['firstName eq is case-sensitive', f('firstName', 'eq', 'ann'), []],
  ['firstName neq (null included)', f('firstName', 'neq', 'Ann'), but('ann')],
  ['firstName contains', f('firstName', 'contains', 'AN'), ['ann', 'dan']],
  ['firstName contains non-ASCII as is', f('firstName', 'contains', 'Év'), ['eve_99']],
  ['firstName contains: no case folding beyond ASCII', f('firstName', 'contains', 'év'), []],
  ['firstName startsWith', f('firstName', 'startsWith', 'b'), ['bob']],
  ['firstName startsWith empty', f('firstName', 'startsWith', ''), but('cat')],
  ['firstName endsWith', f('firstName', 'endsWith', 'N'), ['ann', 'dan']],
  ['firstName endsWith longer than the value', f('firstName', 'endsWith', 'xxann'), []],
  ['firstName in', f('firstName', 'in', ['Bob', 'Dan', 'nobody']), ['bob', 'dan']],
  ['firstName gt (code point order, É after B)', f('firstName', 'gt', 'Bob'), ['dan', 'eve_99']],
  ['firstName gte', f('firstName', 'gte', 'Bob'), ['bob', 'dan', 'eve_99']],
  ['firstName lt', f('firstName', 'lt', 'Bob'), ['ann']],
  ['firstName lte', f('firstName', 'lte', 'Bob'), ['ann', 'bob']],
  ['firstName exists', f('firstName', 'exists'), but('cat')],
  ['firstName notExists', f('firstName', 'notExists'), ['cat']],
  // lastName
  ['lastName eq with a quote', f('lastName', 'eq', "O'Brien"), ['eve_99']],
  ['lastName contains a quote', f('lastName', 'contains', "'"), ['eve_99']],
  ['lastName neq (null included)', f('lastName', 'neq', 'Lee'), ['bob', 'cat', 'eve_99']],
  ['lastName endsWith', f('lastName', 'endsWith', 'EE'), ['ann', 'dan']],
  ['lastName in', f('lastName', 'in', ['Lee']), ['ann', 'dan']],
  ['lastName gte', f('lastName', 'gte', 'Smith'), ['cat']],
  ['lastName lt', f('lastName', 'lt', 'M'), ['ann', 'dan']],
  ['lastName exists', f('lastName', 'exists'), but('bob')],
  ['lastName notExists', f('lastName', 'notExists'), ['bob']],
  // status
  ['status eq', f('status', 'eq', 'SUBSCRIBED'), ['ann']],
  ['status neq', f('status', 'neq', 'SUBSCRIBED'), but('ann')],
  ['status in', f('status', 'in', ['PENDING', 'BOUNCED']), ['cat', 'dan']],
  ['status contains', f('status', 'contains', 'sub'), ['ann', 'bob']],
  ['status startsWith', f('status', 'startsWith', 'un'), ['bob']],
  ['status endsWith', f('status', 'endsWith', 'ED'), ['ann', 'bob', 'dan', 'eve_99']],
  ['status gt', f('status', 'gt', 'PENDING'), ['ann', 'bob']],
  ['status lt', f('status', 'lt', 'C'), ['dan']],
  ['status exists', f('status', 'exists'), ALL],
  // createdAt: chronological, any offset
  ['createdAt eq', f('createdAt', 'eq', '2026-01-01T00:00:00Z'), ['ann']],
  ['createdAt eq with an offset', f('createdAt', 'eq', '2026-01-01T01:00:00+01:00'), ['ann']],
  ['createdAt neq', f('createdAt', 'neq', '2026-01-01T00:00:00.000Z'), but('ann')],
  ['createdAt gt', f('createdAt', 'gt', '2026-02-01T00:00:00.000Z'), ['cat', 'dan', 'eve_99']],
  ['createdAt gte', f('createdAt', 'gte', '2026-02-01T00:00:00.000Z'), ['bob', 'cat', 'dan', 'eve_99']],
  ['createdAt lt', f('createdAt', 'lt', '2026-04-01T12:00:00.000Z'), ['ann', 'bob', 'cat']],
  ['createdAt lte', f('createdAt', 'lte', '2026-04-01T12:00:00.000Z'), ['ann', 'bob', 'cat', 'dan']],
  ['createdAt lt with an offset', f('createdAt', 'lt', '2026-04-01T13:00:00+02:00'), ['ann', 'bob', 'cat']],
  ['createdAt gt with a negative offset', f('createdAt', 'gt', '2026-04-01T07:59:59.999-04:00'), ['dan', 'eve_99']],
  ['createdAt in', f('createdAt', 'in', ['2026-02-01T00:00:00Z', '2026-05-01T02:00:00+02:00']), ['bob', 'eve_99']],
  ['createdAt exists', f('createdAt', 'exists'), ALL],
  ['createdAt notExists', f('createdAt', 'notExists'), []],
  // properties: typed comparisons
  ['number eq number', f('properties.age', 'eq', 30), ['ann']],
  ['string eq string', f('properties.age', 'eq', '30'), ['cat']],
  ['number eq (other property)', f('properties.code', 'eq', 30), ['cat']],
  ['string eq (other property)', f('properties.code', 'eq', '30'), ['ann']],
  ['fraction eq', f('properties.score', 'eq', 2.5), ['ann']],
  ['big number eq', f('properties.big', 'eq', 1e21), ['ann']],
  ['big number gt', f('properties.big', 'gt', 1e20), ['ann']],
  ['number neq (other types and missing included)', f('properties.age', 'neq', 30), but('ann')],
  ['number gt', f('properties.age', 'gt', 29), ['ann', 'bob', 'eve_99']],
  ['number gte', f('properties.age', 'gte', 30), ['ann', 'bob']],
  ['number lt', f('properties.age', 'lt', 30), ['eve_99']],
  ['number lte', f('properties.age', 'lte', 30), ['ann', 'eve_99']],
  ['string gt compares strings only', f('properties.age', 'gt', '29'), ['cat']],
  ['number in', f('properties.age', 'in', [30, '45']), ['ann']],
  ['mixed in', f('properties.age', 'in', [45, '30']), ['bob', 'cat']],
  ['contains is for strings only', f('properties.age', 'contains', '3'), ['cat']],
  ['empty endsWith matches any string value', f('properties.age', 'endsWith', ''), ['cat']],
  ['empty contains matches any string value', f('properties.plan', 'contains', ''), ['ann', 'bob', 'cat', 'eve_99']],
  ['age exists', f('properties.age', 'exists'), but('dan')],
  ['age notExists', f('properties.age', 'notExists'), ['dan']],
  ['boolean eq true', f('properties.vip', 'eq', true), ['ann']],
  ['boolean eq false', f('properties.vip', 'eq', false), ['bob']],
  ['boolean neq true', f('properties.vip', 'neq', true), but('ann')],
  ['boolean in', f('properties.vip', 'in', [true]), ['ann']],
  ['1 is not true', f('properties.vip', 'eq', 1), []],
  ['1 in is not true', f('properties.vip', 'in', [1, 0]), []],
  ['"true" is not true', f('properties.vip', 'eq', 'true'), []],
  ['vip exists (false is a value)', f('properties.vip', 'exists'), ['ann', 'bob']],
  ['string eq is case-sensitive', f('properties.plan', 'eq', 'pro'), ['ann']],
  ['string contains ignores ASCII case', f('properties.plan', 'contains', 'PRO'), ['ann', 'cat', 'eve_99']],
  ['string startsWith', f('properties.plan', 'startsWith', 'pro'), ['ann', 'cat', 'eve_99']],
  ['string endsWith', f('properties.plan', 'endsWith', 'PLUS'), ['eve_99']],
  ['string endsWith (2)', f('properties.plan', 'endsWith', 'o'), ['ann', 'cat']],
  ['string gt is code point order', f('properties.plan', 'gt', 'free'), ['ann']],
  ['string lt is code point order (upper case first)', f('properties.plan', 'lt', 'free'), ['cat', 'eve_99']],
  ['string in', f('properties.plan', 'in', ['free', 'Pro']), ['bob', 'cat']],
  ['city eq', f('properties.city', 'eq', 'berlin'), ['bob']],
  ['city contains', f('properties.city', 'contains', 'BERLIN'), ['ann', 'bob']],
  ['null property does not exist', f('properties.note', 'exists'), []],
  ['null property notExists', f('properties.note', 'notExists'), ALL],
  ['null property eq "null"', f('properties.note', 'eq', 'null'), []],
  ['array property exists', f('properties.tags', 'exists'), ['ann', 'eve_99']],
  ['an array is not a string', f('properties.tags', 'eq', '["a"]'), ['eve_99']],
  ['an array is not in a list of strings', f('properties.tags', 'in', ['["a"]', 'a']), ['eve_99']],
  ['contains does not search arrays', f('properties.tags', 'contains', 'a'), ['eve_99']],
  ['an object is not a string', f('properties.obj', 'eq', '{"a":1}'), []],
  ['object exists', f('properties.obj', 'exists'), ['eve_99']],
  ['missing property eq', f('properties.nothing', 'eq', 'x'), []],
  ['missing property neq', f('properties.nothing', 'neq', 'x'), ALL],
  ['missing property gt', f('properties.nothing', 'gt', 0), []],
  ['missing property notExists', f('properties.nothing', 'notExists'), ALL],
  ['a key named like a method', f('properties.constructor', 'exists'), []],
  // groups
  ['empty all matches everyone', { all: [] }, ALL],
  ['empty any matches no one', { any: [] }, []],
  ['all with an empty any', { all: [f('status', 'eq', 'SUBSCRIBED'), { any: [] }] }, []],
  ['any with an empty all', { any: [{ all: [] }, f('status', 'eq', 'SUBSCRIBED')] }, ALL],
  ['all', { all: [f('properties.plan', 'contains', 'pro'), f('properties.age', 'gte', 30)] }, ['ann']],
  ['any', { any: [f('firstName', 'notExists'), f('lastName', 'notExists')] }, ['bob', 'cat']],
  [
    'nested any of alls',
    {
      any: [
        { all: [f('firstName', 'exists'), f('properties.age', 'gt', 40)] },
        { all: [f('lastName', 'eq', 'Lee'), f('status', 'eq', 'BOUNCED')] },
      ],
    },
    ['bob', 'dan'],
  ],
  [
    'nested all of any',
    {
      all: [
        { any: [f('properties.plan', 'contains', 'pro'), f('properties.vip', 'eq', false)] },
        f('status', 'neq', 'UNSUBSCRIBED'),
      ],
    },
    ['ann', 'cat', 'eve_99'],
  ],
  [
    '8 levels',
    [0, 1, 2, 3, 4, 5, 6].reduce<unknown>(
      (acc, i) => (i % 2 ? { any: [acc] } : { all: [acc] }),
      f('email', 'startsWith', 'a'),
    ),
    ['ann'],
  ],
  // injection attempts in values are inert
  ['quote in email eq', f('email', 'eq', "' OR 1=1 --"), []],
  ['quote in a property value', f('properties.plan', 'eq', "pro' OR '1'='1"), []],
  ['statement in an in list', f('properties.plan', 'in', ["x'); DROP TABLE contacts; --"]), []],
  ['quote in contains', f('lastName', 'contains', "') OR ('1'='1"), []],
  ['JSON path in a value', f('properties.plan', 'contains', '$.age'), []],
];

describeApi('segments: filter semantics', (h) => {
  let ws: TestWorkspace;
  beforeAll(async () => {
    ws = await h.workspace('Operators');
    await seed(h, ws, FIXTURE);
    // Noise in another workspace: never matched.
    const other = await h.workspace('Other');
    await seed(h, other, FIXTURE);
  });

  it.each(OPERATOR_CASES)('%s', async (_label, filter, expected) => {
    expect(await matching(h, ws, filter)).toEqual([...expected].sort());
  });

  it('injection attempts leave the tables alone', async () => {
    expect(
      await h.db.kysely.selectFrom('contacts').select('id').where('workspace_id', '=', ws.id).execute(),
    ).toHaveLength(5);
  });

  it.each([
    "properties.plan') OR 1=1 --",
    'properties.plan"',
    "properties.a'b",
    'properties.$.age',
    'properties.plan; drop table contacts',
  ])('an injection attempt in a property key is rejected: %j', async (field) => {
    const res = await h.call(ws.key, 'POST', '/v1/segments/preview', { filter: { field, op: 'exists' } });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/filter/field' }] });
  });

  it('an injection attempt as a topic id is an unknown topic', async () => {
    const res = await h.call(ws.key, 'POST', '/v1/segments/preview', {
      filter: { topic: "x' OR 1=1 --", subscribed: true },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ code: 'invalid_reference', errors: [{ path: '/filter/topic' }] });
  });
});

describeApi('segments: topic conditions', (h) => {
  it('use the explicit choice, else the topic default (OPT_IN: subscribed, OPT_OUT: not)', async () => {
    const ws = await h.workspace();
    const tIn = await topic(h, ws, 'OPT_IN');
    const tOut = await topic(h, ws, 'OPT_OUT');
    const ids = await seed(
      h,
      ws,
      ['p', 'q', 'r', 's'].map((n) => ({ email: `${n}@example.com` })),
    );
    await choose(h, ws, ids['q@example.com']!, tIn, false);
    await choose(h, ws, ids['q@example.com']!, tOut, true);
    await choose(h, ws, ids['r@example.com']!, tIn, true);
    await choose(h, ws, ids['r@example.com']!, tOut, false);
    await choose(h, ws, ids['s@example.com']!, tOut, true);

    expect(await matching(h, ws, { topic: tIn, subscribed: true })).toEqual(['p', 'r', 's']);
    expect(await matching(h, ws, { topic: tIn, subscribed: false })).toEqual(['q']);
    expect(await matching(h, ws, { topic: tOut, subscribed: true })).toEqual(['q', 's']);
    expect(await matching(h, ws, { topic: tOut, subscribed: false })).toEqual(['p', 'r']);
    expect(
      await matching(h, ws, {
        all: [
          { topic: tIn, subscribed: true },
          { topic: tOut, subscribed: true },
        ],
      }),
    ).toEqual(['s']);
    expect(
      await matching(h, ws, {
        any: [
          { topic: tIn, subscribed: false },
          { topic: tOut, subscribed: false },
        ],
      }),
    ).toEqual(['p', 'q', 'r']);

    // A topic deleted after the segment was saved: the condition matches no one, either way.
    const seg = await createSegment(h, ws, {
      any: [
        { topic: tOut, subscribed: true },
        { topic: tOut, subscribed: false },
      ],
    });
    expect((await h.call(ws.key, 'GET', `/v1/segments/${seg.id}/count`)).json()).toEqual({ count: 4, subscribed: 4 });
    await h.db.kysely.deleteFrom('topics').where('id', '=', tOut).execute();
    expect((await h.call(ws.key, 'GET', `/v1/segments/${seg.id}/count`)).json()).toEqual({ count: 0, subscribed: 0 });
    expect((await h.call(ws.key, 'GET', `/v1/segments/${seg.id}`)).json().filter).toEqual(seg.filter);
  });

  it("an unknown topic, or another workspace's, is 422 invalid_reference with its path, and nothing is saved", async () => {
    const ws = await h.workspace();
    const other = await h.workspace();
    const mine = await topic(h, ws, 'OPT_IN');
    const theirs = await topic(h, other, 'OPT_IN');
    const filter = {
      all: [
        { topic: mine, subscribed: true },
        {
          any: [
            { topic: theirs, subscribed: true },
            { topic: 'topic_nope', subscribed: false },
          ],
        },
      ],
    };
    for (const [method, url, body] of [
      ['POST', '/v1/segments', { name: 'x', filter }],
      ['POST', '/v1/segments/preview', { filter }],
    ] as const) {
      const res = await h.call(ws.key, method, url, body);
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({
        code: 'invalid_reference',
        errors: [{ path: '/filter/all/1/any/0/topic' }, { path: '/filter/all/1/any/1/topic' }],
      });
    }
    const seg = await createSegment(h, ws, { topic: mine, subscribed: true });
    const res = await h.call(ws.key, 'PUT', `/v1/segments/${seg.id}`, {
      name: 'changed',
      filter: { topic: theirs, subscribed: true },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ code: 'invalid_reference', errors: [{ path: '/filter/topic' }] });
    expect((await segmentRows(h, ws)).map((r) => r.name)).toEqual(['Segment']);
    expect(JSON.parse((await segmentRows(h, ws))[0]!.filter)).toEqual({ topic: mine, subscribed: true });
  });
});

// ---------------------------------------------------------------------------------------------------
// The API
// ---------------------------------------------------------------------------------------------------

describeApi('segments API', (h) => {
  it('POST creates a segment (201, Location), GET returns it', async () => {
    const ws = await h.workspace();
    const filter = { all: [{ field: 'properties.plan', op: 'eq', value: 'pro' }, { any: [] }] };
    const res = await h.call(ws.key, 'POST', '/v1/segments', { name: 'Pro plan', filter });
    expect(res.statusCode).toBe(201);
    const seg = res.json();
    expect(Object.keys(seg).sort()).toEqual(SEGMENT_KEYS);
    expect(res.headers.location).toBe(`/v1/segments/${seg.id}`);
    expect(seg).toMatchObject({ name: 'Pro plan', filter });
    expect(seg.id).toMatch(/^seg_[0-9A-Z]{26}$/);
    expect(seg.createdAt).toMatch(ISO);
    expect(seg.updatedAt).toBe(seg.createdAt);
    const got = await h.call(ws.key, 'GET', `/v1/segments/${seg.id}`);
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(seg);
  });

  it('lists newest first with cursor pagination', async () => {
    const ws = await h.workspace();
    const made = [];
    for (const name of ['a', 'b', 'c']) made.push(await createSegment(h, ws, { all: [] }, name));
    const first = (await h.call(ws.key, 'GET', '/v1/segments?limit=2')).json();
    expect(first.data.map((s: { name: string }) => s.name)).toEqual(['c', 'b']);
    expect(first.data[0]).toEqual(made[2]);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = (await h.call(ws.key, 'GET', `/v1/segments?limit=2&cursor=${first.nextCursor}`)).json();
    expect(second).toEqual({ data: [made[0]], nextCursor: null });
    expect((await h.call(ws.key, 'GET', '/v1/segments')).json().data).toHaveLength(3);
    expect((await h.call(ws.key, 'GET', '/v1/segments?limit=0')).statusCode).toBe(422);
    expect((await h.call(ws.key, 'GET', '/v1/segments?cursor=nope')).json()).toMatchObject({
      code: 'validation_failed',
      errors: [{ path: '/query/cursor' }],
    });
  });

  it('PUT is partial: omitted fields unchanged, a filter given replaces the stored one, updatedAt refreshed', async () => {
    const ws = await h.workspace();
    const seg = await createSegment(
      h,
      ws,
      {
        all: [
          { field: 'email', op: 'exists' },
          { field: 'firstName', op: 'exists' },
        ],
      },
      'Old',
    );
    await new Promise((r) => setTimeout(r, 5));
    const renamed = await h.call(ws.key, 'PUT', `/v1/segments/${seg.id}`, { name: 'New', id: seg.id });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json()).toMatchObject({ id: seg.id, name: 'New', filter: seg.filter, createdAt: seg.createdAt });
    expect(renamed.json().updatedAt > seg.updatedAt).toBe(true);
    const refiltered = (
      await h.call(ws.key, 'PUT', `/v1/segments/${seg.id}`, {
        filter: { any: [{ field: 'status', op: 'eq', value: 'PENDING' }] },
      })
    ).json();
    expect(refiltered).toMatchObject({
      name: 'New',
      filter: { any: [{ field: 'status', op: 'eq', value: 'PENDING' }] },
    });
    const empty = await h.call(ws.key, 'PUT', `/v1/segments/${seg.id}`, {});
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toMatchObject({ name: 'New', filter: refiltered.filter });
    expect((await h.call(ws.key, 'GET', `/v1/segments/${seg.id}`)).json()).toEqual(empty.json());
  });

  it.each([
    ['0 characters', '', 422],
    ['1 character', 'a', 201],
    ['200 characters', 'a'.repeat(200), 201],
    ['201 characters', 'a'.repeat(201), 422],
    ['200 emoji', '😀'.repeat(200), 201],
    ['201 emoji', '😀'.repeat(201), 422],
  ])('name of %s', async (_label, name, status) => {
    const ws = await h.workspace();
    const res = await h.call(ws.key, 'POST', '/v1/segments', { name, filter: { all: [] } });
    expect(res.statusCode).toBe(status);
    if (status === 422) expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/name' }] });
    const seg = await createSegment(h, ws, { all: [] }, 'Before');
    const put = await h.call(ws.key, 'PUT', `/v1/segments/${seg.id}`, { name });
    expect(put.statusCode).toBe(status === 201 ? 200 : 422);
    expect((await h.call(ws.key, 'GET', `/v1/segments/${seg.id}`)).json().name).toBe(status === 201 ? name : 'Before');
  });

  it.each([
    ['POST without name and filter', 'POST', {}, ['/filter', '/name']],
    [
      'POST with an unknown and a read-only field',
      'POST',
      { name: 'x', filter: { all: [] }, extra: 1, createdAt: '2026-01-01T00:00:00.000Z' },
      ['/createdAt', '/extra'],
    ],
    [
      'POST with a bad name and a bad filter: every violation',
      'POST',
      { name: '', filter: { all: [{ field: 'phone', op: 'eq', value: 'x' }, { topic: 't' }] } },
      ['/filter/all/0/field', '/filter/all/1/subscribed', '/name'],
    ],
    ['POST with a null filter', 'POST', { name: 'x', filter: null }, ['/filter']],
    ['POST with an array body', 'POST', [], ['/']],
    ['PUT with null name', 'PUT', { name: null }, ['/name']],
    ['PUT with null filter', 'PUT', { filter: null }, ['/filter']],
    ['PUT with another id', 'PUT', { id: 'seg_01JD0000000000000000000000' }, ['/id']],
    [
      'PUT with an unknown field and a bad filter',
      'PUT',
      { nope: 1, filter: { any: [{ field: 'createdAt', op: 'gt', value: 'today' }] } },
      ['/filter/any/0/value', '/nope'],
    ],
    [
      'PUT with a filter 9 levels deep',
      'PUT',
      { filter: { all: [{ all: [{ all: [{ all: [{ all: [{ all: [{ all: [{ all: [{ all: [] }] }] }] }] }] }] }] }] } },
      [`/filter${'/all/0'.repeat(8)}`],
    ],
  ])('%s → 422 listing %j, nothing changed', async (_label, method, body, paths) => {
    const ws = await h.workspace();
    const seg = await createSegment(h, ws, { all: [] }, 'Keep');
    const before = await segmentRows(h, ws);
    const res = await h.call(
      ws.key,
      method as 'POST' | 'PUT',
      method === 'POST' ? '/v1/segments' : `/v1/segments/${seg.id}`,
      body,
    );
    expect(res.statusCode).toBe(422);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json().code).toBe('validation_failed');
    expect(
      res
        .json()
        .errors.map((e: { path: string }) => e.path)
        .sort(),
    ).toEqual(paths);
    expect(await segmentRows(h, ws)).toEqual(before);
  });

  it('a filter nested 50,000 levels deep, or with too many conditions, is a plain 422', async () => {
    const ws = await h.workspace();
    // Too deep for any body: refused before it is parsed (http/input.ts).
    const n = 50_000;
    const deep = `{"name":"deep","filter":${'{"any":['.repeat(n)}${']}'.repeat(n)}}`;
    for (const headers of [{}, { 'idempotency-key': 'deep-1' }] as Record<string, string>[]) {
      const res = await h.call(ws.key, 'POST', '/v1/segments', deep, headers);
      expect(res.statusCode).toBe(422);
      expect(res.json().errors).toEqual([
        { path: `/filter${'/any/0'.repeat(31)}/any`, message: 'nests deeper than 64 levels of arrays and objects' },
      ]);
    }
    // Deeper than the filter grammar allows, but a body the input layer takes: the grammar's own error.
    const nine = `{"name":"deep","filter":${'{"any":['.repeat(20)}${']}'.repeat(20)}}`;
    expect((await h.call(ws.key, 'POST', '/v1/segments', nine)).json().errors).toEqual([
      { path: `/filter${'/any/0'.repeat(8)}`, message: 'nests deeper than 8 levels' },
    ]);
    const wide = { all: Array.from({ length: 200 }, () => ({ field: 'email', op: 'exists' })) };
    expect((await h.call(ws.key, 'POST', '/v1/segments/preview', { filter: wide })).json()).toMatchObject({
      code: 'validation_failed',
      errors: [{ path: '/filter' }],
    });
    expect(
      (await h.call(ws.key, 'POST', '/v1/segments/preview', { filter: { all: wide.all.slice(1) } })).statusCode,
    ).toBe(200);
    expect(await segmentRows(h, ws)).toEqual([]);
  });

  it('DELETE answers 204 and the segment is gone', async () => {
    const ws = await h.workspace();
    const seg = await createSegment(h, ws, { all: [] });
    const res = await h.call(ws.key, 'DELETE', `/v1/segments/${seg.id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await h.call(ws.key, 'GET', `/v1/segments/${seg.id}`)).statusCode).toBe(404);
    expect((await h.call(ws.key, 'DELETE', `/v1/segments/${seg.id}`)).statusCode).toBe(404);
  });

  it('DELETE of a segment a broadcast uses is 409 resource_in_use, and the segment stays', async () => {
    const ws = await h.workspace();
    const seg = await createSegment(h, ws, { all: [] });
    const now = new Date().toISOString();
    const bc = newId('bc');
    await h.db.kysely
      .insertInto('broadcasts')
      .values({
        id: bc,
        workspace_id: ws.id,
        name: 'News',
        status: 'DRAFT',
        from_address: null,
        reply_to: null,
        subject: null,
        html: null,
        text: null,
        preview_text: null,
        editor_content: null,
        topic_id: null,
        segment_id: seg.id,
        send_at: null,
        created_at: now,
        updated_at: now,
        sent_at: null,
      })
      .execute();
    const res = await h.call(ws.key, 'DELETE', `/v1/segments/${seg.id}`);
    expect(res.statusCode).toBe(409);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status: 409, code: 'resource_in_use', broadcastIds: [bc] });
    expect(res.json().detail).toContain(bc);
    expect((await h.call(ws.key, 'GET', `/v1/segments/${seg.id}`)).statusCode).toBe(200);
    await h.db.kysely.deleteFrom('broadcasts').where('id', '=', bc).execute();
    expect((await h.call(ws.key, 'DELETE', `/v1/segments/${seg.id}`)).statusCode).toBe(204);
  });

  it('GET contacts: every matching contact whatever its status, newest first, paginated', async () => {
    const ws = await h.workspace();
    const ids = await seed(h, ws, [
      ...STATUSES.map((status, i) => ({
        email: `m${i}@example.com`,
        firstName: `M${i}`,
        status,
        properties: { plan: 'pro' },
      })),
      { email: 'x@example.com', properties: { plan: 'free' } },
      { email: 'm5@example.com', lastName: 'Last', properties: { plan: 'pro' } },
    ]);
    const seg = await createSegment(h, ws, { field: 'properties.plan', op: 'eq', value: 'pro' });
    const first = (await h.call(ws.key, 'GET', `/v1/segments/${seg.id}/contacts?limit=4`)).json();
    expect(first.data.map((c: { email: string }) => c.email)).toEqual([
      'm5@example.com',
      'm4@example.com',
      'm3@example.com',
      'm2@example.com',
    ]);
    expect(Object.keys(first.data[0]).sort()).toEqual(CONTACT_KEYS);
    expect(first.data[0]).toEqual({
      id: ids['m5@example.com'],
      email: 'm5@example.com',
      firstName: null,
      lastName: 'Last',
      status: 'SUBSCRIBED',
    });
    expect(first.data[1]).toEqual({
      id: ids['m4@example.com'],
      email: 'm4@example.com',
      firstName: 'M4',
      lastName: null,
      status: 'COMPLAINED',
    });
    const second = (
      await h.call(ws.key, 'GET', `/v1/segments/${seg.id}/contacts?limit=4&cursor=${first.nextCursor}`)
    ).json();
    expect(second.data.map((c: { email: string }) => c.email)).toEqual(['m1@example.com', 'm0@example.com']);
    expect(second.nextCursor).toBeNull();
    expect((await h.call(ws.key, 'GET', `/v1/segments/${seg.id}/contacts?limit=101`)).statusCode).toBe(422);
  });

  it('GET count: matching contacts and, of those, the SUBSCRIBED ones', async () => {
    const ws = await h.workspace();
    await seed(h, ws, [
      ...STATUSES.map((status, i) => ({ email: `m${i}@example.com`, status, properties: { n: i } })),
      { email: 's@example.com', status: 'SUBSCRIBED', properties: { n: 10 } },
    ]);
    const seg = await createSegment(h, ws, { field: 'properties.n', op: 'lt', value: 4 });
    expect((await h.call(ws.key, 'GET', `/v1/segments/${seg.id}/count`)).json()).toEqual({ count: 4, subscribed: 1 });
    const none = await createSegment(h, ws, { any: [] });
    expect((await h.call(ws.key, 'GET', `/v1/segments/${none.id}/count`)).json()).toEqual({ count: 0, subscribed: 0 });
    const all = await createSegment(h, ws, { all: [] });
    expect((await h.call(ws.key, 'GET', `/v1/segments/${all.id}/count`)).json()).toEqual({ count: 6, subscribed: 2 });
  });

  it('POST preview: counts and the first 10 contacts (newest first) of a filter not saved, saving nothing', async () => {
    const ws = await h.workspace();
    const contacts = Array.from({ length: 14 }, (_, i) => ({
      email: `c${String(i).padStart(2, '0')}@example.com`,
      status: (i % 3 ? 'SUBSCRIBED' : 'PENDING') as ContactStatus,
    }));
    await seed(h, ws, contacts);
    const res = await h.call(ws.key, 'POST', '/v1/segments/preview', {
      filter: { field: 'email', op: 'startsWith', value: 'c' },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['count', 'sample', 'subscribed']);
    expect(body.count).toBe(14);
    expect(body.subscribed).toBe(9);
    expect(body.sample.map((c: { email: string }) => c.email)).toEqual(
      contacts
        .slice(4)
        .reverse()
        .map((c) => c.email),
    );
    expect(Object.keys(body.sample[0]).sort()).toEqual(CONTACT_KEYS);
    expect(await segmentRows(h, ws)).toEqual([]);
    const bad = await h.call(ws.key, 'POST', '/v1/segments/preview', {
      filter: { field: 'email', op: 'startsWith' },
      name: 'x',
    });
    expect(bad.statusCode).toBe(422);
    expect(
      bad
        .json()
        .errors.map((e: { path: string }) => e.path)
        .sort(),
    ).toEqual(['/filter/value', '/name']);
    expect((await h.call(ws.key, 'POST', '/v1/segments/preview', {})).json()).toMatchObject({
      code: 'validation_failed',
      errors: [{ path: '/filter' }],
    });
  });

  it("another workspace's segment is a 404 for every operation, and nothing changes", async () => {
    const ws = await h.workspace();
    const other = await h.workspace();
    const seg = await createSegment(h, ws, { all: [] }, 'Mine');
    const before = await segmentRows(h, ws);
    for (const [method, url, body] of [
      ['GET', `/v1/segments/${seg.id}`, undefined],
      ['PUT', `/v1/segments/${seg.id}`, { name: 'Theirs', filter: { any: [] } }],
      ['DELETE', `/v1/segments/${seg.id}`, undefined],
      ['GET', `/v1/segments/${seg.id}/contacts`, undefined],
      ['GET', `/v1/segments/${seg.id}/count`, undefined],
      ['GET', '/v1/segments/seg_01JD0000000000000000000000', undefined],
      ['GET', '/v1/segments/seg_01JD0000000000000000000000/count', undefined],
    ] as const) {
      const res = await h.call(other.key, method, url, body);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().code).toBe('not_found');
    }
    expect((await h.call(other.key, 'GET', '/v1/segments')).json()).toEqual({ data: [], nextCursor: null });
    expect(await segmentRows(h, ws)).toEqual(before);
  });

  it('contacts of another workspace never match', async () => {
    const ws = await h.workspace();
    const other = await h.workspace();
    await seed(h, other, [{ email: 'theirs@example.com' }]);
    await seed(h, ws, [{ email: 'mine@example.com' }]);
    const seg = await createSegment(h, ws, { all: [] });
    expect(
      (await h.call(ws.key, 'GET', `/v1/segments/${seg.id}/contacts`))
        .json()
        .data.map((c: { email: string }) => c.email),
    ).toEqual(['mine@example.com']);
    expect(await matching(h, ws, { all: [] })).toEqual(['mine']);
  });

  it('scopes: read:contacts reads and previews, write:contacts writes; others get 403, no key 401', async () => {
    const ws = await h.workspace();
    const seg = await createSegment(h, ws, { all: [] });
    const reader = await h.key(ws, ['read:contacts']);
    const writer = await h.key(ws, ['write:contacts']);
    const stranger = await h.key(ws, ['read:forms', 'write:broadcasts']);
    const reads = [
      ['GET', '/v1/segments', undefined],
      ['GET', `/v1/segments/${seg.id}`, undefined],
      ['GET', `/v1/segments/${seg.id}/contacts`, undefined],
      ['GET', `/v1/segments/${seg.id}/count`, undefined],
      ['POST', '/v1/segments/preview', { filter: { all: [] } }],
    ] as const;
    const writes = [
      ['POST', '/v1/segments', { name: 'x', filter: { all: [] } }],
      ['PUT', `/v1/segments/${seg.id}`, { name: 'y' }],
      ['DELETE', `/v1/segments/${seg.id}`, undefined],
    ] as const;
    for (const [method, url, body] of reads) {
      expect((await h.call(reader, method, url, body)).statusCode, `${method} ${url}`).toBe(200);
      const denied = await h.call(stranger, method, url, body);
      expect(denied.statusCode).toBe(403);
      expect(denied.json()).toMatchObject({ code: 'insufficient_scope' });
      expect(denied.json().detail).toContain('read:contacts');
      expect((await h.call(null, method, url, body)).statusCode).toBe(401);
    }
    for (const [method, url, body] of writes) {
      const denied = await h.call(reader, method, url, body);
      expect(denied.statusCode, `${method} ${url}`).toBe(403);
      expect(denied.json().detail).toContain('write:contacts');
    }
    expect(await segmentRows(h, ws)).toHaveLength(1);
    expect((await h.call(reader, 'GET', `/v1/segments/${seg.id}`)).json().name).toBe('Segment');
    for (const [method, url, body] of writes) {
      expect((await h.call(writer, method, url, body)).statusCode, `${method} ${url}`).toBeLessThan(300);
    }
    expect((await h.call(writer, 'GET', '/v1/segments')).statusCode).toBe(200);
  });

  it('the OpenAPI document describes the segment routes', async () => {
    const doc = (await h.call(null, 'GET', '/openapi.json')).json();
    for (const p of [
      '/v1/segments',
      '/v1/segments/preview',
      '/v1/segments/{segmentId}',
      '/v1/segments/{segmentId}/contacts',
      '/v1/segments/{segmentId}/count',
    ]) {
      expect(doc.paths[p], p).toBeDefined();
    }
  });
});

// ---------------------------------------------------------------------------------------------------
// audienceQuery
// ---------------------------------------------------------------------------------------------------

describeApi('segments: audienceQuery', (h) => {
  async function audience(
    ws: TestWorkspace,
    spec: { segmentId: string | null; topicId: string | null },
  ): Promise<string[]> {
    const q = await audienceQuery(h.db.kysely, h.db.dialect, ws.id, spec);
    const rows = await q.select('contacts.email').orderBy('contacts.email').execute();
    return rows.map((r) => r.email.split('@')[0]!);
  }

  it('is the segment ∩ SUBSCRIBED ∩ effectively subscribed to the topic; no segment means everyone', async () => {
    const ws = await h.workspace();
    const other = await h.workspace();
    await seed(h, other, [{ email: 'theirs@example.com' }]);
    const tIn = await topic(h, ws, 'OPT_IN');
    const tOut = await topic(h, ws, 'OPT_OUT');
    const ids = await seed(h, ws, [
      { email: 'a@example.com', properties: { plan: 'pro' } },
      { email: 'b@example.com', properties: { plan: 'pro' } },
      { email: 'c@example.com', properties: { plan: 'free' } },
      { email: 'd@example.com', properties: { plan: 'pro' }, status: 'UNSUBSCRIBED' },
      { email: 'e@example.com', properties: { plan: 'pro' }, status: 'PENDING' },
      { email: 'f@example.com', properties: { plan: 'pro' }, status: 'BOUNCED' },
    ]);
    await choose(h, ws, ids['b@example.com']!, tIn, false);
    await choose(h, ws, ids['b@example.com']!, tOut, true);
    await choose(h, ws, ids['d@example.com']!, tOut, true);
    const pro = await createSegment(h, ws, { field: 'properties.plan', op: 'eq', value: 'pro' });

    expect(await audience(ws, { segmentId: null, topicId: null })).toEqual(['a', 'b', 'c']);
    expect(await audience(ws, { segmentId: pro.id, topicId: null })).toEqual(['a', 'b']);
    expect(await audience(ws, { segmentId: null, topicId: tIn })).toEqual(['a', 'c']);
    expect(await audience(ws, { segmentId: null, topicId: tOut })).toEqual(['b']);
    expect(await audience(ws, { segmentId: pro.id, topicId: tIn })).toEqual(['a']);
    expect(await audience(ws, { segmentId: pro.id, topicId: tOut })).toEqual(['b']);

    // Callers add their own count (and joins: the conditions name `contacts` explicitly).
    const q = await audienceQuery(h.db.kysely, h.db.dialect, ws.id, { segmentId: pro.id, topicId: null });
    const counted = await q.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    expect(Number(counted.n)).toBe(2);
  });

  it('a segment or topic not in the workspace is 422 invalid_reference at /segmentId, /topicId', async () => {
    const ws = await h.workspace();
    const other = await h.workspace();
    const theirSegment = await createSegment(h, other, { all: [] });
    const theirTopic = await topic(h, other, 'OPT_IN');
    const attempt = async (spec: { segmentId: string | null; topicId: string | null }) => {
      try {
        await audienceQuery(h.db.kysely, h.db.dialect, ws.id, spec);
      } catch (err) {
        return err;
      }
      return undefined;
    };
    for (const [spec, paths] of [
      [{ segmentId: theirSegment.id, topicId: null }, ['/segmentId']],
      [{ segmentId: 'seg_nope', topicId: null }, ['/segmentId']],
      [{ segmentId: null, topicId: theirTopic }, ['/topicId']],
      [{ segmentId: 'seg_nope', topicId: 'topic_nope' }, ['/segmentId', '/topicId']],
    ] as const) {
      const err = await attempt(spec);
      expect(err).toBeInstanceOf(DomainError);
      expect(err).toMatchObject({ status: 422, code: 'invalid_reference' });
      expect((err as DomainError).errors!.map((e) => e.path)).toEqual(paths);
    }
  });
});

// ---------------------------------------------------------------------------------------------------
// Property test: the SQL, on the real database, against a reference evaluator.
// ---------------------------------------------------------------------------------------------------

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };
interface OracleContact {
  email: string;
  firstName: string | null;
  lastName: string | null;
  status: ContactStatus;
  createdAt: string;
  properties: Record<string, Json>;
  choices: (boolean | null)[]; // per topic: explicit choice or none
}
type AnyFilter = Record<string, any>;

const lowerAscii = (s: string) => s.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32));
function compareCodePoints(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}
const ordered = (op: string, c: number) => (op === 'gt' ? c > 0 : op === 'gte' ? c >= 0 : op === 'lt' ? c < 0 : c <= 0);
const jsonType = (v: Json | undefined) =>
  v === undefined ? 'missing' : v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;

/** The reference semantics of segments/CONTEXT.md, written independently of the compiler. */
function oracle(filter: AnyFilter, c: OracleContact, topicDefaults: boolean[], topicIds: string[]): boolean {
  if ('all' in filter) return filter.all.every((m: AnyFilter) => oracle(m, c, topicDefaults, topicIds));
  if ('any' in filter) return filter.any.some((m: AnyFilter) => oracle(m, c, topicDefaults, topicIds));
  if ('topic' in filter) {
    const i = topicIds.indexOf(filter.topic);
    return (c.choices[i] ?? topicDefaults[i]) === filter.subscribed;
  }
  const { field, op, value } = filter;
  if (op === 'neq') return !oracle({ field, op: 'eq', value }, c, topicDefaults, topicIds);
  if (op === 'notExists') return !oracle({ field, op: 'exists' }, c, topicDefaults, topicIds);
  if (field === 'createdAt') {
    const at = Date.parse(c.createdAt);
    const ms = (v: string) => Math.floor(Date.parse(v.toUpperCase()));
    if (op === 'exists') return true;
    if (op === 'eq') return at === ms(value);
    if (op === 'in') return value.some((v: string) => at === ms(v));
    return ordered(op, at - ms(value));
  }
  if (field.startsWith('properties.')) {
    const pv = Object.hasOwn(c.properties, field.slice(11)) ? c.properties[field.slice(11)] : undefined;
    const same = (v: Json) => jsonType(pv) === jsonType(v) && pv === v;
    switch (op) {
      case 'exists':
        return pv !== undefined && pv !== null;
      case 'eq':
        return same(value);
      case 'in':
        return value.some(same);
      case 'contains':
        return typeof pv === 'string' && lowerAscii(pv).includes(lowerAscii(value));
      case 'startsWith':
        return typeof pv === 'string' && lowerAscii(pv).startsWith(lowerAscii(value));
      case 'endsWith':
        return typeof pv === 'string' && lowerAscii(pv).endsWith(lowerAscii(value));
      default:
        return typeof value === 'number'
          ? typeof pv === 'number' && ordered(op, pv - value)
          : typeof pv === 'string' && ordered(op, compareCodePoints(pv, value));
    }
  }
  const stored =
    field === 'email' ? c.email : field === 'firstName' ? c.firstName : field === 'lastName' ? c.lastName : c.status;
  const norm = (v: string) => (field === 'email' ? v.toLowerCase() : v);
  if (op === 'exists') return stored !== null;
  if (stored === null) return false;
  switch (op) {
    case 'eq':
      return stored === norm(value);
    case 'in':
      return value.map(norm).includes(stored);
    case 'contains':
      return lowerAscii(stored).includes(lowerAscii(norm(value)));
    case 'startsWith':
      return lowerAscii(stored).startsWith(lowerAscii(norm(value)));
    case 'endsWith':
      return lowerAscii(stored).endsWith(lowerAscii(norm(value)));
    default:
      return ordered(op, compareCodePoints(stored, norm(value)));
  }
}

const text = fc
  .array(fc.constantFrom('a', 'b', 'A', 'B', 'é', 'É', '%', '_', "'", ' ', '😀'), { maxLength: 3 })
  .map((a) => a.join(''));
const number = fc.oneof(
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom(0.5, -1.25, 2.5, 0.1, 0.30000000000000004, 1e21),
);
const scalar = fc.oneof(text, number, fc.boolean());
const json: fc.Arbitrary<Json> = fc.oneof(
  scalar,
  fc.constant(null),
  fc.array(scalar, { maxLength: 2 }),
  fc.dictionary(fc.constantFrom('a', 'x'), scalar, { maxKeys: 1 }),
);
const INSTANTS = [
  '2026-01-01T00:00:00.000Z',
  '2026-01-01T00:00:00.001Z',
  '2026-06-15T12:30:00.000Z',
  '2027-01-01T00:00:00.000Z',
];
const KEYS = ['a', 'b', 'c'];

const contactArb = fc.record({
  local: fc.array(fc.constantFrom('a', 'b', '_', '%', 'é'), { minLength: 1, maxLength: 3 }).map((a) => a.join('')),
  domain: fc.constantFrom('example.com', 'b.example.org'),
  firstName: fc.option(text, { nil: null }),
  lastName: fc.option(text, { nil: null }),
  status: fc.constantFrom(...STATUSES),
  createdAt: fc.constantFrom(...INSTANTS),
  properties: fc.dictionary(fc.constantFrom(...KEYS), json, { maxKeys: 3 }),
  choices: fc.tuple(fc.option(fc.boolean(), { nil: null }), fc.option(fc.boolean(), { nil: null })),
});

/** A date-time for one of the instants, in UTC or with an offset, or a near miss. */
const dateValue = fc.oneof(
  fc.constantFrom(...INSTANTS),
  fc
    .constantFrom(...INSTANTS)
    .map((iso) => new Date(Date.parse(iso) + 2 * 3600_000).toISOString().replace('Z', '+02:00').replace('.000+', '+')),
  fc.constantFrom('2026-03-01T00:00:00Z', '2025-12-31T23:59:59.999999Z', '2026-01-01t01:00:00.0005+01:00'),
);

/**
 * Values worth comparing with: what the contacts hold, their case variants (full Unicode, so that only
 * ASCII folding tells them apart), prefixes and suffixes, and 1/0 next to true/false.
 */
function valuePool(
  contacts: { email: string; firstName: string | null; lastName: string | null; properties: Record<string, Json> }[],
) {
  const strings = new Set<string>(['A@example.com', '@EXAMPLE.COM', 'b.example.org']);
  const scalars = new Set<number | boolean>([0, 1, true, false]);
  const addString = (v: string) => {
    const cps = Array.from(v);
    for (const x of [v, v.toUpperCase(), v.toLowerCase(), cps.slice(0, 2).join(''), cps.slice(-2).join('')])
      strings.add(x);
  };
  for (const c of contacts) {
    addString(c.email);
    if (c.firstName !== null) addString(c.firstName);
    if (c.lastName !== null) addString(c.lastName);
    for (const v of Object.values(c.properties)) {
      if (typeof v === 'string') addString(v);
      else if (typeof v === 'number' || typeof v === 'boolean') scalars.add(v);
    }
  }
  const str = fc.oneof({ weight: 1, arbitrary: text }, { weight: 3, arbitrary: fc.constantFrom(...strings) });
  return {
    str,
    scalar: fc.oneof(
      { weight: 2, arbitrary: str },
      { weight: 2, arbitrary: fc.constantFrom(...scalars) },
      { weight: 1, arbitrary: scalar },
    ),
    number: fc.oneof(number, fc.constantFrom(...[...scalars].filter((x) => typeof x === 'number'))),
  };
}
type Pool = ReturnType<typeof valuePool>;

function conditionArb(topicIds: string[], pool: Pool): fc.Arbitrary<AnyFilter> {
  // Properties, whose semantics have the most cases, come up twice as often as each contact field.
  const fields = [
    'email',
    'firstName',
    'lastName',
    'status',
    'createdAt',
    ...KEYS.flatMap((k) => [`properties.${k}`, `properties.${k}`]),
    'properties.zz',
  ];
  const fieldCondition = fc.constantFrom(...fields).chain((field) => {
    const kind = field === 'createdAt' ? 'date' : field.startsWith('properties.') ? 'property' : 'text';
    const ops =
      kind === 'date'
        ? ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'exists', 'notExists']
        : ['eq', 'neq', 'contains', 'startsWith', 'endsWith', 'gt', 'gte', 'lt', 'lte', 'in', 'exists', 'notExists'];
    return fc.constantFrom(...ops).chain((op): fc.Arbitrary<AnyFilter> => {
      if (op === 'exists' || op === 'notExists') return fc.constant({ field, op });
      let value: fc.Arbitrary<unknown>;
      if (kind === 'date') value = dateValue;
      else if (field === 'status' && ['eq', 'neq', 'in'].includes(op)) value = fc.constantFrom(...STATUSES);
      else if (kind === 'text' || ['contains', 'startsWith', 'endsWith'].includes(op)) value = pool.str;
      else if (['gt', 'gte', 'lt', 'lte'].includes(op)) value = fc.oneof(pool.str, pool.number);
      else value = pool.scalar;
      if (op === 'in') return fc.array(value, { minLength: 1, maxLength: 3 }).map((v) => ({ field, op, value: v }));
      return value.map((v) => ({ field, op, value: v }));
    });
  });
  const topicCondition = fc.record({ topic: fc.constantFrom(...topicIds), subscribed: fc.boolean() });
  return fc.oneof({ weight: 6, arbitrary: fieldCondition }, { weight: 1, arbitrary: topicCondition });
}

function filterArb(topicIds: string[], pool: Pool, levels: number): fc.Arbitrary<AnyFilter> {
  const condition = conditionArb(topicIds, pool);
  if (levels <= 1) return condition;
  const member = filterArb(topicIds, pool, levels - 1);
  return fc.oneof(
    { weight: 3, arbitrary: condition },
    { weight: 1, arbitrary: fc.array(member, { minLength: 1, maxLength: 3 }).map((all) => ({ all })) },
    { weight: 1, arbitrary: fc.array(member, { maxLength: 3 }).map((any) => ({ any })) },
  );
}

describeApi('segments: property test of the SQL against a reference evaluator', (h) => {
  it('preview, count and audienceQuery match the oracle for random contacts and filters (depth ≤ 3)', async () => {
    const ws = await h.workspace();
    const topicIds = [await topic(h, ws, 'OPT_IN'), await topic(h, ws, 'OPT_OUT')];
    const topicDefaults = [true, false];
    const k = h.db.kysely;

    let evaluated = 0;
    let discriminating = 0;
    await fc.assert(
      fc.asyncProperty(
        fc
          .uniqueArray(contactArb, { minLength: 2, maxLength: 10, selector: (c) => `${c.local}@${c.domain}` })
          .chain((raw) => {
            const pool = valuePool(raw.map((c) => ({ ...c, email: `${c.local}@${c.domain}` })));
            return fc.tuple(fc.constant(raw), fc.array(filterArb(topicIds, pool, 3), { minLength: 1, maxLength: 8 }));
          }),
        fc.constantFrom(null, 0, 1),
        async ([raw, filters], audienceTopic) => {
          await k.deleteFrom('contacts').where('workspace_id', '=', ws.id).execute();
          const contacts: OracleContact[] = raw.map((c) => ({ ...c, email: `${c.local}@${c.domain}` }));
          const ids = await seed(h, ws, contacts);
          const choices = contacts.flatMap((c) =>
            c.choices.flatMap((choice, i) =>
              choice === null
                ? []
                : [
                    {
                      workspace_id: ws.id,
                      contact_id: ids[c.email]!,
                      topic_id: topicIds[i]!,
                      subscribed: choice ? 1 : 0,
                      updated_at: c.createdAt,
                    },
                  ],
            ),
          );
          if (choices.length) await k.insertInto('contact_topics').values(choices).execute();

          for (const filter of filters) {
            const expected = contacts.filter((c) => oracle(filter, c, topicDefaults, topicIds));
            evaluated++;
            if (expected.length > 0 && expected.length < contacts.length) discriminating++;
            const res = await h.call(ws.key, 'POST', '/v1/segments/preview', { filter });
            expect(res.statusCode, res.body).toBe(200);
            const body = res.json();
            expect(body.sample.map((c: { id: string }) => c.id).sort(), JSON.stringify(filter)).toEqual(
              expected.map((c) => ids[c.email]).sort(),
            );
            expect(body.count).toBe(expected.length);
            expect(body.subscribed).toBe(expected.filter((c) => c.status === 'SUBSCRIBED').length);
          }

          const [filter] = filters;
          const segmentId = newId('seg');
          const now = new Date().toISOString();
          await k
            .insertInto('segments')
            .values({
              id: segmentId,
              workspace_id: ws.id,
              name: 'p',
              filter: JSON.stringify(filter),
              created_at: now,
              updated_at: now,
            })
            .execute();
          const q = await audienceQuery(k, h.db.dialect, ws.id, {
            segmentId,
            topicId: audienceTopic === null ? null : topicIds[audienceTopic]!,
          });
          const got = (await q.select('contacts.id').execute()).map((r) => r.id).sort();
          const want = contacts
            .filter((c) => oracle(filter!, c, topicDefaults, topicIds))
            .filter((c) => c.status === 'SUBSCRIBED')
            .filter((c) => audienceTopic === null || (c.choices[audienceTopic] ?? topicDefaults[audienceTopic]))
            .map((c) => ids[c.email])
            .sort();
          expect(got).toEqual(want);
        },
      ),
      { numRuns: 100 },
    );
    // Guard against a vacuous test: most filters must tell contacts apart.
    expect(discriminating / evaluated).toBeGreaterThan(0.15);
  });
});
