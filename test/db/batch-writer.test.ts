import { expect, it } from 'vitest';
import { BatchWriter } from '../../src/db/batch-writer.js';
import type { Executor } from '../../src/db/connection.js';
import { describeEachDatabase } from '../helpers/db.js';

const NOW = '2026-11-24T10:00:00.000Z';

describeEachDatabase('BatchWriter', (t) => {
  /** Writes workspace rows; answers, per id, whether it was new. Records the transactions it ran in. */
  const writer = (seen: Executor[][], options = {}) =>
    new BatchWriter<string, boolean>(
      t.db(),
      async (trx, ids) => {
        seen.push([trx]);
        const out: boolean[] = [];
        for (const id of ids) {
          const rows = await trx
            .insertInto('workspaces')
            .values({ id, name: id, created_at: NOW })
            .onConflict((oc) => oc.column('id').doNothing())
            .returning('id')
            .execute();
          out.push(rows.length > 0);
        }
        if (ids.includes('bw_fail')) throw new Error('the batch failed');
        return out;
      },
      options,
    );

  it('writes the units of one turn of the event loop in one transaction, answering each with its own result', async () => {
    const seen: Executor[][] = [];
    const w = writer(seen);
    await w.run('bw_0');
    const results = await Promise.all(['bw_1', 'bw_2', 'bw_0', 'bw_3'].map((id) => w.run(id)));
    expect(results).toEqual([true, true, false, true]);
    expect(seen).toHaveLength(2);
    const stored = await t
      .db()
      .kysely.selectFrom('workspaces')
      .select('id')
      .where('id', 'like', 'bw_%')
      .orderBy('id')
      .execute();
    expect(stored.map((r) => r.id)).toEqual(['bw_0', 'bw_1', 'bw_2', 'bw_3']);
  });

  it('a failed transaction is tried again, then unit by unit: only the unit that fails is rejected, the others stored', async () => {
    const w = writer([]);
    const results = await Promise.allSettled(['bw_4', 'bw_fail', 'bw_5'].map((id) => w.run(id)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await w.run('bw_6')).toBe(true);
    const stored = await t
      .db()
      .kysely.selectFrom('workspaces')
      .select('id')
      .where('id', 'in', ['bw_4', 'bw_5', 'bw_fail', 'bw_6'])
      .orderBy('id')
      .execute();
    expect(stored.map((r) => r.id)).toEqual(['bw_4', 'bw_5', 'bw_6']);
  });

  it('a full batch is written at once, the rest in the next; with lingerMs a batch waits to gather more', async () => {
    const seen: Executor[][] = [];
    const w = writer(seen, { maxBatch: 2 });
    expect(await Promise.all(['bw_7', 'bw_8', 'bw_9'].map((id) => w.run(id)))).toEqual([true, true, true]);
    expect(seen).toHaveLength(2);
    const lingering: Executor[][] = [];
    const l = writer(lingering, { lingerMs: 30 });
    const first = l.run('bw_10');
    await new Promise((r) => setTimeout(r, 5));
    expect(await Promise.all([first, l.run('bw_11')])).toEqual([true, true]);
    expect(lingering).toHaveLength(1);
  });
});
