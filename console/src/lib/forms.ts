import { ApiError } from '../api/client';

/** The field errors of a failed request, keyed by JSON pointer, and the rest as one message. */
export function problemOf(err: unknown): { fields: Record<string, string>; message: string | null } {
  if (!err) return { fields: {}, message: null };
  if (err instanceof ApiError) return { fields: err.fieldErrors(), message: err.message };
  return { fields: {}, message: err instanceof Error ? err.message : 'Something went wrong.' };
}

/** Errors for pointers the form does not show. */
export function otherErrors(fields: Record<string, string>, shown: string[]): string[] {
  return Object.entries(fields)
    .filter(([p]) => !shown.includes(p))
    .map(([p, m]) => `${p || '/'}: ${m}`);
}

/** '' becomes null: optional text fields are cleared, not set to an empty string. */
export function nullable(s: string): string | null {
  const t = s.trim();
  return t === '' ? null : t;
}
