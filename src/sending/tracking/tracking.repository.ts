import { sql, type SqlBool } from 'kysely';
import { onPostgres } from '../../db/batch-sql.js';
import type { Dialect, Executor } from '../../db/connection.js';
import { globPattern, likePattern, matchOrder, type TemplateLink } from './tracking.links.js';
import { bucketStartIn } from '../../lib/zones.js';

/**
 * Engagement read from the events table (docs/tracking.md, "Stats"): per-broadcast counts, clicks per link and
 * the timeline; and the writes tracking makes besides recordEvents: marking earlier clicks of a burst as a machine's,
 * and counting hits per delivery for the cap (keepWithinCap). Always scoped by workspace; each read is a range of the
 * index (workspace_id, broadcast_id, type, …).
 */

export interface Engagement {
  /** Opens and clicks by people (machine ones left out). */
  opened: number;
  clicked: number;
  /** Deliveries with at least one human open / click. */
  uniqueOpens: number;
  uniqueClicks: number;
  /** Opens by machines (Apple Mail Privacy Protection, scanners). */
  machineOpens: number;
}

export const NO_ENGAGEMENT: Engagement = { opened: 0, clicked: 0, uniqueOpens: 0, uniqueClicks: 0, machineOpens: 0 };

const n = (v: unknown) => Number(v ?? 0);

/** The engagement of several broadcasts in one grouped query (a list page shows each one's stats). */
export async function engagementOf(
  db: Executor,
  workspaceId: string,
  broadcastIds: readonly string[],
): Promise<Map<string, Engagement>> {
  const out = new Map<string, Engagement>(broadcastIds.map((id) => [id, { ...NO_ENGAGEMENT }]));
  if (!broadcastIds.length) return out;
  // Per broadcast, kind and machine flag: the hits and the deliveries hit, read from migration 0038's
  // `events_broadcast_tracking` alone (the five sums over every event row took ~3.9 s for 25 broadcasts of 110,000
  // recipients; this ~0.7 s: bench/README.md, bench:console).
  const rows = await db
    .selectFrom('events')
    .select([
      'broadcast_id',
      'type',
      'machine',
      (eb) => eb.fn.countAll<number | string>().as('hits'),
      sql<number | string>`count(distinct delivery_id)`.as('deliveries'),
    ])
    .where('workspace_id', '=', workspaceId)
    .where('broadcast_id', 'in', broadcastIds)
    .where(sql.raw<SqlBool>(`type in ('email.opened', 'email.clicked')`))
    .groupBy(['broadcast_id', 'type', 'machine'])
    .execute();
  for (const r of rows) {
    const e = out.get(r.broadcast_id!)!;
    const human = !Number(r.machine);
    if (r.type === 'email.opened' && human) {
      e.opened += n(r.hits);
      e.uniqueOpens += n(r.deliveries);
    } else if (r.type === 'email.opened') e.machineOpens += n(r.hits);
    else if (human) {
      e.clicked += n(r.hits);
      e.uniqueClicks += n(r.deliveries);
    }
  }
  return out;
}

export interface LinkStats {
  /** The link as the template writes it (Liquid and all), or the URL clicked when no link of the template makes it. */
  url: string;
  clicks: number;
  uniqueClicks: number;
}

/**
 * The links of a broadcast people clicked, most clicked first (at most `limit`), grouped by the link as written in the
 * template (`links`, tracking.links.ts): the database puts each clicked URL in its link's group (a CASE of the
 * patterns, exact ones first; LIKE on PostgreSQL, GLOB on SQLite, both case-sensitive) and counts clicks and distinct
 * deliveries per group, exactly, in one query; a URL no link makes is its own group.
 */
