import { expect, it } from 'vitest';
import { recordEvent } from '../../src/outbox/events/events.repository.js';
import { describeApi } from '../helpers/app.js';

/**
 * Which events the automation intake reads (`routed = 0`; src/outbox/events/events.repository.ts, workspacesRouting): those of
 * a workspace with an ACTIVE automation. Exact only on SQLite inside a transaction (one writer: no automation can be
 * activated between the read and the commit); on PostgreSQL, and outside a transaction, every workspace's events of the
 * routed types are routed, so an automation activated while an event's transaction runs does not miss it.
 */
describeApi('event routing to the automation intake', (h) => {
  const routedOf = async (wsId: string) =>
    (
      await h.db.kysely
        .selectFrom('events')
        .select(['type', 'routed'])
        .where('workspace_id', '=', wsId)
        .orderBy('id')
        .execute()
    ).map((e) => Number(e.routed));
  const event = { type: 'contact.created' as const, contactId: 'ct_routing', data: {} };

  it('a workspace without an ACTIVE automation: not routed only where the read is exact (SQLite, in a transaction)', async () => {
    const ws = await h.workspace();
    await h.db.kysely.transaction().execute((trx) => recordEvent(trx, ws.id, event, new Date().toISOString()));
    await recordEvent(h.db.kysely, ws.id, event, new Date().toISOString());
    expect(await routedOf(ws.id)).toEqual([h.dbName === 'sqlite' ? 1 : 0, 0]);
  });

  it('a workspace with an ACTIVE automation: routed, in a transaction or not', async () => {
    const ws = await h.workspace();
    const a = (
      await h.call(ws.key, 'POST', '/v1/automations', {
        name: 'On call',
        trigger: { type: 'api' },
        steps: [{ type: 'wait', duration: 'P1D' }],
      })
    ).json();
    expect((await h.call(ws.key, 'POST', `/v1/automations/${a.id}/activate`)).json().status).toBe('ACTIVE');
    await h.db.kysely.transaction().execute((trx) => recordEvent(trx, ws.id, event, new Date().toISOString()));
    await recordEvent(h.db.kysely, ws.id, event, new Date().toISOString());
    expect(await routedOf(ws.id)).toEqual([0, 0]);
  });

  it.runIf(h.dbName === 'postgres')(
    'PostgreSQL: an automation activated while an event is being written does not miss it',
    async () => {
      const ws = await h.workspace();
      const a = (
        await h.call(ws.key, 'POST', '/v1/automations', {
          name: 'Race',
          trigger: { type: 'api' },
          steps: [{ type: 'wait', duration: 'P1D' }],
        })
      ).json();
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let written!: () => void;
      const wrote = new Promise<void>((resolve) => (written = resolve));
      // The event's transaction reads "no ACTIVE automation" and writes its event; the automation is activated (and
      // committed) before that transaction commits.
      const tx = h.db.kysely.transaction().execute(async (trx) => {
        await recordEvent(trx, ws.id, event, new Date().toISOString());
        written();
        await held;
      });
      await wrote;
      expect((await h.call(ws.key, 'POST', `/v1/automations/${a.id}/activate`)).json().status).toBe('ACTIVE');
      release();
      await tx;
      expect(await routedOf(ws.id)).toEqual([0]);
    },
  );
});
