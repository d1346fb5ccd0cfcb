import { sql } from 'kysely';
import { onPostgres } from '../../db/batch-sql.js';
import type { Db, Executor } from '../../db/connection.js';
import { notFound, unprocessable, validationFailed, type FieldError } from '../../errors/errors.js';
import { newId } from '../../lib/ids.js';
import { nowIso } from '../../lib/time.js';
import { recordEvents } from '../../outbox/index.js';
import { updatedEvent } from '../contacts/contacts.events.js';
import { applyToContact } from '../contacts/contacts.lifecycle.js';
import { deleteContactWithEvent } from '../contacts/contacts.service.js';
import { setTopicChoices } from '../contacts/contacts.subscriptions.js';
import { mergeTags, normalizeTags, removeTag } from '../contacts/contacts.tags.js';
import { validateFilter, type Filter } from '../segments/segments.filter.js';
import { compiledFilter, countMatchingContacts } from '../segments/segments.repository.js';
import { checkFilterReferences } from '../segments/segments.service.js';
import { getTopic } from '../topics/topics.repository.js';
import * as repo from './bulk.repository.js';
import type { BulkJobRecord } from './bulk.repository.js';
import type { BulkInput, BulkJob } from './bulk.schemas.js';

/** Contacts one batch of a job acts on, in one transaction. */
export const BULK_BATCH_SIZE = 500;

/**
 * Bulk actions on contacts (contract §18; docs/contacts.md "Bulk actions"): POST /v1/contacts/bulk checks the request
 * and writes a RUNNING job; the worker walks it (runBatch) a batch of contacts at a time, by id from the job's cursor,
 * each batch with its cursor in one transaction, so a worker stopped at any point resumes after the last batch it
 * committed. Every action is the single-contact API's own function (the lifecycle for a status, setTopicChoices for a
 * topic, the contact service's delete, the tags' writer), with the events they write; each is safe to repeat.
 */
export class BulkService {
  /** Contacts per batch; tests make it small. */
  batchSize = BULK_BATCH_SIZE;

  constructor(readonly db: Db) {}

  async get(workspaceId: string, id: string): Promise<BulkJob> {
    const job = await repo.getBulkJob(this.db.kysely, workspaceId, id);
    if (!job) throw notFound('bulk job');
    return job;
  }

  /** Checks the request (422, nothing written) and writes the job; `matched` is counted now. */
  async create(workspaceId: string, input: BulkInput): Promise<{ jobId: string; matched: number }> {
    const errors: FieldError[] = [];
    const hasIds = input.ids !== undefined;
    const hasFilter = input.filter !== undefined;
    if (hasIds && hasFilter) errors.push({ path: '/filter', message: 'give ids or filter, not both' });
    if (!hasIds && !hasFilter)
      errors.push({ path: '', message: 'must have ids or filter', keyword: 'required', params: {} });
    const tagging = input.action === 'tag' || input.action === 'untag';
    let tag: string | null = null;
    if (tagging && input.tag === undefined)
      errors.push({ path: '/tag', message: `is required by the action ${input.action}`, keyword: 'required' });
    else if (!tagging && input.tag !== undefined)
      errors.push({ path: '/tag', message: `is not allowed with the action ${input.action}` });
    else if (input.tag !== undefined) {
      const normalized = normalizeTags([input.tag], '/tag');
      if (normalized.errors.length) errors.push({ path: '/tag', message: normalized.errors[0]!.message });
      else tag = normalized.tags[0]!;
    }
    const topical = input.action === 'subscribe' || input.action === 'unsubscribe';
    if (!topical && input.topicId !== undefined)
      errors.push({ path: '/topicId', message: `is not allowed with the action ${input.action}` });
    if (hasFilter) errors.push(...validateFilter(input.filter));
    if (errors.length) throw validationFailed(errors);

    const db = this.db.kysely;
    if (input.topicId !== undefined && !(await getTopic(db, workspaceId, input.topicId)))
      throw unprocessable('invalid_reference', 'topicId names no topic of this workspace', [
        { path: '/topicId', message: 'names no topic of this workspace' },
      ]);
    let ids: string[] | null = null;
    let matched: number;
    const filter = (input.filter as Filter | undefined) ?? null;
    if (filter) {
      await checkFilterReferences(db, workspaceId, filter);
      matched = (await countMatchingContacts(db, this.db.dialect, workspaceId, filter)).count;
    } else {
      ids = [...new Set(input.ids!)].sort();
      const found = new Set<string>();
      for (let i = 0; i < ids.length; i += 1000) {
        const rows = await db
          .selectFrom('contacts')
          .select('id')
          .where('workspace_id', '=', workspaceId)
          .where('id', 'in', ids.slice(i, i + 1000))
          .execute();
        for (const r of rows) found.add(r.id);
      }
      const missing = input.ids!.flatMap((id, i) =>
        found.has(id) ? [] : [{ path: `/ids/${i}`, message: 'names no contact of this workspace' }],
      );
      if (missing.length)
        throw unprocessable(
          'invalid_reference',
          `${missing.length === 1 ? 'an id names' : `${missing.length} ids name`} no contact of this workspace`,
          missing.slice(0, 100),
        );
      matched = ids.length;
    }
    const upTo = await newestContactId(db, workspaceId);
    const id = newId('bulk');
    await repo.insertBulkJob(db, workspaceId, {
      id,
      action: input.action,
      tag,
      topicId: input.topicId ?? null,
      ids,
      filter,
      matched,
      upTo,
      now: nowIso(),
    });
    return { jobId: id, matched };
  }

