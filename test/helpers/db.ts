import crypto from 'node:crypto';
import pg from 'pg';
import { connect, type Db } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';

export const PG_URL = process.env.TEST_DATABASE_URL;

export interface TestDatabase {
  name: 'sqlite' | 'postgres';
  open(): Promise<{ db: Db; drop(): Promise<void> }>;
}

/** SQLite always; PostgreSQL when TEST_DATABASE_URL is set, each suite in a schema of its own. */
export const testDatabases: TestDatabase[] = [
  {
    name: 'sqlite',
    async open() {
      const db = connect(':memory:');
      await migrateToLatest(db);
      return { db, drop: () => db.close() };
    },
  },
];

if (PG_URL) {
  testDatabases.push({
    name: 'postgres',
    async open() {
      const schema = `t_${crypto.randomBytes(6).toString('hex')}`;
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`create schema ${schema}`);
      await admin.end();
      const db = connect(PG_URL!, { schema });
      await migrateToLatest(db);
      return {
        db,
        async drop() {
          await db.close();
          const c = new pg.Client({ connectionString: PG_URL });
          await c.connect();
          await c.query(`drop schema ${schema} cascade`);
          await c.end();
        },
      };
    },
  });
} else if (!process.env.FORMCAST_PG_SKIP_NOTICE_SHOWN) {
  process.env.FORMCAST_PG_SKIP_NOTICE_SHOWN = '1';
  console.warn('SKIPPING PostgreSQL suites: TEST_DATABASE_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test)');
}
