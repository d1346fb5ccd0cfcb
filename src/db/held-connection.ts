import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * A connection of the pool held across statements (a server-side cursor read batch after batch,
 * deliveries/audience-reader.ts), its statements run one after another in the order they were asked for.
 */
export interface HeldConnection {
  /** Runs `statement` on the connection after those asked for before it; refused once release() was called. */
  run<T>(statement: (db: Kysely<Database>) => Promise<T>): Promise<T>;
  /**
   * Gives the connection back to the pool, after the statement in flight: whatever transaction is open on it is rolled
   * back first (a broken connection is given back as it is; the pool drops it). Once, however often it is called.
   */
  release(): Promise<void>;
}

/** Takes a connection of `db`'s pool and holds it until release(). */
export async function holdConnection(db: Kysely<Database>): Promise<HeldConnection> {
  let giveBack!: () => void;
  const givenBack = new Promise<void>((resolve) => {
    giveBack = resolve;
  });
  let taken!: (conn: Kysely<Database>) => void;
  let failed!: (err: unknown) => void;
  const connection = new Promise<Kysely<Database>>((resolve, reject) => {
    taken = resolve;
    failed = reject;
  });
  // Kysely gives the connection back when this callback returns: it returns once release() was called.
  const held = db.connection().execute(async (conn) => {
    taken(conn);
    await givenBack;
  });
  held.catch((err: unknown) => failed(err));
  const conn = await connection;

  let chain: Promise<unknown> = Promise.resolve();
  const queue = <T>(statement: () => Promise<T>): Promise<T> => {
    const p = chain.then(statement);
    chain = p.catch(() => undefined);
    return p;
  };
  let released: Promise<void> | null = null;
  return {
    run: (statement) =>
      released ? Promise.reject(new Error('the held connection was released')) : queue(() => statement(conn)),
    release() {
      released ??= queue(() => sql`rollback`.execute(conn))
        .then(
          () => undefined,
          () => undefined,
        )
        .finally(giveBack)
        .then(() => held);
      return released;
    },
  };
}
