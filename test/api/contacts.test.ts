import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { contactEmail } from '../../src/audience/contacts/contacts.email.js';
import { normalizeEmail } from '../../src/lib/email.js';
import { describeApi, type Harness, type TestWorkspace } from '../helpers/app.js';

const CONTACT_KEYS = [
  'createdAt',
  'email',
  'firstName',
  'id',
  'lastName',
  'properties',
  'status',
  'suppressed',
  'tags',
  'timezone',
  'topics',
  'updatedAt',
];
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const emoji = (n: number) => '😀'.repeat(n);
const paths = (res: { json(): any }) =>
  res
    .json()
    .errors.map((e: { path: string }) => e.path)
    .sort();

async function upsert(h: Harness, ws: TestWorkspace, body: Record<string, unknown>, status = 201) {
  const res = await h.call(ws.key, 'POST', '/v1/contacts', body);
  expect(res.statusCode, res.body).toBe(status);
  return res.json();
}

async function topic(
  h: Harness,
  ws: TestWorkspace,
  defaultSubscription: 'OPT_IN' | 'OPT_OUT',
  name: string = defaultSubscription,
) {
  const res = await h.call(ws.key, 'POST', '/v1/topics', { name, defaultSubscription });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; name: string };
}

async function contactRows(h: Harness, ws: TestWorkspace) {
  return h.db.kysely.selectFrom('contacts').selectAll().where('workspace_id', '=', ws.id).orderBy('id').execute();
}

describe('contact email normalisation', () => {
  it('the fast path agrees with normalizeEmail', () => {
    const part = (alphabet: string, max: number) =>
      fc.array(fc.constantFrom(...alphabet.split('')), { maxLength: max }).map((a) => a.join(''));
    fc.assert(
      fc.property(
        part('aZ09._+-"é', 70),
        fc.array(part('aZ09-_', 66), { minLength: 1, maxLength: 4 }),
        part(' \t\n', 2),
        (local, labels, pad) => {
          const input = `${pad}${local}@${labels.join('.')}${pad}`;
          expect(contactEmail(input)).toBe(normalizeEmail(input));
        },
      ),
      { numRuns: 5_000 },
    );
    for (const input of [
      'Foo@Example.COM',
      ' a@b.co ',
      'a@xn--bcher-kva.example',
      'Ann <a@b.com>',
      'a@b',
      'a..b@c.com',
      '"a b"@c.com',
      'x@1.2.3.4',
      'ü@bücher.de',
    ]) {
      expect(contactEmail(input), input).toBe(normalizeEmail(input));
    }
  });
});

