import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as batch from '../../src/audience/contacts/contacts.batch-sql.js';
import type { Db } from '../../src/db/connection.js';
import { PG_URL, testDatabases, type TestDatabase } from '../helpers/db.js';

const T0 = '2026-11-21T10:00:00.000Z';
const T1 = '2026-11-21T11:00:00.000Z';

for (const name of ['sqlite', 'postgres'] as TestDatabase['name'][]) {
  const target = testDatabases.find((d) => d.name === name);
  (target ? describe : describe.skip)(
    `contacts: the batch update of imports [${name}${!target && !PG_URL ? ': TEST_DATABASE_URL not set' : ''}]`,
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
        for (const [ws, ids] of [
          ['ws_a', ['ct_1', 'ct_2', 'ct_3']],
          ['ws_b', ['ct_b']],
        ] as const) {
          await batch.insertContactsIfNew(
            db.kysely,
            ws,
            {
              size: ids.length,
              ids,
              emails: ids.map((id) => `${id}@example.com`),
              firstNames: ids.map(() => 'First'),
              lastNames: ids.map(() => 'Last'),
              properties: ids.map(() => '{"plan":"free"}'),
              statuses: ids.map(() => 'SUBSCRIBED' as const),
            },
            T0,
          );
        }
      });
      afterAll(async () => drop?.());

      async function rows() {
        const all = await db.kysely
          .selectFrom('contacts')
          .select(['id', 'first_name', 'last_name', 'properties', 'status', 'updated_at'])
          .orderBy('id')
          .execute();
        return all.map((r) => ({
          id: r.id,
          first: r.first_name,
          last: r.last_name,
          props: JSON.parse(r.properties) as unknown,
          status: r.status,
          updated: new Date(r.updated_at).toISOString(),
        }));
      }

      it('sets only the fields each row gives (null clears), refreshes updated_at, and returns the ids it updated', async () => {
        const updated = await batch.updateContacts(
          db.kysely,
          'ws_a',
          {
            size: 4,
            ids: ['ct_1', 'ct_2', 'ct_missing', 'ct_b'], // ct_b: another workspace's contact
            firstNames: ['Ada', undefined, 'Nobody', 'Not yours'],
            lastNames: [undefined, null, undefined, undefined],
            properties: [undefined, '{"plan":"pro","seats":3}', undefined, undefined],
            statuses: [undefined, 'UNSUBSCRIBED', undefined, undefined],
          },
          T1,
        );
        expect([...updated].sort()).toEqual(['ct_1', 'ct_2']);
        expect(await rows()).toEqual([
          { id: 'ct_1', first: 'Ada', last: 'Last', props: { plan: 'free' }, status: 'SUBSCRIBED', updated: T1 },
          {
            id: 'ct_2',
            first: 'First',
            last: null,
            props: { plan: 'pro', seats: 3 },
            status: 'UNSUBSCRIBED',
            updated: T1,
          },
          { id: 'ct_3', first: 'First', last: 'Last', props: { plan: 'free' }, status: 'SUBSCRIBED', updated: T0 },
          { id: 'ct_b', first: 'First', last: 'Last', props: { plan: 'free' }, status: 'SUBSCRIBED', updated: T0 },
        ]);
      });

      it('does nothing for an empty batch', async () => {
        expect(
          (
            await batch.updateContacts(
              db.kysely,
              'ws_a',
              { size: 0, ids: [], firstNames: [], lastNames: [], properties: [], statuses: [] },
              T1,
            )
          ).size,
        ).toBe(0);
      });
    },
  );
}
