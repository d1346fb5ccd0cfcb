import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';

/**
 * Two processes on one SQLite file (the CLI beside a running server): a transaction that reads, then writes, must not
 * fail because the other process committed in between (src/db/sqlite-dialect.ts, beginTransaction).
 */
describe('SQLite transactions beside another process', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-tx-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('take the write lock at BEGIN: the other writer waits, the read-then-write transaction commits', async () => {
    const file = path.join(dir, 'shared.db');
    const db = connect(file);
    await migrateToLatest(db);
    const at = new Date().toISOString();
    await db.kysely.insertInto('workspaces').values({ id: 'ws_a', name: 'A', created_at: at }).execute();
    // The other process, impatient: 50 ms for a lock.
    const other = new SQLite(file);
    other.pragma('busy_timeout = 50');
    const rename = other.prepare(`update workspaces set name = 'Other' where id = 'ws_a'`);
    await db.kysely.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('workspaces').select('name').where('id', '=', 'ws_a').executeTakeFirstOrThrow();
      expect(row.name).toBe('A');
      // With a deferred BEGIN this write went through, and the update below failed with SQLITE_BUSY_SNAPSHOT.
      expect(() => rename.run()).toThrow(/locked|busy/i);
      await trx.updateTable('workspaces').set({ name: 'Mine' }).where('id', '=', 'ws_a').execute();
    });
    expect(other.prepare(`select name from workspaces where id = 'ws_a'`).pluck().get()).toBe('Mine');
    rename.run();
    expect(other.prepare(`select name from workspaces where id = 'ws_a'`).pluck().get()).toBe('Other');
    other.close();
    await db.close();
  });
});
