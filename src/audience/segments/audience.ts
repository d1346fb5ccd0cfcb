import type { SelectQueryBuilder } from 'kysely';
import type { Dialect, Executor } from '../../db/connection.js';
import type { Database } from '../../db/schema.js';
import { unprocessable, type FieldError } from '../../errors/errors.js';
import { notSuppressed } from '../suppressions/suppressions.repository.js';
import { getTopic } from '../topics/topics.repository.js';
import type { Filter, FrozenEngagementCondition } from './segments.filter.js';
import { compiledFilterWithin, getSegment } from './segments.repository.js';
import { EVALUATION_LIMIT_MS, contactSlices, inRange, sliceRows, type IdRange } from './slices.js';

export interface AudienceSpec {
  segmentId: string | null;
  topicId: string | null;
  /** A resend (docs/sending.md, "Resend to non-openers"): only the original's recipients without a human open/click. */
  resend?: ResendAudience | null;
}

/**
 * The audience of a resend: the contacts the original broadcast was sent to (an `email.sent`) who had no human open
 * (NON_OPENERS) or click (NON_CLICKERS) of it up to `asOf`, the instant of the resend. A human click counts as an open
 * too (the reader opened it with images blocked, so the pixel never loaded), as Mailchimp counts it. Events are only
 * ever added, so this is the list as it was at the resend, without storing it; the audience's other rules
 * (SUBSCRIBED, not suppressed, the topic) apply when it is sent.
 */
export interface ResendAudience {
  of: string;
  to: 'NON_OPENERS' | 'NON_CLICKERS';
  asOf: string;
}

/** A resend's audience as a filter (engagement conditions, segments.filter.ts; `until` is not in the public grammar). */
export function resendFilter(r: ResendAudience): Filter {
  const none = (engagement: 'opened' | 'clicked'): FrozenEngagementCondition => ({
    engagement,
    broadcastId: r.of,
    happened: false,
    until: r.asOf,
  });
  return {
    all: [
      { engagement: 'delivered', broadcastId: r.of, happened: true },
      ...(r.to === 'NON_OPENERS' ? [none('opened')] : []),
      none('clicked'),
    ],
  };
}

/**
 * The contacts a broadcast goes to (docs/api.md §5), as one query: the segment's contacts (all the
 * workspace's contacts when segmentId is null) ∩ status SUBSCRIBED ∩ not suppressed ∩, when topicId is given, effectively
 * subscribed to the topic (the contact's explicit choice, else the topic's default). Callers add their
 * own select, order, limit or count; the conditions reference `contacts` by name, unaliased.
 * Throws 422 invalid_reference (paths /segmentId, /topicId) if the segment or topic is not in the workspace.
 */
export async function audienceQuery(
  db: Executor,
  dialect: Dialect,
  workspaceId: string,
  spec: AudienceSpec,
): Promise<SelectQueryBuilder<Database, 'contacts', object>> {
  return (await audience(db, dialect, workspaceId, spec)).query;
}