export async function linkStats(
  db: Executor,
  dialect: Dialect,
  workspaceId: string,
  broadcastId: string,
  limit: number,
  links: readonly TemplateLink[] = [],
): Promise<LinkStats[]> {
  const ordered = matchOrder(links);
  const branches = ordered.map((l, i) =>
    l.exact !== null
      ? sql`when url = ${l.exact} then ${sql.lit(i)}`
      : dialect === 'postgres'
        ? sql`when url like ${likePattern(l.literals!)} escape '\\' then ${sql.lit(i)}`
        : sql`when url glob ${globPattern(l.literals!)} then ${sql.lit(i)}`,
  );
  const link = branches.length ? sql<number>`case ${sql.join(branches, sql` `)} else -1 end` : sql<number>`-1`;
  const clicked = db
    .selectFrom('events')
    .select(['url', 'delivery_id', link.as('link')])
    .where('workspace_id', '=', workspaceId)
    .where('broadcast_id', '=', broadcastId)
    .where('type', '=', 'email.clicked')
    .where('machine', '=', 0)
    .where('url', 'is not', null);
  const own = sql<string | null>`case when link = -1 then url end`;
  const rows = await db
    .selectFrom(clicked.as('c'))
    .select([
      'link',
      own.as('own_url'),
      sql<number>`count(*)`.as('clicks'),
      sql<number>`count(distinct delivery_id)`.as('unique_clicks'),
    ])
    .groupBy(['link', own])
    .orderBy(sql`count(*)`, 'desc')
    .orderBy(sql`count(distinct delivery_id)`, 'desc')
    .orderBy(sql`min(url)`)
    .limit(limit)
    .execute();
  return rows.map((r) => {
    const l = Number(r.link) >= 0 ? ordered[Number(r.link)] : undefined;
    return {
      url: l ? l.written : r.own_url!,
      clicks: n(r.clicks),
      uniqueClicks: n(r.unique_clicks),
    };
  });
}

export type Bucket = 'hour' | 'day';

export interface TimelinePoint {
  at: string;
  sent: number;
  opens: number;
  clicks: number;
  bounces: number;
}

/** The start of an event's bucket as RFC 3339 UTC text, computed by the database. */
/**
 * The quarter hour (UTC) an event falls in: every zone's offset is a whole number of quarter hours, so quarters fold
 * into any zone's hours and days exactly (timeline).
 */
function quarterStart(dialect: Dialect) {
  if (dialect === 'postgres') {
    return sql<string>`to_char(date_trunc('hour', occurred_at at time zone 'UTC') + floor(extract(minute from occurred_at at time zone 'UTC') / 15) * interval '15 minutes', 'YYYY-MM-DD"T"HH24:MI:00.000"Z"')`;
  }
  // SQLite stores RFC 3339 UTC text, which strftime reads.
  return sql<string>`strftime('%Y-%m-%dT%H:', occurred_at) || printf('%02d', (cast(strftime('%M', occurred_at) as integer) / 15) * 15) || ':00.000Z'`;
}

/**
 * Sent messages, human opens and clicks, and hard bounces of a broadcast per hour or day of `timeZone` (an IANA
 * name; UTC by default), oldest first, each bucket named by its start as a UTC instant; buckets without any of them
 * are left out. The database counts per quarter hour (UTC); the quarters are added up into the zone's hours or days.
 */
export async function timeline(
  db: Executor,
  dialect: Dialect,
  workspaceId: string,
  broadcastId: string,
  bucket: Bucket,
  timeZone = 'UTC',
): Promise<TimelinePoint[]> {
  const at = quarterStart(dialect);
  const rows = await db
    .selectFrom('events')
    .select([
      at.as('at'),
      sql<number>`sum(case when type = 'email.sent' then 1 else 0 end)`.as('sent'),
      sql<number>`sum(case when type = 'email.opened' and machine = 0 then 1 else 0 end)`.as('opens'),
      sql<number>`sum(case when type = 'email.clicked' and machine = 0 then 1 else 0 end)`.as('clicks'),
      sql<number>`sum(case when type = 'email.bounced' then 1 else 0 end)`.as('bounces'),
    ])
    .where('workspace_id', '=', workspaceId)
    .where('broadcast_id', '=', broadcastId)
    .where('type', 'in', ['email.sent', 'email.opened', 'email.clicked', 'email.bounced'])
    .groupBy(at)
    .orderBy(at)
    .execute();
  const buckets = new Map<number, TimelinePoint>();
  for (const r of rows) {
    const start = bucketStartIn(Date.parse(r.at), bucket, timeZone);
    const p = buckets.get(start) ?? { at: new Date(start).toISOString(), sent: 0, opens: 0, clicks: 0, bounces: 0 };
    p.sent += n(r.sent);
    p.opens += n(r.opens);
    p.clicks += n(r.clicks);
    p.bounces += n(r.bounces);
    buckets.set(start, p);
  }
  return [...buckets.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, p]) => p)
    .filter((p) => p.sent + p.opens + p.clicks + p.bounces > 0);
}

/** A click written as a person's that a later click of the same burst showed to be a machine's. */
export interface MachineClick {
  workspaceId: string;
  /** The event's id (chosen when the click was received). */
  id: string;
  /** Why (`burst`): the event's data gets `machine: true` and this `reason`. */
  reason: string;
}

