/**
 * JSON columns are text on SQLite and jsonb on PostgreSQL; the PostgreSQL driver is configured to hand
 * jsonb back as text too, so both dialects are read and written through these two functions.
 */
export function toJsonColumn(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

export function fromJsonColumn<T>(value: string | null): T | null {
  return value === null ? null : (JSON.parse(value) as T);
}
