import type { ContactRecord } from './contacts.repository.js';
import { tagCell } from './contacts.tags.js';

/**
 * CSV export (GET /v1/contacts/export): RFC 4180, UTF-8, CRLF line ends. A field is quoted when it holds a
 * comma, a double quote, CR or LF, or starts or ends with a space; a double quote inside is doubled. The
 * columns read back with the import (email, firstName, lastName, status); `properties` is the contact's
 * properties as one JSON object; `tags` its tags in one cell (comma-separated, or a quoted list when a tag holds a
 * comma: contacts.tags.ts tagCell), which the import reads back; `timezone` the contact's IANA zone (empty: the
 * workspace's), read back by the import too.
 */
export const EXPORT_COLUMNS = [
  'id',
  'email',
  'firstName',
  'lastName',
  'status',
  'suppressed',
  'properties',
  'createdAt',
  'updatedAt',
  'tags',
  'timezone',
] as const;

const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;

/**
 * Formula injection (OWASP "CSV injection"): names and properties often come from anonymous sign-ups, and a cell
 * that starts with = + - @ (or a tab or CR) runs as a formula when the file is opened in a spreadsheet. Such a
 * text cell gets a leading apostrophe, which spreadsheets show as text. Numbers and booleans are written as they are.
 */
const FORMULA = /^[=+\-@\t\r]/;

export function csvField(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return '';
  const s = typeof value === 'string' && FORMULA.test(value) ? `'${value}` : String(value);
  return NEEDS_QUOTES.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvRow(fields: readonly (string | number | boolean | null | undefined)[]): string {
  return `${fields.map(csvField).join(',')}\r\n`;
}

export function csvHeader(): string {
  return csvRow(EXPORT_COLUMNS);
}

export function contactCsvRow(c: ContactRecord, suppressed: boolean, tags: readonly string[] = []): string {
  return csvRow([
    c.id,
    c.email,
    c.firstName,
    c.lastName,
    c.status,
    suppressed,
    JSON.stringify(c.properties),
    c.createdAt,
    c.updatedAt,
    tagCell(tags),
    c.timezone,
  ]);
}