describeApi('contacts', (h) => {
  it('POST creates a contact (201, Location) with every field and the defaults', async () => {
    const ws = await h.workspace();
    const res = await h.call(ws.key, 'POST', '/v1/contacts', { email: 'ada@example.com' });
    expect(res.statusCode).toBe(201);
    const contact = res.json();
    expect(Object.keys(contact).sort()).toEqual(CONTACT_KEYS);
    expect(contact).toMatchObject({
      email: 'ada@example.com',
      firstName: null,
      lastName: null,
      properties: {},
      status: 'SUBSCRIBED',
      topics: [],
    });
    expect(contact.id).toMatch(/^ct_/);
    expect(contact.createdAt).toMatch(ISO);
    expect(contact.updatedAt).toBe(contact.createdAt);
    expect(res.headers.location).toBe(`/v1/contacts/${contact.id}`);
    expect((await h.call(ws.key, 'GET', `/v1/contacts/${contact.id}`)).json()).toEqual(contact);
  });

  it('POST with an existing email updates it (200): present fields replace, omitted unchanged, status kept', async () => {
    const ws = await h.workspace();
    const first = await upsert(h, ws, {
      email: 'ada@example.com',
      firstName: 'Ada',
      lastName: 'Lovelace',
      properties: { plan: 'pro', seats: 3 },
      status: 'PENDING',
    });
    await new Promise((r) => setTimeout(r, 5));
    const res = await h.call(ws.key, 'POST', '/v1/contacts', {
      email: 'ada@example.com',
      firstName: 'Augusta',
      properties: { vip: true },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers.location).toBeUndefined();
    const updated = res.json();
    expect(updated).toMatchObject({
      id: first.id,
      email: 'ada@example.com',
      firstName: 'Augusta',
      lastName: 'Lovelace',
      properties: { vip: true }, // replaced whole, not merged
      status: 'PENDING', // not given: unchanged
      createdAt: first.createdAt,
    });
    expect(updated.updatedAt > first.updatedAt).toBe(true);
    const cleared = await upsert(h, ws, { email: 'ada@example.com', lastName: null, status: 'UNSUBSCRIBED' }, 200);
    expect(cleared).toMatchObject({
      firstName: 'Augusta',
      lastName: null,
      status: 'UNSUBSCRIBED',
      properties: { vip: true },
    });
    expect(await contactRows(h, ws)).toHaveLength(1);
  });

  it('emails are stored normalised and unique case-insensitively', async () => {
    const ws = await h.workspace();
    const a = await upsert(h, ws, { email: 'Foo@Example.com' });
    expect(a.email).toBe('foo@example.com');
    const b = await upsert(h, ws, { email: 'foo@example.com', firstName: 'Foo' }, 200);
    expect(b.id).toBe(a.id);
    const c = await upsert(h, ws, { email: '  FOO@EXAMPLE.COM ' }, 200);
    expect(c).toMatchObject({ id: a.id, email: 'foo@example.com', firstName: 'Foo' });
    const rows = await contactRows(h, ws);
    expect(rows.map((r) => r.email)).toEqual(['foo@example.com']);
  });

  it('the same email in another workspace is another contact', async () => {
    const ws = await h.workspace();
    const other = await h.workspace();
    const mine = await upsert(h, ws, { email: 'x@example.com', firstName: 'Mine' });
    const theirs = await upsert(h, other, { email: 'x@example.com', firstName: 'Theirs' });
    expect(theirs.id).not.toBe(mine.id);
    expect((await h.call(ws.key, 'GET', `/v1/contacts/${mine.id}`)).json().firstName).toBe('Mine');
  });

  it('concurrent POSTs of one new email create exactly one contact (one 201, the rest 200)', async () => {
    const ws = await h.workspace();
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        h.call(ws.key, 'POST', '/v1/contacts', {
          email: i % 2 ? 'Race@Example.com' : 'race@example.com',
          properties: { n: i },
        }),
      ),
    );
    const codes = responses.map((r) => r.statusCode).sort();
    expect(codes).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(responses.map((r) => r.json().id)).size).toBe(1);
    expect(await contactRows(h, ws)).toHaveLength(1);
  });

  it.each([
    ['not an address', 'nope'],
    ['no domain dot', 'a@localhost'],
    ['a display name', 'Ada <ada@example.com>'],
    ['two addresses', 'a@example.com, b@example.com'],
    ['empty', ''],
    ['too long', `${'a'.repeat(310)}@example.com`],
  ])('an invalid email (%s) is 422 validation_failed at /email, nothing created', async (_label, email) => {
    const ws = await h.workspace();
    const res = await h.call(ws.key, 'POST', '/v1/contacts', { email, firstName: 'X' });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/email' }] });
    expect(await contactRows(h, ws)).toHaveLength(0);
  });

  it.each([
    ['firstName empty', { firstName: '' }, ['/firstName']],
    ['firstName 201 emoji', { firstName: emoji(201) }, ['/firstName']],
    ['lastName a number', { lastName: 5 }, ['/lastName']],
    ['status unknown', { status: 'ACTIVE' }, ['/status']],
    ['property key with a space', { properties: { 'bad key': 1 } }, ['/properties/bad key']],
    ['property key starting with a digit', { properties: { '1st': 1 } }, ['/properties/1st']],
    [
      'property key of 65 characters',
      { properties: { [`a${'b'.repeat(64)}`]: 1 } },
      [`/properties/a${'b'.repeat(64)}`],
    ],
    ['property string of 2001 characters', { properties: { note: 'x'.repeat(2001) } }, ['/properties/note']],
    ['property object value', { properties: { nested: { a: 1 } } }, ['/properties/nested']],
    ['property array value', { properties: { tags: ['a'] } }, ['/properties/tags']],
    [
      '51 properties',
      { properties: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`p${i}`, i])) },
      ['/properties'],
    ],
    ['properties not an object', { properties: 'x' }, ['/properties']],
    ['unknown field', { phone: '123' }, ['/phone']],
    ['read-only field', { id: 'ct_x', createdAt: '2020-01-01T00:00:00.000Z' }, ['/createdAt', '/id']],
    ['topics entry without subscribed', { topics: [{ id: 'topic_x' }] }, ['/topics/0/subscribed']],
  ])('POST rejects %s (422, nothing created)', async (_label, body, expected) => {
    const ws = await h.workspace();
    const res = await h.call(ws.key, 'POST', '/v1/contacts', { email: 'a@example.com', ...body });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().code).toBe('validation_failed');
    expect(paths(res)).toEqual(expected);
    expect(await contactRows(h, ws)).toHaveLength(0);
  });

  it('accepts the limits: 200-emoji names, 50 properties, 2000-character strings, numbers, booleans, null', async () => {
    const ws = await h.workspace();
    const properties: Record<string, unknown> = Object.fromEntries(Array.from({ length: 46 }, (_, i) => [`p${i}`, i]));
    Object.assign(properties, { long: 'x'.repeat(2000), yes: true, none: null, [`a${'b'.repeat(63)}`]: 1.5 });
    const c = await upsert(h, ws, { email: 'a@example.com', firstName: emoji(200), lastName: 'L', properties });
    expect(c.firstName).toBe(emoji(200));
    expect(c.properties).toEqual(properties);
  });

  it('a request body that is not JSON is 415; broken JSON is 400', async () => {
    const ws = await h.workspace();
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/contacts',
      headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'text/csv' },
      payload: 'email\na@example.com\n',
    });
    expect(res.statusCode).toBe(415);
    expect(res.json().code).toBe('unsupported_media_type');
    expect((await h.call(ws.key, 'POST', '/v1/contacts', '{"email":')).json().code).toBe('invalid_json');
    expect(await contactRows(h, ws)).toHaveLength(0);
  });

  describe('topics', () => {
    it('every topic of the workspace is listed with the effective subscription (defaults and explicit choices)', async () => {
      const ws = await h.workspace();
      const optIn = await topic(h, ws, 'OPT_IN');
      const optOut = await topic(h, ws, 'OPT_OUT');
      const plain = await upsert(h, ws, { email: 'plain@example.com' });
      expect(plain.topics).toEqual([
        { id: optIn.id, name: 'OPT_IN', subscribed: true },
        { id: optOut.id, name: 'OPT_OUT', subscribed: false },
      ]);
      const flipped = await upsert(h, ws, {
        email: 'flipped@example.com',
        topics: [
          { id: optIn.id, subscribed: false },
          { id: optOut.id, subscribed: true },
        ],
      });
      expect(flipped.topics).toEqual([
        { id: optIn.id, name: 'OPT_IN', subscribed: false },
        { id: optOut.id, name: 'OPT_OUT', subscribed: true },
      ]);
      // Explicit choices equal to the default are kept as choices too.
      const same = await upsert(h, ws, {
        email: 'same@example.com',
        topics: [
          { id: optIn.id, subscribed: true },
          { id: optOut.id, subscribed: false },
        ],
      });
      expect(same.topics.map((t: { subscribed: boolean }) => t.subscribed)).toEqual([true, false]);
      // A choice can be changed later, by POST or PUT; a topic not mentioned keeps its choice.
      const back = await upsert(
        h,
        ws,
        { email: 'flipped@example.com', topics: [{ id: optIn.id, subscribed: true }] },
        200,
      );
      expect(back.topics.map((t: { subscribed: boolean }) => t.subscribed)).toEqual([true, true]);
      const put = await h.call(ws.key, 'PUT', `/v1/contacts/${back.id}`, {
        topics: [{ id: optOut.id, subscribed: false }],
      });
      expect(put.json().topics.map((t: { subscribed: boolean }) => t.subscribed)).toEqual([true, false]);
      // A topic created later shows up on existing contacts with its default.
      const later = await topic(h, ws, 'OPT_IN', 'Later');
      const got = (await h.call(ws.key, 'GET', `/v1/contacts/${plain.id}`)).json();
      expect(got.topics).toEqual([
        { id: optIn.id, name: 'OPT_IN', subscribed: true },
        { id: optOut.id, name: 'OPT_OUT', subscribed: false },
        { id: later.id, name: 'Later', subscribed: true },
      ]);
    });

    it("an unknown topic id (or another workspace's) is 422 invalid_reference and changes nothing", async () => {
      const ws = await h.workspace();
      const other = await h.workspace();
      const theirs = await topic(h, other, 'OPT_IN');
      const mine = await topic(h, ws, 'OPT_OUT');
      for (const id of ['topic_nope', theirs.id]) {
        const res = await h.call(ws.key, 'POST', '/v1/contacts', {
          email: 'new@example.com',
          topics: [
            { id: mine.id, subscribed: true },
            { id, subscribed: true },
          ],
        });
        expect(res.statusCode).toBe(422);
        expect(res.json()).toMatchObject({ code: 'invalid_reference', errors: [{ path: '/topics/1/id' }] });
      }
      expect(await contactRows(h, ws)).toHaveLength(0);
      const existing = await upsert(h, ws, { email: 'old@example.com', firstName: 'Old' });
      const res = await h.call(ws.key, 'POST', '/v1/contacts', {
        email: 'old@example.com',
        firstName: 'New',
        topics: [{ id: 'topic_nope', subscribed: true }],
      });
      expect(res.json().code).toBe('invalid_reference');
      const put = await h.call(ws.key, 'PUT', `/v1/contacts/${existing.id}`, {
        firstName: 'New',
        topics: [
          { id: mine.id, subscribed: true },
          { id: 'topic_nope', subscribed: true },
        ],
      });
      expect(put.json().code).toBe('invalid_reference');
      const after = (await h.call(ws.key, 'GET', `/v1/contacts/${existing.id}`)).json();
      expect(after).toEqual(existing);
      const dup = await h.call(ws.key, 'POST', '/v1/contacts', {
        email: 'old@example.com',
        topics: [
          { id: mine.id, subscribed: true },
          { id: mine.id, subscribed: false },
        ],
      });
      expect(dup.statusCode).toBe(422);
      expect(dup.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/topics/1/id' }] });
    });
  });

  describe('list', () => {
    it('newest first with cursor pagination', async () => {
      const ws = await h.workspace();
      for (let i = 0; i < 5; i++) await upsert(h, ws, { email: `c${i}@example.com` });
      const first = (await h.call(ws.key, 'GET', '/v1/contacts?limit=2')).json();
      expect(first.data.map((c: { email: string }) => c.email)).toEqual(['c4@example.com', 'c3@example.com']);
      const second = (await h.call(ws.key, 'GET', `/v1/contacts?limit=2&cursor=${first.nextCursor}`)).json();
      expect(second.data.map((c: { email: string }) => c.email)).toEqual(['c2@example.com', 'c1@example.com']);
      const third = (await h.call(ws.key, 'GET', `/v1/contacts?limit=2&cursor=${second.nextCursor}`)).json();
      expect(third.data.map((c: { email: string }) => c.email)).toEqual(['c0@example.com']);
      expect(third.nextCursor).toBeNull();
      const all = (await h.call(ws.key, 'GET', '/v1/contacts')).json();
      expect(all.data).toHaveLength(5);
      expect(Object.keys(all.data[0]).sort()).toEqual(CONTACT_KEYS);
      expect((await h.call(ws.key, 'GET', '/v1/contacts?limit=101')).statusCode).toBe(422);
    });

    it('filters by email (normalised), status and effective topic subscription, combined', async () => {
      const ws = await h.workspace();
      const optIn = await topic(h, ws, 'OPT_IN');
      const optOut = await topic(h, ws, 'OPT_OUT');
      const a = await upsert(h, ws, { email: 'a@example.com' });
      const b = await upsert(h, ws, {
        email: 'b@example.com',
        status: 'UNSUBSCRIBED',
        topics: [{ id: optIn.id, subscribed: false }],
      });
      const c = await upsert(h, ws, { email: 'c@example.com', topics: [{ id: optOut.id, subscribed: true }] });
      const d = await upsert(h, ws, {
        email: 'd@example.com',
        status: 'BOUNCED',
        topics: [
          { id: optIn.id, subscribed: true },
          { id: optOut.id, subscribed: false },
        ],
      });
      const ids = async (query: string) => {
        const res = await h.call(ws.key, 'GET', `/v1/contacts?${query}`);
        expect(res.statusCode, res.body).toBe(200);
        return res.json().data.map((x: { id: string }) => x.id);
      };
      expect(await ids('email=A%40Example.COM')).toEqual([a.id]);
      expect(await ids('email=zz%40example.com')).toEqual([]);
      expect(await ids('status=SUBSCRIBED')).toEqual([c.id, a.id]);
      expect(await ids('status=BOUNCED')).toEqual([d.id]);
      expect(await ids(`topicId=${optIn.id}`)).toEqual([d.id, c.id, a.id]); // all but b, who opted out
      expect(await ids(`topicId=${optOut.id}`)).toEqual([c.id]); // only c opted in
      expect(await ids(`topicId=${optIn.id}&status=SUBSCRIBED`)).toEqual([c.id, a.id]);
      expect(await ids(`topicId=${optIn.id}&limit=1`)).toEqual([d.id]);
      const page1 = (await h.call(ws.key, 'GET', `/v1/contacts?topicId=${optIn.id}&limit=2`)).json();
      expect(
        (await h.call(ws.key, 'GET', `/v1/contacts?topicId=${optIn.id}&limit=2&cursor=${page1.nextCursor}`))
          .json()
          .data.map((x: { id: string }) => x.id),
      ).toEqual([a.id]);
      expect(b.status).toBe('UNSUBSCRIBED');
    });

    it('rejects bad filters: 422 at /query/…', async () => {
      const ws = await h.workspace();
      const other = await h.workspace();
      const theirs = await topic(h, other, 'OPT_IN');
      expect((await h.call(ws.key, 'GET', '/v1/contacts?status=ACTIVE')).json()).toMatchObject({
        code: 'validation_failed',
        errors: [{ path: '/query/status' }],
      });
      expect((await h.call(ws.key, 'GET', '/v1/contacts?email=nope')).json()).toMatchObject({
        code: 'validation_failed',
        errors: [{ path: '/query/email' }],
      });
      for (const id of ['topic_nope', theirs.id]) {
        expect((await h.call(ws.key, 'GET', `/v1/contacts?topicId=${id}`)).json()).toMatchObject({
          code: 'invalid_reference',
          errors: [{ path: '/query/topicId' }],
        });
      }
      expect((await h.call(ws.key, 'GET', '/v1/contacts?bogus=1')).statusCode).toBe(422);
    });
  });

  describe('PUT and DELETE', () => {
    it('PUT is partial: omitted unchanged, present replaced whole, null clears a name, updatedAt refreshed', async () => {
      const ws = await h.workspace();
      const c = await upsert(h, ws, {
        email: 'a@example.com',
        firstName: 'Ada',
        lastName: 'L',
        properties: { a: 1, b: 2 },
      });
      await new Promise((r) => setTimeout(r, 5));
      const res = await h.call(ws.key, 'PUT', `/v1/contacts/${c.id}`, {
        firstName: null,
        properties: { c: 'x' },
        status: 'COMPLAINED',
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        id: c.id,
        email: 'a@example.com',
        firstName: null,
        lastName: 'L',
        properties: { c: 'x' },
        status: 'COMPLAINED',
        createdAt: c.createdAt,
      });
      expect(res.json().updatedAt > c.updatedAt).toBe(true);
      const email = await h.call(ws.key, 'PUT', `/v1/contacts/${c.id}`, { id: c.id, email: 'Ada.New@Example.com' });
      expect(email.json()).toMatchObject({ email: 'ada.new@example.com', lastName: 'L' });
      expect((await h.call(ws.key, 'PUT', `/v1/contacts/${c.id}`, { email: 'ADA.NEW@example.com' })).statusCode).toBe(
        200,
      );
      expect((await h.call(ws.key, 'PUT', `/v1/contacts/${c.id}`, {})).statusCode).toBe(200);
    });

    it('PUT rejects invalid bodies (422) and changes nothing', async () => {
      const ws = await h.workspace();
      const c = await upsert(h, ws, { email: 'a@example.com', firstName: 'Ada' });
      for (const [body, path] of [
        [{ email: 'nope' }, '/email'],
        [{ firstName: '' }, '/firstName'],
        [{ id: 'ct_other' }, '/id'],
        [{ createdAt: '2020-01-01T00:00:00.000Z' }, '/createdAt'],
        [{ properties: { 'a-b': 1 } }, '/properties/a-b'],
        [{ status: 'GONE' }, '/status'],
      ] as const) {
        const res = await h.call(ws.key, 'PUT', `/v1/contacts/${c.id}`, body);
        expect(res.statusCode, JSON.stringify(body)).toBe(422);
        expect(paths(res)).toEqual([path]);
      }
      expect((await h.call(ws.key, 'GET', `/v1/contacts/${c.id}`)).json()).toEqual(c);
    });

    it('PUT to the email of another contact is 409 contact_exists, nothing changed', async () => {
      const ws = await h.workspace();
      const a = await upsert(h, ws, { email: 'a@example.com', firstName: 'A' });
      const b = await upsert(h, ws, { email: 'b@example.com', firstName: 'B' });
      const res = await h.call(ws.key, 'PUT', `/v1/contacts/${b.id}`, { email: 'A@Example.com', firstName: 'Changed' });
      expect(res.statusCode).toBe(409);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ code: 'contact_exists', contactId: a.id });
      expect((await h.call(ws.key, 'GET', `/v1/contacts/${b.id}`)).json()).toEqual(b);
    });

    it('DELETE removes the contact and its topic choices (204, then 404); the email can be used again', async () => {
      const ws = await h.workspace();
      const t = await topic(h, ws, 'OPT_OUT');
      const c = await upsert(h, ws, { email: 'a@example.com', topics: [{ id: t.id, subscribed: true }] });
      const res = await h.call(ws.key, 'DELETE', `/v1/contacts/${c.id}`);
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
      expect((await h.call(ws.key, 'GET', `/v1/contacts/${c.id}`)).statusCode).toBe(404);
      expect((await h.call(ws.key, 'DELETE', `/v1/contacts/${c.id}`)).statusCode).toBe(404);
      expect(
        await h.db.kysely.selectFrom('contact_topics').selectAll().where('contact_id', '=', c.id).execute(),
      ).toEqual([]);
      const again = await upsert(h, ws, { email: 'a@example.com' });
      expect(again.id).not.toBe(c.id);
      expect(again.topics).toEqual([{ id: t.id, name: 'OPT_OUT', subscribed: false }]);
    });
  });

  it("another workspace's contact is 404 for every operation, and untouched", async () => {
    const ws = await h.workspace();
    const other = await h.workspace();
    const theirs = await upsert(h, other, { email: 'theirs@example.com', firstName: 'T' });
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { firstName: 'Mine' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await h.call(ws.key, method, `/v1/contacts/${theirs.id}`, body);
      expect(res.statusCode, method).toBe(404);
      expect(res.json().code).toBe('not_found');
    }
    expect((await h.call(ws.key, 'GET', '/v1/contacts')).json().data).toEqual([]);
    expect((await h.call(ws.key, 'GET', '/v1/contacts?email=theirs%40example.com')).json().data).toEqual([]);
    expect((await h.call(other.key, 'GET', `/v1/contacts/${theirs.id}`)).json()).toEqual(theirs);
  });

  it('scopes: read:contacts reads, write:contacts writes; other scopes 403', async () => {
    const ws = await h.workspace();
    const c = await upsert(h, ws, { email: 'a@example.com' });
    const reader = await h.key(ws, ['read:contacts']);
    const writer = await h.key(ws, ['write:contacts']);
    const stranger = await h.key(ws, ['read:forms', 'write:broadcasts']);
    expect((await h.call(reader, 'GET', '/v1/contacts')).statusCode).toBe(200);
    expect((await h.call(reader, 'GET', `/v1/contacts/${c.id}`)).statusCode).toBe(200);
    for (const [method, url, body] of [
      ['POST', '/v1/contacts', { email: 'b@example.com' }],
      ['PUT', `/v1/contacts/${c.id}`, { firstName: 'x' }],
      ['DELETE', `/v1/contacts/${c.id}`, undefined],
    ] as const) {
      const res = await h.call(reader, method, url, body);
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.json()).toMatchObject({ code: 'insufficient_scope' });
      expect(res.json().detail).toContain('write:contacts');
    }
    for (const url of ['/v1/contacts', `/v1/contacts/${c.id}`]) {
      const res = await h.call(stranger, 'GET', url);
      expect(res.statusCode).toBe(403);
      expect(res.json().detail).toContain('read:contacts');
    }
    expect((await h.call(null, 'GET', '/v1/contacts')).statusCode).toBe(401);
    expect((await h.call(writer, 'GET', `/v1/contacts/${c.id}`)).statusCode).toBe(200);
    expect((await h.call(writer, 'POST', '/v1/contacts', { email: 'b@example.com' })).statusCode).toBe(201);
    expect(await contactRows(h, ws)).toHaveLength(2);
  });
});