/** The audience query, and how many contacts a slice of it may span (segments/slices.ts). */
export async function audience(
  db: Executor,
  dialect: Dialect,
  workspaceId: string,
  spec: AudienceSpec & { extra?: Filter },
): Promise<{
  query: SelectQueryBuilder<Database, 'contacts', object>;
  /** The query narrowed to one slice of contacts (and its broadcast conditions to the same range: compileFilter). */
  inSlice: (range: IdRange) => SelectQueryBuilder<Database, 'contacts', object>;
  sliceRows: number;
}> {
  const errors: FieldError[] = [];
  const segment = spec.segmentId === null ? undefined : await getSegment(db, workspaceId, spec.segmentId);
  if (spec.segmentId !== null && !segment)
    errors.push({ path: '/segmentId', message: 'names no segment of this workspace' });
  if (spec.topicId !== null && !(await getTopic(db, workspaceId, spec.topicId)))
    errors.push({ path: '/topicId', message: 'names no topic of this workspace' });
  if (errors.length)
    throw unprocessable('invalid_reference', errors.map((e) => `${e.path.slice(1)} ${e.message}`).join('; '), errors);

  const base = db
    .selectFrom('contacts')
    .where('contacts.workspace_id', '=', workspaceId)
    .where('contacts.status', '=', 'SUBSCRIBED')
    .where(notSuppressed);
  const topic: Filter | null = spec.topicId !== null ? { topic: spec.topicId, subscribed: true } : null;
  const resend = spec.resend ? resendFilter(spec.resend) : null;
  const parts = [segment?.filter, topic, resend, spec.extra].filter((f): f is Filter => Boolean(f));
  const filter: Filter | null = parts.length > 1 ? { all: parts } : (parts[0] ?? null);
  const condition = filter ? await compiledFilterWithin(db, dialect, workspaceId, filter) : null;
  return {
    query: condition ? base.where(condition()) : base,
    inSlice: (range) => inRange(condition ? base.where(condition(range)) : base, range),
    sliceRows: sliceRows(filter),
  };
}

/** How many contacts the audience has now (narrowed by `extra`, a filter), counted a slice at a time. */
export async function countAudience(
  db: Executor,
  dialect: Dialect,
  workspaceId: string,
  spec: AudienceSpec & { extra?: Filter },
): Promise<number> {
  const { inSlice, sliceRows: rows } = await audience(db, dialect, workspaceId, spec);
  let n = 0;
  for await (const range of contactSlices(db, dialect, workspaceId, {
    rows,
    order: 'asc',
    limitMs: EVALUATION_LIMIT_MS,
  })) {
    const r = await inSlice(range)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirst();
    n += Number(r?.n ?? 0);
  }
  return n;
}

/** A page of the audience, newest contacts first, found a slice at a time. */
export async function audiencePage(
  db: Executor,
  dialect: Dialect,
  workspaceId: string,
  spec: AudienceSpec,
  limit: number,
  beforeId?: string,
) {
  const { inSlice, sliceRows: rows } = await audience(db, dialect, workspaceId, spec);
  const out: { id: string; email: string; first_name: string | null; last_name: string | null }[] = [];
  for await (const range of contactSlices(db, dialect, workspaceId, {
    rows,
    order: 'desc',
    before: beforeId,
    limitMs: EVALUATION_LIMIT_MS,
  })) {
    out.push(
      ...(await inSlice(range)
        .select(['contacts.id', 'contacts.email', 'contacts.first_name', 'contacts.last_name'])
        .orderBy('contacts.id', 'desc')
        .limit(limit - out.length)
        .execute()),
    );
    if (out.length >= limit) break;
  }
  return out;
}

/**
 * The audience's contact ids, a page at a time (at most `page`, in id order): a slice at a time on SQLite, as
 * countAudience counts (no statement evaluates the filter over an unbounded number of contacts), the whole range at once
 * on PostgreSQL, in both cases paged by id so that no page holds more than `page` rows. Used to choose an A/B
 * broadcast's test share over its whole audience (sending/broadcasts/broadcasts.ab.ts selectTestShare).
 */
export async function* audienceIds(
  db: Executor,
  dialect: Dialect,
  workspaceId: string,
  spec: AudienceSpec,
  page = 50_000,
): AsyncGenerator<string[]> {
  const { inSlice, sliceRows: rows } = await audience(db, dialect, workspaceId, spec);
  for await (const range of contactSlices(db, dialect, workspaceId, { rows, order: 'asc' })) {
    let after: string | undefined;
    for (;;) {
      let q = inSlice(range).select('contacts.id').orderBy('contacts.id').limit(page);
      if (after !== undefined) q = q.where('contacts.id', '>', after);
      const ids = (await q.execute()).map((r) => r.id);
      if (ids.length) yield ids;
      if (ids.length < page) break;
      after = ids.at(-1);
    }
  }
}
