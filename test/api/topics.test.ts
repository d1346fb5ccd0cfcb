import { expect, it } from 'vitest';
import { describeApi, type Harness, type TestWorkspace } from '../helpers/app.js';

const TOPIC_KEYS = ['createdAt', 'defaultSubscription', 'id', 'name', 'updatedAt'];
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const emoji = (n: number) => '😀'.repeat(n);

async function createTopic(h: Harness, ws: TestWorkspace, body: Record<string, unknown> = {}) {
  const res = await h.call(ws.key, 'POST', '/v1/topics', {
    name: 'Product news',
    defaultSubscription: 'OPT_IN',
    ...body,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function insertBroadcast(h: Harness, ws: TestWorkspace, topicId: string) {
  const id = `bc_01JD${String(Math.floor(Math.random() * 1e9)).padStart(22, '0')}`;
  const now = new Date().toISOString();
  await h.db.kysely
    .insertInto('broadcasts')
    .values({
      id,
      workspace_id: ws.id,
      name: 'Launch',
      status: 'DRAFT',
      from_address: null,
      reply_to: null,
      subject: null,
      html: null,
      text: null,
      preview_text: null,
      editor_content: null,
      topic_id: topicId,
      segment_id: null,
      send_at: null,
      created_at: now,
      updated_at: now,
      sent_at: null,
    })
    .execute();
  return id;
}

describeApi('topics', (h) => {
  it('POST creates a topic (201, Location) with every field; GET returns it', async () => {
    const ws = await h.workspace();
    const res = await h.call(ws.key, 'POST', '/v1/topics', { name: 'Weekly digest', defaultSubscription: 'OPT_OUT' });
    expect(res.statusCode).toBe(201);
    const topic = res.json();
    expect(Object.keys(topic).sort()).toEqual(TOPIC_KEYS);
    expect(topic).toMatchObject({ name: 'Weekly digest', defaultSubscription: 'OPT_OUT' });
    expect(topic.id).toMatch(/^topic_/);
    expect(topic.createdAt).toMatch(ISO);
    expect(topic.updatedAt).toBe(topic.createdAt);
    expect(res.headers.location).toBe(`/v1/topics/${topic.id}`);
    expect((await h.call(ws.key, 'GET', `/v1/topics/${topic.id}`)).json()).toEqual(topic);
  });

  it.each([
    ['no defaultSubscription', { name: 'x' }, ['/defaultSubscription']],
    ['no name', { defaultSubscription: 'OPT_IN' }, ['/name']],
    ['bad defaultSubscription', { name: 'x', defaultSubscription: 'MAYBE' }, ['/defaultSubscription']],
    ['empty name', { name: '', defaultSubscription: 'OPT_IN' }, ['/name']],
    ['201 emoji', { name: emoji(201), defaultSubscription: 'OPT_IN' }, ['/name']],
    ['unknown field', { name: 'x', defaultSubscription: 'OPT_IN', color: 'red' }, ['/color']],
  ])('POST rejects %s (422, nothing created)', async (_label, body, paths) => {
    const ws = await h.workspace();
    const res = await h.call(ws.key, 'POST', '/v1/topics', body);
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('validation_failed');
    expect(
      res
        .json()
        .errors.map((e: { path: string }) => e.path)
        .sort(),
    ).toEqual(paths);
    expect((await h.call(ws.key, 'GET', '/v1/topics')).json().data).toEqual([]);
  });

  it('accepts a name of 200 emoji', async () => {
    const ws = await h.workspace();
    expect((await createTopic(h, ws, { name: emoji(200) })).name).toBe(emoji(200));
  });

  it('lists newest first with cursor pagination', async () => {
    const ws = await h.workspace();
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await createTopic(h, ws, { name: `t${i}` }));
    const first = (await h.call(ws.key, 'GET', '/v1/topics?limit=2')).json();
    expect(first.data.map((t: { name: string }) => t.name)).toEqual(['t4', 't3']);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = (await h.call(ws.key, 'GET', `/v1/topics?limit=2&cursor=${first.nextCursor}`)).json();
    expect(second.data.map((t: { name: string }) => t.name)).toEqual(['t2', 't1']);
    const third = (await h.call(ws.key, 'GET', `/v1/topics?limit=2&cursor=${second.nextCursor}`)).json();
    expect(third).toEqual({ data: [made[0]], nextCursor: null });
    expect((await h.call(ws.key, 'GET', '/v1/topics?limit=0')).statusCode).toBe(422);
    expect((await h.call(ws.key, 'GET', '/v1/topics?cursor=nope')).statusCode).toBe(422);
  });

  it('PUT renames and refreshes updatedAt; defaultSubscription cannot change (422, nothing changed)', async () => {
    const ws = await h.workspace();
    const topic = await createTopic(h, ws);
    await new Promise((r) => setTimeout(r, 5));
    const renamed = await h.call(ws.key, 'PUT', `/v1/topics/${topic.id}`, { name: 'Renamed' });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json()).toMatchObject({
      id: topic.id,
      name: 'Renamed',
      defaultSubscription: 'OPT_IN',
      createdAt: topic.createdAt,
    });
    expect(renamed.json().updatedAt > topic.updatedAt).toBe(true);

    const change = await h.call(ws.key, 'PUT', `/v1/topics/${topic.id}`, {
      name: 'Other',
      defaultSubscription: 'OPT_OUT',
    });
    expect(change.statusCode).toBe(422);
    expect(change.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/defaultSubscription' }] });
    expect((await h.call(ws.key, 'GET', `/v1/topics/${topic.id}`)).json()).toMatchObject({
      name: 'Renamed',
      defaultSubscription: 'OPT_IN',
    });

    // The whole object sent back is fine: the same defaultSubscription and the path's id.
    const same = await h.call(ws.key, 'PUT', `/v1/topics/${topic.id}`, {
      id: topic.id,
      name: 'Again',
      defaultSubscription: 'OPT_IN',
    });
    expect(same.statusCode).toBe(200);
    expect(same.json().name).toBe('Again');
    expect((await h.call(ws.key, 'PUT', `/v1/topics/${topic.id}`, { id: 'topic_other' })).json()).toMatchObject({
      code: 'validation_failed',
      errors: [{ path: '/id' }],
    });
    expect((await h.call(ws.key, 'PUT', `/v1/topics/${topic.id}`, { name: '' })).statusCode).toBe(422);
    expect((await h.call(ws.key, 'PUT', `/v1/topics/${topic.id}`, { createdAt: 'x' })).statusCode).toBe(422);
    expect((await h.call(ws.key, 'GET', `/v1/topics/${topic.id}`)).json().name).toBe('Again');
  });

  it("DELETE removes the topic (204, then 404) and the contacts' choices about it", async () => {
    const ws = await h.workspace();
    const topic = await createTopic(h, ws);
    const contact = (
      await h.call(ws.key, 'POST', '/v1/contacts', {
        email: 'a@example.com',
        topics: [{ id: topic.id, subscribed: false }],
      })
    ).json();
    expect(contact.topics).toEqual([{ id: topic.id, name: topic.name, subscribed: false }]);
    const res = await h.call(ws.key, 'DELETE', `/v1/topics/${topic.id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await h.call(ws.key, 'GET', `/v1/topics/${topic.id}`)).statusCode).toBe(404);
    expect((await h.call(ws.key, 'DELETE', `/v1/topics/${topic.id}`)).statusCode).toBe(404);
    expect((await h.call(ws.key, 'GET', `/v1/contacts/${contact.id}`)).json().topics).toEqual([]);
    expect(
      await h.db.kysely.selectFrom('contact_topics').selectAll().where('topic_id', '=', topic.id).execute(),
    ).toEqual([]);
  });

  it('a topic a broadcast references cannot be deleted: 409 resource_in_use, nothing changed', async () => {
    const ws = await h.workspace();
    const topic = await createTopic(h, ws);
    const broadcastId = await insertBroadcast(h, ws, topic.id);
    const res = await h.call(ws.key, 'DELETE', `/v1/topics/${topic.id}`);
    expect(res.statusCode).toBe(409);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ code: 'resource_in_use', status: 409 });
    expect(res.json().detail).toContain('broadcast');
    expect((await h.call(ws.key, 'GET', `/v1/topics/${topic.id}`)).statusCode).toBe(200);
    await h.db.kysely.deleteFrom('broadcasts').where('id', '=', broadcastId).execute();
    expect((await h.call(ws.key, 'DELETE', `/v1/topics/${topic.id}`)).statusCode).toBe(204);
  });

  it("another workspace's topic is 404 for every operation, and untouched", async () => {
    const ws = await h.workspace();
    const other = await h.workspace();
    const topic = await createTopic(h, other);
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { name: 'Mine now' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await h.call(ws.key, method, `/v1/topics/${topic.id}`, body);
      expect(res.statusCode, method).toBe(404);
      expect(res.json().code).toBe('not_found');
    }
    expect((await h.call(ws.key, 'GET', '/v1/topics')).json().data).toEqual([]);
    expect((await h.call(other.key, 'GET', `/v1/topics/${topic.id}`)).json()).toEqual(topic);
  });

  it('scopes: read:contacts reads, write:contacts writes (and reads), other scopes get 403', async () => {
    const ws = await h.workspace();
    const topic = await createTopic(h, ws);
    const reader = await h.key(ws, ['read:contacts']);
    const writer = await h.key(ws, ['write:contacts']);
    const stranger = await h.key(ws, ['write:forms', 'read:broadcasts']);
    expect((await h.call(reader, 'GET', '/v1/topics')).statusCode).toBe(200);
    expect((await h.call(reader, 'GET', `/v1/topics/${topic.id}`)).statusCode).toBe(200);
    for (const [method, url, body] of [
      ['POST', '/v1/topics', { name: 'x', defaultSubscription: 'OPT_IN' }],
      ['PUT', `/v1/topics/${topic.id}`, { name: 'x' }],
      ['DELETE', `/v1/topics/${topic.id}`, undefined],
    ] as const) {
      const res = await h.call(reader, method, url, body);
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.json()).toMatchObject({ code: 'insufficient_scope' });
      expect(res.json().detail).toContain('write:contacts');
    }
    for (const url of ['/v1/topics', `/v1/topics/${topic.id}`]) {
      const res = await h.call(stranger, 'GET', url);
      expect(res.statusCode).toBe(403);
      expect(res.json().detail).toContain('read:contacts');
    }
    expect((await h.call(writer, 'GET', '/v1/topics')).statusCode).toBe(200);
    expect((await h.call(writer, 'PUT', `/v1/topics/${topic.id}`, { name: 'By writer' })).statusCode).toBe(200);
    expect((await h.call(ws.key, 'GET', `/v1/topics/${topic.id}`)).json().name).toBe('By writer');
  });
});
