import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor } from '../../db/connection.js';
import type { BroadcastsTable } from '../../db/schema.js';
import { fromJsonColumn, toJsonColumn } from '../../lib/json.js';
import { toIso } from '../../lib/time.js';
import { recordBroadcastMove } from './broadcasts.events.js';
import type { Broadcast, BroadcastStatus, EmailContent } from './broadcasts.schemas.js';

const COLUMNS = [
  'id',
  'name',
  'status',
  'from_address',
  'reply_to',
  'subject',
  'html',
  'text',
  'preview_text',
  'editor_content',
  'topic_id',
  'segment_id',
  'send_at',
  'local_send_time',
  'created_at',
  'updated_at',
  'sent_at',
  'paused_reason',
  'track_opens',
  'track_clicks',
] as const;

type Row = Selectable<Pick<BroadcastsTable, (typeof COLUMNS)[number]>>;

function toBroadcast(r: Row): Broadcast {
  return {
    id: r.id,
    name: r.name,
    status: r.status,
    from: r.from_address,
    emailContent: {
      subject: r.subject,
      html: r.html,
      text: r.text,
      previewText: r.preview_text,
      editorContent: fromJsonColumn(r.editor_content),
    },
    replyTo: r.reply_to,
    topicId: r.topic_id,
    segmentId: r.segment_id,
    sendAt: toIso(r.send_at),
    sendAtLocal: r.local_send_time !== null,
    localSendTime: r.local_send_time,
    createdAt: toIso(r.created_at),
    updatedAt: toIso(r.updated_at),
    sentAt: toIso(r.sent_at),
    pausedReason: r.paused_reason,
    tracking: { opens: r.track_opens === 1, clicks: r.track_clicks === 1 },
  };
}

/** The stored, editable part of a broadcast. */
export interface BroadcastValues {
  name: string;
  from: string | null;
  replyTo: string | null;
  emailContent: EmailContent;
  topicId: string | null;
  segmentId: string | null;
  sendAt: string | null;
  /**
   * Local-time sending (issue 34, docs/sending.md): the wall-clock time each recipient gets it at in their zone, and
   * when the scheduler starts it (the earliest zone's instant); both null for a broadcast that is not sent so.
   */
  local?: { sendTime: string; startAt: string } | null;
  /** Set when the broadcast pauses, cleared when it resumes. */
  pausedReason: string | null;
  /** Set when it resumes: the circuit breaker weighs deliveries that end after it. */
  breakerSince: string | null;
  /** Opens and clicks tracked (docs/tracking.md). */
  tracking: { opens: boolean; clicks: boolean };
}

export function valuesToRow(v: Partial<BroadcastValues>): Updateable<BroadcastsTable> {
  const row: Updateable<BroadcastsTable> = {};
  if (v.name !== undefined) row.name = v.name;
  if (v.from !== undefined) row.from_address = v.from;
  if (v.replyTo !== undefined) row.reply_to = v.replyTo;
  if (v.topicId !== undefined) row.topic_id = v.topicId;
  if (v.segmentId !== undefined) row.segment_id = v.segmentId;
  if (v.sendAt !== undefined) row.send_at = v.sendAt;
  if (v.local !== undefined) {
    row.local_send_time = v.local?.sendTime ?? null;
    row.local_start_at = v.local?.startAt ?? null;
  }
  if (v.pausedReason !== undefined) row.paused_reason = v.pausedReason;
  if (v.breakerSince !== undefined) row.breaker_since = v.breakerSince;
  if (v.tracking !== undefined) {
    row.track_opens = v.tracking.opens ? 1 : 0;
    row.track_clicks = v.tracking.clicks ? 1 : 0;
  }
  if (v.emailContent !== undefined) {
    const c = v.emailContent;
    Object.assign(row, {
      subject: c.subject,
      html: c.html,
      text: c.text,
      preview_text: c.previewText,
      editor_content: toJsonColumn(c.editorContent),
    });
  }
  return row;
}

