import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';

/**
 * A counter every change to a key's authority moves (src/access/api-keys/key-cache.ts): a process that keeps
 * verified keys in memory reads this one row a few times a second, not every key on every request, and
 * forgets its keys when the number moved. Triggers move it, so that no path can forget to: a revocation,
 * a change of scopes, hash or workspace, and a key's deletion (a workspace's deletion cascades to its keys).
 * `last_used_at`, written once a minute per key in use, is not among the columns and does not move it.
 */
export function authVersion(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('auth_version')
        .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
        .addColumn('version', 'integer', (c) => c.notNull())
        .execute();
      await sql`insert into auth_version (id, version) values (1, 0)`.execute(db);

      const bump = sql`update auth_version set version = version + 1 where id = 1`;
      if (dialect === 'postgres') {
        await sql`create function bump_auth_version() returns trigger language plpgsql as $$
          begin ${bump}; return null; end $$`.execute(db);
        await sql`create trigger api_keys_authority_changed after update of revoked_at, scopes, key_hash, workspace_id on api_keys
          for each row execute function bump_auth_version()`.execute(db);
        await sql`create trigger api_keys_deleted after delete on api_keys for each row execute function bump_auth_version()`.execute(
          db,
        );
      } else {
        await sql`create trigger api_keys_authority_changed after update of revoked_at, scopes, key_hash, workspace_id on api_keys
          begin ${bump}; end`.execute(db);
        await sql`create trigger api_keys_deleted after delete on api_keys begin ${bump}; end`.execute(db);
      }
    },
  };
}
