import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Dialect } from '../../db/connection.js';

/**
 * Engagement read from the event stream, for the segments' `{ engagement }` condition (audience/segments, docs/events.md):
 * whether a contact has an event of one of these types, human only, optionally of one broadcast and within a time
 * window. The events table is the outbox's: the SQL that reads it lives here and the audience context takes it
 * through the outbox face, as it takes a topic subscription's SQL from contacts.
 *
 * - delivered: `email.sent` (a delivery became SENT: the receiving server accepted the message).
 * - opened / clicked: `email.opened` / `email.clicked` with `machine = 0` (Apple MPP, scanners and link-checker
 *   bursts are kept but never count, §12).
 *
 * Served by the partial index `events_engagement` (workspace_id, contact_id, type, occurred_at, broadcast_id) over
 * these three types' human events (migration 0031): one probe of a contact's range per condition, covering (no read
 * of the event row). Its WHERE is repeated word for word in the statement, with literals, so that SQLite (which only
 * uses a partial index when the query carries its terms) and PostgreSQL both use it.
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

/**
 * `exists (…)`: true for a row of `contacts` (referenced by that name, unaliased) with at least one such event in
 * the workspace.
 */
export function engagementExistsSql(dialect: Dialect, workspaceId: string, q: EngagementQuery): RawBuilder<SqlBool> {
  const ts = (iso: string) => (dialect === 'postgres' ? sql`${iso}::timestamptz` : sql`${iso}`);
  const parts = [
    sql`eng.workspace_id = ${workspaceId}`,
    sql`eng.contact_id = contacts.id`,
    sql`eng.type = ${sql.lit(ENGAGEMENT_EVENT_TYPES[q.kind])}`,
    sql.raw(ENGAGEMENT_INDEX_PREDICATE.replace('type in', 'eng.type in').replace('machine', 'eng.machine')),
  ];
  if (q.since !== undefined) parts.push(sql`eng.occurred_at >= ${ts(q.since)}`);
  if (q.until !== undefined) parts.push(sql`eng.occurred_at <= ${ts(q.until)}`);
  if (q.broadcastId !== undefined) parts.push(sql`eng.broadcast_id = ${q.broadcastId}`);
  return sql<SqlBool>`exists (select 1 from events as eng where ${sql.join(parts, sql` and `)})`;
}
