import { afterEach, expect, it, vi } from 'vitest';
import { compiledFilter, compiledFilterWithin } from '../../src/audience/segments/segments.repository.js';
import { inRange, type IdRange } from '../../src/audience/segments/slices.js';
import type { Filter } from '../../src/audience/segments/segments.filter.js';
import { engagementKindOf, noteEngagement, recomputeEngagement } from '../../src/audience/index.js';
import { ENGAGEMENT_INDEX_PREDICATE_0031 } from '../../src/db/migrations/0031_engagement_index.js';
import { ENGAGEMENT_INDEX_PREDICATE, recordEvents, type NewEvent } from '../../src/outbox/index.js';
import { describeApi, type Harness, type TestWorkspace } from '../helpers/app.js';
import { insertContact } from '../helpers/fixtures.js';

/** Engagement conditions in segments (contract §18, audience/segments/CONTEXT.md "Engagement"). */

afterEach(() => {
  vi.useRealTimers();
});

const DAY = 86_400_000;

describeApi('segments: engagement conditions', (h: Harness) => {
  async function event(ws: TestWorkspace, e: NewEvent & { occurredAt?: string }) {
    const now = e.occurredAt ?? new Date().toISOString();
    // As the writers of these events do (the delivery store, the tracking writer): the event and the contact's summary.
    await h.db.kysely.transaction().execute(async (trx) => {
      await recordEvents(trx, ws.id, [{ ...e, occurredAt: now }], now);
      const kind = engagementKindOf(e.type, e.machine);
      if (kind) await noteEngagement(trx, [{ workspaceId: ws.id, contactId: e.contactId, kind, at: now }]);
    });
  }

  async function broadcast(ws: TestWorkspace, name = 'News'): Promise<string> {
    const r = await h.call(ws.key, 'POST', '/v1/broadcasts', { name });
    expect(r.statusCode, r.body).toBe(201);
    return r.json().id;
  }

  async function matching(ws: TestWorkspace, filter: unknown): Promise<string[]> {
    const r = await h.call(ws.key, 'POST', '/v1/segments/preview', { filter });
    expect(r.statusCode, r.body).toBe(200);
    const emails = (r.json().sample as { email: string }[]).map((c) => c.email.split('@')[0]!).sort();
    expect(r.json().count).toBe(emails.length);
    return emails;
  }

  /** a: sent, opened and clicked b1 (a human); b: sent b1, opened and clicked by machines only; c: sent and opened b2; d: nothing. */
  async function world() {
    const ws = await h.workspace();
    const [b1, b2] = [await broadcast(ws, 'One'), await broadcast(ws, 'Two')];
    const ids: Record<string, string> = {};
    for (const n of ['a', 'b', 'c', 'd']) ids[n] = await insertContact(h, ws, { email: `${n}@example.com` });
    await event(ws, { type: 'email.sent', contactId: ids.a, broadcastId: b1 });
    await event(ws, { type: 'email.opened', contactId: ids.a, broadcastId: b1 });
    await event(ws, { type: 'email.clicked', contactId: ids.a, broadcastId: b1, url: 'https://x.example/' });
    await event(ws, { type: 'email.sent', contactId: ids.b, broadcastId: b1 });
    await event(ws, { type: 'email.opened', contactId: ids.b, broadcastId: b1, machine: true });
    await event(ws, {
      type: 'email.clicked',
      contactId: ids.b,
      broadcastId: b1,
      machine: true,
      url: 'https://x.example/',
    });
    await event(ws, { type: 'email.sent', contactId: ids.c, broadcastId: b2 });
    await event(ws, { type: 'email.opened', contactId: ids.c, broadcastId: b2 });
    // d has other events only: they are not engagement.
    await event(ws, { type: 'contact.created', contactId: ids.d });
    return { ws, b1, b2, ids };
  }

  it('delivered, opened and clicked, happened true and false, any broadcast or one; machine opens and clicks never count', async () => {
    const { ws, b1, b2 } = await world();
    const cases: [unknown, string[]][] = [
      [{ engagement: 'delivered', happened: true }, ['a', 'b', 'c']],
      [{ engagement: 'delivered', happened: false }, ['d']],
      [{ engagement: 'opened', happened: true }, ['a', 'c']],
      [{ engagement: 'opened', happened: false }, ['b', 'd']],
      [{ engagement: 'clicked', happened: true }, ['a']],
      [{ engagement: 'clicked', happened: false }, ['b', 'c', 'd']],
      [{ engagement: 'opened', broadcastId: b1, happened: true }, ['a']],
      [{ engagement: 'opened', broadcastId: b1, happened: false }, ['b', 'c', 'd']],
      [{ engagement: 'delivered', broadcastId: b2, happened: true }, ['c']],
      [{ engagement: 'clicked', broadcastId: b2, happened: true }, []],
      // Non-openers of b1: sent it, no human open.
      [
        {
          all: [
            { engagement: 'delivered', broadcastId: b1, happened: true },
            { engagement: 'opened', broadcastId: b1, happened: false },
          ],
        },
        ['b'],
      ],
      // With other conditions, in any group.
      [
        {
          any: [
            { field: 'email', op: 'startsWith', value: 'd' },
            { engagement: 'clicked', withinDays: 30, happened: true },
          ],
        },
        ['a', 'd'],
      ],
    ];
    for (const [filter, expected] of cases)
      expect(await matching(ws, filter), JSON.stringify(filter)).toEqual(expected);

    // A saved segment counts the same way.
    const seg = await h.call(ws.key, 'POST', '/v1/segments', {
      name: 'Openers',
      filter: { engagement: 'opened', happened: true },
    });
    expect(seg.statusCode, seg.body).toBe(201);
    expect(seg.json().filter).toEqual({ engagement: 'opened', happened: true });
    expect((await h.call(ws.key, 'GET', `/v1/segments/${seg.json().id}/count`)).json()).toEqual({
      count: 2,
      subscribed: 2,
    });
  });

  it('withinDays counts back from now, on the service clock', async () => {
    const ws = await h.workspace();
    const b = await broadcast(ws);
    const old = await insertContact(h, ws, { email: 'old@example.com' });
    const recent = await insertContact(h, ws, { email: 'recent@example.com' });
    const t0 = Date.now();
    const at = (daysAgo: number) => new Date(t0 - daysAgo * DAY).toISOString();
    await event(ws, { type: 'email.sent', contactId: old, broadcastId: b, occurredAt: at(10) });
    await event(ws, { type: 'email.opened', contactId: old, broadcastId: b, occurredAt: at(10) });
    await event(ws, { type: 'email.sent', contactId: recent, broadcastId: b, occurredAt: at(2) });
    await event(ws, { type: 'email.opened', contactId: recent, broadcastId: b, occurredAt: at(2) });

    const opened = (withinDays: number, happened = true) =>
      matching(ws, { engagement: 'opened', withinDays, happened });
    expect(await opened(7)).toEqual(['recent']);
    expect(await opened(7, false)).toEqual(['old']);
    expect(await opened(11)).toEqual(['old', 'recent']);
    expect(await opened(1)).toEqual([]);
    expect(await opened(3650)).toEqual(['old', 'recent']);

    // Six days later, the recent open is 8 days old.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(t0 + 6 * DAY);
    expect(await opened(7)).toEqual([]);
    expect(await opened(9)).toEqual(['recent']);
    expect(await matching(ws, { engagement: 'delivered', withinDays: 17, broadcastId: b, happened: true })).toEqual([
      'old',
      'recent',
    ]);
    expect(await matching(ws, { engagement: 'delivered', withinDays: 15, broadcastId: b, happened: true })).toEqual([
      'recent',
    ]);
  });

  it("another workspace's broadcast, or an unknown one, is 422 invalid_reference at its path, and nothing changes", async () => {
    const { ws, b1 } = await world();
    const other = await h.workspace();
    const foreign = await broadcast(other, 'Theirs');
    const filter = {
      all: [
        { engagement: 'opened', broadcastId: b1, happened: true },
        { any: [{ engagement: 'clicked', broadcastId: foreign, happened: false }] },
        { engagement: 'delivered', broadcastId: 'bc_nope', happened: true },
      ],
    };
    const created = await h.call(ws.key, 'POST', '/v1/segments', { name: 'X', filter });
    expect(created.statusCode, created.body).toBe(422);
    expect(created.json().code).toBe('invalid_reference');
    expect(created.json().errors).toEqual([
      { path: '/filter/all/1/any/0/broadcastId', message: 'names no broadcast of this workspace' },
      { path: '/filter/all/2/broadcastId', message: 'names no broadcast of this workspace' },
    ]);
    const count = await h.db.kysely
      .selectFrom('segments')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', ws.id)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(0);

    const preview = await h.call(ws.key, 'POST', '/v1/segments/preview', { filter });
    expect(preview.statusCode).toBe(422);
    expect(preview.json().code).toBe('invalid_reference');

    // An update that names one leaves the segment as it was.
    const seg = (
      await h.call(ws.key, 'POST', '/v1/segments', { name: 'Ok', filter: { engagement: 'opened', happened: true } })
    ).json();
    const put = await h.call(ws.key, 'PUT', `/v1/segments/${seg.id}`, {
      filter: { engagement: 'opened', broadcastId: foreign, happened: true },
    });
    expect(put.statusCode).toBe(422);
    expect((await h.call(ws.key, 'GET', `/v1/segments/${seg.id}`)).json().filter).toEqual({
      engagement: 'opened',
      happened: true,
    });
    // The other workspace's own segment on its broadcast is fine.
    const theirs = await h.call(other.key, 'POST', '/v1/segments', {
      name: 'Theirs',
      filter: { engagement: 'opened', broadcastId: foreign, happened: true },
    });
    expect(theirs.statusCode, theirs.body).toBe(201);
  });

  it('breaking the grammar is 422 validation_failed with one error per violation', async () => {
    const ws = await h.workspace();
    const r = await h.call(ws.key, 'POST', '/v1/segments', {
      name: 'Bad',
      filter: {
        all: [
          { engagement: 'bounced', happened: true },
          { engagement: 'opened', withinDays: 0, happened: true },
          { engagement: 'opened', withinDays: 3651, happened: true },
          { engagement: 'opened', withinDays: 1.5, happened: 'yes' },
          { engagement: 'clicked' },
          { engagement: 'clicked', happened: true, until: '2026-01-01T00:00:00Z' },
          { engagement: 'clicked', broadcastId: '', happened: true },
        ],
      },
    });
    expect(r.statusCode).toBe(422);
    expect(r.json().code).toBe('validation_failed');
    expect(r.json().errors.map((e: { path: string }) => e.path)).toEqual([
      '/filter/all/0/engagement',
      '/filter/all/1/withinDays',
      '/filter/all/2/withinDays',
      '/filter/all/3/withinDays',
      '/filter/all/3/happened',
      '/filter/all/4/happened',
      '/filter/all/5/until',
      '/filter/all/6/broadcastId',
    ]);
  });

  it('an engagement condition in another workspace sees only its own events', async () => {
    const { ws, b1 } = await world();
    const other = await h.workspace();
    // The same contact ids cannot exist twice; an event of another workspace naming this contact does not count here.
    const stray = await insertContact(h, other, { email: 'd@example.com' });
    const at = new Date().toISOString();
    await recordEvents(h.db.kysely, other.id, [{ type: 'email.opened', contactId: stray }], at);
    await noteEngagement(h.db.kysely, [{ workspaceId: other.id, contactId: stray, kind: 'opened', at }]);
    expect(await matching(other, { engagement: 'opened', happened: true })).toEqual(['d']);
    expect(await matching(ws, { engagement: 'opened', happened: true })).toEqual(['a', 'c']);
    expect(await matching(other, { engagement: 'opened', happened: false })).toEqual([]);
    expect(b1).toBeTruthy();
  });

  it("a condition without a broadcast reads the contact's columns; one with a broadcast probes events_broadcast_engagement", async () => {
    expect(ENGAGEMENT_INDEX_PREDICATE).toBe(ENGAGEMENT_INDEX_PREDICATE_0031);
    if (h.dbName !== 'sqlite') return; // PostgreSQL plans these few rows with a sequential scan; bench:engagement covers it
    const ws = await h.workspace();
    const where = await compiledFilter(h.db.kysely, 'sqlite', ws.id, {
      all: [
        { engagement: 'opened', withinDays: 30, happened: true },
        { engagement: 'delivered', broadcastId: 'bc_x', happened: false },
      ],
    });
    const q = h.db.kysely.selectFrom('contacts').select('id').where('workspace_id', '=', ws.id).where(where).compile();
    expect(q.sql).toContain('"contacts"."last_opened_at" >=');
    const { rows } = await h.db.kysely.executeQuery<{ detail: string }>({ ...q, sql: `explain query plan ${q.sql}` });
    const probes = rows.filter((r) => r.detail.includes('eng'));
    expect(probes.length).toBe(1);
    expect(probes[0]!.detail).toContain('USING COVERING INDEX events_broadcast_engagement');
  });

  it('within a slice of contacts, a condition on one broadcast reads that part of its list and matches as the probe does', async () => {
    const ws = await h.workspace();
    const b1 = await broadcast(ws, 'One');
    const ids: string[] = [];
    for (let i = 0; i < 24; i++)
      ids.push(await insertContact(h, ws, { email: `c${String(i).padStart(2, '0')}@example.com` }));
    ids.sort();
    // Every second contact got b1; every third of those opened it (a human), one more opened it as a machine.
    for (const [i, id] of ids.entries()) {
      if (i % 2) continue;
      await event(ws, { type: 'email.sent', contactId: id, broadcastId: b1 });
      if (i % 3 === 0) await event(ws, { type: 'email.opened', contactId: id, broadcastId: b1 });
      else if (i % 4 === 0) await event(ws, { type: 'email.opened', contactId: id, broadcastId: b1, machine: true });
    }
    const filter: Filter = {
      any: [
        {
          all: [
            { engagement: 'delivered', broadcastId: b1, happened: true },
            { engagement: 'opened', broadcastId: b1, happened: false },
          ],
        },
        { field: 'email', op: 'eq', value: 'c01@example.com' },
      ],
    };
    const within = await compiledFilterWithin(h.db.kysely, h.dbName, ws.id, filter);
    const probe = await compiledFilter(h.db.kysely, h.dbName, ws.id, filter);
    const all = h.db.kysely.selectFrom('contacts').select('contacts.id').where('contacts.workspace_id', '=', ws.id);
    const ranges: IdRange[] = [
      {},
      { after: ids[3], upTo: ids[15] },
      { after: ids[10] },
      { upTo: ids[7] },
      { from: ids[4], before: ids[20] },
      { before: ids[9] },
      { from: ids[0], before: ids[1] },
    ];
    for (const range of ranges) {
      const sliced = await inRange(all.where(within(range)), range)
        .orderBy('contacts.id')
        .execute();
      const probed = await inRange(all.where(probe), range).orderBy('contacts.id').execute();
      expect(sliced, JSON.stringify(range)).toEqual(probed);
    }
    // Non-openers among those sent b1: 0, 6, 12, 18 opened; 2, 4, 8, 10, 14, 16, 20, 22 did not; c01 by its address.
    const everyone = await inRange(all.where(within({ after: ids[0], upTo: ids[23] })), {
      after: ids[0],
      upTo: ids[23],
    }).execute();
    expect(everyone.map((r) => ids.indexOf(r.id)).sort((a, b) => a - b)).toEqual([1, 2, 4, 8, 10, 14, 16, 20, 22]);
    if (h.dbName !== 'sqlite') return; // PostgreSQL evaluates the whole range at once (no slices): the probe stays
    const q = inRange(all.where(within({ after: ids[3], upTo: ids[15] })), { after: ids[3], upTo: ids[15] }).compile();
    expect(q.sql).toContain('(contacts.id in (select eng.contact_id from events as eng');
    const { rows } = await h.db.kysely.executeQuery<{ detail: string }>({ ...q, sql: `explain query plan ${q.sql}` });
    const reads = rows.filter((r) => r.detail.includes('eng'));
    expect(reads.length).toBe(2);
    for (const r of reads)
      expect(r.detail).toMatch(
        /USING COVERING INDEX events_broadcast_engagement \(.*contact_id>\? AND contact_id<\?\)/,
      );
  });

  it('the summary follows the writers: an older event does not move it back; the burst rule reads the latest human click again', async () => {
    const ws = await h.workspace();
    const id = await insertContact(h, ws, { email: 'e@example.com' });
    const summary = async () =>
      h.db.kysely
        .selectFrom('contacts')
        .select(['last_sent_at', 'last_opened_at', 'last_clicked_at', 'updated_at'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
    const before = await summary();
    const t1 = '2026-03-01T10:00:00.000Z';
    const t0 = '2026-02-01T10:00:00.000Z';
    await event(ws, { type: 'email.clicked', contactId: id, url: 'https://x.example/', occurredAt: t1 });
    await event(ws, { type: 'email.clicked', contactId: id, url: 'https://x.example/', occurredAt: t0 });
    const after = await summary();
    expect(new Date(after.last_clicked_at!).toISOString()).toBe(t1);
    expect(after.last_opened_at).toBeNull();
    expect(after.updated_at).toEqual(before.updated_at);
    // The click at t1 turns out to be a machine's: the latest human click is t0's again.
    await h.db.kysely
      .updateTable('events')
      .set({ machine: 1 })
      .where('workspace_id', '=', ws.id)
      .where('occurred_at', '=', h.dbName === 'sqlite' ? t1 : (new Date(t1) as never))
      .execute();
    await recomputeEngagement(h.db.kysely, ws.id, 'clicked', [id]);
    expect(new Date((await summary()).last_clicked_at!).toISOString()).toBe(t0);
  });
});
