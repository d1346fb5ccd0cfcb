import crypto from 'node:crypto';
import { PostgresAdapter, sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { Executor } from '../../db/connection.js';
import { Precompiled } from '../../db/precompiled.js';
import type { Database } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import { nextStatus, statusesFor } from './deliveries.state.js';

/**
 * The sending path's performance SQL, in one place: the statements whose text is written by hand (one text whatever
 * a batch's size, its values in one array per column) or built once (db/precompiled.ts), each behind a typed
 * function. They repeat the state table's rules (deliveries.state.ts) for many rows at once or for the hottest
 * single-row writes; deliveries.outcomes.ts and the delivery store call them. Nothing else here.
 */

// ---- writing an audience ----------------------------------------------------------------------------

/**
 * A recipient as a materialisation writes it. Local-time sending (issue 34, docs/sending.md "Local-time sending"):
 * `timezone` is the contact's zone as read with the audience, and `releaseAt` the instant its delivery is due (its
 * `next_attempt_at`: that zone's turn); without it the delivery is due at once, as every other broadcast's.
 */
export interface MaterializedRecipient {
  contactId: string;
  email: string;
  timezone?: string | null;
  releaseAt?: string;
  /** Local-time sending: the zone whose turn `releaseAt` is (the delivery's `local_zone`, the report's stats.zones). */
  localZone?: string;
  /** An A/B broadcast's (docs/ab-tests.md): the recipient's variant and group (the TEST share, or the REST). */
  variant?: string | null;
  group?: 'TEST' | 'REST' | null;
}

/** Each recipient's `local_zone`: the zone of its turn (local-time sending), or null. */
function zones(recipients: readonly MaterializedRecipient[]): (string | null)[] {
  return recipients.map((r) => r.localZone ?? null);
}

/** Each recipient's `next_attempt_at`: its releaseAt (local-time sending), or now. */
function releases(recipients: readonly MaterializedRecipient[], now: string): string[] {
  return recipients.map((r) => r.releaseAt ?? now);
}

/**
 * `n` unsubscribe tokens: 24 bytes of the CSPRNG each (base64url), drawn in one call. A call of crypto.randomBytes
 * costs ~10 µs or more whatever its size (lib/random.ts), so one call per token cost a batch more than its insert
 * (bench/README.md, "Sending: design notes").
 */
export function unsubscribeTokens(n: number): string[] {
  const bytes = crypto.randomBytes(24 * n);
  return Array.from({ length: n }, (_, i) => bytes.toString('base64url', 24 * i, 24 * (i + 1)));
}

/**
 * Inserts one batch of recipients (a recipient already there is left alone: the unique index decides). One statement
 * of constant text whatever the batch's size, its values in a few parameters: on PostgreSQL one array per column
 * (unnest), on SQLite one JSON array of rows (json_each). Built through the query builder, a 1,000-row insert of
 * every column (19,000 parameters) cost 8 ms of CPU to build and compile alone (bench/README.md, "Sending: design
 * notes").
 */
export async function insertDeliveries(
  db: Executor,
  workspaceId: string,
  broadcastId: string,
  recipients: MaterializedRecipient[],
  now: string,
): Promise<void> {
  if (!recipients.length) return;
  const ids = recipients.map(() => newId('dlv'));
  const tokens = unsubscribeTokens(recipients.length);
  // local_zone: local-time sending's; variant and ab_group: an A/B broadcast's (docs/ab-tests.md); null otherwise.
  const columns = sql`insert into deliveries (id, workspace_id, broadcast_id, contact_id, email, status, attempts, next_attempt_at, local_zone, unsubscribe_token, created_at, updated_at, variant, ab_group)`;
  // The partial unique index of broadcasts' recipients (a run's messages, automation_run_id set, have their own).
  const onConflict = sql`on conflict (broadcast_id, contact_id) where automation_run_id is null do nothing`;
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`${columns}
      select i, ${workspaceId}, ${broadcastId}, c, e, 'QUEUED', 0, r, z, t, ${now}::timestamptz, ${now}::timestamptz, v, g
      from unnest(${ids}::text[], ${recipients.map((r) => r.contactId)}::text[], ${recipients.map((r) => r.email)}::text[], ${tokens}::text[], ${releases(recipients, now)}::timestamptz[], ${zones(recipients)}::text[],
        ${recipients.map((r) => r.variant ?? null)}::text[], ${recipients.map((r) => r.group ?? null)}::text[]) as x(i, c, e, t, r, z, v, g)
      ${onConflict}`.execute(db);
    return;
  }
  const rows = JSON.stringify(
    recipients.map((r, n) => [
      ids[n],
      r.contactId,
      r.email,
      tokens[n],
      r.releaseAt ?? now,
      r.localZone ?? null,
      r.variant ?? null,
      r.group ?? null,
    ]),
  );
  await sql`${columns}
    select value ->> 0, ${workspaceId}, ${broadcastId}, value ->> 1, value ->> 2, 'QUEUED', 0, value ->> 4, value ->> 5, value ->> 3, ${now}, ${now}, value ->> 6, value ->> 7
    from json_each(${rows}) where true
    ${onConflict}`.execute(db);
}

