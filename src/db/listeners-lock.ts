import { sql } from 'kysely';
import type { Executor } from './connection.js';

/**
 * A workspace's webhook listeners lock, on PostgreSQL (SQLite's one writer at a time gives the same order). A
 * transaction that writes events takes it shared, then reads whether the workspace has an enabled webhook endpoint:
 * an event written while none has is written as already dispatched, and the fan-out neither indexes nor marks it. A
 * transaction that creates or enables an endpoint takes it exclusive first. So an endpoint's commit waits for the
 * event writers that read "none" before it (their events happened before it), and an event writer that starts
 * meanwhile waits for the commit and then reads the endpoint (READ COMMITTED: the next statement sees what was
 * committed while it waited). Without it every event on PostgreSQL was written undispatched and the fan-out marked
 * each one: during a 200,000-recipient send ~6 ms a claim of ~22 events, more of PostgreSQL's time than any other
 * statement (bench/README.md, "Events nobody listens to").
 *
 * Transaction-scoped advisory locks (`pg_advisory_xact_lock*`, the two-key form: a space apart from the one-key locks
 * of sign-up signals), taken in workspace order so two event writers never wait on each other; shared holders do not
 * wait for each other at all. Outside a transaction a lock would end with its statement: callers check first.
 *
 * Keep the exclusive holder's transaction short (an activated automation's webhook steps make their endpoints last in
 * its transaction, after the segment's members): while it waits, and until it commits, PostgreSQL queues the
 * workspace's event writers behind it. A writer that then waits for a row another writer holds (a contact) is sorted
 * out by PostgreSQL's deadlock check, after `deadlock_timeout` (1 s), by reordering the queue, not by an error.
 *
 * The first key of the lock (pg_locks.classid); the second is a hash of the workspace's id (objid). */
export const LISTENERS_LOCK_CLASS = 0x46430001;

function key(workspaceId: string) {
  return sql`hashtext(${`webhooks:${workspaceId}`})`;
}

/** Event writers (PostgreSQL, in a transaction): shared, for each workspace, before reading its endpoints. */
export async function lockListenersShared(db: Executor, workspaceIds: Iterable<string>): Promise<void> {
  for (const id of [...new Set(workspaceIds)].sort())
    await sql`select pg_advisory_xact_lock_shared(${LISTENERS_LOCK_CLASS}, ${key(id)})`.execute(db);
}

/** Creating or enabling an endpoint (PostgreSQL, in a transaction): exclusive, before the write. */
export async function lockListenersExclusive(db: Executor, workspaceId: string): Promise<void> {
  if (!db.isTransaction) throw new Error('an endpoint is created or enabled in a transaction (db/listeners-lock.ts)');
  await sql`select pg_advisory_xact_lock(${LISTENERS_LOCK_CLASS}, ${key(workspaceId)})`.execute(db);
}
