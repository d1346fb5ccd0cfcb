/** Every timestamp the service stores or returns is RFC 3339 UTC with milliseconds. */
export function nowIso(): string {
  return new Date().toISOString();
}

/**
 * Normalises a stored timestamp to RFC 3339 UTC with milliseconds. SQLite returns our own ISO text;
 * PostgreSQL (timestamptz, session time zone UTC) returns e.g. `2026-11-21 10:00:00.12+00`.
 */
export function toIso(value: string | Date): string;
export function toIso(value: string | Date | null): string | null;
export function toIso(value: string | Date | null): string | null {
  if (value === null) return null;
  if (value instanceof Date) return value.toISOString();
  if (value.length === 24 && value.endsWith('Z')) return value;
  const d = new Date(value.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00'));
  if (Number.isNaN(d.getTime())) throw new Error(`unparseable timestamp from database: ${value}`);
  return d.toISOString();
}
