import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Dialect } from '../../db/connection.js';

/**
 * Engagement read from the event stream, for the segments' `{ engagement }` condition of one broadcast
 * (audience/segments, docs/events.md): whether a contact has an event of one of these types of that broadcast, human
 * only, optionally within a time window. (Without a broadcast the condition reads the contact's summary columns,
 * kept from the same events: audience/contacts/contacts.engagement.ts.) The events table is the outbox's: the SQL that reads it lives here and the audience context takes it
 * through the outbox face, as it takes a topic subscription's SQL from contacts.
 *
 * - delivered: `email.sent` (a delivery became SENT: the receiving server accepted the message).
 * - opened / clicked: `email.opened` / `email.clicked` with `machine = 0` (Apple MPP, scanners and link-checker
 *   bursts are kept but never count, §12).
 *
 * Served by the partial index `events_broadcast_engagement` over these three types' human events (migration 0035,
 * which replaced 0031's `events_engagement`). Its WHERE is repeated word for word in the statement, with literals, so
 * that SQLite (which only uses a partial index when the query carries its terms) and PostgreSQL both use it.
 */
export const ENGAGEMENT_EVENT_TYPES = {
  delivered: 'email.sent',
  opened: 'email.opened',
  clicked: 'email.clicked',
} as const;

export type EngagementKind = keyof typeof ENGAGEMENT_EVENT_TYPES;

/** The partial index's predicate, the same text in the migration and in every query. */
export const ENGAGEMENT_INDEX_PREDICATE = `type in ('email.sent', 'email.opened', 'email.clicked') and machine = 0`;

export interface EngagementQuery {
  kind: EngagementKind;
  /** Only this broadcast's events. */
  broadcastId?: string;
  /** Only events that occurred at or after this instant (RFC 3339 UTC). */
  since?: string;
  /** Only events that occurred at or before this instant (a resend's audience, frozen at its creation). */
  until?: string;
}

/** A range of contact ids a statement is evaluated over (one slice of contacts on SQLite: audience/contacts/contacts.slices.ts). */
export interface ContactIdRange {
  after?: string;
  upTo?: string;
  from?: string;
  before?: string;
}

/**
 * True for a row of `contacts` (referenced by that name, unaliased) with at least one such event of one broadcast.
 * A condition without a broadcast reads the contact's summary instead (audience/contacts/contacts.engagement.ts).
 *
 * Served by the partial index `events_broadcast_engagement` (workspace_id, broadcast_id, type, contact_id,
 * occurred_at, migration 0035), in one of two forms:
 * - Within a bounded range of contacts (`within`, a slice on SQLite): `contacts.id in (select …)` with the range's
 *   bounds on `eng.contact_id` too. The broadcast's list is read once per statement, only its part in the slice, and
 *   each contact is looked up in that small list: at 1,000,000 contacts on SQLite, non-openers of one broadcast
 *   in 84–106 ms of statements where one probe per contact took 1,046–1,113 ms (bench:engagement, bench/README.md).
 *   Without the bounds the list was read whole in every slice (~300 ms a statement at 1,000,000 contacts).
 * - Otherwise `exists (…)`: on SQLite one probe per contact (one contact, or a batch bounded by a limit); PostgreSQL
 *   plans it as a (hash) semi-join, or an anti-join under `not`, over its whole range at once.
 */
export function broadcastEngagementSql(
  dialect: Dialect,
  workspaceId: string,
  q: EngagementQuery & { broadcastId: string },
  within?: ContactIdRange,
): RawBuilder<SqlBool> {
  const ts = (iso: string) => (dialect === 'postgres' ? sql`${iso}::timestamptz` : sql`${iso}`);
  const parts = [
    sql`eng.workspace_id = ${workspaceId}`,
    sql`eng.broadcast_id = ${q.broadcastId}`,
    sql`eng.type = ${sql.lit(ENGAGEMENT_EVENT_TYPES[q.kind])}`,
    sql.raw(ENGAGEMENT_INDEX_PREDICATE.replace('type in', 'eng.type in').replace('machine', 'eng.machine')),
  ];
  if (q.since !== undefined) parts.push(sql`eng.occurred_at >= ${ts(q.since)}`);
  if (q.until !== undefined) parts.push(sql`eng.occurred_at <= ${ts(q.until)}`);
  const bounds = [
    within?.after !== undefined ? sql`eng.contact_id > ${within.after}` : null,
    within?.upTo !== undefined ? sql`eng.contact_id <= ${within.upTo}` : null,
    within?.from !== undefined ? sql`eng.contact_id >= ${within.from}` : null,
    within?.before !== undefined ? sql`eng.contact_id < ${within.before}` : null,
  ].filter((b) => b !== null);
  if (bounds.length > 0)
    return sql<SqlBool>`(contacts.id in (select eng.contact_id from events as eng where ${sql.join([...parts, ...bounds], sql` and `)}))`;
  parts.push(sql`eng.contact_id = contacts.id`);
  return sql<SqlBool>`exists (select 1 from events as eng where ${sql.join(parts, sql` and `)})`;
}

/** The time of the latest such event of the contact (`contacts`, unaliased): what its summary column holds. */
export function latestEngagementSql(kind: EngagementKind): RawBuilder<string | null> {
  return sql<
    string | null
  >`(select max(eng.occurred_at) from events as eng where eng.workspace_id = contacts.workspace_id
    and eng.contact_id = contacts.id and eng.type = ${sql.lit(ENGAGEMENT_EVENT_TYPES[kind])} and eng.machine = 0)`;
}
