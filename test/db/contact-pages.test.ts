import { CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as repo from '../../src/audience/contacts/contacts.repository.js';
import { insertContactsIfNew } from '../../src/audience/contacts/contacts.batch-sql.js';
import type { Db } from '../../src/db/connection.js';
import { newId } from '../../src/lib/ids.js';
import { PG_URL, testDatabases, type TestDatabase } from '../helpers/db.js';

/**
 * GET /v1/contacts pages at any depth cost the same: keyset pagination read by an index from the cursor on. The
 * benchmark measures it at 1,000,000 contacts (bench/segments.bench.ts); here the answers at depth, and the
 * plans that make it so.
 */

const T0 = '2026-11-21T10:00:00.000Z';

for (const name of ['sqlite', 'postgres'] as TestDatabase['name'][]) {
  const target = testDatabases.find((d) => d.name === name);
  (target ? describe : describe.skip)(
    `contacts: list pages at depth [${name}${!target && !PG_URL ? ': TEST_DATABASE_URL not set' : ''}]`,
    () => {
      let db: Db;
      let drop: () => Promise<void>;
      /** ws_a's contact ids, oldest first (ws_b's are interleaved with them). */
      const ids: string[] = [];

      beforeAll(async () => {
        ({ db, drop } = await target!.open());
        await db.kysely
          .insertInto('workspaces')
          .values([
            { id: 'ws_a', name: 'A', created_at: T0 },
            { id: 'ws_b', name: 'B', created_at: T0 },
          ])
          .execute();
        const rows = {
          ws_a: { ids: [] as string[], emails: [] as string[], statuses: [] as ('UNSUBSCRIBED' | 'SUBSCRIBED')[] },
          ws_b: { ids: [] as string[], emails: [] as string[], statuses: [] as ('UNSUBSCRIBED' | 'SUBSCRIBED')[] },
        };
        for (let i = 0; i < 300; i++) {
          for (const ws of ['ws_a', 'ws_b'] as const) {
            const id = newId('ct');
            if (ws === 'ws_a') ids.push(id);
            rows[ws].ids.push(id);
            rows[ws].emails.push(`c${i}@${ws}.example`);
            rows[ws].statuses.push(i % 3 === 0 ? 'UNSUBSCRIBED' : 'SUBSCRIBED');
          }
        }
        for (const [ws, r] of Object.entries(rows)) {
          await insertContactsIfNew(
            db.kysely,
            ws,
            {
              size: r.ids.length,
              ids: r.ids,
              emails: r.emails,
              firstNames: [],
              lastNames: [],
              properties: [],
              statuses: r.statuses,
            },
            T0,
          );
        }
        if (db.dialect === 'postgres') await db.kysely.executeQuery(CompiledQuery.raw('analyze contacts'));
      });
      afterAll(async () => drop?.());

      /** The plan of a page's query, one line per step (SQLite: EXPLAIN QUERY PLAN; PostgreSQL: EXPLAIN, sequential scans off as at scale). */
      async function plan(q: ReturnType<typeof repo.contactsPageQuery>): Promise<string> {
        const c = q.compile();
        if (db.dialect === 'sqlite') {
          const rows = (
            await db.kysely.executeQuery(CompiledQuery.raw(`explain query plan ${c.sql}`, [...c.parameters]))
          ).rows as { detail: string }[];
          return rows.map((r) => r.detail).join('\n');
        }
        return db.kysely.transaction().execute(async (trx) => {
          await trx.executeQuery(CompiledQuery.raw('set local enable_seqscan = off'));
          const rows = (await trx.executeQuery(CompiledQuery.raw(`explain ${c.sql}`, [...c.parameters]))).rows as {
            'QUERY PLAN': string;
          }[];
          return rows.map((r) => r['QUERY PLAN']).join('\n');
        });
      }

      it('a page deep down is the contacts right after its cursor, newest first', async () => {
        const cursor = ids[ids.length - 251]!; // 250 contacts newer than it
        const page = await repo.listContacts(db.kysely, 'ws_a', { limit: 10, beforeId: cursor });
        expect(page.map((c) => c.id)).toEqual(ids.slice(ids.length - 261, ids.length - 251).reverse());
        const last = await repo.listContacts(db.kysely, 'ws_a', { limit: 10, beforeId: ids[3] });
        expect(last.map((c) => c.id)).toEqual(ids.slice(0, 3).reverse());
        const unsubscribed = await repo.listContacts(db.kysely, 'ws_a', {
          status: 'UNSUBSCRIBED',
          limit: 5,
          beforeId: cursor,
        });
        expect(unsubscribed.map((c) => c.id)).toEqual(
          ids
            .map((id, i) => ({ id, i }))
            .filter(({ i }) => i % 3 === 0 && i < ids.length - 251)
            .slice(-5)
            .reverse()
            .map((c) => c.id),
        );
      });

      it("a page is read from the cursor along the workspace's id index: no scan of what comes before it, no sort", async () => {
        const cursor = ids[100]!;
        const all = await plan(repo.contactsPageQuery(db.kysely, 'ws_a', { limit: 21, beforeId: cursor }));
        const byStatus = await plan(
          repo.contactsPageQuery(db.kysely, 'ws_a', { status: 'SUBSCRIBED', limit: 21, beforeId: cursor }),
        );
        if (db.dialect === 'sqlite') {
          expect(all).toMatch(/SEARCH contacts USING INDEX contacts_workspace \(workspace_id=\? AND id<\?\)/);
          expect(byStatus).toMatch(
            /SEARCH contacts USING INDEX contacts_workspace_status \(workspace_id=\? AND status=\? AND id<\?\)/,
          );
          for (const p of [all, byStatus]) expect(p).not.toMatch(/TEMP B-TREE/);
        } else {
          // (workspace_id, id) or the primary key, whichever the statistics favour: both are read backwards from the cursor.
          expect(all).toMatch(/Index Scan Backward using (contacts_workspace|contacts_pkey) on contacts/);
          expect(byStatus).toMatch(
            /Index Scan Backward using (contacts_workspace_status|contacts_workspace|contacts_pkey) on contacts/,
          );
          for (const p of [all, byStatus]) {
            expect(p).toMatch(/Index Cond: .*id < /);
            expect(p).not.toMatch(/Sort/);
          }
        }
      });
    },
  );
}
