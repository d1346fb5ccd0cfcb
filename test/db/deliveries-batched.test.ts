/**
 * PostgreSQL's batched writes of the delivery pipeline (deliveries.batch-sql.ts handOffMany, markSentMany): the
 * conditions of handOff and of recordOutcome's `sent` hold row by row, within one statement, and never across
 * workspaces. PostgreSQL only: SQLite writes row by row (its statements cost no round trip).
 */
import type { KyselyPlugin, RawNode } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connection.js';
import type { DeliveryStatus } from '../../src/db/schema.js';
import { handOffMany, markSentMany, handOff } from '../../src/sending/deliveries/deliveries.batch-sql.js';
import { recordOutcome } from '../../src/sending/deliveries/deliveries.outcomes.js';
import { SqlDeliveryStore } from '../../src/composition/sql-delivery-store.js';
import { PG_URL, testDatabases } from '../helpers/db.js';

const T0 = '2026-11-25T10:00:00.000Z';
const NOW = '2026-11-25T10:00:05.000Z';
const LEASE = '2026-11-25T10:01:00.000Z';
const PAST = '2026-11-25T10:00:01.000Z';

const target = testDatabases.find((d) => d.name === 'postgres');
(target ? describe : describe.skip)(
  `deliveries: batched hand-offs and sent outcomes [postgres${PG_URL ? '' : ': TEST_DATABASE_URL not set'}]`,
  () => {
    let db: Db;
    let drop: () => Promise<void>;
    beforeAll(async () => {
      ({ db, drop } = await target!.open());
      await db.kysely
        .insertInto('workspaces')
        .values([
          { id: 'ws_a', name: 'A', created_at: T0 },
          { id: 'ws_b', name: 'B', created_at: T0 },
        ])
        .execute();
      await db.kysely
        .insertInto('broadcasts')
        .values([
          { id: 'bc_a', workspace_id: 'ws_a', name: 'a', status: 'SENDING', created_at: T0, updated_at: T0 },
          { id: 'bc_b', workspace_id: 'ws_b', name: 'b', status: 'SENDING', created_at: T0, updated_at: T0 },
        ] as never)
        .execute();
    });
    afterAll(async () => drop?.());

    let n = 0;
    async function delivery(
      over: {
        ws?: string;
        status?: DeliveryStatus;
        owner?: string | null;
        attempts?: number;
        leaseUntil?: string | null;
      } = {},
    ): Promise<string> {
      const id = `dlv_${String(++n).padStart(4, '0')}`;
      const ws = over.ws ?? 'ws_a';
      await db.kysely
        .insertInto('deliveries')
        .values({
          id,
          workspace_id: ws,
          broadcast_id: ws === 'ws_a' ? 'bc_a' : 'bc_b',
          contact_id: null,
          email: `${id}@example.com`,
          status: over.status ?? 'SENDING',
          attempts: over.attempts ?? 1,
          next_attempt_at: T0,
          lease_owner: over.owner === undefined ? 'w1' : over.owner,
          lease_expires_at: over.leaseUntil === undefined ? LEASE : over.leaseUntil,
          unsubscribe_token: `tok_${id}`,
          created_at: T0,
          updated_at: T0,
        } as never)
        .execute();
      return id;
    }
    const row = (id: string) =>
      db.kysely.selectFrom('deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

    it('hands off exactly the deliveries handOff would, row by row', async () => {
      const cases = {
        ok: await delivery(),
        otherOwner: await delivery({ owner: 'w2' }),
        reclaimed: await delivery({ attempts: 2 }), // claimed again since: this caller's claim was attempt 1
        leaseRanOut: await delivery({ leaseUntil: PAST }),
        canceled: await delivery({ status: 'CANCELED', owner: null, leaseUntil: null }),
        otherWorkspace: await delivery({ ws: 'ws_b' }),
      };
      const items = Object.values(cases).map((id) => ({ workspaceId: 'ws_a', id, owner: 'w1', attempts: 1, now: NOW }));
      const handed = await db.kysely.transaction().execute((trx) => handOffMany(trx, items));
      expect([...handed]).toEqual([`${cases.ok}:1`]);
      expect((await row(cases.ok)).handed_off_at).not.toBeNull();
      for (const id of Object.values(cases).filter((id) => id !== cases.ok))
        expect((await row(id)).handed_off_at, id).toBeNull();
      // The same answers as the row-by-row statement, on fresh copies of each case.
      const again = {
        ok: await delivery(),
        otherOwner: await delivery({ owner: 'w2' }),
        reclaimed: await delivery({ attempts: 2 }),
        leaseRanOut: await delivery({ leaseUntil: PAST }),
      };
      const single = await Promise.all(Object.values(again).map((id) => handOff(db.kysely, 'ws_a', id, 'w1', 1, NOW)));
      expect(single).toEqual([true, false, false, false]);
    });

    /** The store over a Db whose statements are watched: the batched UPDATEs it ran, by kind. */
    function watchedStore() {
      const batched = { handOff: 0, sent: 0 };
      const spy: KyselyPlugin = {
        transformQuery(args) {
          if (args.node.kind === 'RawNode') {
            const text = (args.node as RawNode).sqlFragments.join('?');
            if (/^update deliveries d set handed_off_at/.test(text)) batched.handOff++;
            if (/^update deliveries d\s+set status/.test(text)) batched.sent++;
          }
          return args.node;
        },
        transformResult: async (args) => args.result,
      };
      return { store: new SqlDeliveryStore({ ...db, kysely: db.kysely.withPlugin(spy) }), batched };
    }
    const claimed = (id: string, attempts = 1) => ({
      id,
      workspaceId: 'ws_a',
      broadcastId: 'bc_a',
      contactId: null,
      email: `${id}@example.com`,
      attempts,
      unsubscribeToken: `tok_${id}`,
      createdAt: T0,
    });
    const eventsOf = (ids: string[]) =>
      db.kysely
        .selectFrom('events')
        .select(['delivery_id', 'type'])
        .where('workspace_id', '=', 'ws_a')
        .where('delivery_id', 'in', ids)
        .orderBy('delivery_id')
        .execute();

    it('the store answers each of a batch of concurrent hand-offs its own, whatever their order, in one statement', async () => {
      const { store, batched } = watchedStore();
      // Ids ascending a < b < c; c was claimed again since (attempts 2): this caller's claim is no longer the one.
      const [a, b, c] = [await delivery(), await delivery(), await delivery({ attempts: 2 })];
      // Asked in one turn of the event loop, the one that fails first: one batch, one statement.
      expect(
        await Promise.all([
          store.handOff(claimed(c), 'w1', NOW),
          store.handOff(claimed(a), 'w1', NOW),
          store.handOff(claimed(b), 'w1', NOW),
        ]),
      ).toEqual([false, true, true]);
      expect(batched.handOff).toBe(1);
      // The one that fails in the middle.
      const [d, e, f] = [await delivery(), await delivery({ owner: 'w2' }), await delivery()];
      expect(
        await Promise.all([
          store.handOff(claimed(f), 'w1', NOW),
          store.handOff(claimed(e), 'w1', NOW),
          store.handOff(claimed(d), 'w1', NOW),
        ]),
      ).toEqual([true, false, true]);
      expect(batched.handOff).toBe(2);
    });

    it('the same delivery twice in a batch (two claims of it) is written row by row: only the current claim is handed off', async () => {
      const { store, batched } = watchedStore();
      const x = await delivery({ attempts: 2 });
      expect(
        await Promise.all([store.handOff(claimed(x, 1), 'w1', NOW), store.handOff(claimed(x, 2), 'w1', NOW)]),
      ).toEqual([false, true]);
      expect(batched.handOff).toBe(0);
    });

    it('a batch of sent outcomes records those still SENDING, each with its message id, and writes their events only', async () => {
      const { store, batched } = watchedStore();
      const [x, y, z] = [await delivery(), await delivery(), await delivery()];
      // y canceled meanwhile (it cannot be, once handed off; here it stands for any row no longer SENDING).
      await db.kysely
        .updateTable('deliveries')
        .set({ status: 'CANCELED', lease_owner: null, lease_expires_at: null })
        .where('id', '=', y)
        .execute();
      await Promise.all(
        [z, y, x].map((id) =>
          store.record(claimed(id), { op: 'sent', messageId: `<${id}@acme.test>`, response: '250 ok' }, NOW),
        ),
      );
      expect(batched.sent).toBe(1);
      expect(await row(x)).toMatchObject({ status: 'SENT', message_id: `<${x}@acme.test>` });
      expect(await row(z)).toMatchObject({ status: 'SENT', message_id: `<${z}@acme.test>` });
      expect(await row(y)).toMatchObject({ status: 'CANCELED', message_id: null });
      expect(await eventsOf([x, y, z])).toEqual([
        { delivery_id: x, type: 'email.sent' },
        { delivery_id: z, type: 'email.sent' },
      ]);
    });

    it('records "sent" on exactly the deliveries recordOutcome would, with each its own message id, and none of another workspace', async () => {
      const ok1 = await delivery();
      const ok2 = await delivery();
      const failed = await delivery({ status: 'FAILED', owner: null, leaseUntil: null });
      const foreign = await delivery({ ws: 'ws_b' });
      const items = [ok2, ok1, failed, foreign].map((id) => ({
        workspaceId: 'ws_a',
        id,
        now: NOW,
        messageId: `<${id}@acme.test>`,
        response: `250 ok ${id} ${'x'.repeat(600)}`,
      }));
      const sent = await db.kysely.transaction().execute((trx) => markSentMany(trx, items));
      expect([...sent].sort()).toEqual([ok1, ok2].sort());
      for (const id of [ok1, ok2]) {
        const r = await row(id);
        expect(r).toMatchObject({
          status: 'SENT',
          message_id: `<${id}@acme.test>`,
          lease_owner: null,
          lease_expires_at: null,
          last_error: null,
        });
        expect(r.smtp_response).toHaveLength(500);
        expect(new Date(r.sent_at!).toISOString()).toBe(NOW);
      }
      expect((await row(failed)).status).toBe('FAILED');
      expect((await row(foreign)).status).toBe('SENDING');
      // A second "sent" changes nothing, as recordOutcome's does not.
      expect((await markSentMany(db.kysely, items.slice(0, 1))).size).toBe(0);
      expect(await recordOutcome(db.kysely, 'ws_a', ok2, { op: 'sent', messageId: 'x', response: '250' }, NOW)).toBe(
        false,
      );
    });
  },
);
