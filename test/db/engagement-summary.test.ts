import { expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { engagementSummary } from '../../src/db/migrations/0035_engagement_summary.js';
import { recordEvents } from '../../src/outbox/index.js';
import { describeEachDatabase } from '../helpers/db.js';

/** Migration 0035 fills the contacts' engagement summary from the events there are (audience/segments/CONTEXT.md). */
describeEachDatabase('migration 0035: the engagement summary filled from the events', (t) => {
  it('latest human sent, open and click per contact; machines and other workspaces never count; down and up again', async () => {
    const db = t.db();
    const T = (d: number) => new Date(Date.UTC(2026, 2, d, 10)).toISOString();
    await db.kysely
      .insertInto('workspaces')
      .values([
        { id: 'ws_a', name: 'A', created_at: T(1) },
        { id: 'ws_b', name: 'B', created_at: T(1) },
      ])
      .execute();
    const contact = (id: string, workspace_id: string, email: string) => ({
      id,
      workspace_id,
      email,
      properties: '{}',
      status: 'SUBSCRIBED' as const,
      created_at: T(1),
      updated_at: T(1),
    });
    await db.kysely
      .insertInto('contacts')
      .values([
        contact('ct_1', 'ws_a', 'a@example.com'),
        contact('ct_2', 'ws_a', 'b@example.com'),
        contact('ct_3', 'ws_b', 'c@example.com'),
      ])
      .execute();
    // Written as before 0035: events only.
    const migration = engagementSummary(db.dialect);
    await migration.down(db.kysely as unknown as Kysely<unknown>);
    await recordEvents(
      db.kysely,
      'ws_a',
      [
        { type: 'email.sent', contactId: 'ct_1', broadcastId: 'bc_1', occurredAt: T(2) },
        { type: 'email.sent', contactId: 'ct_1', broadcastId: 'bc_2', occurredAt: T(5) },
        { type: 'email.opened', contactId: 'ct_1', broadcastId: 'bc_1', occurredAt: T(3) },
        { type: 'email.opened', contactId: 'ct_1', broadcastId: 'bc_2', occurredAt: T(9), machine: true },
        { type: 'email.clicked', contactId: 'ct_1', broadcastId: 'bc_1', occurredAt: T(4), url: 'https://x.example/' },
        { type: 'email.sent', contactId: 'ct_2', broadcastId: 'bc_1', occurredAt: T(2) },
        {
          type: 'email.clicked',
          contactId: 'ct_2',
          broadcastId: 'bc_1',
          occurredAt: T(6),
          url: 'https://x.example/',
          machine: true,
        },
        { type: 'contact.created', contactId: 'ct_2', occurredAt: T(7) },
      ],
      T(10),
    );
    await recordEvents(db.kysely, 'ws_b', [{ type: 'email.opened', contactId: 'ct_1', occurredAt: T(8) }], T(10));
    await migration.up(db.kysely as unknown as Kysely<unknown>);
    const rows = await db.kysely
      .selectFrom('contacts')
      .select(['id', 'last_sent_at', 'last_opened_at', 'last_clicked_at'])
      .orderBy('id')
      .execute();
    const iso = (v: unknown) => (v === null ? null : new Date(v as string).toISOString());
    expect(rows.map((r) => [r.id, iso(r.last_sent_at), iso(r.last_opened_at), iso(r.last_clicked_at)])).toEqual([
      ['ct_1', T(5), T(3), T(4)],
      ['ct_2', T(2), null, null],
      ['ct_3', null, null, null],
    ]);
  });
});
