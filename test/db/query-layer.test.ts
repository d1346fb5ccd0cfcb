import { CompiledQuery, type Transaction } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Db } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { Database } from '../../src/db/schema.js';
import { Precompiled, PrecompiledInsert } from '../../src/db/precompiled.js';
import { runIfIdle } from '../../src/db/sqlite-dialect.js';
import { PG_URL, testDatabases, type TestDatabase } from '../helpers/db.js';

const NOW = '2026-11-21T10:00:00.000Z';

for (const name of ['sqlite', 'postgres'] as TestDatabase['name'][]) {
  const target = testDatabases.find((d) => d.name === name);
  (target ? describe : describe.skip)(
    `Precompiled queries [${name}${!target && !PG_URL ? ': TEST_DATABASE_URL not set' : ''}]`,
    () => {
      let db: Db;
      let drop: () => Promise<void>;
      beforeAll(async () => {
        ({ db, drop } = await target!.open());
        await db.kysely
          .insertInto('workspaces')
          .values([
            { id: 'ws_a', name: 'A', created_at: NOW },
            { id: 'ws_b', name: 'B', created_at: NOW },
          ])
          .execute();
      });
      afterAll(async () => drop?.());

      let builds = 0;
      const rename = new Precompiled((k, param) => {
        builds++;
        return k
          .updateTable('workspaces')
          .set({ name: param('name') })
          .where('id', '=', param('id'))
          .where('created_at', '=', NOW)
          .returning(['id', 'name']);
      });

      it('runs with the values given by name, keeps constants, and builds once per database', async () => {
        expect(await rename.execute(db.kysely, { id: 'ws_a', name: 'A2' })).toEqual([{ id: 'ws_a', name: 'A2' }]);
        expect(await rename.executeTakeFirst(db.kysely, { id: 'ws_b', name: 'B2' })).toEqual({
          id: 'ws_b',
          name: 'B2',
        });
        expect(await rename.executeTakeFirst(db.kysely, { id: 'ws_missing', name: 'X' })).toBeUndefined();
        expect(builds).toBe(1);
        const rows = await db.kysely.selectFrom('workspaces').select(['id', 'name']).orderBy('id').execute();
        expect(rows).toEqual([
          { id: 'ws_a', name: 'A2' },
          { id: 'ws_b', name: 'B2' },
        ]);
      });

      it('refuses a run that lacks a value (or gives undefined), and writes nothing', async () => {
        await expect(rename.execute(db.kysely, { id: 'ws_a' })).rejects.toThrow(/no value for "name"/);
        await expect(rename.execute(db.kysely, { id: 'ws_a', name: undefined })).rejects.toThrow(/no value for "name"/);
        expect(
          (await db.kysely.selectFrom('workspaces').select('name').where('id', '=', 'ws_a').executeTakeFirst())?.name,
        ).toBe('A2');
      });

      it('runs inside a transaction (built once for the database, not once per transaction), and a rollback undoes it', async () => {
        await expect(
          db.kysely.transaction().execute(async (trx) => {
            expect(await rename.executeTakeFirst(trx, { id: 'ws_a', name: 'in trx' })).toEqual({
              id: 'ws_a',
              name: 'in trx',
            });
            throw new Error('roll back');
          }),
        ).rejects.toThrow('roll back');
        expect(builds).toBe(1);
        expect(
          (await db.kysely.selectFrom('workspaces').select('name').where('id', '=', 'ws_a').executeTakeFirst())?.name,
        ).toBe('A2');
      });

      it('PrecompiledInsert: one statement per set of columns; an undefined value leaves its column out, as the builder does', async () => {
        const insert = new PrecompiledInsert('workspaces');
        await insert.execute(db.kysely, { id: 'ws_c', name: 'C', created_at: NOW });
        await insert.execute(db.kysely, { id: 'ws_d', name: 'D', created_at: NOW, settings: undefined });
        await insert.execute(db.kysely, {
          id: 'ws_e',
          name: 'E',
          created_at: NOW,
          settings: '{"brandColor":"#112233"}',
        });
        // The same as the builder would have written, the settings' default where none was given.
        const rows = await db.kysely
          .selectFrom('workspaces')
          .select(['id', 'name', 'settings'])
          .where('id', 'in', ['ws_c', 'ws_d', 'ws_e'])
          .orderBy('id')
          .execute();
        const fresh = await db.kysely
          .selectFrom('workspaces')
          .select('settings')
          .where('id', '=', 'ws_b')
          .executeTakeFirstOrThrow();
        expect(rows.map((r) => [r.id, r.name])).toEqual([
          ['ws_c', 'C'],
          ['ws_d', 'D'],
          ['ws_e', 'E'],
        ]);
        expect(rows[0]!.settings).toEqual(fresh.settings);
        expect(rows[1]!.settings).toEqual(fresh.settings);
        expect(JSON.stringify(rows[2]!.settings)).toContain('#112233');
        // A row that breaks a constraint fails and writes nothing.
        await expect(insert.execute(db.kysely, { id: 'ws_c', name: 'again', created_at: NOW })).rejects.toThrow();
        expect(
          (await db.kysely.selectFrom('workspaces').select('name').where('id', '=', 'ws_c').executeTakeFirst())?.name,
        ).toBe('C');
      });
    },
  );
}

