import { validationFailed } from '../errors/errors.js';

/**
 * Cursors are opaque to clients: base64url of the last id of the page. Ids sort by creation time, so
 * "newest first" is `id desc` and the next page is `id < cursor`.
 */
export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[a-z]+_[0-9A-HJKMNP-TV-Z]{26}$/.test(id))
    throw validationFailed([{ path: '/query/cursor', message: 'is not a cursor this service issued' }]);
  return id;
}

/** Callers fetch `limit + 1` rows; the extra row only tells whether there is a next page. */
export function page<T extends { id: string }>(rows: T[], limit: number): { data: T[]; nextCursor: string | null } {
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  return { data, nextCursor: rows.length > limit && last ? Buffer.from(last.id, 'utf8').toString('base64url') : null };
}

/**
 * A list endpoint's answer: `fetch` gets the window to read (one row more than asked, after the cursor) and
 * returns rows newest first; the result is `{ data, nextCursor }` (docs/api.md §1).
 */
export async function paginate<T extends { id: string }>(
  query: { limit?: number; cursor?: string },
  fetch: (window: { limit: number; beforeId?: string }) => Promise<T[]>,
): Promise<{ data: T[]; nextCursor: string | null }> {
  const limit = query.limit ?? 20;
  return page(await fetch({ limit: limit + 1, beforeId: decodeCursor(query.cursor) }), limit);
}
