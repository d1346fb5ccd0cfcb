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

const RFC3339 = /^(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(\.\d+)?([Zz]|([+-])(\d\d):(\d\d))$/;

/**
 * An RFC 3339 date-time as the service stores timestamps (UTC, milliseconds; finer fractions are
 * truncated), or undefined when the text is not a real date-time between the years 0000 and 9999 UTC.
 */
export function normalizeDateTime(text: string): string | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const daysInMonth = [
    31,
    year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28,
    31,
    30,
    31,
    30,
    31,
    31,
    30,
    31,
    30,
    31,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth[month - 1]! || hour > 23 || minute > 59 || second > 59)
    return undefined;
  if (m[9] && (Number(m[10]) > 23 || Number(m[11]) > 59)) return undefined;
  const ms = Date.parse(text.toUpperCase());
  if (Number.isNaN(ms)) return undefined;
  const iso = new Date(ms).toISOString();
  return /^\d{4}-/.test(iso) ? iso : undefined;
}
