import { expect, it } from 'vitest';
import { parseTagCell, tagCell } from '../../src/audience/contacts/contacts.tags.js';
import { describeApi, type Harness, type TestWorkspace } from '../helpers/app.js';

/** Contact tags, the contact list's search and tag filter, GET /v1/tags and the segment condition (contract §18). */

async function upsert(h: Harness, ws: TestWorkspace, body: Record<string, unknown>, status = 201) {
  const res = await h.call(ws.key, 'POST', '/v1/contacts', body);
  expect(res.statusCode, res.body).toBe(status);
  return res.json() as { id: string; email: string; tags: string[] };
}

async function tagRows(h: Harness, ws: TestWorkspace) {
  return h.db.kysely
    .selectFrom('contact_tags')
    .select(['contact_id', 'tag_key', 'tag', 'position'])
    .where('workspace_id', '=', ws.id)
    .orderBy('contact_id')
    .orderBy('position')
    .execute();
}

const emails = (res: { json(): { data: { email: string }[] } }) =>
  res
    .json()
    .data.map((c) => c.email.split('@')[0])
    .sort();

describeApi('contact tags', (h) => {
  it('are stored as given, trimmed, one per tag whatever its case (the first spelling kept), and shown in order', async () => {
    const ws = await h.workspace();
    const c = await upsert(h, ws, { email: 'ada@example.com', tags: ['VIP', ' Customer ', 'vip', 'CUSTOMER', 'beta'] });
    expect(c.tags).toEqual(['VIP', 'Customer', 'beta']);
    expect((await h.call(ws.key, 'GET', `/v1/contacts/${c.id}`)).json().tags).toEqual(['VIP', 'Customer', 'beta']);
    const list = (await h.call(ws.key, 'GET', '/v1/contacts')).json();
    expect(list.data[0].tags).toEqual(['VIP', 'Customer', 'beta']);
    expect((await tagRows(h, ws)).map((r) => [r.tag_key, r.tag])).toEqual([
      ['vip', 'VIP'],
      ['customer', 'Customer'],
      ['beta', 'beta'],
    ]);
    // A contact without tags has [].
    expect((await upsert(h, ws, { email: 'bob@example.com' })).tags).toEqual([]);
  });

  it('PUT and POST replace them whole; omitted, they are unchanged; a change writes contact.updated with "tags"', async () => {
    const ws = await h.workspace();
    const c = await upsert(h, ws, { email: 'ada@example.com', tags: ['a', 'b'] });
    let res = await h.call(ws.key, 'PUT', `/v1/contacts/${c.id}`, { firstName: 'Ada' });
    expect(res.json().tags).toEqual(['a', 'b']);
    res = await h.call(ws.key, 'PUT', `/v1/contacts/${c.id}`, { tags: ['c', 'A'] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().tags).toEqual(['c', 'A']);
    const updated = await h.db.kysely
      .selectFrom('events')
      .select(['type', 'data'])
      .where('workspace_id', '=', ws.id)
      .where('type', '=', 'contact.updated')
      .execute();
    expect(updated.some((e) => JSON.stringify(e.data).includes('tags'))).toBe(true);
    // POST by email replaces them too.
    expect((await upsert(h, ws, { email: 'ada@example.com', tags: [] }, 200)).tags).toEqual([]);
    expect(await tagRows(h, ws)).toEqual([]);
    // The same tags again change nothing (no second event).
    const before = await h.db.kysely.selectFrom('events').select('id').where('workspace_id', '=', ws.id).execute();
    await h.call(ws.key, 'PUT', `/v1/contacts/${c.id}`, { tags: [] });
    const after = await h.db.kysely.selectFrom('events').select('id').where('workspace_id', '=', ws.id).execute();
    expect(after.length).toBe(before.length);
  });

  it('a tag of 65 characters, an empty or blank tag, a 101st tag are 422 with pointers, and nothing changes', async () => {
    const ws = await h.workspace();
    const c = await upsert(h, ws, { email: 'ada@example.com', tags: ['keep'] });
    const cases: [unknown, string[]][] = [
      [['x'.repeat(65)], ['/tags/0']],
      [['ok', ''], ['/tags/1']],
      [['ok', '   '], ['/tags/1']],
      [Array.from({ length: 101 }, (_, i) => `t${i}`), ['/tags']],
      [['bad\nline'], ['/tags/0']],
      [[7], ['/tags/0']],
    ];
    for (const [tags, paths] of cases) {
      for (const [method, url, body] of [
        ['PUT', `/v1/contacts/${c.id}`, { tags }],
        ['POST', '/v1/contacts', { email: 'ada@example.com', firstName: 'Changed', tags }],
      ] as const) {
        const res = await h.call(ws.key, method, url, body);
        expect(res.statusCode, `${method} ${JSON.stringify(tags).slice(0, 40)}`).toBe(422);
        expect(res.json().code).toBe('validation_failed');
        expect(res.json().errors.map((e: { path: string }) => e.path)).toEqual(paths);
      }
    }
    // 64 characters (code points: emoji count one each) and 100 tags are fine.
    expect((await h.call(ws.key, 'PUT', `/v1/contacts/${c.id}`, { tags: ['😀'.repeat(64)] })).statusCode).toBe(200);
    const hundred = Array.from({ length: 100 }, (_, i) => `t${i}`);
    const res = await h.call(ws.key, 'PUT', `/v1/contacts/${c.id}`, { tags: hundred });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().tags).toEqual(hundred);
    const row = await h.db.kysely.selectFrom('contacts').select('first_name').where('id', '=', c.id).executeTakeFirst();
    expect(row?.first_name).toBeNull();
  });

  it('the database refuses a second row of one tag for a contact', async () => {
    const ws = await h.workspace();
    const c = await upsert(h, ws, { email: 'ada@example.com', tags: ['VIP'] });
    await expect(
      h.db.kysely
        .insertInto('contact_tags')
        .values({
          workspace_id: ws.id,
          contact_id: c.id,
          tag_key: 'vip',
          tag: 'vip',
          position: 1,
          created_at: new Date().toISOString(),
        })
        .execute(),
    ).rejects.toThrow();
  });

  it('GET /v1/contacts?tag= and ?q= filter, together and with status and paging; count agrees', async () => {
    const ws = await h.workspace();
    await upsert(h, ws, { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace', tags: ['VIP'] });
    await upsert(h, ws, { email: 'grace@navy.mil', firstName: 'Grace', lastName: 'Hopper', tags: ['vip', 'navy'] });
    await upsert(h, ws, { email: 'alan@example.com', firstName: 'Alan', lastName: 'Turing', status: 'UNSUBSCRIBED' });
    await upsert(h, ws, { email: 'under_score@example.com', firstName: '100%', tags: ['Vip'] });
    await upsert(h, ws, { email: 'underxscore@example.com', firstName: '1000' });

    const list = (qs: string) => h.call(ws.key, 'GET', `/v1/contacts?${qs}`);
    const count = async (qs: string) => (await h.call(ws.key, 'GET', `/v1/contacts/count?${qs}`)).json().count;
    expect(emails(await list('tag=VIP'))).toEqual(['ada', 'grace', 'under_score']);
    expect(await count('tag=vIp')).toBe(3);
    expect(emails(await list('q=LOVE'))).toEqual(['ada']);
    expect(emails(await list('q=example'))).toEqual(['ada', 'alan', 'under_score', 'underxscore']);
    expect(emails(await list('q=gRa'))).toEqual(['grace']);
    // LIKE's wildcards match themselves.
    expect(emails(await list('q=_'))).toEqual(['under_score']);
    expect(emails(await list('q=0%25'))).toEqual(['under_score']);
    expect(emails(await list(`q=${encodeURIComponent('\\')}`))).toEqual([]);
    // Combined with each other and with status.
    expect(emails(await list('q=example&tag=vip'))).toEqual(['ada', 'under_score']);
    expect(await count('q=example&tag=vip')).toBe(2);
    expect(emails(await list('q=a&status=UNSUBSCRIBED'))).toEqual(['alan']);
    expect(await count('q=a&status=UNSUBSCRIBED')).toBe(1);
    expect(await count('q=example')).toBe(4);
    // Paging through a search.
    const first = (await list('q=example&limit=2')).json();
    expect(first.data).toHaveLength(2);
    const second = (await list(`q=example&limit=2&cursor=${first.nextCursor}`)).json();
    expect([...first.data, ...second.data].map((c: { email: string }) => c.email.split('@')[0]).sort()).toEqual([
      'ada',
      'alan',
      'under_score',
      'underxscore',
    ]);
    expect((await list(`q=${'x'.repeat(201)}`)).statusCode).toBe(422);
    expect((await list('q=')).statusCode).toBe(422);
  });

  it('GET /v1/tags lists the tags with their counts, most used first', async () => {
    const ws = await h.workspace();
    await upsert(h, ws, { email: 'a@example.com', tags: ['VIP', 'beta'] });
    await upsert(h, ws, { email: 'b@example.com', tags: ['vip'] });
    await upsert(h, ws, { email: 'c@example.com', tags: ['Vip', 'Customer'] });
    const res = await h.call(ws.key, 'GET', '/v1/tags');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual([
      { tag: 'VIP', contacts: 3 },
      { tag: 'beta', contacts: 1 },
      { tag: 'Customer', contacts: 1 },
    ]);
    expect((await h.call(ws.key, 'GET', '/v1/tags?limit=1')).json().data).toHaveLength(1);
  });

  it('a segment condition { tag, has } matches in any case; bad ones are 422 at their path', async () => {
    const ws = await h.workspace();
    await upsert(h, ws, { email: 'ada@example.com', tags: ['VIP'] });
    await upsert(h, ws, { email: 'bob@example.com', tags: ['other'] });
    await upsert(h, ws, { email: 'cy@example.com' });
    const preview = async (filter: unknown) => {
      const res = await h.call(ws.key, 'POST', '/v1/segments/preview', { filter });
      expect(res.statusCode, res.body).toBe(200);
      return (res.json().sample as { email: string }[]).map((c) => c.email.split('@')[0]).sort();
    };
    expect(await preview({ tag: 'vip', has: true })).toEqual(['ada']);
    expect(await preview({ tag: 'VIP', has: false })).toEqual(['bob', 'cy']);
    expect(
      await preview({
        all: [
          { tag: 'vip', has: false },
          { tag: 'other', has: false },
        ],
      }),
    ).toEqual(['cy']);
    expect(
      await preview({
        any: [
          { tag: 'vip', has: true },
          { field: 'email', op: 'startsWith', value: 'b' },
        ],
      }),
    ).toEqual(['ada', 'bob']);
    const seg = await h.call(ws.key, 'POST', '/v1/segments', { name: 'VIPs', filter: { tag: 'Vip', has: true } });
    expect(seg.statusCode, seg.body).toBe(201);
    expect((await h.call(ws.key, 'GET', `/v1/segments/${seg.json().id}/count`)).json()).toEqual({
      count: 1,
      subscribed: 1,
    });
    for (const [filter, paths] of [
      [{ tag: 'x'.repeat(65), has: true }, ['/filter/tag']],
      [{ tag: '', has: true }, ['/filter/tag']],
      [{ tag: 'vip' }, ['/filter/has']],
      [{ tag: 'vip', has: 'yes' }, ['/filter/has']],
      [{ tag: 3, has: true }, ['/filter/tag']],
      [{ all: [{ tag: 'vip', has: true, extra: 1 }] }, ['/filter/all/0/extra']],
    ] as const) {
      const res = await h.call(ws.key, 'POST', '/v1/segments/preview', { filter });
      expect(res.statusCode, JSON.stringify(filter)).toBe(422);
      expect(res.json().errors.map((e: { path: string }) => e.path)).toEqual(paths);
    }
  });

  it("another workspace's tags are not seen: not in GET /v1/tags, nor matched by ?tag= or a segment", async () => {
    const ws = await h.workspace();
    const other = await h.workspace('Other');
    await upsert(h, other, { email: 'ada@example.com', firstName: 'Ada', tags: ['VIP'] });
    await upsert(h, ws, { email: 'bob@example.com' });
    expect((await h.call(ws.key, 'GET', '/v1/tags')).json().data).toEqual([]);
    expect((await h.call(ws.key, 'GET', '/v1/contacts?tag=VIP')).json().data).toEqual([]);
    expect((await h.call(ws.key, 'GET', '/v1/contacts/count?tag=VIP')).json().count).toBe(0);
    expect((await h.call(ws.key, 'GET', '/v1/contacts?q=ada')).json().data).toEqual([]);
    const res = await h.call(ws.key, 'POST', '/v1/segments/preview', { filter: { tag: 'VIP', has: true } });
    expect(res.json().count).toBe(0);
    expect((await h.call(other.key, 'GET', '/v1/tags')).json().data).toEqual([{ tag: 'VIP', contacts: 1 }]);
  });

  it('imports read a tags column (comma-separated or a Mailchimp quoted list) and add them; the export writes them back', async () => {
    const ws = await h.workspace();
    const existing = await upsert(h, ws, { email: 'ada@example.com', tags: ['Old'] });
    const csv = [
      'Email Address,First Name,TAGS',
      'ada@example.com,Ada,"""VIP"",""Customer"""',
      'bob@example.com,Bob,"beta, vip ,BETA"',
      'cy@example.com,Cy,',
      `dan@example.com,Dan,${'x'.repeat(65)}`,
    ].join('\n');
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/contacts/imports',
      headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'text/csv' },
      payload: csv,
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ status: 'COMPLETED', created: 2, updated: 1, skipped: 1 });
    expect(res.json().errors[0].line).toBe(5);
    const list = (await h.call(ws.key, 'GET', '/v1/contacts')).json().data as { email: string; tags: string[] }[];
    const byEmail = new Map(list.map((c) => [c.email, c.tags]));
    expect(byEmail.get('ada@example.com')).toEqual(['Old', 'VIP', 'Customer']);
    expect(byEmail.get('bob@example.com')).toEqual(['beta', 'vip']);
    expect(byEmail.get('cy@example.com')).toEqual([]);
    // The existing contact's tags changed: contact.updated "tags" from the import.
    const events = await h.db.kysely
      .selectFrom('events')
      .select('data')
      .where('contact_id', '=', existing.id)
      .where('type', '=', 'contact.updated')
      .execute();
    expect(events.some((e) => JSON.stringify(e.data).includes('tags'))).toBe(true);
    // NDJSON: a tags array.
    const nd = await h.app.inject({
      method: 'POST',
      url: '/v1/contacts/imports',
      headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'application/x-ndjson' },
      payload: '{"email":"eve@example.com","tags":["a","A","b"]}\n{"email":"fay@example.com","tags":[""]}\n',
    });
    expect(nd.json()).toMatchObject({ created: 1, skipped: 1 });
    expect((await h.call(ws.key, 'GET', '/v1/contacts?email=eve@example.com')).json().data[0].tags).toEqual(['a', 'b']);
    // The export has a tags column the import reads back.
    const exported = await h.call(ws.key, 'GET', '/v1/contacts/export');
    const lines = exported.body.split('\r\n');
    expect(lines[0]).toBe('id,email,firstName,lastName,status,suppressed,properties,createdAt,updatedAt,tags,timezone');
    expect(lines.find((l) => l.includes('ada@example.com'))).toMatch(/,"Old,VIP,Customer",$/);
  });

  it('a tags cell: comma-separated or quoted, and what the export writes reads back the same', () => {
    expect(parseTagCell('VIP, Customer')).toEqual(['VIP', ' Customer']);
    expect(parseTagCell('"VIP","Customer"')).toEqual(['VIP', 'Customer']);
    expect(parseTagCell('"a, b" , "say ""hi"""')).toEqual(['a, b', 'say "hi"']);
    expect(parseTagCell('"broken,x')).toEqual(['"broken', 'x']);
    for (const tags of [['VIP', 'Customer'], ['a, b', 'c'], ['say "hi"'], []])
      expect(parseTagCell(tagCell(tags))).toEqual(tags);
  });

  it('deleting a contact deletes its tags', async () => {
    const ws = await h.workspace();
    const c = await upsert(h, ws, { email: 'ada@example.com', tags: ['VIP'] });
    expect((await h.call(ws.key, 'DELETE', `/v1/contacts/${c.id}`)).statusCode).toBe(204);
    expect(await tagRows(h, ws)).toEqual([]);
  });
});
