import type SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
} from 'kysely';

/**
 * Kysely's SQLite dialect with a driver of our own, for two reasons measured under load (bench/api.bench.ts):
 *
 * - Kysely's driver guards its one connection with a mutex that wakes every waiter on each release; with
 *   fifty requests in flight, each query resumed fifty promises. Here the connection is handed to the next
 *   waiter in arrival order: one wake-up per release, and none when the connection is free.
 * - It prepares every statement afresh, which costs more than running our small queries. Statements are
 *   kept here by SQL text (which carries no values: they are bound parameters), least recently used first out.
 *
 * SQLite has one connection, so a transaction holds it from BEGIN to COMMIT and every other query waits:
 * that exclusion is what keeps a query from running inside somebody else's transaction.
 */
export class FormcastSqliteDialect implements Dialect {
  /** The driver Kysely made of this dialect (it makes one, in its constructor). */
  driver: SqliteDriver | undefined;

  constructor(private readonly database: SQLite.Database) {}

  createDriver(): Driver {
    this.driver = new SqliteDriver(this.database);
    return this.driver;
  }

  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }

  createAdapter() {
    return new SqliteAdapter();
  }

  createIntrospector(db: Kysely<unknown>) {
    return new SqliteIntrospector(db);
  }
}

const idleRunners = new WeakMap<object, SqliteDriver>();

/** Lets runIfIdle use this Kysely instance's connection: only this instance, not its transactions nor its copies. */
export function allowRunIfIdle(kysely: object, dialect: FormcastSqliteDialect): void {
  if (!dialect.driver) throw new Error('the dialect has no driver yet: register the Kysely instance made of it');
  idleRunners.set(kysely, dialect.driver);
}

/**
 * Runs a compiled query at once, synchronously, when `db` is a SQLite Kysely instance registered with
 * allowRunIfIdle and nothing holds its one connection (no query in flight, no transaction open); undefined
 * otherwise, for the caller to go through Kysely's executor. For the hottest precompiled statements
 * (db/precompiled.ts): it skips the executor's acquire / run / release round of promises, which end in the same
 * synchronous run. A registered instance has no plugins (a copy with plugins or another schema is another
 * object, not registered), so Kysely would not have transformed anything either. It saves about a tenth of a
 * run's CPU, and garbage of every request (bench/README.md, bench:api).
 */
export function runIfIdle<R>(
  db: object,
  query: { sql: string; parameters: readonly unknown[] },
): QueryResult<R> | undefined {
  return idleRunners.get(db)?.runIfIdle<R>(query);
}

const STATEMENT_CACHE_SIZE = 500;

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Prepared statements by SQL text, least recently used first out. */
class StatementCache {
  private readonly statements = new Map<string, SQLite.Statement>();

  constructor(private readonly size: number) {}

  get(sql: string, prepare: () => SQLite.Statement): SQLite.Statement {
    let stmt = this.statements.get(sql);
    if (stmt) {
      this.statements.delete(sql);
    } else {
      stmt = prepare();
      if (this.statements.size >= this.size) this.statements.delete(this.statements.keys().next().value!);
    }
    this.statements.set(sql, stmt);
    return stmt;
  }

  clear(): void {
    this.statements.clear();
  }
}

/**
 * Batch statements (an import's 1000-row insert or update) are long, hold ~0.4 MB each once prepared, and
 * come in many sizes; they get a cache of their own, small, so that they cannot crowd out the everyday
 * statements or pile up hundreds of megabytes.
 */
const LONG_SQL = 4096;
const LONG_STATEMENTS_KEPT = 8;

class SqliteConnection implements DatabaseConnection {
  private readonly short = new StatementCache(STATEMENT_CACHE_SIZE);
  private readonly long = new StatementCache(LONG_STATEMENTS_KEPT);
  closed = false;

  constructor(private readonly db: SQLite.Database) {}

  private prepare(sql: string): SQLite.Statement {
    return (sql.length > LONG_SQL ? this.long : this.short).get(sql, () => this.db.prepare(sql));
  }

  executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return Promise.resolve(this.run<R>(compiled));
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  run<R>({ sql, parameters }: { sql: string; parameters: readonly unknown[] }): QueryResult<R> {
    const stmt = this.prepare(sql);
    if (stmt.reader) return { rows: stmt.all(parameters) as R[] };
    const { changes, lastInsertRowid } = stmt.run(parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }

  async *streamQuery<R>(compiled: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    const stmt = this.prepare(compiled.sql);
    if (!stmt.reader) throw new Error('only queries that return rows can be streamed');
    for (const row of stmt.iterate(compiled.parameters)) yield { rows: [row as R] };
  }

  close(): void {
    this.closed = true;
    this.short.clear();
    this.long.clear();
    this.db.close();
  }
}

export class SqliteDriver implements Driver {
  private readonly connection: SqliteConnection;
  private busy = false;
  private readonly waiting: (() => void)[] = [];

  constructor(db: SQLite.Database) {
    this.connection = new SqliteConnection(db);
  }

  async init(): Promise<void> {}

  acquireConnection(): Promise<DatabaseConnection> {
    if (!this.busy) {
      this.busy = true;
      return Promise.resolve(this.connection);
    }
    return new Promise((resolve) => this.waiting.push(() => resolve(this.connection)));
  }

  /** See runIfIdle. Holding the connection is moot: the run is synchronous, nothing else runs meanwhile. */
  runIfIdle<R>(query: { sql: string; parameters: readonly unknown[] }): QueryResult<R> | undefined {
    if (this.busy || this.connection.closed) return undefined;
    return this.connection.run<R>(query);
  }

  async releaseConnection(): Promise<void> {
    // Hand the connection straight to the next in line; it stays busy.
    const next = this.waiting.shift();
    if (next) next();
    else this.busy = false;
  }

  /**
   * `begin immediate`: the write lock is taken at BEGIN, waiting for it as busy_timeout allows. A deferred BEGIN
   * read first and took the lock at the first write; when another process (the CLI beside a running server, a second
   * server on the file) had committed in between, SQLite refused that write at once (SQLITE_BUSY_SNAPSHOT: "database is
   * locked", no waiting helps), and `formcast broadcast send` failed so against a busy server in a CI run. In one
   * process it changes nothing: its one connection runs one transaction at a time anyway.
   */
  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async savepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`savepoint ${quote(name)}`));
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`rollback to ${quote(name)}`));
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`release ${quote(name)}`));
  }

  async destroy(): Promise<void> {
    this.connection.close();
  }
}
