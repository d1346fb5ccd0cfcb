import { PostgresAdapter, sql } from 'kysely';
import type { Executor } from '../../db/connection.js';
import { toIso } from '../../lib/time.js';

/**
 * Sender health (docs/bounces.md): a workspace's hard-bounce and complaint rates over the last 7 and 30
 * days, each against the threshold mailbox providers hold senders to. Complaints: 0.3%, the limit Gmail and
 * Yahoo set for bulk senders (they ask to stay below 0.1%). Hard bounces: 2%, the common industry line
 * (Mailchimp, SendGrid and Amazon SES warn around it; SES reviews accounts at 5%).
 */
export const HEALTH_THRESHOLDS = { hardBounceRate: 0.02, complaintRate: 0.003 } as const;
export const HEALTH_WINDOWS = [7, 30] as const;

export interface RateHealth {
  value: number;
  threshold: number;
  /** ok below half the threshold, warning up to it, critical above it. */
  status: 'ok' | 'warning' | 'critical';
}

export interface WindowHealth {
  days: number;
  sent: number;
  hardBounces: number;
  complaints: number;
  hardBounceRate: RateHealth;
  complaintRate: RateHealth;
}

function rate(count: number, of: number, threshold: number): RateHealth {
  const value = of === 0 ? 0 : count / of;
  return {
    value: Math.round(value * 1e6) / 1e6,
    threshold,
    status: value > threshold ? 'critical' : value > threshold / 2 ? 'warning' : 'ok',
  };
}

const HOUR = 3_600_000;
/**
 * An hour is counted into `sender_health_hours` (migration 0039) once it ended this long ago: a write's time is taken
 * a little before it commits, and processes' clocks differ a little. Nothing else changes a past hour: deliveries are
 * never deleted, and their times are written as they happen.
 */
const SETTLE_MS = HOUR;
/** How far apart two processes' clocks (or two calls started at once) may be without the kept hours being recounted. */
const SLACK_MS = 2 * HOUR;

/** What sender health counts: the deliveries with `column` in an hour (and for `refused`, never sent). */
const MEASURES = [
  { key: 'sent', column: 'sent_at', neverSent: false },
  { key: 'hard_bounces', column: 'bounced_at', neverSent: false },
  { key: 'refused', column: 'bounced_at', neverSent: true },
  { key: 'complaints', column: 'complained_at', neverSent: false },
] as const;
type Measure = (typeof MEASURES)[number]['key'];
type Counts = Record<Measure, number>;

const iso = (ms: number) => new Date(ms).toISOString();
const floorHour = (ms: number) => Math.floor(ms / HOUR) * HOUR;

function deliveriesWith(db: Executor, workspaceId: string, m: (typeof MEASURES)[number], from: number, to?: number) {
  let q = db
    .selectFrom('deliveries')
    .where('workspace_id', '=', workspaceId)
    .where(m.column, 'is not', null)
    .where(m.column, '>=', iso(from));
  if (to !== undefined) q = q.where(m.column, '<', iso(to));
  if (m.neverSent) q = q.where('sent_at', 'is', null);
  return q;
}