/**
 * PostgreSQL: one batch of a materialisation in one statement (so one transaction, without BEGIN and COMMIT round
 * trips): `lease`, the broadcast's part (broadcasts.writer.ts materializationStep: the lease checked and renewed, the
 * cursor moved), runs first, and the recipients are inserted only if it returned the broadcast, i.e. the lease was
 * this owner's. Five round trips in one: BEGIN, the renewal, the cursor's update and COMMIT cost 4.2 ms a batch
 * besides the insert (bench/README.md, "Sending: design notes"). False when the lease was lost (nothing written).
 * The audience was read ahead, outside this statement: a contact deleted since is left out (the delete's foreign key
 * would otherwise fail the batch; one deleted while this statement runs still can, and the caller reads the batch
 * again).
 */
export async function insertLeasedRecipients(
  db: Executor,
  lease: RawBuilder<{ id: string }>,
  workspaceId: string,
  broadcastId: string,
  recipients: MaterializedRecipient[],
  now: string,
): Promise<boolean> {
  const ids = recipients.map(() => newId('dlv'));
  const tokens = unsubscribeTokens(recipients.length);
  const r = await sql<{ renewed: number }>`with lease as (
      ${lease}
    ), inserted as (
      insert into deliveries (id, workspace_id, broadcast_id, contact_id, email, status, attempts, next_attempt_at, local_zone, unsubscribe_token, created_at, updated_at, variant, ab_group)
      select i, ${workspaceId}, ${broadcastId}, c, e, 'QUEUED', 0, r, z, t, ${now}::timestamptz, ${now}::timestamptz, v, g
      from unnest(${ids}::text[], ${recipients.map((x) => x.contactId)}::text[], ${recipients.map((x) => x.email)}::text[], ${tokens}::text[], ${releases(recipients, now)}::timestamptz[], ${zones(recipients)}::text[],
        ${recipients.map((x) => x.variant ?? null)}::text[], ${recipients.map((x) => x.group ?? null)}::text[]) as x(i, c, e, t, r, z, v, g)
      where exists (select 1 from lease) and exists (select 1 from contacts where contacts.workspace_id = ${workspaceId} and contacts.id = x.c)
      on conflict (broadcast_id, contact_id) where automation_run_id is null do nothing
    )
    select count(*)::int as renewed from lease`.execute(db);
  return Number(r.rows[0]?.renewed ?? 0) > 0;
}

/**
 * PostgreSQL, on a connection held for it (db/held-connection.ts): a read-only transaction and, in it, a cursor over the
 * audience's recipients in contact id order (audience-reader.ts). Planned as cursors are, for their first rows: an index
 * scan in id order whose first batch comes at once, where a plan of all its rows (a scan and a sort) was slower
 * (bench/README.md, "bench:segments", 2026-11-28).
 */
export async function declareAudienceCursor(
  conn: Executor,
  audience: SelectQueryBuilder<Database, 'contacts', object>,
  after: string | null,
): Promise<void> {
  let q = audience.select(['contacts.id', 'contacts.email', 'contacts.timezone']).orderBy('contacts.id');
  if (after !== null) q = q.where('contacts.id', '>', after);
  const compiled = q.compile();
  await sql`begin read only`.execute(conn);
  await conn.executeQuery({ ...compiled, sql: `declare audience no scroll cursor for ${compiled.sql}` });
}

/** The next `rows` recipients of the cursor declareAudienceCursor declared on this connection (fewer at its end). */
export async function fetchAudienceCursor(conn: Executor, rows: number): Promise<MaterializedRecipient[]> {
  const r = await sql<{
    id: string;
    email: string;
    timezone: string | null;
  }>`fetch forward ${sql.lit(rows)} from audience`.execute(conn);
  return r.rows.map((x) => ({ contactId: x.id, email: x.email, timezone: x.timezone }));
}

// ---- the hand-off and the "sent" outcome -----------------------------------------------------------

/**
 * The two statements every message runs, the hand-off and the "sent" outcome, built once (db/precompiled.ts): building
 * and compiling them with Kysely took ~60 µs of the pipeline thread's time per message, the thread that limits a send
 * (bench/README.md, "Sending: design notes"). RETURNING says whether the row changed.
 */
// handOffMany and markSentMany (below) repeat these two rules for a batch on PostgreSQL: a change to one is a change to
// both (test/db/deliveries-batched.test.ts checks that they hand off and record exactly what these do, case by case).
const handOffQuery = new Precompiled((db, param) =>
  db
    .updateTable('deliveries')
    .set({ handed_off_at: param('now') })
    .where('workspace_id', '=', param('workspaceId'))
    .where('id', '=', param('id'))
    .where('status', '=', 'SENDING')
    .where('lease_owner', '=', param('owner'))
    .where('attempts', '=', param<number>('attempts'))
    .where('lease_expires_at', '>', param('now'))
    .returning('id'),
);

