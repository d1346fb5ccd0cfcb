import fc from 'fast-check';
import { CompiledQuery, type Compilable } from 'kysely';
import { expect, it } from 'vitest';
import type { Db } from '../../src/db/connection.js';
import type { DeliveryStatus } from '../../src/db/schema.js';
import { breakerCountQueries, breakerFinal, breakerMarks } from '../../src/sending/deliveries/deliveries.repository.js';
import { OUTBOX_RESPONSE } from '../../src/mail/transport.js';
import { recordLateReport } from '../../src/sending/deliveries/deliveries.outcomes.js';
import { tripIfOver, type BreakerRules, type FinalFloor } from '../../src/sending/broadcasts/broadcasts.breaker.js';
import { describeEachDatabase } from '../helpers/db.js';

const T0 = Date.UTC(2026, 11, 1, 8, 0, 0);

/** What the breaker weighs when it counts in full (tripIfOver): the final deliveries and the marks. */
async function breakerCounts(db: Db['kysely'], ws: string, bc: string, since: string | null) {
  return { final: await breakerFinal(db, ws, bc, since), ...(await breakerMarks(db, ws, bc, since)) };
}
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * What a delivery can be by the time the breaker weighs its broadcast (deliveries.state.ts, deliveries.outcomes.ts):
 * its status and the marks each path leaves. `bounced_at` comes only with BOUNCED (a hard bounce, at send time or
 * reported later); a soft bounce or a block at send time is FAILED; a complaint may reach a delivery that is not final.
 */
interface ShapeDef {
  status: DeliveryStatus;
  /** Was the message handed to the receiving server (a complaint may then come)? */
  sent?: boolean;
  hard?: boolean;
  soft?: boolean;
  outbox?: boolean;
  unsubscribed?: boolean;
}
const SHAPES = {
  queued: { status: 'QUEUED' },
  sending: { status: 'SENDING' },
  paused: { status: 'PAUSED' },
  canceled: { status: 'CANCELED' },
  sent: { status: 'SENT', sent: true },
  sentOutbox: { status: 'SENT', sent: true, outbox: true },
  sentSoftLater: { status: 'SENT', sent: true, soft: true },
  sentUnsubscribed: { status: 'SENT', sent: true, unsubscribed: true },
  hardAtSend: { status: 'BOUNCED', hard: true },
  softAtSend: { status: 'FAILED', soft: true },
  hardLater: { status: 'BOUNCED', sent: true, hard: true },
  blocked: { status: 'FAILED' },
  rejectedLater: { status: 'FAILED', sent: true },
  failed: { status: 'FAILED' },
  // The receiving server took the message but the attempt timed out: queued again (or skipped, its contact now
  // suppressed) with a complaint. Not final: its complaint is not weighed.
  requeuedComplained: { status: 'QUEUED', sent: true },
  skippedComplained: { status: 'SKIPPED', sent: true },
} satisfies Record<string, ShapeDef>;
type Shape = keyof typeof SHAPES;
const shapeOf = (shape: Shape): ShapeDef => SHAPES[shape];
const FINAL = ['SENT', 'FAILED', 'BOUNCED'];

interface Row {
  shape: Shape;
  complained: boolean;
  updatedAt: number;
  broadcast: 0 | 1;
}

async function workspace(db: Db, ws: string, broadcasts: string[]): Promise<void> {
  await db.kysely
    .insertInto('workspaces')
    .values({ id: ws, name: ws, created_at: iso(T0) })
    .execute();
  for (const id of broadcasts)
    await db.kysely
      .insertInto('broadcasts')
      .values({
        id,
        workspace_id: ws,
        name: 'B',
        status: 'SENDING',
        from_address: 'News <news@example.test>',
        subject: 'Hi',
        html: '<p>Hi</p>',
        created_at: iso(T0),
        updated_at: iso(T0),
      } as never)
      .execute();
}

