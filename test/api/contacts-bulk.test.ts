import { expect, it } from 'vitest';
import { BulkService } from '../../src/audience/bulk/bulk.service.js';
import { describeApi, type Harness, type TestWorkspace } from '../helpers/app.js';

/** A well-formed broadcast id that names nothing. */
const MISSING_BROADCAST = 'bc_01ABCDEFGHJKMNPQRSTVWXYZ00';

/** POST /v1/contacts/bulk and its jobs (contract §18; docs/contacts.md "Bulk actions"). */

async function contacts(h: Harness, ws: TestWorkspace, n: number, extra: Record<string, unknown> = {}) {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await h.call(ws.key, 'POST', '/v1/contacts', { email: `c${i}@example.com`, ...extra });
    expect(res.statusCode, res.body).toBe(201);
    ids.push(res.json().id);
  }
  return ids;
}

async function start(h: Harness, ws: TestWorkspace, body: Record<string, unknown>) {
  const res = await h.call(ws.key, 'POST', '/v1/contacts/bulk', body);
  expect(res.statusCode, res.body).toBe(202);
  expect(res.headers.location).toBe(`/v1/contacts/bulk/${res.json().jobId}`);
  return res.json() as { jobId: string; matched: number };
}

/** The worker's job, run until no job is left. */
async function drain(service: BulkService) {
  for (let i = 0; i < 1000; i++) if ((await service.runBatch()) === 0) return;
  throw new Error('bulk jobs never drained');
}

