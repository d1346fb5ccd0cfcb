import type { Executor } from '../../db/connection.js';
import { toIso } from '../../lib/time.js';
import { withVariant } from '../broadcasts/broadcasts.ab.js';
import { getBroadcast } from '../broadcasts/broadcasts.repository.js';
import type { Broadcast } from '../broadcasts/broadcasts.schemas.js';

/**
 * The reads of the public archive and the web version (docs/archive.md). Every read is of one workspace: the archive's
 * slug and the web version's token name it first.
 */

/** A line of the archive's list. */
export interface ArchivedItem {
  id: string;
  subject: string | null;
  previewText: string | null;
  sentAt: string;
}

/** The broadcasts of the archive: SENT, `archive` on, not an automation's message; newest first, `limit` from `offset`. */
export async function listArchived(
  db: Executor,
  workspaceId: string,
  opts: { limit: number; offset: number },
): Promise<ArchivedItem[]> {
  const rows = await db
    .selectFrom('broadcasts')
    .select(['id', 'subject', 'preview_text', 'sent_at'])
    .where('workspace_id', '=', workspaceId)
    .where('archive', '=', 1)
    .where('status', '=', 'SENT')
    .where('automation_id', 'is', null)
    .where('sent_at', 'is not', null)
    .orderBy('sent_at', 'desc')
    .orderBy('id', 'desc')
    .limit(opts.limit)
    .offset(opts.offset)
    .execute();
  return rows.map((r) => ({ id: r.id, subject: r.subject, previewText: r.preview_text, sentAt: toIso(r.sent_at)! }));
}

/** A broadcast of the archive (SENT, `archive` on), or undefined: a draft, another workspace's id, one not archived. */
export async function getArchived(db: Executor, workspaceId: string, id: string): Promise<Broadcast | undefined> {
  const b = await getBroadcast(db, workspaceId, id);
  if (!b || b.status !== 'SENT' || !b.archive || !b.sentAt) return undefined;
  if (!b.abTest) return b;
  // An A/B broadcast is archived as most of its audience got it: its winner (docs/ab-tests.md).
  const row = await db
    .selectFrom('broadcasts')
    .select('ab_winner')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return withVariant(b, b.abTest, row?.ab_winner ?? null);
}

/** What the web version needs of a delivery: its message and its recipient. */
export interface WebversionDelivery {
  broadcastId: string;
  contactId: string | null;
  email: string;
  unsubscribeToken: string;
  /** An A/B broadcast's: the variant this recipient got (docs/ab-tests.md); null otherwise. */
  variant: string | null;
}

/**
 * A delivery of the workspace, or undefined. Its status is not asked: a token that verifies was made for a message
 * composed to be sent (message.ts), and only such a message carries one.
 */
export async function deliveryForWebversion(
  db: Executor,
  workspaceId: string,
  deliveryId: string,
): Promise<WebversionDelivery | undefined> {
  const r = await db
    .selectFrom('deliveries')
    .select(['broadcast_id', 'contact_id', 'email', 'unsubscribe_token', 'variant'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', deliveryId)
    .executeTakeFirst();
  return r
    ? {
        broadcastId: r.broadcast_id,
        contactId: r.contact_id,
        email: r.email,
        unsubscribeToken: r.unsubscribe_token,
        variant: r.variant,
      }
    : undefined;
}