/** A delivery of `shape`, its marks made at `at` (the time it ended). */
async function insertDelivery(
  db: Db,
  d: { id: string; ws: string; bc: string; shape: Shape; complained: boolean; at: string },
): Promise<void> {
  const shape = shapeOf(d.shape);
  const sent = !!shape.sent;
  await db.kysely
    .insertInto('deliveries')
    .values({
      id: d.id,
      workspace_id: d.ws,
      broadcast_id: d.bc,
      contact_id: null,
      email: `${d.id}@example.test`,
      status: shape.status,
      attempts: 1,
      next_attempt_at: iso(T0),
      unsubscribe_token: `u${d.id}`,
      created_at: iso(T0),
      updated_at: d.at,
      sent_at: sent ? iso(T0) : null,
      smtp_response: shape.outbox ? `${OUTBOX_RESPONSE} /tmp/x.eml` : sent ? '250 ok' : null,
      bounce_class: shape.hard ? 'hard' : shape.soft ? 'soft' : null,
      bounced_at: shape.hard ? d.at : null,
      soft_bounced_at: shape.soft ? d.at : null,
      unsubscribed_at: shape.unsubscribed ? d.at : null,
      complained_at: sent && d.complained ? d.at : null,
    } as never)
    .execute();
}

/**
 * The circuit breaker's counts (sending/deliveries/deliveries.repository.ts, breakerFinal and breakerMarks) are read
 * from indexes without reading the final deliveries' rows: whatever the broadcast's deliveries, they equal a count of
 * every row.
 */