describe('SQLite driver', () => {
  let db: Db;
  beforeAll(async () => {
    db = connect(':memory:');
    await migrateToLatest(db);
  });
  afterAll(async () => db?.close());

  /** A transaction that runs `first`, then holds the connection until commit() (which says 'commit' in `order`). */
  async function holdConnection(order: string[], first: (t: Transaction<Database>) => Promise<void>) {
    let inside!: () => void;
    const started = new Promise<void>((resolve) => {
      inside = resolve;
    });
    let finish!: () => void;
    const held = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const trx = db.kysely.transaction().execute(async (t) => {
      await first(t);
      inside();
      await held;
      order.push('commit');
    });
    await started;
    return {
      commit: () => {
        finish();
        return trx;
      },
    };
  }

  it('makes queries wait while a transaction holds the connection, then runs them in arrival order', async () => {
    const order: string[] = [];
    const trx = await holdConnection(order, async (t) => {
      await t.insertInto('workspaces').values({ id: 'ws_trx', name: 'T', created_at: NOW }).execute();
    });
    // These would see (or join) the uncommitted transaction if they ran now.
    const reads = [1, 2, 3].map((n) =>
      db.kysely
        .selectFrom('workspaces')
        .select('id')
        .where('id', '=', 'ws_trx')
        .execute()
        .then((rows) => {
          order.push(`read ${n}: ${rows.length}`);
        }),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(order).toEqual([]);
    await Promise.all([trx.commit(), ...reads]);
    expect(order).toEqual(['commit', 'read 1: 1', 'read 2: 1', 'read 3: 1']);
  });

  it("runs a precompiled query at once when the connection is free, and never inside somebody else's transaction", async () => {
    await db.kysely.insertInto('workspaces').values({ id: 'ws_fast', name: 'F', created_at: NOW }).execute();
    const rename = new Precompiled((k, param) =>
      k
        .updateTable('workspaces')
        .set({ name: param('name') })
        .where('id', '=', param('id'))
        .returning(['id', 'name']),
    );
    const read = { sql: 'select name from workspaces where id = ?', parameters: ['ws_fast'] };
    // Free: runIfIdle runs it (synchronously); on a copy of the instance or a transaction's handle it declines.
    expect(runIfIdle(db.kysely, read)?.rows).toEqual([{ name: 'F' }]);
    expect(runIfIdle(db.kysely.withSchema('main'), read)).toBeUndefined();
    expect(await rename.executeTakeFirst(db.kysely, { id: 'ws_fast', name: 'direct' })).toEqual({
      id: 'ws_fast',
      name: 'direct',
    });

    // Held by a transaction: the query waits for the commit (it would otherwise join the transaction).
    const order: string[] = [];
    const trx = await holdConnection(order, async (t) => {
      await t.updateTable('workspaces').set({ name: 'in trx' }).where('id', '=', 'ws_fast').execute();
      expect(runIfIdle(t, read)).toBeUndefined();
    });
    expect(runIfIdle(db.kysely, read)).toBeUndefined();
    const outside = rename.executeTakeFirst(db.kysely, { id: 'ws_fast', name: 'after' }).then((row) => {
      order.push(`update: ${row?.name}`);
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(order).toEqual([]);
    await Promise.all([trx.commit(), outside]);
    expect(order).toEqual(['commit', 'update: after']);
    // A copy of the instance (another schema, plugins) goes through Kysely's executor, and works the same.
    expect(await rename.executeTakeFirst(db.kysely.withSchema('main'), { id: 'ws_fast', name: 'copy' })).toEqual({
      id: 'ws_fast',
      name: 'copy',
    });
  });

  it('releases the connection when a statement fails', async () => {
    await expect(
      db.kysely.insertInto('workspaces').values({ id: 'ws_trx', name: 'dup', created_at: NOW }).execute(),
    ).rejects.toThrow(/UNIQUE/);
    expect(await db.kysely.selectFrom('workspaces').select('name').where('id', '=', 'ws_trx').execute()).toEqual([
      { name: 'T' },
    ]);
  });

  it('keeps working past the statement cache size (least recently used statements dropped)', async () => {
    for (let i = 0; i < 600; i++) {
      const row = await db.kysely
        .selectFrom('workspaces')
        .select((eb) => eb.val(i).as(`v${i}`))
        .where('id', '=', 'ws_trx')
        .executeTakeFirst();
      expect(Object.values(row!)).toEqual([i]);
    }
  });

  it('keeps working past the cache of long (batch) statements', async () => {
    const filler = 'x'.repeat(5000);
    for (let i = 0; i < 20; i++) {
      const res = await db.kysely.executeQuery(CompiledQuery.raw(`select ? as v /* ${i} ${filler} */`, [i]));
      expect(res.rows).toEqual([{ v: i }]);
    }
  });

  it('streams the rows of a select', async () => {
    const ids: string[] = [];
    for await (const row of db.kysely.selectFrom('workspaces').select('id').orderBy('id').stream()) ids.push(row.id);
    expect(ids).toContain('ws_trx');
  });
});
