import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { SqlDeliveryStore } from '../../src/composition/sql-delivery-store.js';
import { newId } from '../../src/lib/ids.js';
import { audienceQuery } from '../../src/audience/segments/audience.js';
import type { Filter } from '../../src/audience/segments/segments.filter.js';
import { sliceRows } from '../../src/audience/segments/slices.js';
import { connect } from '../../src/db/connection.js';
import { AudienceReader } from '../../src/sending/deliveries/audience-reader.js';
import { describeApi } from '../helpers/app.js';
import { PG_URL } from '../helpers/db.js';
import { waitFor } from '../helpers/workers.js';

/**
 * A broadcast's audience is written into deliveries at most `maxRows` recipients per transaction
 * (src/composition/sql-delivery-store.ts writeAudienceSlice). SQLite reads a slice of contacts per transaction: here with slices far
 * smaller than the workspace (a costly filter) and batches smaller than a slice's share of the audience, so that the
 * cursor moves both to a slice's end and to the last recipient of a full batch. PostgreSQL reads through one cursor
 * (deliveries/audience-reader.ts): the tests marked PostgreSQL are about its reads and its connection.
 */
describeApi('audience materialisation in batches (slices on SQLite, a cursor on PostgreSQL)', (h) => {
  /**
   * 600 contacts, a costly segment (small slices) and a SENDING broadcast to it: by default the segment matches
   * every contact (229 in the audience); `match` narrows it to the emails containing it.
   */
  async function setup(match = '@', audienceSize = 229) {
    const ws = await h.workspace();
    const k = h.db.kysely;
    const now = new Date().toISOString();
    const contacts = Array.from({ length: 600 }, (_, i) => ({
      id: newId('ct'),
      workspace_id: ws.id,
      email: `p${i}@example.com`,
      first_name: `P${i}`,
      last_name: null,
      properties: '{}',
      // The older half sparse (a slice holds fewer recipients than a batch), the newer half dense (more).
      status: (i < 300 ? i % 10 === 0 : i % 3 !== 0) ? ('SUBSCRIBED' as const) : ('UNSUBSCRIBED' as const),
      created_at: now,
      updated_at: now,
    }));
    for (let i = 0; i < contacts.length; i += 100)
      await k
        .insertInto('contacts')
        .values(contacts.slice(i, i + 100))
        .execute();
    expect(
      (await h.call(ws.key, 'POST', '/v1/suppressions', { email: 'p301@example.com', reason: 'MANUAL' })).statusCode,
    ).toBe(201);

    // Every contact matches (all emails contain "@"), but 199 text matches make the filter costly: small slices.
    const filter: Filter = {
      any: [
        { field: 'email', op: 'contains', value: match },
        ...Array.from({ length: 198 }, (_, i) => ({ field: 'firstName', op: 'contains' as const, value: `zz${i}` })),
      ],
    };
    const rowsPerSlice = sliceRows(filter);
    expect(rowsPerSlice).toBeLessThan(200);
    const segment = await h.call(ws.key, 'POST', '/v1/segments', { name: 'Costly', filter });
    expect(segment.statusCode, segment.body).toBe(201);
    const segmentId = segment.json().id as string;

    const broadcastId = newId('bc');
    await k
      .insertInto('broadcasts')
      .values({
        id: broadcastId,
        workspace_id: ws.id,
        name: 'B',
        status: 'SENDING',
        segment_id: segmentId,
        created_at: now,
        updated_at: now,
      } as never)
      .execute();
    const expected = (
      await (
        await audienceQuery(k, h.db.dialect, ws.id, { segmentId, topicId: null })
      )
        .select('contacts.id')
        .orderBy('contacts.id')
        .execute()
    ).map((r) => r.id);
    expect(expected).toHaveLength(audienceSize); // by default 30 + 200 SUBSCRIBED, one of them suppressed
    const delivered = async () =>
      (
        await k
          .selectFrom('deliveries')
          .select('contact_id')
          .where('broadcast_id', '=', broadcastId)
          .orderBy('contact_id')
          .execute()
      ).map((r) => r.contact_id);
    return { k, now, broadcastId, expected, delivered };
  }

  it('writes every recipient exactly once, in several slices and batches, and marks the broadcast materialised', async () => {
    const { k, now, broadcastId, expected, delivered: deliveredNow } = await setup();
    const store = new SqlDeliveryStore(h.db);
    const lease = new Date(Date.now() + 60_000).toISOString();
    const job = await store.claimAudience('test', now, lease);
    expect(job?.broadcastId).toBe(broadcastId);
    const maxRows = 50;
    const slices: { written: number; state: string }[] = [];
    for (let i = 0; i < 100; i++) {
      const slice = await store.writeAudienceSlice(job!, 'test', maxRows, now, lease);
      slices.push(slice);
      if (slice.state !== 'more') break;
    }

    expect(await deliveredNow()).toEqual(expected);
    expect(slices.reduce((n, s) => n + s.written, 0)).toBe(expected.length);
    expect(slices.at(-1)!.state).toBe('done');
    expect(slices.every((s) => s.written <= maxRows)).toBe(true);
    const before = slices.slice(0, -1);
    if (h.db.dialect === 'sqlite') {
      // Both ways a transaction ends before the last: at a slice's end with fewer than maxRows (the sparse half), and
      // at maxRows within a slice (the dense half).
      expect(before.some((s) => s.written < maxRows)).toBe(true);
      expect(before.some((s) => s.written === maxRows)).toBe(true);
    } else {
      // PostgreSQL reads the audience through one cursor (audience-reader.ts): every batch but the last is full.
      expect(before.length).toBeGreaterThan(2);
      expect(before.every((s) => s.written === maxRows)).toBe(true);
    }
    const b = await k
      .selectFrom('broadcasts')
      .select(['materialized_at', 'materialize_owner'])
      .where('id', '=', broadcastId)
      .executeTakeFirstOrThrow();
    expect(b.materialized_at).not.toBeNull();
    expect(b.materialize_owner).toBeNull();
  });

  it('a worker whose lease was taken writes nothing more ("lost"); the one that took it over goes on from the cursor: every recipient exactly once', async () => {
    const { k, now, broadcastId, expected, delivered } = await setup();
    const first = new SqlDeliveryStore(h.db);
    const lease = new Date(Date.now() + 60_000).toISOString();
    const jobA = await first.claimAudience('a', now, lease);
    expect(jobA?.broadcastId).toBe(broadcastId);
    let written = 0;
    for (let i = 0; i < 3; i++) written += (await first.writeAudienceSlice(jobA!, 'a', 50, now, lease)).written;
    const sofar = await delivered();
    expect(sofar).toHaveLength(written);
    expect(written).toBeGreaterThan(0);
    // A's lease lapses (it stalled); B claims the materialisation and starts from the committed cursor.
    await k
      .updateTable('broadcasts')
      .set({ materialize_lease_until: new Date(Date.now() - 1000).toISOString() } as never)
      .where('id', '=', broadcastId)
      .execute();
    const second = new SqlDeliveryStore(h.db);
    const jobB = await second.claimAudience('b', now, lease);
    expect(jobB?.broadcastId).toBe(broadcastId);
    expect(jobB!.cursor).toBe(jobA!.cursor);
    // A comes back: its write is refused and adds nothing (its read ahead, on PostgreSQL, is dropped).
    expect(await first.writeAudienceSlice(jobA!, 'a', 50, now, lease)).toMatchObject({ written: 0, state: 'lost' });
    expect(await delivered()).toEqual(sofar);
    for (let i = 0; i < 100; i++) {
      const slice = await second.writeAudienceSlice(jobB!, 'b', 50, now, lease);
      if (slice.state !== 'more') {
        expect(slice.state).toBe('done');
        break;
      }
    }
    expect(await delivered()).toEqual(expected);
    expect(await first.writeAudienceSlice(jobA!, 'a', 50, now, lease)).toMatchObject({ written: 0, state: 'lost' });
  });

  it('contacts deleted while the audience is being written (after it was read ahead, on PostgreSQL): left out, the rest each once, no batch fails', async () => {
    const { k, now, expected, delivered } = await setup();
    const store = new SqlDeliveryStore(h.db);
    const lease = new Date(Date.now() + 60_000).toISOString();
    const job = await store.claimAudience('d', now, lease);
    const first = await store.writeAudienceSlice(job!, 'd', 50, now, lease);
    expect(first.state).toBe('more');
    const sofar = await delivered();
    // The next recipients, read ahead by now on PostgreSQL, are deleted before their batch is written.
    const gone = expected.filter((id) => !sofar.includes(id)).slice(0, 60);
    await k.deleteFrom('contacts').where('id', 'in', gone).execute();
    for (let i = 0; i < 100; i++) {
      const slice = await store.writeAudienceSlice(job!, 'd', 50, now, lease);
      if (slice.state !== 'more') {
        expect(slice.state).toBe('done');
        break;
      }
    }
    expect(await delivered()).toEqual(expected.filter((id) => !gone.includes(id)));
  });

  it('a segment that matches only the newest contacts: the slices without a recipient are passed over, and the audience is written once', async () => {
    // p59 and p590…p599: seven of them SUBSCRIBED, all in the last slice; every slice before it holds nobody.
    const { now, expected, delivered } = await setup('p59', 7);
    const store = new SqlDeliveryStore(h.db);
    const lease = new Date(Date.now() + 60_000).toISOString();
    const job = await store.claimAudience('s', now, lease);
    const slices: { written: number; state: string }[] = [];
    for (let i = 0; i < 100; i++) {
      const slice = await store.writeAudienceSlice(job!, 's', 50, now, lease);
      slices.push(slice);
      if (slice.state !== 'more') break;
    }
    expect(slices.at(-1)!.state).toBe('done');
    expect(slices.reduce((n, x) => n + x.written, 0)).toBe(7);
    expect(await delivered()).toEqual(expected);
  });

  /** Resolves with `p`, or fails after `ms` (a connection that is never given back would hang the test instead). */
  async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        p,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  it('PostgreSQL: a read is replaced by a new one from the position once older than maxReadMs, and a contact that came since is in it', async ({
    skip,
  }) => {
    if (h.db.dialect !== 'postgres') skip();
    const { k, now, expected, delivered } = await setup();
    const store = new SqlDeliveryStore(h.db);
    const lease = new Date(Date.now() + 60_000).toISOString();
    const job = (await store.claimAudience('r', now, lease))!;
    // Every batch from a read of its own (maxReadMs below 0): each a new cursor after the last recipient taken.
    const reader = new AudienceReader(k, job, 50, null, { maxReadMs: -1, idleMs: 60_000 });
    const seen: string[] = [];
    const first = await reader.take();
    seen.push(...first.rows.map((r) => r.contactId));
    // A contact that joins after the first read, newer than every other (in the segment: its email contains "@").
    const late = newId('ct');
    await insertLateContact(late, job.workspaceId, 'late@example.com', now);
    for (let batch = first; batch.next !== null;) {
      batch = await reader.take();
      seen.push(...batch.rows.map((r) => r.contactId));
    }
    await reader.close();
    expect(seen).toEqual([...expected, late]);
    expect(await delivered()).toEqual([]);
  });

  it('PostgreSQL: a batch fetched ahead outlives its read (idle or aged) for the next take(), but a short one is read again', async ({
    skip,
  }) => {
    if (h.db.dialect !== 'postgres') skip();
    const { k, now, expected } = await setup();
    const job = await claimJob('k', now);
    const { db, settled, close } = await ownPool(1);
    try {
      // Idle after each batch: its read ends (the connection given back) before the next take().
      const reader = new AudienceReader(db.kysely, job, 50, null, { maxReadMs: 60_000, idleMs: 20 });
      const first = await reader.take();
      expect(first.rows.map((r) => r.contactId)).toEqual(expected.slice(0, 50));
      await settled(['idle']);
      // A recipient of the batch fetched ahead, deleted now: the kept batch, read before, still has them (the
      // insert checks each contact, and the send each recipient, again).
      const gone = expected[60]!;
      await k.deleteFrom('contacts').where('id', '=', gone).execute();
      const second = await reader.take();
      expect(second.rows.map((r) => r.contactId)).toEqual(expected.slice(50, 100));
      // The next take() reads anew from the position: the deleted contact is not read again, and the rest follow.
      const rest = await takeTheRest(reader);
      expect(rest).toEqual(expected.slice(100));
      await reader.close();

      // The audience's last, short batch fetched ahead by a read that ended is read again, with what joined since.
      const tail = new AudienceReader(db.kysely, job, 50, expected.at(-80)!, { maxReadMs: 60_000, idleMs: 20 });
      expect((await tail.take()).rows.map((r) => r.contactId)).toEqual(expected.slice(-79, -29));
      await settled(['idle']);
      const late = newId('ct');
      await insertLateContact(late, job.workspaceId, 'late-tail@example.com', now);
      const end = await tail.take();
      expect(end.rows.map((r) => r.contactId)).toEqual([...expected.slice(-29), late]);
      expect(end.next).toBeNull();
      await tail.close();
    } finally {
      await close();
    }
  });

  /** The audience's job, its lease taken by `owner` for a minute. */
  async function claimJob(owner: string, now: string) {
    return (await new SqlDeliveryStore(h.db).claimAudience(owner, now, new Date(Date.now() + 60_000).toISOString()))!;
  }

  /** A contact that joins now, newer than every other (in the segment: its email contains "@"). */
  async function insertLateContact(id: string, workspaceId: string, email: string, now: string) {
    await h.db.kysely
      .insertInto('contacts')
      .values({
        id,
        workspace_id: workspaceId,
        email,
        first_name: null,
        last_name: null,
        properties: '{}',
        status: 'SUBSCRIBED',
        created_at: now,
        updated_at: now,
      } as never)
      .execute();
  }

  /** The contacts of every batch the reader has left, in order. */
  async function takeTheRest(reader: AudienceReader): Promise<string[]> {
    const ids: string[] = [];
    for (let batch = await reader.take(); ; batch = await reader.take()) {
      ids.push(...batch.rows.map((r) => r.contactId));
      if (batch.next === null) return ids;
    }
  }

  /**
   * A Db of its own on the suite's schema, with `size` connections and their backends' pids, and the state of those
   * backends as another connection sees them ('idle', 'idle in transaction', …).
   */
  async function ownPool(size: number) {
    const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(h.db.kysely)).rows[0]!.s;
    const db = connect(PG_URL!, { schema, poolSize: size });
    // Each connection of the pool once (the queries overlap, so each takes a connection of its own).
    const pids = await Promise.all(
      Array.from(
        { length: size },
        async () =>
          (await sql<{ pid: number }>`select pg_backend_pid() as pid, pg_sleep(0.1)`.execute(db.kysely)).rows[0]!.pid,
      ),
    );
    expect(new Set(pids).size).toBe(size);
    const states = async () =>
      (
        await sql<{
          state: string;
        }>`select state from pg_stat_activity where pid in (${sql.join(pids)}) order by state`.execute(h.db.kysely)
      ).rows.map((r) => r.state);
    // take() returns while the reader's read-ahead FETCH may still run ("active"): wait for the state instead of
    // sampling one moment.
    const settled = (expected: string[]) =>
      waitFor(`connections ${expected.join(', ')}`, 10_000, async () => {
        const seen = await states();
        return seen.join() === expected.join() ? seen : undefined;
      });
    // A pool that cannot end (a connection never given back) fails the test instead of hanging it.
    const close = () => within(db.close(), 10_000, 'closing the pool');
    return { db, pids, states, settled, close };
  }

  it('PostgreSQL: a reader dropped without close() gives its connection back once idle, and close() at once, each out of its transaction', async ({
    skip,
  }) => {
    if (h.db.dialect !== 'postgres') skip();
    const { now } = await setup();
    const job = await claimJob('i', now);
    // A pool of one connection: a read that kept it would leave the probes below waiting for ever.
    const { db, states, settled, close } = await ownPool(1);
    const probe = () =>
      db.kysely.selectFrom('contacts').select('id').where('workspace_id', '=', job.workspaceId).limit(1).execute();
    try {
      const dropped = new AudienceReader(db.kysely, job, 50, null, { maxReadMs: 60_000, idleMs: 50 });
      expect((await dropped.take()).rows).toHaveLength(50);
      expect(await settled(['idle in transaction'])).toEqual(['idle in transaction']);
      expect(await within(probe(), 10_000, "the dropped reader's connection")).toHaveLength(1);
      // Given back out of its transaction: the probe ran on its own and left the connection idle.
      expect(await states()).toEqual(['idle']);

      const closed = new AudienceReader(db.kysely, job, 50, null, { maxReadMs: 60_000, idleMs: 600_000 });
      expect((await closed.take()).rows).toHaveLength(50);
      await within(closed.close(), 10_000, 'close()');
      expect(await states()).toEqual(['idle']);
      await expect(closed.take()).rejects.toThrow(/after close/);
    } finally {
      await close();
    }
  });

  it('PostgreSQL: take() twice at once is refused (it would take one batch twice); the reader goes on after it', async ({
    skip,
  }) => {
    if (h.db.dialect !== 'postgres') skip();
    const { k, now, expected } = await setup();
    const job = await claimJob('t', now);
    const reader = new AudienceReader(k, job, 50, null);
    try {
      const first = reader.take();
      await expect(reader.take()).rejects.toThrow(/still running/);
      const seen = (await first).rows.map((r) => r.contactId);
      seen.push(...(await takeTheRest(reader)));
      expect(seen).toEqual(expected);
    } finally {
      await reader.close();
    }
  });

  it("PostgreSQL: the reader's backend killed while it holds the connection: no crash; the batch after the one read ahead fails, the next reads anew from the position", async ({
    skip,
  }) => {
    if (h.db.dialect !== 'postgres') skip();
    const { now, expected } = await setup();
    const job = await claimJob('k', now);
    const { db, pids, states, close } = await ownPool(1);
    const reader = new AudienceReader(db.kysely, job, 50, null, { maxReadMs: 60_000, idleMs: 600_000 });
    try {
      const seen = (await reader.take()).rows.map((r) => r.contactId);
      // The next batch read ahead, to its end (the reader's own promise of it: the connection's state alone is also
      // 'idle in transaction' between the first FETCH and the one ahead, and a kill then failed the wrong take() in CI).
      await (reader as unknown as { ahead: { rows: Promise<unknown> } | null }).ahead?.rows;
      // The connection waits between batches, in its transaction.
      await waitFor(
        'the batch read ahead',
        10_000,
        async () => (await states()).join() === 'idle in transaction' || undefined,
      );
      // It loses its backend (a failover, an administrator): its client emits 'error' while the pool does not listen
      // to it (an uncaught error would fail this test run).
      await sql`select pg_terminate_backend(${pids[0]!})`.execute(h.db.kysely);
      // The batch read before is given; the read after it fails; the one after that reads anew, after the position.
      seen.push(...(await reader.take()).rows.map((r) => r.contactId));
      await expect(reader.take()).rejects.toThrow();
      seen.push(...(await takeTheRest(reader)));
      expect(seen).toEqual(expected);
    } finally {
      await reader.close();
      await close();
    }
  });

  it('PostgreSQL: the store closes its readers when the pipeline stops: their connections are back at once, out of their transactions', async ({
    skip,
  }) => {
    if (h.db.dialect !== 'postgres') skip();
    const { now } = await setup();
    // Two connections: the reader's and the writes'.
    const { db, states, settled, close } = await ownPool(2);
    try {
      const store = new SqlDeliveryStore(db);
      const lease = new Date(Date.now() + 60_000).toISOString();
      const job = (await store.claimAudience('c', now, lease))!;
      expect((await store.writeAudienceSlice(job, 'c', 50, now, lease)).state).toBe('more');
      expect(await settled(['idle', 'idle in transaction'])).toEqual(['idle', 'idle in transaction']);
      await within(store.close(), 10_000, "the store's close()");
      expect(await states()).toEqual(['idle', 'idle']);
    } finally {
      await close();
    }
  });
});