describeEachDatabase("the circuit breaker's counts", (t) => {
  let n = 0;

  it('equal a count of every delivery, for the workspace and broadcast asked only, over generated deliveries', async () => {
    const db = t.db();
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            shape: fc.constantFrom(...(Object.keys(SHAPES) as Shape[])),
            // Only a message sent is complained of; a complaint may come before a late hard bounce or reject.
            complained: fc.boolean(),
            updatedAt: fc.integer({ min: 0, max: 120 }),
            broadcast: fc.constantFrom<0 | 1>(0, 1),
          }),
          { maxLength: 30 },
        ),
        fc.integer({ min: 0, max: 120 }),
        async (rows: Row[], sinceMinute) => {
          const ws = `ws_breaker${++n}`;
          const other = `ws_breaker${n}_other`;
          const bcs = [`bc_breaker${n}_a`, `bc_breaker${n}_b`];
          await workspace(db, ws, bcs);
          await workspace(db, other, [`bc_breaker${n}_other`]);
          let i = 0;
          for (const r of rows) {
            const at = iso(T0 + r.updatedAt * 60_000);
            await insertDelivery(db, { id: `dlv_breaker${n}_${++i}`, ws, bc: bcs[r.broadcast]!, ...r, at });
            // The same delivery in another workspace's broadcast: never counted for ws.
            await insertDelivery(db, { id: `dlv_breaker${n}_${++i}`, ws: other, bc: `bc_breaker${n}_other`, ...r, at });
          }
          const since = T0 + sinceMinute * 60_000;
          for (const [b, bc] of bcs.entries()) {
            const expected = (from: number) => {
              const after = rows.filter(
                (r) =>
                  r.broadcast === b && FINAL.includes(shapeOf(r.shape).status) && T0 + r.updatedAt * 60_000 >= from,
              );
              return {
                final: after.length,
                hardBounced: after.filter((r) => shapeOf(r.shape).hard).length,
                complained: after.filter((r) => r.complained && shapeOf(r.shape).sent).length,
              };
            };
            expect(await breakerCounts(db.kysely, ws, bc, null)).toEqual(expected(-Infinity));
            expect(await breakerCounts(db.kysely, ws, bc, iso(since))).toEqual(expected(since));
            const { final: _, ...marks } = expected(since);
            expect(await breakerMarks(db.kysely, ws, bc, iso(since))).toEqual(marks);
            // Another workspace's broadcast id counts nothing.
            expect(await breakerCounts(db.kysely, other, bc, null)).toEqual({
              final: 0,
              hardBounced: 0,
              complained: 0,
            });
          }
        },
      ),
      { numRuns: 25 },
    );
  });

  it('with a floor of an earlier count, decides as a fresh count does, and counts only when a rate may be over', async () => {
    const db = t.db();
    const rules: BreakerRules = { minFinal: 4, bounceRate: 0.2, complaintRate: 0.1 };
    class Rollback {
      constructor(readonly result: Awaited<ReturnType<typeof tripIfOver>>) {}
    }
    /** tripIfOver's answer, its pause rolled back. */
    const decide = (ws: string, bc: string, floor?: FinalFloor) =>
      db.kysely
        .transaction()
        .execute(async (trx) => {
          throw new Rollback(await tripIfOver(trx, ws, bc, rules, iso(T0 + 3_600_000), floor));
        })
        .catch((e: unknown) => {
          if (e instanceof Rollback) return e.result;
          throw e;
        });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ shape: fc.constantFrom(...(Object.keys(SHAPES) as Shape[])), complained: fc.boolean() }), {
          maxLength: 24,
        }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.boolean(),
        async (rows, share, resumed) => {
          const ws = `ws_floor${++n}`;
          const bc = `bc_floor${n}`;
          await workspace(db, ws, [bc]);
          let i = 0;
          for (const r of rows)
            await insertDelivery(db, { id: `dlv_floor${n}_${++i}`, ws, bc, ...r, at: iso(T0 + 60_000) });
          // Resumed by hand before every delivery ended: the count since then is the same rows.
          const since = resumed ? iso(T0) : null;
          if (since)
            await db.kysely.updateTable('broadcasts').set({ breaker_since: since }).where('id', '=', bc).execute();
          const fresh = await decide(ws, bc);
          expect(fresh.counted).toBe(true);
          expect(fresh.since).toBe(since);
          // Any floor at or below the count of now, taken under the same breaker_since, gives the same decision.
          const floor = Math.floor(fresh.final * share);
          const withFloor = await decide(ws, bc, { since, final: floor });
          expect(withFloor.tripped).toBe(fresh.tripped);
          // It counted again only if the floor could not rule a trip out (or was too small to weigh by).
          if (!withFloor.counted) {
            expect(floor).toBeGreaterThanOrEqual(rules.minFinal);
            expect(withFloor.final).toBe(floor);
          } else expect(withFloor.final).toBe(fresh.final);
          // A floor of another breaker_since (taken before a resume, or after one the store did not see) is not used.
          const stale = await decide(ws, bc, { since: since ? null : iso(T0 - 1), final: fresh.final });
          expect(stale.counted).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('read the final deliveries from an index alone, and the complaints from the marked deliveries only', async () => {
    const db = t.db();
    const plan = async (q: Compilable) => {
      const c = q.compile();
      if (db.dialect === 'sqlite')
        return (
          (await db.kysely.executeQuery(CompiledQuery.raw(`explain query plan ${c.sql}`, [...c.parameters]))).rows as {
            detail: string;
          }[]
        )
          .map((r) => r.detail)
          .join('\n');
      return db.kysely.transaction().execute(async (trx) => {
        // As at scale: an empty table's plan would be a sequential scan.
        await trx.executeQuery(CompiledQuery.raw('set local enable_seqscan = off'));
        const rows = (await trx.executeQuery(CompiledQuery.raw(`explain ${c.sql}`, [...c.parameters]))).rows as {
          'QUERY PLAN': string;
        }[];
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      });
    };
    const q = breakerCountQueries(db.kysely, 'ws_plan', 'bc_plan', null);
    const [final, hard, complained] = [await plan(q.final), await plan(q.hardBounced), await plan(q.complained)];
    if (db.dialect === 'sqlite') {
      expect(final).toMatch(
        /SEARCH deliveries USING COVERING INDEX deliveries_broadcast \(broadcast_id=\? AND status=\?\)/,
      );
      expect(hard).toMatch(/SEARCH deliveries USING INDEX deliveries_broadcast \(broadcast_id=\? AND status=\?\)/);
      expect(complained).toMatch(/SEARCH deliveries USING INDEX deliveries_broadcast_marks \(broadcast_id=\?\)/);
    } else {
      expect(final).toMatch(/Index Only Scan using deliveries_broadcast on deliveries/);
      // The BOUNCED rows by either index over the status, whichever the statistics favour: few rows either way.
      expect(hard).toMatch(/Index Scan using (deliveries_broadcast|deliveries_due) on deliveries/);
      expect(hard).toMatch(/status = 'BOUNCED'/);
      expect(complained).toMatch(/Index Scan using deliveries_broadcast_marks on deliveries/);
    }
  });

  it("never weighs a transactional email's hidden broadcast (its deliveries all hard bounces): a broadcast's would trip", async () => {
    const db = t.db();
    const ws = 'ws_breaker_hidden';
    const [hidden, shown] = ['bc_breaker_hidden', 'bc_breaker_shown'];
    await workspace(db, ws, [hidden, shown]);
    await db.kysely
      .updateTable('broadcasts')
      .set({ transactional: 1 } as never)
      .where('workspace_id', '=', ws)
      .where('id', '=', hidden)
      .execute();
    for (const bc of [hidden, shown])
      for (let i = 0; i < 6; i++)
        await insertDelivery(db, { id: `dlv_${bc}_${i}`, ws, bc, shape: 'hardAtSend', complained: false, at: iso(T0) });
    const rules: BreakerRules = { minFinal: 4, bounceRate: 0.2, complaintRate: 0.1 };
    const now = iso(T0 + 60_000);
    expect(await tripIfOver(db.kysely, ws, hidden, rules, now)).toEqual({
      tripped: null,
      final: 0,
      counted: false,
      since: null,
    });
    const status = async (bc: string) =>
      (
        await db.kysely
          .selectFrom('broadcasts')
          .select('status')
          .where('workspace_id', '=', ws)
          .where('id', '=', bc)
          .executeTakeFirstOrThrow()
      ).status;
    expect(await status(hidden)).toBe('SENDING');
    const tripped = await tripIfOver(db.kysely, ws, shown, rules, now);
    expect(tripped.tripped).toMatch(/bounce rate/);
    expect(await status(shown)).toBe('PAUSED');
  });

  it("a late report never moves a delivery's updated_at back (a process whose clock is behind): the floor stays sound", async () => {
    const db = t.db();
    const ws = 'ws_breaker_late';
    const bc = 'bc_breaker_late';
    await workspace(db, ws, [bc]);
    const ahead = iso(T0 + 10 * 60_000);
    const behind = iso(T0 + 5 * 60_000);
    const later = iso(T0 + 20 * 60_000);
    const kinds = ['hard', 'soft', 'blocked', 'complaint'] as const;
    for (const i of kinds.keys()) {
      await insertDelivery(db, { id: `dlv_late_${i}`, ws, bc, shape: 'sent', complained: false, at: ahead });
      await insertDelivery(db, { id: `dlv_late_now_${i}`, ws, bc, shape: 'sent', complained: false, at: behind });
    }
    const since = iso(T0 + 8 * 60_000);
    const before = await breakerCounts(db.kysely, ws, bc, since);
    expect(before.final).toBe(kinds.length);
    for (const [i, kind] of kinds.entries()) {
      // Written at `behind`, earlier than the row's own time: the row keeps its time (and stays in the count).
      expect(await recordLateReport(db.kysely, ws, `dlv_late_${i}`, { kind, detail: 'late' }, behind)).toBe(true);
      // Written at `later`: the row's time moves on, as before.
      expect(await recordLateReport(db.kysely, ws, `dlv_late_now_${i}`, { kind, detail: 'late' }, later)).toBe(true);
    }
    const rows = await db.kysely
      .selectFrom('deliveries')
      .select(['id', 'updated_at'])
      .where('workspace_id', '=', ws)
      .orderBy('id')
      .execute();
    for (const r of rows) {
      const at = new Date(r.updated_at as unknown as string).toISOString();
      expect([r.id, at]).toEqual([r.id, r.id.startsWith('dlv_late_now_') ? later : ahead]);
    }
    const after = await breakerCounts(db.kysely, ws, bc, since);
    // Every delivery is final and after `since`; the hard bounce and the complaint counted.
    expect(after).toEqual({ final: 2 * kinds.length, hardBounced: 2, complained: 2 });
  });
});
