import fc from 'fast-check';
import { expect, it } from 'vitest';
import { senderHealth } from '../../src/sending/bounces/bounces.health.js';
import { recordLateReport } from '../../src/sending/deliveries/deliveries.outcomes.js';
import type { Db } from '../../src/db/connection.js';
import { describeEachDatabase } from '../helpers/db.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();

type Kind = 'sent' | 'refused' | 'bounced' | 'complained';
interface Row {
  sent: number | null;
  bounced: number | null;
  complained: number | null;
}

/** A workspace and a sent broadcast of its, written straight into the database. */
async function workspaceWithBroadcast(db: Db, ws: string, bc: string, at: number): Promise<void> {
  await db.kysely
    .insertInto('workspaces')
    .values({ id: ws, name: 'W', created_at: iso(at) })
    .execute();
  await db.kysely
    .insertInto('broadcasts')
    .values({
      id: bc,
      workspace_id: ws,
      name: 'B',
      status: 'SENT',
      from_address: 'News <news@example.test>',
      reply_to: null,
      subject: 'Hi',
      html: '<p>Hi</p>',
      text: 'Hi',
      preview_text: null,
      created_at: iso(at),
      updated_at: iso(at),
      sent_at: iso(at),
      materialized_at: iso(at),
    } as never)
    .execute();
}

/**
 * Sender health keeps the counts of closed hours (migration 0039, sending/bounces/bounces.health.ts): whatever the
 * order of sends, bounces, complaints and calls, every call answers what counting every delivery would.
 */