/**
 * Marks clicks as a machine's (the burst rule), in the caller's transaction, each by its id (the primary key): `machine`
 * set, and `machine: true` and the reason written into its data by the database (SQLite's json_set, PostgreSQL's jsonb
 * `||`), so that the writer need not keep each click's data in memory for the burst window. A click that was not
 * stored (over the per-delivery cap, or its batch failed) or is a machine's already is left. Returns the contacts of the
 * clicks marked, by workspace.
 */
export async function markClicksMachine(db: Executor, clicks: readonly MachineClick[]): Promise<Map<string, string[]>> {
  const contacts = new Map<string, string[]>();
  const postgres = onPostgres(db);
  for (const c of clicks) {
    const data = postgres
      ? sql<string>`data || jsonb_build_object('machine', true, 'reason', ${c.reason}::text)`
      : sql<string>`json_set(data, '$.machine', json('true'), '$.reason', ${c.reason})`;
    const row = await db
      .updateTable('events')
      .set({ machine: 1, data })
      .where('id', '=', c.id)
      .where('workspace_id', '=', c.workspaceId)
      .where('machine', '=', 0)
      .returning('contact_id')
      .executeTakeFirst();
    if (!row?.contact_id) continue;
    const ids = contacts.get(c.workspaceId);
    if (ids) ids.push(row.contact_id);
    else contacts.set(c.workspaceId, [row.contact_id]);
  }
  return contacts;
}

/** An open or a click of the tracking writer's batch, as keepWithinCap needs it. */
export interface CountedHit {
  workspaceId: string;
  event: { type: string; deliveryId?: string | null };
}

/**
 * The per-delivery cap on stored hits (docs/tracking.md, "Replays and floods"), in the writer's transaction: adds
 * the batch's opens and clicks to each delivery's counters (`tracking_hits`, one multi-row upsert that returns the
 * new totals) and returns the hits to store: those that keep each delivery within `cap` opens and `cap` clicks, in
 * the batch's order. The counters count every hit that reached the writer, stored or not. The upsert locks each
 * delivery's row until the commit, so concurrent writers (other processes, on PostgreSQL) add up exactly; the
 * deliveries are written in id order so that two batches never wait on each other crosswise.
 */
export async function keepWithinCap<T extends CountedHit>(db: Executor, rows: readonly T[], cap: number): Promise<T[]> {
  const batch = new Map<string, { workspaceId: string; opens: number; clicks: number }>();
  for (const r of rows) {
    const id = r.event.deliveryId;
    if (!id) continue;
    const c = batch.get(id) ?? { workspaceId: r.workspaceId, opens: 0, clicks: 0 };
    if (r.event.type === 'email.opened') c.opens++;
    else c.clicks++;
    batch.set(id, c);
  }
  const ids = [...batch.keys()].sort();
  const room = new Map<string, { opens: number; clicks: number }>();
  // 4 values a row: far within both databases' limits on bound values.
  for (let i = 0; i < ids.length; i += 1000) {
    const chunk = ids.slice(i, i + 1000);
    const totals = await db
      .insertInto('tracking_hits')
      .values(
        chunk.map((id) => ({
          delivery_id: id,
          workspace_id: batch.get(id)!.workspaceId,
          opens: batch.get(id)!.opens,
          clicks: batch.get(id)!.clicks,
        })),
      )
      .onConflict((oc) =>
        oc.column('delivery_id').doUpdateSet({
          opens: sql<number>`tracking_hits.opens + excluded.opens`,
          clicks: sql<number>`tracking_hits.clicks + excluded.clicks`,
        }),
      )
      .returning(['delivery_id', 'opens', 'clicks'])
      .execute();
    for (const t of totals) {
      const added = batch.get(t.delivery_id)!;
      // What the delivery had before this batch, and so how many of the batch's hits still fit.
      room.set(t.delivery_id, { opens: cap - (n(t.opens) - added.opens), clicks: cap - (n(t.clicks) - added.clicks) });
    }
  }
  return rows.filter((r) => {
    const left = r.event.deliveryId ? room.get(r.event.deliveryId) : undefined;
    if (!left) return true;
    const kind = r.event.type === 'email.opened' ? 'opens' : 'clicks';
    if (left[kind] <= 0) return false;
    left[kind]--;
    return true;
  });
}
