import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Db, type Executor } from '../../src/db/connection.js';
import { GroupCommit } from '../../src/db/group-commit.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { describeEachDatabase } from '../helpers/db.js';

const NOW = '2026-11-21T10:00:00.000Z';

/** A unit of work: one workspace row; `fail` throws after writing it. */
const addWorkspace =
  (id: string, seen: Executor[], fail = false) =>
  async (trx: Executor) => {
    seen.push(trx);
    await trx.insertInto('workspaces').values({ id, name: id, created_at: NOW }).execute();
    if (fail) throw new Error(`unit ${id} failed`);
    return id;
  };

describeEachDatabase('GroupCommit', ({ name, db: dbOf }) => {
  it('answers each unit with its own result or error; a failed unit leaves nothing, the others are stored', async () => {
    const group = new GroupCommit(dbOf());
    const seen: Executor[] = [];
    const results = await Promise.allSettled(
      ['ws_1', 'ws_2', 'ws_3', 'ws_4', 'ws_5'].map((id) => group.run(addWorkspace(id, seen, id === 'ws_4'))),
    );
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([
      'ws_1',
      'ws_2',
      'ws_3',
      'unit ws_4 failed',
      'ws_5',
    ]);
    const stored = await dbOf()
      .kysely.selectFrom('workspaces')
      .select('id')
      .where('id', 'like', 'ws_%')
      .orderBy('id')
      .execute();
    expect(stored.map((r) => r.id)).toEqual(['ws_1', 'ws_2', 'ws_3', 'ws_5']);
    if (name === 'sqlite') {
      // Units that arrive in one turn of the event loop share one transaction: tried first without savepoints (ws_1 to
      // ws_4, rolled back when ws_4 failed), then the five again in one transaction with a savepoint each.
      expect(seen.length).toBe(4 + 5);
      expect(new Set(seen).size).toBe(2);
    } else {
      expect(new Set(seen).size).toBe(5);
    }
  });

  it('a batch whose units all succeed runs each unit once, in one transaction on SQLite', async () => {
    const group = new GroupCommit(dbOf());
    const seen: Executor[] = [];
    const ids = ['ws_ok1', 'ws_ok2', 'ws_ok3'];
    expect(await Promise.all(ids.map((id) => group.run(addWorkspace(id, seen))))).toEqual(ids);
    expect(seen.length).toBe(3);
    expect(new Set(seen).size).toBe(name === 'sqlite' ? 1 : 3);
    const stored = await dbOf().kysely.selectFrom('workspaces').select('id').where('id', 'in', ids).execute();
    expect(stored.length).toBe(3);
  });

  it('a unit alone runs in a transaction of its own', async () => {
    const group = new GroupCommit(dbOf());
    await expect(group.run(addWorkspace('ws_alone', []))).resolves.toBe('ws_alone');
    await expect(group.run(addWorkspace('ws_alone_fails', [], true))).rejects.toThrow('unit ws_alone_fails failed');
    const stored = await dbOf().kysely.selectFrom('workspaces').select('id').where('id', 'like', 'ws_alone%').execute();
    expect(stored.map((r) => r.id)).toEqual(['ws_alone']);
  });
});

describe('GroupCommit on a SQLite file', () => {
  let dir: string;
  let db: Db;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-group-commit-'));
    db = connect(path.join(dir, 'db.sqlite'));
    await migrateToLatest(db);
  });
  afterAll(async () => {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers a unit only once its batch is committed: another connection reads every answered row', async () => {
    const group = new GroupCommit(db, 8);
    const reader = new SQLite(path.join(dir, 'db.sqlite'), { readonly: true });
    try {
      const visibleWhenAnswered: boolean[] = [];
      await Promise.all(
        Array.from({ length: 30 }, (_, i) => `ws_f${String(i).padStart(2, '0')}`).map(async (id) => {
          await group.run(addWorkspace(id, []));
          visibleWhenAnswered.push(reader.prepare('select 1 from workspaces where id = ?').get(id) !== undefined);
        }),
      );
      expect(visibleWhenAnswered).toHaveLength(30);
      expect(visibleWhenAnswered.every(Boolean)).toBe(true);
    } finally {
      reader.close();
    }
  });
});