describeEachDatabase('sender health: closed hours kept, the rest counted at each call', (t) => {
  let n = 0;

  it('every call equals a count of every delivery, over generated timelines of sends and calls', async () => {
    const db = t.db();
    const base = Date.UTC(2026, 5, 1, 0, 17, 3, 250);
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            // Minutes from the start, up to 70 days: the windows move past rows, and the hours kept reset. Most on days
            // 7 or 30 apart, in a day's first hours, so that a window's start often falls in an hour with rows.
            at: fc.oneof(
              fc.integer({ min: 0, max: 70 * 24 * 60 }),
              fc
                .tuple(fc.constantFrom(0, 1, 7, 8, 30, 31, 37, 38, 60, 67), fc.integer({ min: 0, max: 150 }))
                .map(([day, minute]) => day * 24 * 60 + minute),
            ),
            kind: fc.constantFrom<Kind>('sent', 'refused', 'bounced', 'complained'),
            call: fc.boolean(),
            // Now and then a call from a process whose clock is behind (by up to two and a half hours).
            behind: fc.oneof(
              { arbitrary: fc.constant(0), weight: 3 },
              { arbitrary: fc.integer({ min: 1, max: 150 }), weight: 1 },
            ),
          }),
          { maxLength: 40 },
        ),
        async (steps) => {
          const ws = `ws_health${++n}`;
          const bc = `bc_health${n}`;
          await workspaceWithBroadcast(db, ws, bc, base);
          const rows: Row[] = [];
          let i = 0;
          for (const step of [...steps].sort((a, b) => a.at - b.at)) {
            const now = base + step.at * 60_000 + 1234;
            // A bounce or complaint comes half an hour after its send (after any call's closed hours).
            const row: Row = {
              sent: step.kind === 'refused' ? null : step.kind === 'sent' ? now : now - HOUR / 2,
              bounced: step.kind === 'refused' || step.kind === 'bounced' ? now : null,
              complained: step.kind === 'complained' ? now : null,
            };
            rows.push(row);
            const id = `dlv_${n}_${++i}`;
            await db.kysely
              .insertInto('deliveries')
              .values({
                id,
                workspace_id: ws,
                broadcast_id: bc,
                contact_id: null,
                email: `r${i}@example.test`,
                status: row.sent === null ? 'BOUNCED' : 'SENT',
                attempts: 1,
                next_attempt_at: iso(now),
                unsubscribe_token: `u${id}`,
                created_at: iso(now),
                updated_at: iso(now),
                sent_at: row.sent === null ? null : iso(row.sent),
                bounced_at: row.bounced === null ? null : iso(row.bounced),
                complained_at: row.complained === null ? null : iso(row.complained),
              } as never)
              .execute();
            if (!step.call) continue;
            const at = now - step.behind * 60_000;
            const got = await senderHealth(db.kysely, ws, at);
            const expected = [7, 30].map((days) => {
              const since = at - days * DAY;
              const count = (f: (r: Row) => boolean) => rows.filter(f).length;
              return {
                days,
                sent: count((r) => r.sent !== null && r.sent >= since),
                hardBounces: count((r) => r.bounced !== null && r.bounced >= since),
                complaints: count((r) => r.complained !== null && r.complained >= since),
              };
            });
            expect(
              got.map((w) => ({ days: w.days, sent: w.sent, hardBounces: w.hardBounces, complaints: w.complaints })),
            ).toEqual(expected);
            // The refused count in the rate's denominator.
            const refused = rows.filter((r) => r.sent === null && r.bounced! >= at - 7 * DAY).length;
            const week = got[0]!;
            expect(week.hardBounceRate.value).toBeCloseTo(
              week.sent + refused === 0 ? 0 : week.hardBounces / (week.sent + refused),
              5,
            );
          }
        },
      ),
      { numRuns: t.name === 'sqlite' ? 60 : 25 },
    );
  });

  it('a complaint reported again keeps its first time: counted once, in the hour it came', async () => {
    const db = t.db();
    const ws = `ws_health${++n}`;
    const bc = `bc_health${n}`;
    const sent = Date.UTC(2026, 7, 1, 9, 15);
    await workspaceWithBroadcast(db, ws, bc, sent);
    await db.kysely
      .insertInto('deliveries')
      .values({
        id: `dlv_c${n}`,
        workspace_id: ws,
        broadcast_id: bc,
        contact_id: null,
        email: 'r@example.test',
        status: 'SENT',
        attempts: 1,
        next_attempt_at: iso(sent),
        unsubscribe_token: `u${n}`,
        created_at: iso(sent),
        updated_at: iso(sent),
        sent_at: iso(sent),
      } as never)
      .execute();
    const complaint = { kind: 'complaint' as const, detail: 'abuse report' };
    expect(await recordLateReport(db.kysely, ws, `dlv_c${n}`, complaint, iso(sent + HOUR))).toBe(true);
    expect((await senderHealth(db.kysely, ws, sent + 5 * HOUR)).map((w) => w.complaints)).toEqual([1, 1]);
    // The same complaint again a day later (a provider's retry, the ARF after its event).
    expect(await recordLateReport(db.kysely, ws, `dlv_c${n}`, complaint, iso(sent + DAY))).toBe(true);
    const row = await db.kysely
      .selectFrom('deliveries')
      .select('complained_at')
      .where('id', '=', `dlv_c${n}`)
      .executeTakeFirstOrThrow();
    expect(new Date(row.complained_at!).toISOString()).toBe(iso(sent + HOUR));
    expect((await senderHealth(db.kysely, ws, sent + DAY + 1000)).map((w) => w.complaints)).toEqual([1, 1]);
  });

  it('keeps closed hours only: counts of the last hours are read again at each call; old hours are dropped', async () => {
    const db = t.db();
    const ws = `ws_health${++n}`;
    await db.kysely
      .insertInto('workspaces')
      .values({ id: ws, name: 'W', created_at: iso(0) })
      .execute();
    const now = Date.UTC(2026, 6, 10, 12, 30);
    expect(await senderHealth(db.kysely, ws, now)).toMatchObject([{ sent: 0 }, { sent: 0 }]);
    const kept = await db.kysely
      .selectFrom('sender_health_rollups')
      .selectAll()
      .where('workspace_id', '=', ws)
      .execute();
    expect(kept.map((r) => [new Date(r.since).toISOString(), new Date(r.until).toISOString()])).toEqual([
      [iso(Date.UTC(2026, 5, 10, 12)), iso(Date.UTC(2026, 6, 10, 11))],
    ]);
    // A call from a clock an hour behind (11:30 instead of 12:30: its month starts an hour earlier): the hours kept serve it,
    // nothing is counted again from a month back.
    await senderHealth(db.kysely, ws, now - 60_000 * 60);
    const after = await db.kysely
      .selectFrom('sender_health_rollups')
      .selectAll()
      .where('workspace_id', '=', ws)
      .execute();
    expect(after.map((r) => [new Date(r.since).toISOString(), new Date(r.until).toISOString()])).toEqual([
      [iso(Date.UTC(2026, 5, 10, 12)), iso(Date.UTC(2026, 6, 10, 11))],
    ]);
    // Another workspace's call keeps nothing of this one's.
    expect(
      await db.kysely.selectFrom('sender_health_hours').selectAll().where('workspace_id', '=', ws).execute(),
    ).toEqual([]);
  });
});
