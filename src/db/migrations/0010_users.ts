import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * People of the console (docs/console.md, src/access/users/CONTEXT.md): users with a role, their sessions (the
 * token lives only in the cookie; the row keeps its SHA-256), invitations and password resets (single-use
 * tokens stored the same way).
 */
export function users(dialect: Dialect) {
  const { ts } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('email', 'text', (c) => c.notNull()) // normalised: lower-cased bare address
        .addColumn('name', 'text')
        .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('owner', 'admin', 'editor', 'viewer')`))
        .addColumn('password_hash', 'text') // argon2id PHC string; null until an invitation is accepted
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('updated_at', ts, (c) => c.notNull())
        .addColumn('last_login_at', ts)
        .execute();
      await db.schema
        .createIndex('users_workspace_email')
        .on('users')
        .columns(['workspace_id', 'email'])
        .unique()
        .execute();
      await db.schema.createIndex('users_email').on('users').column('email').execute();

      await db.schema
        .createTable('sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('token_hash', 'text', (c) => c.notNull()) // hex SHA-256 of the cookie's 32 random bytes
        .addColumn('csrf_token', 'text', (c) => c.notNull())
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('last_seen_at', ts, (c) => c.notNull())
        .addColumn('expires_at', ts, (c) => c.notNull())
        .addColumn('revoked_at', ts)
        .addColumn('ip', 'text')
        .addColumn('user_agent', 'text')
        .execute();
      await db.schema.createIndex('sessions_token_hash').on('sessions').column('token_hash').unique().execute();
      await db.schema.createIndex('sessions_user').on('sessions').columns(['workspace_id', 'user_id', 'id']).execute();

      await db.schema
        .createTable('invitations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('owner', 'admin', 'editor', 'viewer')`))
        .addColumn('token_hash', 'text', (c) => c.notNull())
        .addColumn('invited_by', 'text', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('expires_at', ts, (c) => c.notNull())
        .addColumn('accepted_at', ts)
        .addColumn('revoked_at', ts)
        .execute();
      await db.schema.createIndex('invitations_token_hash').on('invitations').column('token_hash').unique().execute();
      await db.schema.createIndex('invitations_workspace').on('invitations').columns(['workspace_id', 'id']).execute();

      await db.schema
        .createTable('password_resets')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('token_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('expires_at', ts, (c) => c.notNull())
        .addColumn('used_at', ts)
        .execute();
      await db.schema
        .createIndex('password_resets_token_hash')
        .on('password_resets')
        .column('token_hash')
        .unique()
        .execute();
      await db.schema
        .createIndex('password_resets_user')
        .on('password_resets')
        .columns(['workspace_id', 'user_id'])
        .execute();
    },
  };
}
