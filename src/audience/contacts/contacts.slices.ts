// The slices of a workspace's contacts, used by segments (segments/slices.ts adds their sizing by a filter's cost) and by
// the contact count; here, in contacts, so that both can use them without a cycle between the two folders.
import { performance } from 'node:perf_hooks';
import type { SelectQueryBuilder } from 'kysely';
import type { Dialect, Executor } from '../../db/connection.js';
import type { Database } from '../../db/schema.js';
import { validationFailed } from '../../errors/errors.js';

/**
 * Filters over a workspace's contacts are evaluated a slice of contacts at a time on SQLite.
 *
 * better-sqlite3 is synchronous: a statement runs on the event loop, and while it runs no other request of
 * any workspace is served. So no statement may evaluate a filter over an unbounded number of contacts. A
 * slice is a range of contact ids (`contacts_workspace` index order). The first slice of a filter is sized
 * from its cost (sliceRows in segments/slices.ts, by filterCost in segments.filter.ts: SLICE_BUDGET units); after each slice the next is resized
 * so that it takes about SLICE_TARGET_MS, whatever the contacts' data costs to read. Between slices the event
 * loop serves other requests. So a segment query holds the event loop for about SLICE_TARGET_MS at a time
 * (the first slice of the costliest filter the grammar allows, on the largest properties, is the worst case:
 * about 100 ms measured on the development machine); see docs/security.md.
 *
 * PostgreSQL runs statements off the event loop: there the whole range is one slice (contactSlices), and a
 * broadcast's materialisation reads its audience through one cursor (deliveries/audience-reader.ts). On SQLite it
 * reads one slice per transaction (nextSlice; src/composition/sql-delivery-store.ts writeAudienceSlice).
 */
export const SLICE_BUDGET = 400_000;
export const SLICE_TARGET_MS = 25;
export const MIN_SLICE_ROWS = 100;
export const MAX_SLICE_ROWS = 50_000;
/** A request that evaluates a filter gives up after this long (422): the server stays responsive meanwhile, but one request should not keep a core busy for minutes. */
export const EVALUATION_LIMIT_MS = 20_000;

export const tooCostly = () =>
  validationFailed([
    {
      path: '/filter',
      message: `takes longer than ${EVALUATION_LIMIT_MS / 1000} s to evaluate over this workspace's contacts; narrow it (fewer text matches, fewer conditions)`,
    },
  ]);

/** A range of contact ids: `after < id <= upTo` (ascending) or `from <= id < before` (descending); undefined ends are open. */
export interface IdRange {
  after?: string;
  upTo?: string;
  from?: string;
  before?: string;
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The slices of the workspace's contacts, in id order from `after` (ascending) or from `before` down
 * (descending). Each range holds at most `rows` contacts; the last one is open-ended. The caller runs its
 * filtered statement within each range and may stop early.
 */
export async function* contactSlices(
  db: Executor,
  dialect: Dialect,
  workspaceId: string,
  opts: { rows: number; order: 'asc' | 'desc'; after?: string; before?: string; limitMs?: number },
): AsyncGenerator<IdRange> {
  const deadline = opts.limitMs === undefined ? Infinity : performance.now() + opts.limitMs;
  if (dialect === 'postgres') {
    yield opts.order === 'asc' ? { after: opts.after } : { before: opts.before };
    return;
  }
  let cursor = opts.order === 'asc' ? opts.after : opts.before;
  let rows = opts.rows;
  for (let first = true; ; first = false) {
    if (!first) {
      await yieldToEventLoop();
      if (performance.now() > deadline) throw tooCostly();
    }
    const range = await nextSlice(db, workspaceId, { rows, order: opts.order, cursor });
    const started = performance.now();
    yield range;
    const edge = opts.order === 'asc' ? range.upTo : range.from;
    if (edge === undefined) return;
    cursor = edge;
    // Aim the next slice at SLICE_TARGET_MS; grow at most fourfold a step.
    const spent = Math.max(0.5, performance.now() - started);
    rows = Math.max(MIN_SLICE_ROWS, Math.min(MAX_SLICE_ROWS, rows * 4, Math.round((rows * SLICE_TARGET_MS) / spent)));
  }
}

/**
 * The slice of `rows` contacts after `cursor` (ascending) or before it (descending), on either database: its far
 * end is the id `rows` contacts away, found by one walk of the (workspace_id, id) index with no filter evaluated;
 * open-ended when fewer are left.
 */
export async function nextSlice(
  db: Executor,
  workspaceId: string,
  opts: { rows: number; order: 'asc' | 'desc'; cursor?: string },
): Promise<IdRange> {
  let q = db.selectFrom('contacts').select('id').where('workspace_id', '=', workspaceId);
  if (opts.cursor !== undefined) q = q.where('id', opts.order === 'asc' ? '>' : '<', opts.cursor);
  const edge = await q
    .orderBy('id', opts.order)
    .limit(1)
    .offset(opts.rows - 1)
    .executeTakeFirst();
  return opts.order === 'asc' ? { after: opts.cursor, upTo: edge?.id } : { before: opts.cursor, from: edge?.id };
}

/** Narrows a query over `contacts` to a slice. */
export function inRange<QB extends SelectQueryBuilder<Database, 'contacts', object>>(q: QB, r: IdRange): QB {
  let out = q;
  if (r.after !== undefined) out = out.where('contacts.id', '>', r.after) as QB;
  if (r.upTo !== undefined) out = out.where('contacts.id', '<=', r.upTo) as QB;
  if (r.from !== undefined) out = out.where('contacts.id', '>=', r.from) as QB;
  if (r.before !== undefined) out = out.where('contacts.id', '<', r.before) as QB;
  return out;
}
