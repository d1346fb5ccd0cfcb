import { expect, it } from 'vitest';
import { countContacts } from '../../src/audience/contacts/contacts.repository.js';
import { describeApi, type Harness, type TestWorkspace } from '../helpers/app.js';

/** GET /v1/contacts/count: the number of contacts GET /v1/contacts lists with the same filters, over all its pages. */

async function importNdjson(h: Harness, ws: TestWorkspace, rows: Record<string, unknown>[]) {
  const res = await h.call(ws.key, 'POST', '/v1/contacts/imports', rows.map((r) => JSON.stringify(r)).join('\n'), {
    'content-type': 'application/x-ndjson',
  });
  expect(res.statusCode, res.body).toBe(201);
  expect(res.json()).toMatchObject({ status: 'COMPLETED', skipped: 0 });
}

async function topic(h: Harness, ws: TestWorkspace, defaultSubscription: 'OPT_IN' | 'OPT_OUT') {
  const res = await h.call(ws.key, 'POST', '/v1/topics', { name: defaultSubscription, defaultSubscription });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

async function count(h: Harness, key: string, query = '') {
  const res = await h.call(key, 'GET', `/v1/contacts/count${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { count: number };
}

/** Every contact the list has with these filters, page after page. */
async function listAll(h: Harness, key: string, query: string) {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const sep: string = query ? '&' : '?';
    const res = await h.call(key, 'GET', `/v1/contacts${query}${sep}limit=2${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json() as { data: { id: string }[]; nextCursor: string | null };
    ids.push(...page.data.map((c) => c.id));
    cursor = page.nextCursor;
  } while (cursor);
  return ids;
}

describeApi('contact counts', (h) => {
  /** 7 contacts of mixed status; an OPT_IN topic one of them left, an OPT_OUT topic two of them joined. */
  async function setup() {
    const ws = await h.workspace();
    const optIn = await topic(h, ws, 'OPT_IN');
    const optOut = await topic(h, ws, 'OPT_OUT');
    await importNdjson(h, ws, [
      { email: 'a@example.com', firstName: 'A' },
      { email: 'b@example.com' },
      { email: 'c@example.com', status: 'UNSUBSCRIBED' },
      { email: 'd@example.com', status: 'PENDING' },
      { email: 'e@example.com', status: 'BOUNCED' },
      { email: 'f@example.com' },
      { email: 'g@example.com', status: 'UNSUBSCRIBED' },
    ]);
    const id = async (email: string) =>
      (await h.call(ws.key, 'GET', `/v1/contacts?email=${email}`)).json().data[0].id as string;
    for (const [email, topics] of [
      ['a@example.com', [{ id: optIn, subscribed: false }]],
      ['b@example.com', [{ id: optOut, subscribed: true }]],
      ['c@example.com', [{ id: optOut, subscribed: true }]],
    ] as const) {
      const res = await h.call(ws.key, 'PUT', `/v1/contacts/${await id(email)}`, { topics });
      expect(res.statusCode, res.body).toBe(200);
    }
    return { ws, optIn, optOut };
  }

  it('counts what the list lists, for every filter, over all its pages; and nothing of another workspace', async () => {
    const { ws, optIn, optOut } = await setup();
    // Another workspace with contacts of its own: they count there, never here.
    const other = await h.workspace('Other');
    await importNdjson(h, other, [{ email: 'a@example.com' }, { email: 'z@example.com' }]);

    const queries = [
      '',
      '?status=SUBSCRIBED',
      '?status=UNSUBSCRIBED',
      '?status=COMPLAINED',
      `?topicId=${optIn}`,
      `?topicId=${optOut}`,
      `?topicId=${optOut}&status=SUBSCRIBED`,
      '?email=A@Example.com',
      '?email=nobody@example.com',
      '?email=c@example.com&status=SUBSCRIBED',
      `?topicId=${optIn}&status=SUBSCRIBED`,
      `?topicId=${optIn}&status=UNSUBSCRIBED`,
      `?topicId=${optIn}&email=a@example.com`,
      `?topicId=${optOut}&email=b@example.com`,
      `?topicId=${optOut}&status=PENDING`,
    ];
    const expected = [7, 3, 2, 0, 6, 2, 1, 1, 0, 0, 2, 2, 0, 1, 0];
    for (const [i, q] of queries.entries()) {
      const { count: n } = await count(h, ws.key, q);
      expect(n, q).toBe(expected[i]);
      expect((await listAll(h, ws.key, q)).length, q).toBe(n);
    }
    expect(await count(h, other.key)).toEqual({ count: 2 });
    expect(await count(h, other.key, '?email=a@example.com')).toEqual({ count: 1 });
  });

  it("another workspace's topic is answered like a missing one (422 invalid_reference), and nothing is counted", async () => {
    const { optIn } = await setup();
    const other = await h.workspace('Other');
    for (const topicId of [optIn, 'topic_missing']) {
      const res = await h.call(other.key, 'GET', `/v1/contacts/count?topicId=${topicId}`);
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json()).toMatchObject({ code: 'invalid_reference', errors: [{ path: '/query/topicId' }] });
    }
  });

  it('refuses a malformed email, an unknown or paging parameter (422), and needs read:contacts', async () => {
    const ws = await h.workspace();
    const bad = await h.call(ws.key, 'GET', '/v1/contacts/count?email=not-an-address');
    expect(bad.statusCode, bad.body).toBe(422);
    expect(bad.json()).toMatchObject({ errors: [{ path: '/query/email' }] });
    for (const q of ['?limit=10', '?cursor=abc', '?status=ACTIVE', '?q=ada&x=1'])
      expect((await h.call(ws.key, 'GET', `/v1/contacts/count${q}`)).statusCode, q).toBe(422);

    const forms = await h.key(ws, ['read:forms']);
    const denied = await h.call(forms, 'GET', '/v1/contacts/count');
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toMatchObject({ code: 'insufficient_scope' });
    expect(await count(h, await h.key(ws, ['read:contacts']))).toEqual({ count: 0 });
    expect((await h.call(null, 'GET', '/v1/contacts/count')).statusCode).toBe(401);
  });

  it('a count in slices of a few contacts (as SQLite reads a large workspace) adds up to the same', async () => {
    const { ws, optIn, optOut } = await setup();
    const outTopic = { id: optOut, defaultSubscription: 'OPT_OUT' as const };
    const inTopic = { id: optIn, defaultSubscription: 'OPT_IN' as const };
    const count = (f: Parameters<typeof countContacts>[3], rows: number) =>
      countContacts(h.db.kysely, h.db.dialect, ws.id, f, rows);
    for (const rows of [1, 2, 3, 100]) {
      expect(await count({}, rows)).toBe(7);
      expect(await count({ status: 'UNSUBSCRIBED' }, rows)).toBe(2);
      expect(await count({ topic: outTopic }, rows)).toBe(2);
      expect(await count({ topic: outTopic, status: 'UNSUBSCRIBED' }, rows)).toBe(1);
      expect(await count({ topic: inTopic }, rows)).toBe(6);
      expect(await count({ topic: inTopic, status: 'SUBSCRIBED' }, rows)).toBe(2);
    }
  });
});