  /**
   * One batch of the oldest RUNNING job (the worker's `contact bulk actions` job): its next contacts by id after the
   * cursor, acted on, and the cursor moved, in one transaction. Returns the contacts done (0: no job is running).
   */
  runBatch(): Promise<number> {
    return this.db.kysely.transaction().execute(async (trx) => {
      const job = await repo.claimRunningJob(trx, onPostgres(trx));
      if (!job) return 0;
      const now = nowIso();
      if (job.topicId !== null && !(await getTopic(trx, job.workspaceId, job.topicId))) {
        await repo.recordBatch(trx, job, {
          cursor: job.cursor,
          processed: 0,
          failed: 0,
          done: true,
          error: 'the topic was deleted',
          now,
        });
        return 1;
      }
      const { contacts, cursor, done } = await this.nextContacts(trx, job);
      const failed = await act(trx, job, contacts, now);
      await repo.recordBatch(trx, job, { cursor, processed: contacts.length, failed, done, now });
      // A batch with no contacts still ended a job: worth another round at once.
      return Math.max(1, contacts.length);
    });
  }

  /**
   * The job's next contacts after its cursor, oldest first (of its ids, or those its filter matches now), where the
   * cursor goes after them, and whether they are the last.
   */
  private async nextContacts(
    trx: Executor,
    job: BulkJobRecord,
  ): Promise<{ contacts: { id: string; email: string }[]; cursor: string | null; done: boolean }> {
    if (job.upTo === null) return { contacts: [], cursor: job.cursor, done: true };
    let q = trx
      .selectFrom('contacts')
      .select(['contacts.id', 'contacts.email'])
      .where('contacts.workspace_id', '=', job.workspaceId)
      .where('contacts.id', '<=', job.upTo);
    if (job.cursor !== null) q = q.where('contacts.id', '>', job.cursor);
    if (job.ids) {
      // The next ids of the job's (sorted) list; those of contacts deleted meanwhile are skipped.
      const next = job.ids.filter((id) => job.cursor === null || id > job.cursor).slice(0, this.batchSize);
      const contacts = next.length ? await q.where('contacts.id', 'in', next).orderBy('contacts.id').execute() : [];
      return { contacts, cursor: next.at(-1) ?? job.cursor, done: next.length < this.batchSize };
    }
    const condition = await compiledFilter(trx, this.db.dialect, job.workspaceId, job.filter!);
    const contacts = await q.where(condition).orderBy('contacts.id').limit(this.batchSize).execute();
    return { contacts, cursor: contacts.at(-1)?.id ?? job.cursor, done: contacts.length < this.batchSize };
  }
}

/** The newest contact id of the workspace (ids sort by creation): a job acts on no contact created after it. */
async function newestContactId(db: Executor, workspaceId: string): Promise<string | null> {
  const row = await db
    .selectFrom('contacts')
    .select(sql<string | null>`max(id)`.as('id'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  return row?.id ?? null;
}

/**
 * The job's action on a batch of contacts, with the events the single-contact API writes; returns how many it could
 * not be applied to. Tags are written for the whole batch at once (the tags' writer); a status, a topic choice and a
 * deletion contact by contact, through the functions the API calls.
 */
async function act(
  trx: Executor,
  job: BulkJobRecord,
  contacts: readonly { id: string; email: string }[],
  now: string,
): Promise<number> {
  const ws = job.workspaceId;
  const emailOf = new Map(contacts.map((c) => [c.id, c.email]));
  const tagEvents = (ids: Iterable<string>) =>
    recordEvents(
      trx,
      ws,
      [...ids].map((id) => updatedEvent(id, emailOf.get(id)!, ['tags'], 'api')),
      now,
    );
  switch (job.action) {
    case 'tag': {
      const { changed, full } = await mergeTags(trx, ws, new Map(contacts.map((c) => [c.id, [job.tag!]])), now);
      await tagEvents(changed);
      return full.size;
    }
    case 'untag':
      await tagEvents(
        await removeTag(
          trx,
          ws,
          contacts.map((c) => c.id),
          job.tag!,
        ),
      );
      return 0;
    case 'subscribe':
    case 'unsubscribe': {
      const subscribed = job.action === 'subscribe';
      for (const c of contacts)
        if (job.topicId !== null) await setTopicChoices(trx, ws, c.id, [{ id: job.topicId, subscribed }], now);
        else await applyToContact(trx, ws, c.id, subscribed ? 'setSubscribed' : 'setUnsubscribed', {}, now);
      return 0;
    }
    case 'delete':
      for (const c of contacts) await deleteContactWithEvent(trx, ws, c.id, now);
      return 0;
  }
}
