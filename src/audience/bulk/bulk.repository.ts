import type { Executor } from '../../db/connection.js';
import type { BulkAction, ContactBulkJobsTable } from '../../db/schema.js';
import { fromJsonColumn, toJsonColumn } from '../../lib/json.js';
import { toIso } from '../../lib/time.js';
import type { Filter } from '../segments/segments.filter.js';
import type { BulkJob } from './bulk.schemas.js';

/** A job as the worker walks it. */
export interface BulkJobRecord {
  id: string;
  workspaceId: string;
  action: BulkAction;
  tag: string | null;
  topicId: string | null;
  ids: string[] | null;
  filter: Filter | null;
  cursor: string | null;
  upTo: string | null;
}

const COLUMNS = [
  'id',
  'workspace_id',
  'action',
  'tag',
  'topic_id',
  'ids',
  'filter',
  'status',
  'matched',
  'processed',
  'failed',
  'cursor',
  'up_to',
  'error',
  'created_at',
  'updated_at',
  'finished_at',
] as const;

type Row = Pick<ContactBulkJobsTable, (typeof COLUMNS)[number]>;

function toJob(r: Row): BulkJob {
  return {
    id: r.id,
    action: r.action,
    tag: r.tag,
    topicId: r.topic_id,
    status: r.status,
    matched: Number(r.matched),
    processed: Number(r.processed),
    failed: Number(r.failed),
    error: r.error,
    createdAt: toIso(r.created_at),
    updatedAt: toIso(r.updated_at),
    finishedAt: toIso(r.finished_at),
  };
}

function toRecord(r: Row): BulkJobRecord {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    action: r.action,
    tag: r.tag,
    topicId: r.topic_id,
    ids: fromJsonColumn<string[]>(r.ids) ?? null,
    filter: fromJsonColumn<Filter>(r.filter) ?? null,
    cursor: r.cursor,
    upTo: r.up_to,
  };
}

export async function insertBulkJob(
  db: Executor,
  workspaceId: string,
  job: {
    id: string;
    action: BulkAction;
    tag: string | null;
    topicId: string | null;
    ids: string[] | null;
    filter: Filter | null;
    matched: number;
    upTo: string | null;
    now: string;
  },
): Promise<void> {
  await db
    .insertInto('contact_bulk_jobs')
    .values({
      id: job.id,
      workspace_id: workspaceId,
      action: job.action,
      tag: job.tag,
      topic_id: job.topicId,
      ids: job.ids ? toJsonColumn(job.ids)! : null,
      filter: job.filter ? toJsonColumn(job.filter)! : null,
      status: 'RUNNING',
      matched: job.matched,
      processed: 0,
      failed: 0,
      cursor: null,
      up_to: job.upTo,
      error: null,
      created_at: job.now,
      updated_at: job.now,
      finished_at: null,
    })
    .execute();
}

export async function getBulkJob(db: Executor, workspaceId: string, id: string): Promise<BulkJob | undefined> {
  const r = await db
    .selectFrom('contact_bulk_jobs')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return r ? toJob(r) : undefined;
}

/**
 * The oldest RUNNING job of any workspace (a maintenance sweep, like the import sweep), locked for the batch's
 * transaction on PostgreSQL (another worker skips it and takes the next), so a batch is done once.
 */
export async function claimRunningJob(db: Executor, postgres: boolean): Promise<BulkJobRecord | undefined> {
  let q = db.selectFrom('contact_bulk_jobs').select(COLUMNS).where('status', '=', 'RUNNING').orderBy('id').limit(1);
  if (postgres) q = q.forUpdate().skipLocked();
  const r = await q.executeTakeFirst();
  return r ? toRecord(r) : undefined;
}

/** A batch done: the cursor moved past its last contact, the counts added, the job ended when it was the last. */
export async function recordBatch(
  db: Executor,
  job: BulkJobRecord,
  b: { cursor: string | null; processed: number; failed: number; done: boolean; error?: string; now: string },
): Promise<void> {
  await db
    .updateTable('contact_bulk_jobs')
    .set((eb) => ({
      cursor: b.cursor,
      processed: eb('processed', '+', b.processed),
      failed: eb('failed', '+', b.failed),
      updated_at: b.now,
      ...(b.done ? { status: b.error ? ('FAILED' as const) : ('COMPLETED' as const), finished_at: b.now } : {}),
      ...(b.error ? { error: b.error } : {}),
    }))
    .where('workspace_id', '=', job.workspaceId)
    .where('id', '=', job.id)
    .where('status', '=', 'RUNNING')
    .execute();
}
