import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * After sending (docs/bounces.md): the suppression list, what bounce and complaint reports record on a
 * delivery, PAUSED broadcasts (and their held deliveries), and an index to find a contact's recent deliveries
 * (the soft-bounce limit counts the last few broadcasts sent to them).
 */
export function suppressionAndBounces(dialect: Dialect) {
  const { ts } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('suppressions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('email', 'text', (c) => c.notNull()) // normalised, as contacts' (lib/email.ts); outlives the contact
        .addColumn('reason', 'text', (c) =>
          c.notNull().check(sql`reason in ('BOUNCED', 'COMPLAINED', 'UNSUBSCRIBED', 'MANUAL')`),
        )
        .addColumn('delivery_id', 'text') // no foreign key: the entry outlives the broadcast and its deliveries
        .addColumn('broadcast_id', 'text')
        .addColumn('detail', 'text')
        .addColumn('created_at', ts, (c) => c.notNull())
        .addUniqueConstraint('suppressions_workspace_email', ['workspace_id', 'email'])
        .execute();
      await db.schema
        .createIndex('suppressions_workspace')
        .on('suppressions')
        .columns(['workspace_id', 'reason', 'id'])
        .execute();

      // Import rows that asked for SUBSCRIBED or PENDING on a suppressed address (their status was kept).
      await db.schema
        .alterTable('contact_imports')
        .addColumn('suppressed', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();

      await db.schema.alterTable('deliveries').addColumn('bounce_class', 'text').execute(); // hard | soft | blocked | failed
      await db.schema.alterTable('deliveries').addColumn('bounced_at', ts).execute();
      await db.schema.alterTable('deliveries').addColumn('soft_bounced_at', ts).execute();
      await db.schema.alterTable('deliveries').addColumn('complained_at', ts).execute();
      await db.schema.createIndex('deliveries_contact').on('deliveries').columns(['contact_id', 'id']).execute();
      // Sender health (GET /v1/workspace/health): messages sent, hard bounces and complaints of a workspace in a window.
      await db.schema
        .createIndex('deliveries_workspace_sent')
        .on('deliveries')
        .columns(['workspace_id', 'sent_at'])
        .where(sql.ref('sent_at'), 'is not', null)
        .execute();
      await db.schema
        .createIndex('deliveries_workspace_bounced')
        .on('deliveries')
        .columns(['workspace_id', 'bounced_at'])
        .where(sql.ref('bounced_at'), 'is not', null)
        .execute();
      await db.schema
        .createIndex('deliveries_workspace_complained')
        .on('deliveries')
        .columns(['workspace_id', 'complained_at'])
        .where(sql.ref('complained_at'), 'is not', null)
        .execute();

      await db.schema.alterTable('broadcasts').addColumn('paused_reason', 'text').execute();
      // The circuit breaker weighs the deliveries that ended after this (the last resume by hand).
      await db.schema.alterTable('broadcasts').addColumn('breaker_since', ts).execute();
      // The hourly purge of Idempotency-Key records older than 24 h (http/idempotency.ts).
      await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').column('created_at').execute();

      await widenCheck(
        db,
        dialect,
        'broadcasts',
        'status',
        ['DRAFT', 'SCHEDULED', 'SENDING', 'SENT', 'CANCELED', 'FAILED'],
        ['PAUSED'],
      );
      await widenCheck(
        db,
        dialect,
        'deliveries',
        'status',
        ['QUEUED', 'SENDING', 'SENT', 'FAILED', 'BOUNCED', 'CANCELED', 'SKIPPED'],
        ['PAUSED'],
      );
    },
  };
}

const list = (values: string[]) => `(${values.map((v) => `'${v}'`).join(', ')})`;

/**
 * Adds values to a column's `check (col in (…))`. PostgreSQL replaces the constraint. SQLite cannot alter a
 * constraint: the table is rebuilt (SQLite's documented procedure: foreign keys off, copy into a new table
 * made from the stored definition, drop, rename, indexes again, foreign key check) in one transaction.
 * Migrations on SQLite run outside a transaction (Kysely), so the pragma takes effect.
 */
async function widenCheck(
  db: Kysely<unknown>,
  dialect: Dialect,
  table: string,
  column: string,
  values: string[],
  added: string[],
): Promise<void> {
  const before = `${column} in ${list(values)}`;
  const after = `${column} in ${list([...values, ...added])}`;
  if (dialect === 'postgres') {
    await sql.raw(`alter table ${table} drop constraint ${table}_${column}_check`).execute(db);
    await sql.raw(`alter table ${table} add constraint ${table}_${column}_check check (${after})`).execute(db);
    return;
  }
  const rows = (
    await sql<{
      type: string;
      sql: string;
    }>`select type, sql from sqlite_schema where tbl_name = ${table} and sql is not null`.execute(db)
  ).rows;
  const create = rows.find((r) => r.type === 'table')!.sql;
  if (!create.includes(before)) throw new Error(`migration: ${table} has no check "${before}"`);
  const indexes = rows.filter((r) => r.type === 'index').map((r) => r.sql);
  const temp = `${table}__rebuild`;
  await sql.raw('pragma foreign_keys = off').execute(db);
  try {
    await sql.raw('begin').execute(db);
    try {
      await sql
        .raw(create.replace(before, after).replace(/^create table "?[a-z_]+"?/i, `create table "${temp}"`))
        .execute(db);
      await sql.raw(`insert into "${temp}" select * from "${table}"`).execute(db);
      await sql.raw(`drop table "${table}"`).execute(db);
      await sql.raw(`alter table "${temp}" rename to "${table}"`).execute(db);
      for (const index of indexes) await sql.raw(index).execute(db);
      const broken = (await sql.raw('pragma foreign_key_check').execute(db)).rows;
      if (broken.length) throw new Error(`migration: foreign keys broken after rebuilding ${table}`);
      await sql.raw('commit').execute(db);
    } catch (err) {
      await sql.raw('rollback').execute(db);
      throw err;
    }
  } finally {
    await sql.raw('pragma foreign_keys = on').execute(db);
  }
}
