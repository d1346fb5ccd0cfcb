import { createQueryId, type Compilable, type CompiledQuery, type Insertable } from 'kysely';
import type { Executor } from './connection.js';
import type { Database } from './schema.js';
import { runIfIdle } from './sqlite-dialect.js';

/** Stands for a value in a query built once; replaced by the value of the same name at each run. */
class Placeholder {
  constructor(readonly name: string) {}
}

/** Gives the placeholder for a named value, typed as whatever the query builder expects there. */
export type Param = <T = string>(name: string) => T;

const param: Param = <T>(name: string) => new Placeholder(name) as unknown as T;

/**
 * A Kysely query built and compiled once per database, then run with fresh values: the SQL text
 * is the same every time, only the bound parameters change. For the hottest paths (authentication, the
 * intake of a spike's submissions), where building and compiling a query cost more than SQLite takes to run
 * it. The query is still written with Kysely, so it stays typed and dialect-neutral.
 *
 * Values are passed by name. Constants written into the builder (a status, say) stay bound parameters
 * and are kept as they are; only placeholders are replaced. A placeholder whose name has no value (or
 * undefined) in the run is an error, not a NULL; pass null for NULL.
 */
export class Precompiled<R> {
  // Keyed by the database's adapter: PostgreSQL and SQLite compile differently, and a transaction shares its
  // database's adapter, so a query run inside transactions is compiled once too, not once per transaction (the
  // intake's insert runs in the group commit's: forms/submissions/submissions.intake.ts).
  private readonly compiled = new WeakMap<object, CompiledQuery<R>>();

  constructor(private readonly build: (db: Executor, param: Param) => Compilable<R>) {}

  execute(db: Executor, values: Readonly<Record<string, unknown>>): Promise<R[]> {
    try {
      const rows = this.run(db, values);
      return Array.isArray(rows) ? Promise.resolve(rows) : rows;
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  executeTakeFirst(db: Executor, values: Readonly<Record<string, unknown>>): Promise<R | undefined> {
    try {
      const rows = this.run(db, values);
      return Array.isArray(rows) ? Promise.resolve(rows[0]) : rows.then((r) => r[0]);
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  /** The rows at once when the statement could run at once (SQLite, connection free), else their promise. May throw. */
  private run(db: Executor, values: Readonly<Record<string, unknown>>): R[] | Promise<R[]> {
    const key = db.getExecutor().adapter;
    let query = this.compiled.get(key);
    if (!query) {
      query = this.build(db, param).compile();
      this.compiled.set(key, query);
    }
    const parameters = query.parameters.map((p) => {
      if (!(p instanceof Placeholder)) return p;
      const value = Object.hasOwn(values, p.name) ? values[p.name] : undefined;
      // The builder would have dropped an undefined column; here it would become NULL. Refuse it instead.
      if (value === undefined) throw new Error(`precompiled query: no value for "${p.name}"`);
      return value;
    });
    // SQLite with its connection free: the statement runs at once (sqlite-dialect.ts, runIfIdle).
    const now = runIfIdle<R>(db, { sql: query.sql, parameters });
    if (now) return now.rows;
    // A run of its own for Kysely (plugins key their per-query state on the id).
    return db.executeQuery<R>({ ...query, parameters, queryId: createQueryId() }).then((result) => result.rows);
  }
}

/**
 * An insert of one row into `table`, built and compiled once per set of columns (the row's keys, in their order; an
 * undefined value leaves its column out, as the builder does) and per database: for hot paths whose row is made by a
 * shared function rather than written out in a Precompiled (bench:emails, the accept path: building and compiling
 * the insert cost more than SQLite takes to run it).
 */
export class PrecompiledInsert<T extends keyof Database & string> {
  private readonly byColumns = new Map<string, Precompiled<unknown>>();

  constructor(private readonly table: T) {}

  async execute(db: Executor, row: Insertable<Database[T]>): Promise<void> {
    const values = row as Record<string, unknown>;
    const columns = Object.keys(values).filter((c) => values[c] !== undefined);
    const key = columns.join('\u0000');
    let query = this.byColumns.get(key);
    if (!query) {
      // A few shapes per table in practice; a caller that made many would only lose the cache.
      if (this.byColumns.size >= 32) this.byColumns.clear();
      query = new Precompiled((d, param) =>
        d.insertInto(this.table as never).values(Object.fromEntries(columns.map((c) => [c, param(c)])) as never),
      );
      this.byColumns.set(key, query);
    }
    await query.execute(db, values);
  }
}
