import type { ContactRecord } from './contacts.repository.js';

/**
 * CSV export (GET /v1/contacts/export): RFC 4180, UTF-8, CRLF line ends. A field is quoted when it holds a
 * comma, a double quote, CR or LF, or starts or ends with a space; a double quote inside is doubled. The
 * columns read back with the import (email, firstName, lastName, status); `properties` is the contact's
 * properties as one JSON object.
 */
export const EXPORT_COLUMNS = ['id', 'email', 'firstName', 'lastName', 'status', 'suppressed', 'properties', 'createdAt', 'updatedAt'] as const;

const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;

export function csvField(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return '';
  const s = String(value);
  return NEEDS_QUOTES.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvRow(fields: readonly (string | number | boolean | null | undefined)[]): string {
  return `${fields.map(csvField).join(',')}\r\n`;
}

export function csvHeader(): string {
  return csvRow(EXPORT_COLUMNS);
}

export function contactCsvRow(c: ContactRecord, suppressed: boolean): string {
  return csvRow([c.id, c.email, c.firstName, c.lastName, c.status, suppressed, JSON.stringify(c.properties), c.createdAt, c.updatedAt]);
}