async function job(h: Harness, ws: TestWorkspace, id: string) {
  const res = await h.call(ws.key, 'GET', `/v1/contacts/bulk/${id}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

async function tagsOf(h: Harness, ws: TestWorkspace) {
  const rows = await h.db.kysely
    .selectFrom('contact_tags')
    .select(['contact_id', 'tag'])
    .where('workspace_id', '=', ws.id)
    .orderBy('contact_id')
    .execute();
  return rows.map((r) => `${r.contact_id}:${r.tag}`);
}

async function eventTypes(h: Harness, ws: TestWorkspace, type: string) {
  return h.db.kysely
    .selectFrom('events')
    .select(['contact_id', 'data'])
    .where('workspace_id', '=', ws.id)
    .where('type', '=', type)
    .execute();
}

describeApi('contact bulk actions', (h) => {
  it('tag by ids: 202 { jobId, matched }, the worker tags them in batches, and a repeat is the same state', async () => {
    const ws = await h.workspace();
    const ids = await contacts(h, ws, 5);
    const service = new BulkService(h.db);
    service.batchSize = 2;
    const { jobId, matched } = await start(h, ws, { action: 'tag', tag: 'VIP', ids: [...ids.slice(0, 4), ids[0]] });
    expect(jobId).toMatch(/^bulk_/);
    expect(matched).toBe(4);
    let j = await job(h, ws, jobId);
    expect(j).toMatchObject({ status: 'RUNNING', action: 'tag', tag: 'VIP', matched: 4, processed: 0, failed: 0 });
    expect(await service.runBatch()).toBe(2);
    expect((await job(h, ws, jobId)).processed).toBe(2);
    await drain(service);
    j = await job(h, ws, jobId);
    expect(j).toMatchObject({ status: 'COMPLETED', processed: 4, failed: 0, error: null });
    expect(j.finishedAt).toBeTruthy();
    const tagged = await tagsOf(h, ws);
    expect(tagged).toEqual(ids.slice(0, 4).map((id) => `${id}:VIP`));
    expect(await eventTypes(h, ws, 'contact.updated')).toHaveLength(4);
    // Again, in another case: the same state, no new events.
    await start(h, ws, { action: 'tag', tag: 'vip', ids: ids.slice(0, 4) });
    await drain(service);
    expect(await tagsOf(h, ws)).toEqual(tagged);
    expect(await eventTypes(h, ws, 'contact.updated')).toHaveLength(4);
  });

  it('a job resumes from its cursor after a restart (a new service), and contacts created later are not in it', async () => {
    const ws = await h.workspace();
    const ids = await contacts(h, ws, 5);
    const first = new BulkService(h.db);
    first.batchSize = 2;
    const { jobId, matched } = await start(h, ws, { action: 'tag', tag: 'wave', filter: { all: [] } });
    expect(matched).toBe(5);
    await first.runBatch();
    const later = await contacts(h, ws, 1, { email: 'later@example.com' });
    // "Restarted": a new service takes the job where the committed cursor says.
    const second = new BulkService(h.db);
    second.batchSize = 2;
    await drain(second);
    expect(await job(h, ws, jobId)).toMatchObject({ status: 'COMPLETED', processed: 5 });
    expect(await tagsOf(h, ws)).toEqual(ids.map((id) => `${id}:wave`));
    expect((await tagsOf(h, ws)).some((t) => t.startsWith(later[0]!))).toBe(false);
  });

  it('untag by a filter; subscribe and unsubscribe a topic; the status without a topic; delete — with the API events', async () => {
    const ws = await h.workspace();
    const ids = await contacts(h, ws, 3, { tags: ['old'] });
    const service = new BulkService(h.db);
    await start(h, ws, { action: 'untag', tag: 'OLD', filter: { tag: 'old', has: true } });
    await drain(service);
    expect(await tagsOf(h, ws)).toEqual([]);

    const topic = (await h.call(ws.key, 'POST', '/v1/topics', { name: 'News', defaultSubscription: 'OPT_OUT' })).json();
    await start(h, ws, { action: 'subscribe', topicId: topic.id, ids: ids.slice(0, 2) });
    await drain(service);
    const subscribed = await h.call(ws.key, 'GET', `/v1/contacts/count?topicId=${topic.id}`);
    expect(subscribed.json().count).toBe(2);
    expect(
      (await eventTypes(h, ws, 'contact.subscribed')).filter((e) => String(e.data).includes(topic.id)),
    ).toHaveLength(2);
    await start(h, ws, { action: 'unsubscribe', topicId: topic.id, ids: ids.slice(0, 1) });
    await drain(service);
    expect((await h.call(ws.key, 'GET', `/v1/contacts/count?topicId=${topic.id}`)).json().count).toBe(1);

    // Without a topic: the contact's status, as PUT sets it.
    await start(h, ws, { action: 'unsubscribe', filter: { field: 'email', op: 'startsWith', value: 'c1' } });
    await drain(service);
    expect((await h.call(ws.key, 'GET', `/v1/contacts/${ids[1]}`)).json().status).toBe('UNSUBSCRIBED');
    const unsubscribed = await eventTypes(h, ws, 'contact.unsubscribed');
    expect(unsubscribed.filter((e) => e.contact_id === ids[1] && !String(e.data).includes('topicId'))).toHaveLength(1);
    await start(h, ws, { action: 'subscribe', ids: [ids[1]] });
    await drain(service);
    expect((await h.call(ws.key, 'GET', `/v1/contacts/${ids[1]}`)).json().status).toBe('SUBSCRIBED');

    const { matched } = await start(h, ws, { action: 'delete', ids: ids.slice(1) });
    expect(matched).toBe(2);
    await drain(service);
    expect((await h.call(ws.key, 'GET', '/v1/contacts/count')).json().count).toBe(1);
    expect((await eventTypes(h, ws, 'contact.deleted')).map((e) => e.contact_id).sort()).toEqual(ids.slice(1).sort());
  });

  it('a contact with 100 tags already counts as failed for a new tag', async () => {
    const ws = await h.workspace();
    const full = Array.from({ length: 100 }, (_, i) => `t${i}`);
    const [a] = await contacts(h, ws, 1, { tags: full });
    const [b] = await contacts(h, ws, 1, { email: 'b@example.com' });
    const { jobId } = await start(h, ws, { action: 'tag', tag: 'one-more', ids: [a, b] });
    await drain(new BulkService(h.db));
    expect(await job(h, ws, jobId)).toMatchObject({ status: 'COMPLETED', processed: 2, failed: 1 });
    expect((await h.call(ws.key, 'GET', `/v1/contacts/${a}`)).json().tags).toEqual(full);
    expect((await h.call(ws.key, 'GET', `/v1/contacts/${b}`)).json().tags).toEqual(['one-more']);
  });

  it('bad requests are 4xx and start nothing', async () => {
    const ws = await h.workspace();
    const other = await h.workspace('Other');
    const [id] = await contacts(h, ws, 1);
    const [foreign] = await contacts(h, other, 1);
    const topic = (
      await h.call(other.key, 'POST', '/v1/topics', { name: 'Theirs', defaultSubscription: 'OPT_IN' })
    ).json();
    const theirBroadcast = (await h.call(other.key, 'POST', '/v1/broadcasts', { name: 'Theirs' })).json();
    expect(theirBroadcast.id).toMatch(/^bc_/);
    const cases: [Record<string, unknown>, number, string, string[]][] = [
      [{ action: 'tag', tag: 'x' }, 422, 'validation_failed', ['']],
      [{ action: 'tag', tag: 'x', ids: [id], filter: { all: [] } }, 422, 'validation_failed', ['/filter']],
      [{ action: 'tag', ids: [id] }, 422, 'validation_failed', ['/tag']],
      [{ action: 'untag', tag: '  ', ids: [id] }, 422, 'validation_failed', ['/tag']],
      [{ action: 'tag', tag: 'x'.repeat(65), ids: [id] }, 422, 'validation_failed', ['/tag']],
      [{ action: 'delete', tag: 'x', ids: [id] }, 422, 'validation_failed', ['/tag']],
      [{ action: 'delete', topicId: 'topic_x', ids: [id] }, 422, 'validation_failed', ['/topicId']],
      [{ action: 'archive', ids: [id] }, 422, 'validation_failed', ['/action']],
      [{ action: 'delete', ids: [] }, 422, 'validation_failed', ['/ids']],
      [
        { action: 'delete', filter: { field: 'nope', op: 'eq', value: 1 } },
        422,
        'validation_failed',
        ['/filter/field'],
      ],
      [{ action: 'subscribe', topicId: topic.id, ids: [id] }, 422, 'invalid_reference', ['/topicId']],
      [
        { action: 'delete', filter: { topic: topic.id, subscribed: true } },
        422,
        'invalid_reference',
        ['/filter/topic'],
      ],
      [{ action: 'delete', ids: [id, foreign] }, 422, 'invalid_reference', ['/ids/1']],
      // An engagement condition on a broadcast that is not the workspace's would be true of everyone with
      // `happened: false` (a delete of every contact): refused like the segments' (contract §3, §18).
      [
        { action: 'delete', filter: { engagement: 'opened', broadcastId: MISSING_BROADCAST, happened: false } },
        422,
        'invalid_reference',
        ['/filter/broadcastId'],
      ],
      [
        {
          action: 'delete',
          filter: { all: [{ engagement: 'clicked', broadcastId: theirBroadcast.id, happened: false }] },
        },
        422,
        'invalid_reference',
        ['/filter/all/0/broadcastId'],
      ],
    ];
    for (const [body, status, code, paths] of cases) {
      const res = await h.call(ws.key, 'POST', '/v1/contacts/bulk', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(status);
      expect(res.json().code, JSON.stringify(body)).toBe(code);
      expect(
        res.json().errors.map((e: { path: string }) => e.path),
        JSON.stringify(body),
      ).toEqual(paths);
    }
    const jobs = await h.db.kysely
      .selectFrom('contact_bulk_jobs')
      .select('id')
      .where('workspace_id', 'in', [ws.id, other.id])
      .execute();
    expect(jobs).toEqual([]);
    // Scope: read:contacts may read a job, not start one.
    const reader = await h.key(ws, ['read:contacts']);
    const res = await h.call(reader, 'POST', '/v1/contacts/bulk', { action: 'delete', ids: [id] });
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toContain('write:contacts');
  });

  it("another workspace's job is 404, and a job never touches another workspace's contacts", async () => {
    const ws = await h.workspace();
    const other = await h.workspace('Other');
    await contacts(h, ws, 2);
    const theirs = await contacts(h, other, 2);
    const { jobId, matched } = await start(h, ws, { action: 'delete', filter: { all: [] } });
    expect(matched).toBe(2);
    const res = await h.call(other.key, 'GET', `/v1/contacts/bulk/${jobId}`);
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('not_found');
    await drain(new BulkService(h.db));
    expect((await h.call(ws.key, 'GET', '/v1/contacts/count')).json().count).toBe(0);
    expect((await h.call(other.key, 'GET', '/v1/contacts/count')).json().count).toBe(2);
    for (const id of theirs) expect((await h.call(other.key, 'GET', `/v1/contacts/${id}`)).statusCode).toBe(200);
    expect((await h.call(ws.key, 'GET', '/v1/contacts/bulk/bulk_unknown')).statusCode).toBe(404);
  });

  it('a job whose topic is deleted meanwhile ends FAILED with its reason', async () => {
    const ws = await h.workspace();
    const ids = await contacts(h, ws, 1);
    const topic = (await h.call(ws.key, 'POST', '/v1/topics', { name: 'Gone', defaultSubscription: 'OPT_IN' })).json();
    const { jobId } = await start(h, ws, { action: 'unsubscribe', topicId: topic.id, ids });
    expect((await h.call(ws.key, 'DELETE', `/v1/topics/${topic.id}`)).statusCode).toBe(204);
    await drain(new BulkService(h.db));
    expect(await job(h, ws, jobId)).toMatchObject({ status: 'FAILED', error: 'the topic was deleted', processed: 0 });
  });
});
