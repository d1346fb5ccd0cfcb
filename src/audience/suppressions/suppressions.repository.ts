import { sql, type Expression, type ExpressionBuilder, type JoinBuilder, type SqlBool } from 'kysely';
import type { Executor } from '../../db/connection.js';
import { Precompiled } from '../../db/precompiled.js';
import type { Database, SuppressionsTable } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import { toIso } from '../../lib/time.js';

/**
 * The suppression list: addresses of a workspace that no broadcast or automation email goes to, whatever
 * their contact record says; an entry outlives the contact. Entries are written by the contact lifecycle
 * (contacts/contacts.lifecycle.ts) and read here.
 */
export interface Suppression {
  email: string;
  reason: SuppressionsTable['reason'];
  deliveryId: string | null;
  broadcastId: string | null;
  detail: string | null;
  createdAt: string;
}

const COLUMNS = ['id', 'email', 'reason', 'delivery_id', 'broadcast_id', 'detail', 'created_at'] as const;

function toSuppression(r: Pick<SuppressionsTable, (typeof COLUMNS)[number]>): Suppression & { id: string } {
  return {
    id: r.id,
    email: r.email,
    reason: r.reason,
    deliveryId: r.delivery_id,
    broadcastId: r.broadcast_id,
    detail: r.detail,
    createdAt: toIso(r.created_at),
  };
}

/** Adds an entry; an address already suppressed keeps its entry (the first reason stands). True when added. */
export async function addSuppression(
  db: Executor,
  workspaceId: string,
  s: Omit<Suppression, 'createdAt'> & { now: string },
): Promise<boolean> {
  const res = await db
    .insertInto('suppressions')
    .values({
      id: newId('sup'),
      workspace_id: workspaceId,
      email: s.email,
      reason: s.reason,
      delivery_id: s.deliveryId,
      broadcast_id: s.broadcastId,
      detail: s.detail?.slice(0, 1000) ?? null,
      created_at: s.now,
    })
    .onConflict((oc) => oc.columns(['workspace_id', 'email']).doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
}

export async function liftSuppression(db: Executor, workspaceId: string, email: string): Promise<boolean> {
  const res = await db
    .deleteFrom('suppressions')
    .where('workspace_id', '=', workspaceId)
    .where('email', '=', email)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

export async function getSuppression(
  db: Executor,
  workspaceId: string,
  email: string,
): Promise<(Suppression & { id: string }) | undefined> {
  const r = await db
    .selectFrom('suppressions')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('email', '=', email)
    .executeTakeFirst();
  return r ? toSuppression(r) : undefined;
}

/** email → reason, for those of `emails` that are suppressed. */
export async function suppressionsOf(
  db: Executor,
  workspaceId: string,
  emails: readonly string[],
): Promise<Map<string, Suppression['reason']>> {
  if (!emails.length) return new Map();
  const distinct = [...new Set(emails)];
  // One address (an email's usual recipient, bench:emails' accept path): the statement built once (db/precompiled.ts).
  const rows =
    distinct.length === 1
      ? await suppressionOfOne.execute(db, { workspaceId, email: distinct[0]! })
      : await db
          .selectFrom('suppressions')
          .select(['email', 'reason'])
          .where('workspace_id', '=', workspaceId)
          .where('email', 'in', distinct)
          .execute();
  return new Map(rows.map((r) => [r.email, r.reason]));
}

const suppressionOfOne = new Precompiled((db, param) =>
  db
    .selectFrom('suppressions')
    .select(['email', 'reason'])
    .where('workspace_id', '=', param('workspaceId'))
    .where('email', '=', param('email')),
);

export interface SuppressionFilter {
  reason?: Suppression['reason'];
  /** A case-insensitive substring of the address. */
  q?: string;
  /** Added at or after / before these times (stored form, UTC). */
  since?: string;
  before?: string;
}

/** `text` as a LIKE pattern matching it anywhere, its own `%`, `_` and `\` taken literally (escape '\'). */
function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export async function listSuppressions(
  db: Executor,
  workspaceId: string,
  opts: SuppressionFilter & { limit: number; beforeId?: string },
): Promise<(Suppression & { id: string })[]> {
  let q = db.selectFrom('suppressions').select(COLUMNS).where('workspace_id', '=', workspaceId);
  if (opts.reason) q = q.where('reason', '=', opts.reason);
  // Addresses are stored lower-cased (normalizeEmail), so a lower-cased pattern matches regardless of case.
  if (opts.q) q = q.where(sql<SqlBool>`email like ${containsPattern(opts.q.toLowerCase())} escape '\\'`);
  if (opts.since) q = q.where('created_at', '>=', opts.since);
  if (opts.before) q = q.where('created_at', '<', opts.before);
  if (opts.beforeId) q = q.where('id', '<', opts.beforeId);
  return (await q.orderBy('id', 'desc').limit(opts.limit).execute()).map(toSuppression);
}

/**
 * The join of a contact to its address's entry on the suppression list, if any: `.leftJoin('suppressions',
 * suppressionOfContact)` (at most one row: the list is unique per workspace and address), read by its index per
 * contact.
 */
export function suppressionOfContact(join: JoinBuilder<Database, 'contacts' | 'suppressions'>) {
  return join
    .onRef('suppressions.workspace_id', '=', 'contacts.workspace_id')
    .onRef('suppressions.email', '=', 'contacts.email');
}

/** A condition on `contacts`: the contact's address is not on its workspace's suppression list. */
export function notSuppressed(eb: ExpressionBuilder<Database, 'contacts'>): Expression<SqlBool> {
  return eb.not(
    eb.exists(
      eb
        .selectFrom('suppressions')
        .select(sql<number>`1`.as('one'))
        .whereRef('suppressions.workspace_id', '=', 'contacts.workspace_id')
        .whereRef('suppressions.email', '=', 'contacts.email'),
    ),
  );
}
