import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { pruneOldEvents } from '../../src/outbox/events/events.service.js';
import { recordEvents } from '../../src/outbox/events/events.repository.js';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { insertContact, insertTopic, verifiedDomain } from '../helpers/fixtures.js';
import { useSending } from '../helpers/sending.js';

let slugs = 0;

describeApi('the event stream', (h) => {
  const sending = useSending(h, { workerId: 'events-worker', leaseMs: 5000, batchSize: 10 });

  const eventsOf = async (ws: TestWorkspace, query = '') => {
    const res = await h.call(ws.key, 'GET', `/v1/events?limit=100${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as {
      id: string;
      type: string;
      contactId: string | null;
      broadcastId: string | null;
      deliveryId: string | null;
      data: Record<string, unknown>;
      occurredAt: string;
    }[];
  };
  const types = (events: { type: string }[]) => events.map((e) => e.type).reverse();

  async function publishedForm(ws: TestWorkspace) {
    const slug = `events-${h.dbName}-${++slugs}`;
    const created = await h.call(ws.key, 'POST', '/v1/forms', {
      name: 'Newsletter',
      type: 'SIGN_UP',
      slug,
      fieldMapping: { email: 'email', first_name: 'firstName' },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect((await h.call(ws.key, 'POST', `/v1/forms/${created.json().id}/publish`)).statusCode).toBe(200);
    return { id: created.json().id as string, formGroupId: created.json().formGroupId as string, slug };
  }
  const signUp = (slug: string, body: string) =>
    h.app.inject({
      method: 'POST',
      url: `/f/${slug}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: body,
    });

  it('a sign-up writes contact.created, contact.subscribed and form.submitted, with the ids and data of each', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws);
    expect((await signUp(form.slug, 'email=ada%40example.com&first_name=Ada')).statusCode).toBe(200);
    const events = await eventsOf(ws);
    expect(types(events)).toEqual(['contact.created', 'contact.subscribed', 'form.submitted']);
    const contact = await h.db.kysely
      .selectFrom('contacts')
      .select('id')
      .where('workspace_id', '=', ws.id)
      .executeTakeFirstOrThrow();
    for (const e of events) {
      expect(e.contactId).toBe(contact.id);
      expect(e.id).toMatch(/^evt_[0-9A-Z]{26}$/);
      expect(e.occurredAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    expect(events.find((e) => e.type === 'contact.created')!.data).toMatchObject({
      email: 'ada@example.com',
      status: 'SUBSCRIBED',
      source: 'form',
    });
    expect(events.find((e) => e.type === 'form.submitted')!.data).toMatchObject({
      formId: form.id,
      formGroupId: form.formGroupId,
      source: 'HOSTED',
      fields: { email: 'ada@example.com', first_name: 'Ada' },
    });
    // The same address again: an existing SUBSCRIBED contact is not created again; the form is submitted again.
    expect((await signUp(form.slug, 'email=ada%40example.com')).statusCode).toBe(200);
    expect(types(await eventsOf(ws)).slice(3)).toEqual(['form.submitted']);
  });

  it('a submission whose transaction fails leaves neither the contact nor any of its events', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws);
    // Make a write of the submission's transaction fail after the contact and its events were written.
    if (h.dbName === 'sqlite') {
      await sql`create trigger fail_counters before insert on submissions begin select raise(abort, 'boom'); end`.execute(
        h.db.kysely,
      );
    } else {
      await sql`create function fail_counters() returns trigger language plpgsql as $$ begin raise exception 'boom'; end $$`.execute(
        h.db.kysely,
      );
      await sql`create trigger fail_counters before insert on submissions for each row execute function fail_counters()`.execute(
        h.db.kysely,
      );
    }
    try {
      const res = await signUp(form.slug, 'email=grace%40example.com');
      expect(res.statusCode).toBe(500);
    } finally {
      await sql
        .raw(
          h.dbName === 'sqlite'
            ? 'drop trigger fail_counters'
            : 'drop trigger fail_counters on submissions; drop function fail_counters()',
        )
        .execute(h.db.kysely);
    }
    expect(await h.db.kysely.selectFrom('contacts').select('id').where('workspace_id', '=', ws.id).execute()).toEqual(
      [],
    );
    expect(await eventsOf(ws)).toEqual([]);
  });

  it('contacts through the API: created, updated, unsubscribed, topic subscriptions, deleted; the activity of one contact', async () => {
    const ws = await h.workspace();
    const topic = await insertTopic(h, ws, 'OPT_IN');
    const created = await h.call(ws.key, 'POST', '/v1/contacts', { email: 'alan@example.com', firstName: 'Alan' });
    const id = created.json().id as string;
    await h.call(ws.key, 'PUT', `/v1/contacts/${id}`, { lastName: 'Turing' });
    await h.call(ws.key, 'PUT', `/v1/contacts/${id}`, { topics: [{ id: topic, subscribed: false }] });
    await h.call(ws.key, 'PUT', `/v1/contacts/${id}`, { topics: [{ id: topic, subscribed: false }] }); // no change, no event
    await h.call(ws.key, 'PUT', `/v1/contacts/${id}`, { status: 'UNSUBSCRIBED' });
    await h.call(ws.key, 'PUT', `/v1/contacts/${id}`, { status: 'SUBSCRIBED' });
    const activity = await h.call(ws.key, 'GET', `/v1/contacts/${id}/activity`);
    expect(activity.statusCode).toBe(200);
    expect(types(activity.json().data)).toEqual([
      'contact.created',
      'contact.subscribed',
      'contact.updated',
      'contact.unsubscribed',
      'contact.unsubscribed',
      'contact.subscribed',
    ]);
    const [topicOff] = activity.json().data.filter((e: { data: { topicId?: string } }) => e.data.topicId);
    expect(topicOff).toMatchObject({
      type: 'contact.unsubscribed',
      data: { topicId: topic, email: 'alan@example.com' },
    });
    expect(activity.json().data.find((e: { type: string }) => e.type === 'contact.updated').data).toMatchObject({
      fields: ['lastName'],
      source: 'api',
    });

    expect((await h.call(ws.key, 'DELETE', `/v1/contacts/${id}`)).statusCode).toBe(204);
    const deleted = await eventsOf(ws, '&type=contact.deleted');
    expect(deleted).toHaveLength(1);
    expect(deleted[0]).toMatchObject({ contactId: id, data: { email: 'alan@example.com' } });
    // The contact is gone: its activity is 404, its events stay in the stream.
    expect((await h.call(ws.key, 'GET', `/v1/contacts/${id}/activity`)).statusCode).toBe(404);
    expect(await eventsOf(ws, `&contactId=${id}`)).toHaveLength(7);
  });

  it('an import writes the events of its rows in each batch', async () => {
    const ws = await h.workspace();
    await h.call(ws.key, 'POST', '/v1/contacts', { email: 'old@example.com', status: 'SUBSCRIBED' });
    const csv =
      'email,first_name,status\nnew1@example.com,N1,\nnew2@example.com,N2,UNSUBSCRIBED\nold@example.com,Old,UNSUBSCRIBED\n';
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/contacts/imports',
      headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'text/csv' },
      payload: csv,
    });
    expect(res.statusCode, res.body).toBe(201);
    const events = (await eventsOf(ws)).filter((e) => e.data.source === 'import');
    const summary = events.map((e) => `${e.type} ${e.data.email}`).sort();
    expect(summary).toEqual([
      'contact.created new1@example.com',
      'contact.created new2@example.com',
      'contact.subscribed new1@example.com',
      'contact.unsubscribed old@example.com',
      'contact.updated old@example.com',
    ]);
  });

  it('a broadcast writes broadcast.sending, email.sent per recipient and broadcast.sent; a hard bounce email.bounced', async () => {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, `ev${ws.id.slice(-8).toLowerCase()}.test`);
    const ids = [];
    for (const email of ['a@example.com', 'b@example.com', 'gone@example.com'])
      ids.push(await insertContact(h, ws, { email }));
    const bc = (
      await h.call(ws.key, 'POST', '/v1/broadcasts', {
        name: 'News',
        from: `news@${domain.name}`,
        emailContent: { subject: 'Hi', html: '<p>Hi</p>' },
      })
    ).json();
    sending.smtp.setPolicy((rcpt) =>
      rcpt === 'gone@example.com' ? { code: 550, message: '5.1.1 No such user' } : null,
    );
    expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${bc.id}/send`)).statusCode).toBe(202);
    await sending.drain();
    const events = await eventsOf(ws, `&broadcastId=${bc.id}`);
    const t = types(events);
    expect(t[0]).toBe('broadcast.sending');
    expect(t.at(-1)).toBe('broadcast.sent');
    expect(t.filter((x) => x === 'email.sent')).toHaveLength(2);
    const bounced = events.find((e) => e.type === 'email.bounced')!;
    expect(bounced).toMatchObject({
      contactId: ids[2],
      broadcastId: bc.id,
      data: { email: 'gone@example.com', bounceClass: 'hard' },
    });
    expect(bounced.deliveryId).toMatch(/^dlv_/);
    // The contact's BOUNCED status is no "unsubscribed" event; the bounce says it.
    expect(await eventsOf(ws, '&type=contact.unsubscribed')).toEqual([]);
    const sent = events.find((e) => e.type === 'email.sent')!;
    expect(sent.data).toMatchObject({ messageId: expect.stringMatching(/^<dlv_/) });
  });

  it('GET /v1/events: filters, cursor pages, the read:contacts scope, and nothing of another workspace', async () => {
    const ws = await h.workspace();
    const other = await h.workspace();
    const now = new Date().toISOString();
    const old = new Date(Date.now() - 3_600_000).toISOString();
    await h.db.kysely.transaction().execute(async (trx) => {
      await recordEvents(
        trx,
        ws.id,
        Array.from({ length: 25 }, (_, i) => ({
          type: i % 2 ? ('email.opened' as const) : ('email.clicked' as const),
          contactId: `ct_${i}`,
          occurredAt: i < 5 ? old : now,
        })),
        now,
      );
      await recordEvents(trx, other.id, [{ type: 'email.opened' }], now);
    });
    const first = await h.call(ws.key, 'GET', '/v1/events?limit=10');
    expect(first.json().data).toHaveLength(10);
    const second = await h.call(ws.key, 'GET', `/v1/events?limit=10&cursor=${first.json().nextCursor}`);
    const third = await h.call(ws.key, 'GET', `/v1/events?limit=10&cursor=${second.json().nextCursor}`);
    expect(third.json().data).toHaveLength(5);
    expect(third.json().nextCursor).toBeNull();
    const all = [...first.json().data, ...second.json().data, ...third.json().data].map((e: { id: string }) => e.id);
    expect(new Set(all).size).toBe(25);
    expect([...all].sort().reverse()).toEqual(all); // newest first
    expect(await eventsOf(ws, '&type=email.opened')).toHaveLength(12);
    expect(await eventsOf(ws, '&contactId=ct_3')).toHaveLength(1);
    expect(await eventsOf(ws, `&since=${encodeURIComponent(now)}`)).toHaveLength(20);
    expect((await h.call(ws.key, 'GET', '/v1/events?since=yesterday')).statusCode).toBe(422);
    expect((await h.call(ws.key, 'GET', '/v1/events?type=email.read')).statusCode).toBe(422);
    expect(await eventsOf(other)).toHaveLength(1);
    const formsOnly = await h.key(ws, ['read:forms']);
    expect((await h.call(formsOnly, 'GET', '/v1/events')).statusCode).toBe(403);
    expect((await h.call(await h.key(ws, ['read:contacts']), 'GET', '/v1/events')).statusCode).toBe(200);
    // Another workspace's contact: its activity is 404, like a missing one.
    const theirs = await insertContact(h, other, { email: 'theirs@example.com' });
    expect((await h.call(ws.key, 'GET', `/v1/contacts/${theirs}/activity`)).statusCode).toBe(404);
  });

  it('retention deletes events older than the limit, a batch at a time, and keeps the rest', async () => {
    const ws = await h.workspace();
    const now = Date.now();
    const day = 86_400_000;
    await h.db.kysely.transaction().execute((trx) =>
      recordEvents(
        trx,
        ws.id,
        [
          ...Array.from({ length: 2500 }, () => ({
            type: 'email.opened' as const,
            occurredAt: new Date(now - 401 * day).toISOString(),
          })),
          { type: 'email.clicked', occurredAt: new Date(now - 399 * day).toISOString() },
        ],
        new Date(now).toISOString(),
      ),
    );
    let pruned = 0;
    for (let n = await pruneOldEvents(h.db, 400, now); n > 0; n = await pruneOldEvents(h.db, 400, now)) pruned += n;
    expect(pruned).toBeGreaterThanOrEqual(2500);
    expect(types(await eventsOf(ws))).toEqual(['email.clicked']);
  });
});