export async function insertBroadcast(
  db: Executor,
  workspaceId: string,
  id: string,
  v: BroadcastValues,
  createdAt: string,
): Promise<void> {
  await db
    .insertInto('broadcasts')
    .values({
      ...(valuesToRow(v) as Insertable<BroadcastsTable>),
      id,
      workspace_id: workspaceId,
      status: 'DRAFT',
      created_at: createdAt,
      updated_at: createdAt,
      sent_at: null,
    })
    .execute();
}

/**
 * A broadcast of the workspace. The messages of automations' send steps (docs/automations.md) are broadcast rows
 * too, hidden from the broadcasts API: only the sending side (`{ automationMessages: true }`) sees them.
 */
export async function getBroadcast(
  db: Executor,
  workspaceId: string,
  id: string,
  opts: { automationMessages?: boolean } = {},
): Promise<Broadcast | undefined> {
  let q = db.selectFrom('broadcasts').select(COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id);
  if (!opts.automationMessages) q = q.where('automation_id', 'is', null);
  const r = await q.executeTakeFirst();
  return r ? toBroadcast(r) : undefined;
}

export async function listBroadcasts(
  db: Executor,
  workspaceId: string,
  opts: { status?: BroadcastStatus; limit: number; beforeId?: string },
): Promise<Broadcast[]> {
  let q = db
    .selectFrom('broadcasts')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('automation_id', 'is', null);
  if (opts.status) q = q.where('status', '=', opts.status);
  if (opts.beforeId) q = q.where('id', '<', opts.beforeId);
  return (await q.orderBy('id', 'desc').limit(opts.limit).execute()).map(toBroadcast);
}

/**
 * Writes values and a new status, but only if the broadcast is still in `expected` status (a concurrent
 * send or cancel wins; the caller answers 409). Returns the updated broadcast, or undefined.
 */
export async function updateBroadcast(
  db: Executor,
  workspaceId: string,
  id: string,
  expected: BroadcastStatus,
  status: BroadcastStatus,
  values: Partial<BroadcastValues>,
  updatedAt: string,
): Promise<Broadcast | undefined> {
  const r = await db
    .updateTable('broadcasts')
    .set({ ...valuesToRow(values), status, updated_at: updatedAt })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('status', '=', expected)
    .returning(COLUMNS)
    .executeTakeFirst();
  if (!r) return undefined;
  const b = toBroadcast(r);
  await recordBroadcastMove(db, workspaceId, id, expected, status, updatedAt, {
    name: b.name,
    ...(b.pausedReason && status === 'PAUSED' ? { pausedReason: b.pausedReason } : {}),
  });
  return b;
}

export async function deleteDraftBroadcast(db: Executor, workspaceId: string, id: string): Promise<boolean> {
  const res = await db
    .deleteFrom('broadcasts')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('status', '=', 'DRAFT')
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** SENDING broadcasts that may be finished (a sweep, for those no worker touched last). */
export async function sendingMaterializedBroadcasts(
  db: Executor,
  limit: number,
): Promise<{ id: string; workspaceId: string }[]> {
  const rows = await db
    .selectFrom('broadcasts')
    .select(['id', 'workspace_id'])
    .where('status', '=', 'SENDING')
    .where('materialized_at', 'is not', null)
    .where('automation_id', 'is', null)
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: r.id, workspaceId: r.workspace_id }));
}

/** The workspace's last broadcast sent (what preflight takes the sending rate from). */
export async function lastSentBroadcast(db: Executor, workspaceId: string): Promise<string | undefined> {
  return (
    await db
      .selectFrom('broadcasts')
      .select('id')
      .where('workspace_id', '=', workspaceId)
      .where('status', '=', 'SENT')
      .orderBy('sent_at', 'desc')
      .limit(1)
      .executeTakeFirst()
  )?.id;
}
