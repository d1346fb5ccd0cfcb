import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as repo from '../../src/audience/contacts/contacts.repository.js';
import type { Db } from '../../src/db/connection.js';
import { PG_URL, testDatabases, type TestDatabase } from '../helpers/db.js';

const T0 = '2026-11-21T10:00:00.000Z';
const T1 = '2026-11-21T11:00:00.000Z';

for (const name of ['sqlite', 'postgres'] as TestDatabase['name'][]) {
  const target = testDatabases.find((d) => d.name === name);
  (target ? describe : describe.skip)(`contacts: the batch update of imports [${name}${!target && !PG_URL ? ': TEST_DATABASE_URL not set' : ''}]`, () => {
    let db: Db;
    let drop: () => Promise<void>;
    beforeAll(async () => {
      ({ db, drop } = await target!.open());
      await db.kysely.insertInto('workspaces').values([{ id: 'ws_a', name: 'A', created_at: T0 }, { id: 'ws_b', name: 'B', created_at: T0 }]).execute();
      const params: unknown[] = [];
      for (const [ws, id] of [['ws_a', 'ct_1'], ['ws_a', 'ct_2'], ['ws_a', 'ct_3'], ['ws_b', 'ct_b']]) {
        repo.pushNewContact(params, ws!, id!, `${id}@example.com`, 'First', 'Last', '{"plan":"free"}', 'SUBSCRIBED', T0);
      }
      await repo.insertContactParamsIfNew(db.kysely, params);
    });
    afterAll(async () => drop?.());

    async function rows() {
      const all = await db.kysely.selectFrom('contacts').select(['id', 'first_name', 'last_name', 'properties', 'status', 'updated_at']).orderBy('id').execute();
      return all.map((r) => ({ id: r.id, first: r.first_name, last: r.last_name, props: JSON.parse(r.properties) as unknown, status: r.status, updated: new Date(r.updated_at).toISOString() }));
    }

    it('sets only the fields each row gives (null clears), refreshes updated_at, and returns the ids it updated', async () => {
      const changes: unknown[] = [];
      repo.pushContactChange(changes, 'ct_1', { firstName: 'Ada' });
      repo.pushContactChange(changes, 'ct_2', { lastName: null, status: 'UNSUBSCRIBED', propertiesJson: '{"plan":"pro","seats":3}' });
      repo.pushContactChange(changes, 'ct_missing', { firstName: 'Nobody' });
      repo.pushContactChange(changes, 'ct_b', { firstName: 'Not yours' }); // another workspace's contact
      const updated = await repo.updateContactParams(db.kysely, 'ws_a', changes, T1);
      expect([...updated].sort()).toEqual(['ct_1', 'ct_2']);
      expect(await rows()).toEqual([
        { id: 'ct_1', first: 'Ada', last: 'Last', props: { plan: 'free' }, status: 'SUBSCRIBED', updated: T1 },
        { id: 'ct_2', first: 'First', last: null, props: { plan: 'pro', seats: 3 }, status: 'UNSUBSCRIBED', updated: T1 },
        { id: 'ct_3', first: 'First', last: 'Last', props: { plan: 'free' }, status: 'SUBSCRIBED', updated: T0 },
        { id: 'ct_b', first: 'First', last: 'Last', props: { plan: 'free' }, status: 'SUBSCRIBED', updated: T0 },
      ]);
    });

    it('does nothing for an empty batch', async () => {
      expect((await repo.updateContactParams(db.kysely, 'ws_a', [], T1)).size).toBe(0);
    });
  });
}
