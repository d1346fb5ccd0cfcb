import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, type Transaction } from 'kysely';
import type pg from 'pg';
import type { Database } from './schema.js';
import { FormcastSqliteDialect, allowRunIfIdle } from './sqlite-dialect.js';
import { FormcastPostgresDialect } from './pg-dialect.js';
import { startCheckpointer, type Checkpointer, type CheckpointerOptions } from './checkpointer.js';
import { lazyRequire } from '../lib/lazy.js';
import { checkDatabaseUrl } from './url.js';

// The PostgreSQL driver loads only when the database is PostgreSQL (lib/lazy.ts).
const pgDriver = lazyRequire<typeof pg>('pg');

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  readonly kysely: Kysely<Database>;
  readonly dialect: Dialect;
  /** SQLite with `checkpoints: 'background'`: the checkpoint thread's state (db/checkpointer.ts). */
  readonly checkpointer?: Checkpointer | null;
  /** SQLite on a file: its path (migrations lock beside it, db/migrate.ts). */
  readonly file?: string;
  close(): Promise<void>;
}

export type Executor = Kysely<Database> | Transaction<Database>;

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

const PG_JSON_OIDS = new Set([114, 3802]);

/** The SQL function every SQLite connection has for lower-casing every letter (lower() folds ASCII letters only). */
export const UNICODE_LOWER = 'fc_lower';

export interface ConnectOptions {
  /** PostgreSQL only: the schema to use (tests isolate each suite in its own). */
  schema?: string;
  poolSize?: number;
  /**
   * SQLite only: where the write-ahead log is copied back into the file. `inline` (the default here: tests, short
   * commands) is SQLite's own automatic checkpoint in the committing connection; `background` a thread of its own
   * (db/checkpointer.ts), what the long-running commands ask for (SQLITE_CHECKPOINTS).
   */
  checkpoints?: 'inline' | 'background';
  /** For the background checkpointer's warnings. */
  log?: CheckpointerOptions['log'];
}

/** Opens the database named by DATABASE_URL: `postgres://…` is PostgreSQL, anything else a SQLite file path. */
export function connect(url: string, options: ConnectOptions = {}): Db {
  checkDatabaseUrl(url);
  if (isPostgresUrl(url)) {
    const { Pool, types } = pgDriver();
    const pool = new Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      // Every session in UTC so timestamptz comes back as `…+00`; search_path isolates test schemas.
      options: `-c TimeZone=UTC${options.schema ? ` -c search_path=${options.schema}` : ''}`,
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          PG_JSON_OIDS.has(oid) ? (v: string) => v : types.getTypeParser(oid, format)) as typeof types.getTypeParser,
      },
    });
    // A client losing its connection must not crash the process; the next query on it reports it. The pool listens
    // to its idle clients only: a client held between queries (a materialisation's cursor, deliveries/audience-reader.ts,
    // or a transaction) emits its 'error' with no listener but this one.
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    const kysely = new Kysely<Database>({ dialect: new FormcastPostgresDialect({ pool }) });
    return { kysely, dialect: 'postgres', close: () => kysely.destroy() };
  }
  if (url !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(url)), { recursive: true });
  const sqlite = new SQLite(url);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // A log that once grew (a long read held it, a bulk write outran the checkpoints) is cut back to 32 MiB when it
  // starts over, not kept at its largest size for good.
  sqlite.pragma(`journal_size_limit = ${32 * 1024 * 1024}`);
  // lower() as PostgreSQL's and JavaScript's: every letter, not ASCII's only (SQLite's own). For a case-insensitive
  // search of a needle that is not ASCII (the contacts' search, docs/contacts.md "Search").
  sqlite.function(UNICODE_LOWER, { deterministic: true }, (s: unknown) =>
    typeof s === 'string' ? s.toLowerCase() : s === null ? null : String(s).toLowerCase(),
  );
  const dialect = new FormcastSqliteDialect(sqlite);
  const kysely = new Kysely<Database>({ dialect });
  allowRunIfIdle(kysely, dialect);
  const checkpointer =
    options.checkpoints === 'background' && url !== ':memory:' && !url.startsWith('file:')
      ? startCheckpointer(sqlite, path.resolve(url), { log: options.log })
      : null;
  return {
    kysely,
    dialect: 'sqlite',
    checkpointer,
    ...(url !== ':memory:' && !url.startsWith('file:') ? { file: path.resolve(url) } : {}),
    close: async () => {
      await checkpointer?.close();
      await kysely.destroy();
    },
  };
}

/** True for errors that mean the database cannot be reached (answered 503, not 500). */
export function isDatabaseUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return (
    [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'ENOTFOUND',
      'EHOSTUNREACH',
      '57P01',
      '57P03',
      '08000',
      '08001',
      '08003',
      '08006',
      'SQLITE_BUSY',
      'SQLITE_CANTOPEN',
    ].includes(code) ||
    (err instanceof Error && /Connection terminated|timeout exceeded when trying to connect/.test(err.message))
  );
}

/** True for a foreign-key violation on either dialect (a row still referenced, or a reference to nothing). */
export function isForeignKeyViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  // SQLite reports an ON DELETE RESTRICT violation as a trigger constraint, with this message.
  return (
    code === '23503' ||
    code === 'SQLITE_CONSTRAINT_FOREIGNKEY' ||
    (code === 'SQLITE_CONSTRAINT_TRIGGER' && /FOREIGN KEY constraint failed/.test((err as Error).message))
  );
}

/** True for a unique-constraint violation on either dialect. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
