import type { Dialect } from '../connection.js';

/** The two column types that differ between the dialects; everything else is portable text/integer. */
export function columnTypes(dialect: Dialect) {
  return dialect === 'postgres'
    ? ({ ts: 'timestamptz', json: 'jsonb' } as const)
    : ({ ts: 'text', json: 'text' } as const);
}