/** How many deliveries `m` counts in [from, to) (to the end when `to` is left out), from the column's index. */
async function countLive(
  db: Executor,
  workspaceId: string,
  m: (typeof MEASURES)[number],
  from: number,
  to?: number,
): Promise<number> {
  if (to !== undefined && to <= from) return 0;
  const row = await deliveriesWith(db, workspaceId, m, from, to)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * Counts the closed hours not yet in `sender_health_hours` (from the end of those counted, or from the widest window's
 * start) and keeps them; drops the hours no window reaches any more. Returns the end of the hours kept, and from when.
 * The first call on a workspace with a month of sending reads that month once (~1.3 s at 2,750,000 deliveries on
 * SQLite); later ones read the hours since the last.
 */
async function rollUp(
  db: Executor,
  workspaceId: string,
  oldest: number,
  now: number,
): Promise<{ since: number; until: number } | null> {
  const closed = floorHour(now - SETTLE_MS);
  const kept = await db
    .selectFrom('sender_health_rollups')
    .select(['since', 'until'])
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  const was = kept && { since: Date.parse(toIso(kept.since)), until: Date.parse(toIso(kept.until)) };
  // The hours kept are used when they reach the widest window's start without a gap, or start at most SLACK_MS after it
  // (countWindows counts the hours between live): a call from a process whose clock is a little behind the last one's,
  // or one that started before it, does not read the month again.
  const usable = was && was.until >= oldest && was.since <= oldest + SLACK_MS ? was : undefined;
  const from = usable ? usable.until : oldest;
  if (from >= closed) return usable ?? null;
  const since = usable ? Math.max(usable.since, oldest) : oldest;
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const hours = new Map<string, Counts>();
  for (const m of MEASURES) {
    const hour = postgres
      ? sql<string>`to_char(${sql.ref(m.column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24')`
      : sql<string>`substr(${sql.ref(m.column)}, 1, 13)`;
    const rows = await deliveriesWith(db, workspaceId, m, from, closed)
      .select([hour.as('hour'), (eb) => eb.fn.countAll<number | string>().as('n')])
      .groupBy(sql`1`)
      .execute();
    for (const r of rows) {
      const at = `${r.hour}:00:00.000Z`;
      const counts = hours.get(at) ?? { sent: 0, hard_bounces: 0, refused: 0, complaints: 0 };
      counts[m.key] = Number(r.n);
      hours.set(at, counts);
    }
  }
  // Kept in a write of its own; should it fail (a lock held elsewhere past the busy timeout), this call counts live.
  const written = await db
    .transaction()
    .execute(async (tx) => {
      // In the hours' order, so that two processes keeping overlapping hours take their row locks in one order.
      const rows = [...hours]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([hour, c]) => ({ workspace_id: workspaceId, hour, ...c }));
      for (let i = 0; i < rows.length; i += 200)
        await tx
          .insertInto('sender_health_hours')
          .values(rows.slice(i, i + 200))
          .onConflict((oc) =>
            oc.columns(['workspace_id', 'hour']).doUpdateSet((eb) => ({
              sent: eb.ref('excluded.sent'),
              hard_bounces: eb.ref('excluded.hard_bounces'),
              refused: eb.ref('excluded.refused'),
              complaints: eb.ref('excluded.complaints'),
            })),
          )
          .execute();
      // Hours no window reaches any more, with SLACK_MS to spare for a process whose clock is behind.
      await tx
        .deleteFrom('sender_health_hours')
        .where('workspace_id', '=', workspaceId)
        .where('hour', '<', iso(since - SLACK_MS))
        .execute();
      await tx
        .insertInto('sender_health_rollups')
        .values({ workspace_id: workspaceId, since: iso(since), until: iso(closed) })
        .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ since: iso(since), until: iso(closed) }))
        .execute();
    })
    .then(
      () => true,
      () => false,
    );
  return written ? { since, until: closed } : null;
}

/**
 * How many deliveries each measure counts within each window (`since`, oldest first): the closed hours from
 * `sender_health_hours`, the part-hour at each window's start and everything after the hours kept from the
 * deliveries' indexes.
 */
async function countWindows(db: Executor, workspaceId: string, since: readonly number[], now: number) {
  const oldest = floorHour(Math.min(...since));
  const kept = await rollUp(db, workspaceId, oldest, now);
  const totals = since.map(() => ({ sent: 0, hard_bounces: 0, refused: 0, complaints: 0 }) as Counts);
  if (!kept) {
    for (const m of MEASURES)
      for (const [i, s] of since.entries()) totals[i]![m.key] = await countLive(db, workspaceId, m, s);
    return totals;
  }
  const starts = since.map((s) => Math.max(Math.ceil(s / HOUR) * HOUR, kept.since));
  const row = (await db
    .selectFrom('sender_health_hours')
    .select(
      starts.flatMap((start, i) =>
        MEASURES.map((m) =>
          sql<number | string | null>`sum(case when hour >= ${iso(start)} then ${sql.ref(m.key)} else 0 end)`.as(
            `${m.key}${i}`,
          ),
        ),
      ),
    )
    .where('workspace_id', '=', workspaceId)
    .where('hour', '>=', iso(Math.min(...starts)))
    .where('hour', '<', iso(kept.until))
    .executeTakeFirst()) as Record<string, number | string | null> | undefined;
  for (const m of MEASURES) {
    const after = await countLive(db, workspaceId, m, kept.until);
    for (const [i, s] of since.entries())
      totals[i]![m.key] =
        Number(row?.[`${m.key}${i}`] ?? 0) + (await countLive(db, workspaceId, m, s, starts[i]!)) + after;
  }
  return totals;
}

/**
 * The rates of each window. The hard-bounce rate is over every message that got an answer: those accepted
 * (sent) and those refused at send time as hard bounces (never sent); a bounce reported later was sent.
 */
export async function senderHealth(db: Executor, workspaceId: string, now = Date.now()): Promise<WindowHealth[]> {
  const counts = await countWindows(
    db,
    workspaceId,
    HEALTH_WINDOWS.map((days) => now - days * 86_400_000),
    now,
  );
  return HEALTH_WINDOWS.map((days, i) => {
    const c = counts[i]!;
    return {
      days,
      sent: c.sent,
      hardBounces: c.hard_bounces,
      complaints: c.complaints,
      hardBounceRate: rate(c.hard_bounces, c.sent + c.refused, HEALTH_THRESHOLDS.hardBounceRate),
      complaintRate: rate(c.complaints, c.sent, HEALTH_THRESHOLDS.complaintRate),
    };
  });
}
