import { sql } from 'kysely';
import type { Executor } from '../../db/connection.js';
import { newId } from '../../lib/ids.js';
import type { SignalKind } from './protection.bursts.js';

/**
 * Marks a single-use token spent until it expires; false when it was spent already (also when two requests
 * race: the primary key lets one insert win).
 */
export async function spendToken(
  db: Executor,
  workspaceId: string,
  kind: 'pow',
  token: string,
  expiresAt: string,
): Promise<boolean> {
  const res = await db
    .insertInto('spent_tokens')
    .values({ kind, token, workspace_id: workspaceId, expires_at: expiresAt })
    .onConflict((oc) => oc.columns(['kind', 'token']).doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** How many submissions of the workspace left this signal since `since`. */
export async function countSignal(
  db: Executor,
  workspaceId: string,
  kind: SignalKind,
  key: string,
  since: string,
): Promise<number> {
  const r = await db
    .selectFrom('signup_signals')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('kind', '=', kind)
    .where('key', '=', key)
    .where('created_at', '>=', since)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

export async function insertSignals(
  db: Executor,
  workspaceId: string,
  submissionId: string,
  signals: { kind: SignalKind; key: string }[],
  now: string,
): Promise<void> {
  if (!signals.length) return;
  await db
    .insertInto('signup_signals')
    .values(
      signals.map((s) => ({
        id: newId('sig'),
        workspace_id: workspaceId,
        kind: s.kind,
        key: s.key,
        submission_id: submissionId,
        created_at: now,
      })),
    )
    .execute();
}

/**
 * Deletes expired spent tokens and signals older than `signalsBefore`, in batches (a job; every workspace: the
 * rows are dated, not owned by anyone's request). Returns how many rows went.
 */
export async function purgeProtection(
  db: Executor,
  now: string,
  signalsBefore: string,
  batch = 5_000,
): Promise<number> {
  const tokens = await db
    .deleteFrom('spent_tokens')
    .where(
      sql.ref('token'),
      'in',
      db.selectFrom('spent_tokens').select('token').where('expires_at', '<', now).limit(batch),
    )
    .executeTakeFirst();
  const signals = await db
    .deleteFrom('signup_signals')
    .where(
      'id',
      'in',
      db.selectFrom('signup_signals').select('id').where('created_at', '<', signalsBefore).limit(batch),
    )
    .executeTakeFirst();
  return Number(tokens.numDeletedRows) + Number(signals.numDeletedRows);
}

/**
 * PostgreSQL: serialises the submissions that share a burst signal until their transactions end, so that each
 * counts the ones before it (READ COMMITTED would let simultaneous ones all see the old count and none be held).
 * In key order, so two submissions never wait on each other. SQLite writes one transaction at a time already.
 */
export async function lockSignals(db: Executor, workspaceId: string, keys: readonly string[]): Promise<void> {
  for (const key of [...new Set(keys)].sort()) {
    await sql`select pg_advisory_xact_lock(hashtext(${`signup:${workspaceId}:${key}`}))`.execute(db);
  }
}