const sentQuery = new Precompiled((db, param) =>
  db
    .updateTable('deliveries')
    .set({
      status: nextStatus('SENDING', 'sent')!,
      updated_at: param('now'),
      lease_owner: null,
      lease_expires_at: null,
      sent_at: param('now'),
      message_id: param('messageId'),
      smtp_response: param('response'),
      last_error: null,
    })
    .where('workspace_id', '=', param('workspaceId'))
    .where('id', '=', param('id'))
    .where('status', 'in', statusesFor('sent'))
    .returning('id'),
);

/**
 * The point of no return: marks the delivery as being handed to the transport. False when it was canceled
 * (or taken over) meanwhile, and then it must not be sent. Cancel leaves handed-off deliveries alone and
 * waits for them, so nothing is sent after a cancel returns. False too when this worker's lease has run out
 * (it stalled): another worker may be taking the delivery over right now, and only one of them may send it.
 * And false when the claim is no longer the one the caller made (`attempts`: each claim counts one): the batch
 * loops of one process share its lease owner, and a loop that re-claimed the delivery after the lease of
 * another loop's claim ran out is the one to send it.
 */
export async function handOff(
  db: Executor,
  workspaceId: string,
  id: string,
  owner: string,
  attempts: number,
  now: string,
): Promise<boolean> {
  return (await handOffQuery.execute(db, { workspaceId, id, owner, attempts, now })).length > 0;
}

/** The "sent" outcome of one delivery (deliveries.outcomes.ts recordOutcome); false if it was no longer SENDING. */
export async function markSent(
  db: Executor,
  workspaceId: string,
  id: string,
  now: string,
  messageId: string,
  response: string,
): Promise<boolean> {
  return (
    (await sentQuery.execute(db, { workspaceId, id, now, messageId, response: response.slice(0, 500) })).length > 0
  );
}

/**
 * PostgreSQL: the hand-offs of a batch (the store's per-message writer, src/composition/sql-delivery-store.ts) in one
 * statement, with handOff's conditions row by row. Returns `id:attempts` of each delivery handed off. One statement
 * instead of one per delivery: each of those was a round trip the writer waited for, and PostgreSQL's sending was bound
 * by them (bench/README.md, "Sending: design notes"). The rows are given in the order of their ids; PostgreSQL locks them in
 * that order when it plans a nested loop (the plan for a batch), not promised otherwise: a deadlock with another
 * transaction is rolled back and the batch written again (db/batch-writer.ts). A concurrent change to a row is seen:
 * PostgreSQL checks the WHERE again on the row's new version before updating it.
 */
export async function handOffMany(
  db: Executor,
  items: readonly { workspaceId: string; id: string; owner: string; attempts: number; now: string }[],
): Promise<Set<string>> {
  const r = await sql<{ id: string; attempts: number }>`update deliveries d set handed_off_at = x.now
    from (select * from unnest(${items.map((i) => i.workspaceId)}::text[], ${items.map((i) => i.id)}::text[], ${items.map((i) => i.owner)}::text[],
          ${items.map((i) => i.attempts)}::int[], ${items.map((i) => i.now)}::timestamptz[]) as u(workspace_id, id, owner, attempts, now) order by id) x
    where d.workspace_id = x.workspace_id and d.id = x.id and d.status = 'SENDING' and d.lease_owner = x.owner
      and d.attempts = x.attempts and d.lease_expires_at > x.now
    returning d.id, d.attempts`.execute(db);
  return new Set(r.rows.map((row) => `${row.id}:${Number(row.attempts)}`));
}

/** PostgreSQL: the "sent" outcomes of a batch in one statement (recordOutcome's `sent`, row by row); returns the ids recorded. */
export async function markSentMany(
  db: Executor,
  items: readonly { workspaceId: string; id: string; now: string; messageId: string; response: string }[],
): Promise<Set<string>> {
  const r = await sql<{ id: string }>`update deliveries d
    set status = ${nextStatus('SENDING', 'sent')!}, updated_at = x.now, lease_owner = null, lease_expires_at = null, sent_at = x.now,
        message_id = x.message_id, smtp_response = x.response, last_error = null
    from (select * from unnest(${items.map((i) => i.workspaceId)}::text[], ${items.map((i) => i.id)}::text[], ${items.map((i) => i.now)}::timestamptz[],
          ${items.map((i) => i.messageId)}::text[], ${items.map((i) => i.response.slice(0, 500))}::text[]) as u(workspace_id, id, now, message_id, response) order by id) x
    where d.workspace_id = x.workspace_id and d.id = x.id and d.status = any(${statusesFor('sent')}::text[])
    returning d.id`.execute(db);
  return new Set(r.rows.map((row) => row.id));
}
