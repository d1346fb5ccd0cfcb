import type { Insertable, Selectable, SelectQueryBuilder, Updateable } from 'kysely';
import type { Executor } from '../../db/connection.js';
import type { BroadcastsTable, Database } from '../../db/schema.js';
import { fromJsonColumn, toJsonColumn } from '../../lib/json.js';
import { toIso } from '../../lib/time.js';
import type { AudienceSpec, ResendAudience } from '../../audience/index.js';
import { recordBroadcastMove } from './broadcasts.events.js';
import { parseAbTest } from './broadcasts.ab.js';
import type { AbTest, Broadcast, BroadcastStatus, EmailContent } from './broadcasts.schemas.js';

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
  'ab_test',
  'resend_of',
  'resend_to',
  'resend_as_of',
  'archive',
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
    abTest: parseAbTest(r.ab_test),
    ...(r.resend_of && r.resend_to && r.resend_as_of
      ? { resendOf: { broadcastId: r.resend_of, to: r.resend_to, asOf: toIso(r.resend_as_of)! } }
      : {}),
    archive: r.archive === 1,
  };
}

/** A resend's audience (audience/segments/audience.ts ResendAudience) from its row; null for any other broadcast. */
export function resendOfRow(r: Pick<Row, 'resend_of' | 'resend_to' | 'resend_as_of'>): ResendAudience | null {
  return r.resend_of && r.resend_to && r.resend_as_of
    ? { of: r.resend_of, to: r.resend_to, asOf: toIso(r.resend_as_of)! }
    : null;
}

/** The audience of a broadcast: its segment, its topic, and for a resend the original's non-openers or non-clickers. */
export function audienceSpecOf(b: Broadcast): AudienceSpec {
  return {
    segmentId: b.segmentId,
    topicId: b.topicId,
    resend: b.resendOf ? { of: b.resendOf.broadcastId, to: b.resendOf.to, asOf: b.resendOf.asOf } : null,
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
  /** Its A/B test (docs/ab-tests.md), variants' contents as stored; null: none. */
  abTest?: AbTest | null;
  /** Set at creation only, by a resend (never changed after). */
  resend?: ResendAudience | null;
  /** Shown in the workspace's public archive once SENT (docs/archive.md). */
  archive: boolean;
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
  if (v.resend) {
    row.resend_of = v.resend.of;
    row.resend_to = v.resend.to;
    row.resend_as_of = v.resend.asOf;
  }
  if (v.tracking !== undefined) {
    row.track_opens = v.tracking.opens ? 1 : 0;
    row.track_clicks = v.tracking.clicks ? 1 : 0;
  }
  if (v.abTest !== undefined) row.ab_test = toJsonColumn(v.abTest);
  if (v.archive !== undefined) row.archive = v.archive ? 1 : 0;
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
/**
 * Broadcasts only: not an automation's message nor a transactional email's hidden row (docs/emails.md), which share
 * the table but are neither listed, nor finished by the sweep, nor weighed by the breaker.
 */
function broadcastsOnly<Q extends SelectQueryBuilder<Database, 'broadcasts', object>>(q: Q): Q {
  return q.where('automation_id', 'is', null).where('transactional', '=', 0) as Q;
}

export async function getBroadcast(
  db: Executor,
  workspaceId: string,
  id: string,
  opts: { automationMessages?: boolean } = {},
): Promise<Broadcast | undefined> {
  let q = db.selectFrom('broadcasts').select(COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id);
  // A transactional email's hidden row (docs/emails.md) is the sending side's too.
  if (!opts.automationMessages) q = q.$call(broadcastsOnly);
  const r = await q.executeTakeFirst();
  return r ? toBroadcast(r) : undefined;
}

/**
 * Several broadcasts of a workspace by id, hidden rows included (what getBroadcast gives with `automationMessages`), in
 * one query: the delivery pipeline's batch of transactional emails is a hidden broadcast per email (bench:emails, e2e).
 * Those not found are left out.
 */
export async function getBroadcastsForSending(
  db: Executor,
  workspaceId: string,
  ids: readonly string[],
): Promise<Map<string, Broadcast>> {
  if (!ids.length) return new Map();
  const rows = await db
    .selectFrom('broadcasts')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', 'in', ids)
    .execute();
  return new Map(rows.map((r) => [r.id, toBroadcast(r)]));
}

/**
 * What the circuit breaker reads of a broadcast on every weighing: its status and `breaker_since` (an ISO string on
 * both databases: PostgreSQL's driver gives a Date). One read by key of two columns; an automation's or a
 * transactional email's hidden row is not weighed (undefined, as getBroadcast without `automationMessages`).
 */
export async function breakerStateOf(
  db: Executor,
  workspaceId: string,
  id: string,
): Promise<{ status: BroadcastStatus; since: string | null } | undefined> {
  const r = await db
    .selectFrom('broadcasts')
    .select(['status', 'breaker_since'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .$call(broadcastsOnly)
    .executeTakeFirst();
  return r ? { status: r.status, since: r.breaker_since ? toIso(r.breaker_since) : null } : undefined;
}

export async function listBroadcasts(
  db: Executor,
  workspaceId: string,
  opts: { status?: BroadcastStatus; limit: number; beforeId?: string },
): Promise<Broadcast[]> {
  let q = db.selectFrom('broadcasts').select(COLUMNS).where('workspace_id', '=', workspaceId).$call(broadcastsOnly);
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

/**
 * The archive switch alone, whatever the status (docs/archive.md): whether a sent broadcast is public is decided after the
 * send too. Not an edit of the message: `updated_at` stays (it tells a send thread whether its parsed templates are
 * current). False when the broadcast is not the workspace's (or is an automation's message).
 */
export async function setArchive(db: Executor, workspaceId: string, id: string, archive: boolean): Promise<boolean> {
  const res = await db
    .updateTable('broadcasts')
    .set({ archive: archive ? 1 : 0 })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('automation_id', 'is', null)
    .where('transactional', '=', 0)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
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
    .$call(broadcastsOnly)
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
