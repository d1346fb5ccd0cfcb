import fc from 'fast-check';
import { expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import * as repo from '../../src/integrations/webhooks/webhooks.repository.js';
import { describeApi } from '../helpers/app.js';

/**
 * Issue 29, item 4: the claim of due webhook deliveries is round robin over endpoints. For random backlogs (how many
 * due per endpoint, in a random order of due times), limits and shares: no endpoint gets more than its room, nothing
 * is claimed twice, no workspace gets more than its room, and when the limit (and the workspace's room) allows every
 * endpoint's share, every endpoint with due work gets it in that one claim, however many older deliveries the others have.
 */
describeApi('webhooks: property test of the fair claim', (h) => {
  it(
    'one claim gives each endpoint with due work its share, never more, and nothing twice',
    { timeout: 120_000 },
    async () => {
      const ws = await h.workspace();
      const t0 = Date.parse('2026-11-20T10:00:00.000Z');
      const endpoints: string[] = [];
      for (let i = 0; i < 8; i++) {
        const id = newId('wh');
        // In a transaction, as the service makes one (on PostgreSQL it takes the workspace's listeners lock).
        await h.db.kysely.transaction().execute((trx) =>
          repo.insertEndpoint(trx, {
            id,
            workspace_id: ws.id,
            url: `https://93.184.215.14/${i}`,
            event_types: '[]',
            description: null,
            enabled: 1,
            disabled_reason: null,
            secret: 'unused',
            previous_secret: null,
            previous_secret_until: null,
            failing_since: null,
            created_at: new Date(t0).toISOString(),
            updated_at: new Date(t0).toISOString(),
          }),
        );
        endpoints.push(id);
      }
      const scenario = fc.record({
        // Per endpoint: how many are due, and the offset (ms) of its due times: a large one makes it "newer" than the others.
        backlogs: fc.array(
          fc.record({ due: fc.integer({ min: 0, max: 40 }), offset: fc.integer({ min: 0, max: 5000 }) }),
          { minLength: 1, maxLength: 8 },
        ),
        limit: fc.integer({ min: 1, max: 60 }),
        room: fc.integer({ min: 1, max: 6 }),
        // The workspace's room (its share of the dispatcher's hold), or none.
        workspaceRoom: fc.option(fc.integer({ min: 0, max: 60 }), { nil: undefined }),
        skipFirst: fc.boolean(),
      });
      let run = 0;
      await fc.assert(
        fc.asyncProperty(scenario, async ({ backlogs, limit, room, workspaceRoom, skipFirst }) => {
          run++;
          await h.db.kysely.deleteFrom('webhook_deliveries').where('workspace_id', '=', ws.id).execute();
          const rows: repo.NewDelivery[] = [];
          const dueAt = new Map<string, string>();
          backlogs.forEach((b, i) => {
            for (let n = 0; n < b.due; n++) {
              const id = newId('whd');
              rows.push({
                id,
                workspaceId: ws.id,
                endpointId: endpoints[i]!,
                eventId: `evt_${run}_${i}_${n}`,
                eventType: 'contact.created',
                payload: '{}',
              });
              dueAt.set(id, new Date(t0 + b.offset + n).toISOString());
            }
          });
          await repo.insertDeliveries(h.db.kysely, rows, new Date(t0).toISOString());
          for (const [id, at] of dueAt)
            await h.db.kysely
              .updateTable('webhook_deliveries')
              .set({ next_attempt_at: at })
              .where('id', '=', id)
              .execute();
          const now = new Date(t0 + 10_000).toISOString();
          const skip = skipFirst ? [endpoints[0]!] : [];
          const claimed = await h.db.kysely.transaction().execute((trx) =>
            repo.claimWebhookDeliveries(trx, h.dbName, 'prop', now, new Date(t0 + 70_000).toISOString(), {
              limit,
              skipEndpoints: skip,
              room: () => room,
              ...(workspaceRoom === undefined ? {} : { workspaceRoom: () => workspaceRoom }),
            }),
          );
          const most = Math.min(limit, workspaceRoom ?? limit);
          expect(new Set(claimed.map((c) => c.id)).size).toBe(claimed.length);
          expect(claimed.length).toBeLessThanOrEqual(most);
          const per = new Map<string, number>();
          for (const c of claimed) per.set(c.endpointId, (per.get(c.endpointId) ?? 0) + 1);
          const wanted = backlogs.map((b, i) => (skip.includes(endpoints[i]!) ? 0 : Math.min(room, b.due)));
          backlogs.forEach((_b, i) => expect(per.get(endpoints[i]!) ?? 0).toBeLessThanOrEqual(wanted[i]!));
          // Round robin: when every share fits in the limit, every endpoint gets its share, whatever the order of due times.
          if (wanted.reduce((a, b) => a + b, 0) <= most)
            backlogs.forEach((_b, i) => expect(per.get(endpoints[i]!) ?? 0).toBe(wanted[i]));
          else expect(claimed.length).toBe(most);
          const states = await h.db.kysely
            .selectFrom('webhook_deliveries')
            .select(['id', 'status', 'lease_owner', 'attempts'])
            .where('workspace_id', '=', ws.id)
            .execute();
          const ids = new Set(claimed.map((c) => c.id));
          for (const s of states) {
            if (ids.has(s.id)) expect(s).toMatchObject({ status: 'SENDING', lease_owner: 'prop', attempts: 1 });
            else expect(s).toMatchObject({ status: 'PENDING', attempts: 0 });
          }
        }),
        { numRuns: 100 },
      );
    },
  );
});
