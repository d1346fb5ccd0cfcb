import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';

/**
 * An index for the contact list's search (`?q=`, a substring of the email, first or last name; docs/contacts.md
 * "Search"). Without one, a rare word read every contact of the workspace: ~600–900 ms at 1,000,000 contacts on
 * SQLite (bench/README.md, bench:console).
 *
 * - **SQLite**: `contacts_search`, an FTS5 table with the trigram tokenizer (every three characters of the three
 *   columns, letter case folded), contentless (it keeps the index, not a second copy of the text), its rowid the
 *   contact's rowid. Triggers keep it in step with `contacts` in the writer's own statement: an insert, an update of
 *   a searched column, a delete (a workspace's cascade too). A search of three characters or more reads it for the
 *   candidates, then tests them with the same LIKE as before (audience/contacts/contacts.repository.ts,
 *   searchCandidates). Building it takes ~12 s and ~150 MB per 1,000,000 contacts.
 * - **PostgreSQL**: trigram GIN indexes (pg_trgm) on the lower-cased columns, which the planner uses for the same
 *   LIKE conditions as they are. pg_trgm ships with PostgreSQL (contrib) and is a trusted extension (PostgreSQL 13+:
 *   a database owner may create it). Where it cannot be created, the search keeps reading the contacts, as before.
 */
const COLUMNS = ['email', 'first_name', 'last_name'] as const;

export function contactSearch(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect === 'sqlite') {
        await sql`create virtual table contacts_search using fts5(
            email, first_name, last_name, content='', contentless_delete=1, tokenize='trigram')`.execute(db);
        await sql`insert into contacts_search (rowid, email, first_name, last_name)
            select rowid, email, first_name, last_name from contacts`.execute(db);
        await sql`create trigger contacts_search_insert after insert on contacts begin
            insert into contacts_search (rowid, email, first_name, last_name)
              values (new.rowid, new.email, new.first_name, new.last_name);
          end`.execute(db);
        await sql`create trigger contacts_search_update after update of email, first_name, last_name on contacts
          when old.email is not new.email or old.first_name is not new.first_name or old.last_name is not new.last_name
          begin
            delete from contacts_search where rowid = old.rowid;
            insert into contacts_search (rowid, email, first_name, last_name)
              values (new.rowid, new.email, new.first_name, new.last_name);
          end`.execute(db);
        await sql`create trigger contacts_search_delete after delete on contacts begin
            delete from contacts_search where rowid = old.rowid;
          end`.execute(db);
        return;
      }
      // PostgreSQL: the migrations run in one transaction; a refused extension (or index) must not abort it. The
      // extension may live in any schema (installed by an administrator, or by another Formcast schema): its operator
      // class is named with its schema.
      const schemaOf = async () =>
        (
          await sql<{ schema: string }>`select n.nspname as schema from pg_extension e
            join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(db)
        ).rows[0]?.schema;
      const attempt = async (work: () => Promise<void>): Promise<boolean> => {
        await sql`savepoint contact_search`.execute(db);
        try {
          await work();
          await sql`release savepoint contact_search`.execute(db);
          return true;
        } catch {
          await sql`rollback to savepoint contact_search`.execute(db);
          return false;
        }
      };
      if (!(await schemaOf())) await attempt(async () => void (await sql`create extension pg_trgm`.execute(db)));
      const schema = await schemaOf();
      if (!schema) return;
      await attempt(async () => {
        for (const column of COLUMNS)
          await sql`create index ${sql.ref(`contacts_search_${column}`)} on contacts
              using gin (lower(${sql.ref(column)}) ${sql.ref(schema)}.gin_trgm_ops)`.execute(db);
      });
    },
    async down(db: Kysely<unknown>): Promise<void> {
      if (dialect === 'sqlite') {
        for (const t of ['insert', 'update', 'delete'])
          await sql`drop trigger if exists ${sql.ref(`contacts_search_${t}`)}`.execute(db);
        await sql`drop table if exists contacts_search`.execute(db);
        return;
      }
      for (const column of COLUMNS) await sql`drop index if exists ${sql.ref(`contacts_search_${column}`)}`.execute(db);
    },
  };
}
