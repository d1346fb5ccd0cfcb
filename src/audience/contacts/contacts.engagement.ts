import type { Executor } from '../../db/connection.js';
import { ENGAGEMENT_EVENT_TYPES, latestEngagementSql } from '../../outbox/index.js';

/**
 * A contact's engagement summary (migration 0035; audience/segments/CONTEXT.md "Engagement"): the time of its latest
 * `email.sent`, human `email.opened` and human `email.clicked`. The events are the outbox's and stay the record; these
 * columns let a segment condition without a broadcast ("opened in the last 30 days") compare a column instead of
 * probing the events for every contact (bench/README.md, bench:engagement). This module is their one writer: the
 * writers of those events (the delivery store's `email.sent`, the tracking writer's opens and clicks) call it in the
 * transaction that writes the events, through the audience face.
 *
 * A column only moves forward (an older event, written late, changes nothing), and a contact's `updated_at` is left
 * alone: engagement is not an edit of the contact. Events pruned by the retention job (EVENTS_RETENTION_DAYS) leave the
 * summary as it is.
 */
export type EngagementKind = keyof typeof ENGAGEMENT_EVENT_TYPES;

/** Each kind's summary column; the segments' engagement conditions compare these. */
export const ENGAGEMENT_COLUMN = {
  delivered: 'last_sent_at',
  opened: 'last_opened_at',
  clicked: 'last_clicked_at',
} as const;

export interface EngagementNote {
  workspaceId: string;
  contactId: string | null | undefined;
  kind: EngagementKind;
  /** RFC 3339 UTC, the event's occurred_at. */
  at: string;
}

/** The event types whose human events the summary follows, by kind. */
export function engagementKindOf(type: string, machine: boolean | undefined): EngagementKind | null {
  if (machine) return null;
  const kind = (Object.keys(ENGAGEMENT_EVENT_TYPES) as EngagementKind[]).find(
    (k) => ENGAGEMENT_EVENT_TYPES[k] === type,
  );
  return kind ?? null;
}

/**
 * Moves the contacts' summary forward for these events, in the caller's transaction: one UPDATE per (workspace, kind,
 * time) of the batch (a batch's events mostly share one time), each over the batch's contacts.
 */
export async function noteEngagement(db: Executor, notes: readonly EngagementNote[]): Promise<void> {
  const groups = new Map<string, { workspaceId: string; kind: EngagementKind; at: string; ids: Set<string> }>();
  for (const n of notes) {
    if (!n.contactId) continue;
    const key = `${n.workspaceId}\u0000${n.kind}\u0000${n.at}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { workspaceId: n.workspaceId, kind: n.kind, at: n.at, ids: new Set() }));
    g.ids.add(n.contactId);
  }
  // In the order of the keys, so that two transactions touching the same contacts take their rows in one order.
  for (const key of [...groups.keys()].sort()) {
    const g = groups.get(key)!;
    const column = ENGAGEMENT_COLUMN[g.kind];
    await db
      .updateTable('contacts')
      .set({ [column]: g.at })
      .where('workspace_id', '=', g.workspaceId)
      .where('id', 'in', [...g.ids].sort())
      .where((eb) => eb.or([eb(column, 'is', null), eb(column, '<', g.at)]))
      .execute();
  }
}

/**
 * Sets the contacts' latest human click (or open) again from the events: after the burst rule turned clicks already
 * written into a machine's (sending/tracking, markMachine), the summary may name one of them.
 */
export async function recomputeEngagement(
  db: Executor,
  workspaceId: string,
  kind: Exclude<EngagementKind, 'delivered'>,
  contactIds: readonly string[],
): Promise<void> {
  if (!contactIds.length) return;
  await db
    .updateTable('contacts')
    .set({ [ENGAGEMENT_COLUMN[kind]]: latestEngagementSql(kind) })
    .where('workspace_id', '=', workspaceId)
    .where('id', 'in', [...new Set(contactIds)].sort())
    .execute();
}
