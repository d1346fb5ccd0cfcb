import { PostgresAdapter } from 'kysely';
import type { Executor } from './connection.js';

/**
 * The SQL text of a multi-row statement (an import's 1000-row INSERT, a batch's events), made once per dialect
 * and row count and run as a compiled query with the values as parameters. Building such a statement through
 * Kysely's query builder for every batch (an AST of some 10,000-20,000 nodes, parsed and compiled each time)
 * cost more than running it: bench/README.md, bench:import. The last few texts are kept (a batch size repeats,
 * with a tail of another size at the end); the driver keeps the prepared statements (db/sqlite-dialect.ts).
 *
 * For use inside repositories only (the project's rule for hand-written SQL).
 */
export class BatchSql {
  private readonly cache = new Map<string, string>();

  /** `make` writes the text for `rows` rows; each call of `param` gives the next placeholder (`?` or `$n`). */
  constructor(
    private readonly make: (rows: number, param: () => string, postgres: boolean) => string,
    private readonly keep = 4,
  ) {}

  text(postgres: boolean, rows: number): string {
    const key = `${postgres ? 'pg' : 'sqlite'}:${rows}`;
    let text = this.cache.get(key);
    if (text === undefined) {
      let n = 0;
      text = this.make(rows, () => (postgres ? `$${++n}` : '?'), postgres);
      if (this.cache.size >= this.keep) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(key, text);
    }
    return text;
  }
}

/** True when `db` runs on PostgreSQL (the placeholders and a few casts differ). */
export function onPostgres(db: Executor): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** `(?, ?, …)` tuples, one per row, of `columns` placeholders each. */
export function valueTuples(rows: number, columns: number, param: () => string): string {
  const tuples: string[] = [];
  for (let r = 0; r < rows; r++) {
    const cells: string[] = [];
    for (let c = 0; c < columns; c++) cells.push(param());
    tuples.push(`(${cells.join(', ')})`);
  }
  return tuples.join(', ');
}
