import {
  PostgresDialect,
  PostgresIntrospector,
  sql,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  type Kysely,
  type SchemaMetadata,
  type TableMetadata,
} from 'kysely';

interface ColumnRow {
  column: string;
  not_null: boolean;
  has_default: boolean;
  table: string;
  table_type: string;
  schema: string;
  type: string;
  type_schema: string;
  column_description: string | null;
  auto_incrementing: string | null;
}

/**
 * Kysely's PostgreSQL introspector reads the tables of every schema in the database, and calls
 * `pg_get_serial_sequence` on each by name: a schema dropped by another process between the catalog's snapshot and
 * that call fails the whole read with "relation … does not exist". Kysely's Migrator reads the tables this way to see
 * whether its own exist, so one instance (or one test suite) dropping its schema could fail another's migrations.
 * This one reads only the connection's own schema (`current_schema()`), which no one else drops under it.
 */
export class CurrentSchemaIntrospector implements DatabaseIntrospector {
  readonly #db: Kysely<unknown>;
  readonly #all: PostgresIntrospector;

  constructor(db: Kysely<unknown>) {
    this.#db = db;
    this.#all = new PostgresIntrospector(db);
  }

  getSchemas(): Promise<SchemaMetadata[]> {
    return this.#all.getSchemas();
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const internal = options.withInternalKyselyTables
      ? sql`true`
      : sql`c.relname not in ('kysely_migration', 'kysely_migration_lock')`;
    const { rows } = await sql<ColumnRow>`
      select a.attname as "column", a.attnotnull as not_null, a.atthasdef as has_default,
             c.relname as "table", c.relkind as table_type, ns.nspname as "schema",
             typ.typname as "type", dtns.nspname as type_schema,
             col_description(a.attrelid, a.attnum) as column_description,
             pg_get_serial_sequence(quote_ident(ns.nspname) || '.' || quote_ident(c.relname), a.attname) as auto_incrementing
        from pg_catalog.pg_attribute a
        join pg_catalog.pg_class c on a.attrelid = c.oid
        join pg_catalog.pg_namespace ns on c.relnamespace = ns.oid
        join pg_catalog.pg_type typ on a.atttypid = typ.oid
        join pg_catalog.pg_namespace dtns on typ.typnamespace = dtns.oid
       where ns.nspname = current_schema()
         and c.relkind in ('r', 'v', 'p')
         and a.attnum >= 0 and not a.attisdropped
         and ${internal}
       order by c.relname, a.attnum`.execute(this.#db);
    const tables = new Map<
      string,
      { name: string; schema: string; isView: boolean; columns: TableMetadata['columns'][number][] }
    >();
    for (const row of rows) {
      let table = tables.get(row.table);
      if (!table) {
        table = { name: row.table, schema: row.schema, isView: row.table_type === 'v', columns: [] };
        tables.set(row.table, table);
      }
      table.columns.push({
        name: row.column,
        dataType: row.type,
        dataTypeSchema: row.type_schema,
        hasDefaultValue: row.has_default,
        isAutoIncrementing: row.auto_incrementing !== null,
        isNullable: !row.not_null,
        comment: row.column_description ?? undefined,
      });
    }
    return [...tables.values()];
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}

/** Kysely's PostgreSQL dialect, introspecting only the connection's own schema (see CurrentSchemaIntrospector). */
export class FormcastPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}
