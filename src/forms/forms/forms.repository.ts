import { sql } from 'kysely';
import type { Executor } from '../../db/connection.js';
import type { FormsTable } from '../../db/schema.js';
import { fromJsonColumn, toJsonColumn } from '../../lib/json.js';
import { toIso } from '../../lib/time.js';
import type { Form, FormSettings, FormStatus, HtmlValidation } from './forms.schemas.js';

/** Every column but the deployed HTML itself, which only the HTML endpoints and versioning read. */
export const FORM_COLUMNS = [
  'id',
  'form_group_id',
  'version',
  'status',
  'name',
  'description',
  'type',
  'display',
  'field_mapping',
  'settings',
  'double_opt_in_email_id',
  'seo_title',
  'seo_description',
  'seo_image_url',
  'seo_favicon_url',
  'slug',
  'previous_version_id',
  'html_validation',
  'created_at',
  'updated_at',
  'published_at',
  'archived_at',
] as const;

type FormRow = Pick<FormsTable, (typeof FORM_COLUMNS)[number]>;

export function toForm(row: FormRow): Form {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    type: row.type,
    display: row.display,
    fieldMapping: fromJsonColumn<Record<string, string>>(row.field_mapping) ?? {},
    settings: settingsFromColumn(row.settings),
    doubleOptInEmailId: row.double_opt_in_email_id,
    seoTitle: row.seo_title,
    seoDescription: row.seo_description,
    seoImageUrl: row.seo_image_url,
    seoFaviconUrl: row.seo_favicon_url,
    slug: row.slug,
    status: row.status,
    version: Number(row.version),
    formGroupId: row.form_group_id,
    previousVersionId: row.previous_version_id,
    htmlValidation: fromJsonColumn<HtmlValidation>(row.html_validation),
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
    publishedAt: toIso(row.published_at),
    archivedAt: toIso(row.archived_at),
  };
}

/**
 * Settings as stored. PostgreSQL's jsonb keeps no key order, and the order of `fields` is the order of the questions:
 * it is stored beside them (`fieldOrder`) and the object is rebuilt in that order when read.
 */
export function settingsToColumn(settings: FormSettings): string {
  return toJsonColumn(settings.fields ? { ...settings, fieldOrder: Object.keys(settings.fields) } : settings)!;
}

function settingsFromColumn(value: string): FormSettings {
  const { fieldOrder, ...settings } = fromJsonColumn<FormSettings & { fieldOrder?: string[] }>(value)!;
  if (settings.fields && fieldOrder) {
    const fields = settings.fields;
    settings.fields = Object.fromEntries(
      [...fieldOrder.filter((k) => k in fields), ...Object.keys(fields).filter((k) => !fieldOrder.includes(k))].map(
        (k) => [k, fields[k]!],
      ),
    );
  }
  return settings;
}

/** The stored shape of the configurable fields, as the service hands them over. */
export interface FormValues {
  name: string;
  description: string | null;
  type: Form['type'];
  display: Form['display'];
  fieldMapping: Record<string, string>;
  settings: FormSettings;
  doubleOptInEmailId: string | null;
  seoTitle: string | null;
  seoDescription: string | null;
  seoImageUrl: string | null;
  seoFaviconUrl: string | null;
  slug: string | null;
}

function valuesToRow(v: Partial<FormValues>): Partial<FormsTable> {
  const row: Partial<FormsTable> = {};
  if (v.name !== undefined) row.name = v.name;
  if (v.description !== undefined) row.description = v.description;
  if (v.type !== undefined) row.type = v.type;
  if (v.display !== undefined) row.display = v.display;
  if (v.fieldMapping !== undefined) row.field_mapping = toJsonColumn(v.fieldMapping)!;
  if (v.settings !== undefined) row.settings = settingsToColumn(v.settings);
  if (v.doubleOptInEmailId !== undefined) row.double_opt_in_email_id = v.doubleOptInEmailId;
  if (v.seoTitle !== undefined) row.seo_title = v.seoTitle;
  if (v.seoDescription !== undefined) row.seo_description = v.seoDescription;
  if (v.seoImageUrl !== undefined) row.seo_image_url = v.seoImageUrl;
  if (v.seoFaviconUrl !== undefined) row.seo_favicon_url = v.seoFaviconUrl;
  if (v.slug !== undefined) row.slug = v.slug;
  return row;
}

export async function insertFormGroup(db: Executor, workspaceId: string, id: string, createdAt: string): Promise<void> {
  await db
    .insertInto('form_groups')
    .values({ id, workspace_id: workspaceId, created_at: createdAt, lock_version: 0, last_version: 1 })
    .execute();
}

/**
 * Takes the group's row lock for the rest of the transaction (an UPDATE locks on both dialects), so that
 * publishes and new versions of one group run one after the other. Returns false if the group is gone.
 */
export async function lockFormGroup(db: Executor, workspaceId: string, groupId: string): Promise<boolean> {
  const res = await db
    .updateTable('form_groups')
    .set({ lock_version: sql`lock_version + 1` })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', groupId)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function deleteFormGroup(db: Executor, workspaceId: string, groupId: string): Promise<void> {
  await db.deleteFrom('form_groups').where('workspace_id', '=', workspaceId).where('id', '=', groupId).execute();
}

export interface NewForm extends FormValues {
  id: string;
  workspaceId: string;
  formGroupId: string;
  version: number;
  previousVersionId: string | null;
  html: string | null;
  htmlDeployedAt: string | null;
  htmlValidation: HtmlValidation | null;
  createdAt: string;
}

export async function insertForm(db: Executor, f: NewForm): Promise<void> {
  await db
    .insertInto('forms')
    .values({
      ...(valuesToRow(f) as FormsTable),
      id: f.id,
      workspace_id: f.workspaceId,
      form_group_id: f.formGroupId,
      version: f.version,
      status: 'DRAFT',
      previous_version_id: f.previousVersionId,
      html: f.html,
      html_deployed_at: f.htmlDeployedAt,
      html_validation: toJsonColumn(f.htmlValidation),
      created_at: f.createdAt,
      updated_at: f.createdAt,
      published_at: null,
      archived_at: null,
    })
    .execute();
}

export async function getForm(db: Executor, workspaceId: string, id: string): Promise<Form | undefined> {
  const row = await db
    .selectFrom('forms')
    .select(FORM_COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toForm(row) : undefined;
}

/**
 * A page of forms, newest first, each with its counters (`stats`): one query for the page, the counters joined by
 * their primary key (a form without a row has none yet: zeros).
 */
export async function listForms(
  db: Executor,
  workspaceId: string,
  opts: { status?: FormStatus; limit: number; beforeId?: string },
): Promise<Form[]> {
  let q = db
    .selectFrom('forms')
    .leftJoin('form_counters', (j) =>
      j.onRef('form_counters.form_id', '=', 'forms.id').onRef('form_counters.workspace_id', '=', 'forms.workspace_id'),
    )
    .select([
      ...FORM_COLUMNS.map((c) => `forms.${c}` as const),
      'form_counters.views',
      'form_counters.submissions',
      'form_counters.confirmations',
    ])
    .where('forms.workspace_id', '=', workspaceId);
  if (opts.status) q = q.where('forms.status', '=', opts.status);
  if (opts.beforeId) q = q.where('forms.id', '<', opts.beforeId);
  const rows = await q.orderBy('forms.id', 'desc').limit(opts.limit).execute();
  return rows.map((r) => ({ ...toForm(r), stats: formStats(r) }));
}

export async function listGroupVersions(db: Executor, workspaceId: string, groupId: string): Promise<Form[]> {
  const rows = await db
    .selectFrom('forms')
    .select(FORM_COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('form_group_id', '=', groupId)
    .orderBy('version', 'desc')
    .execute();
  return rows.map(toForm);
}

export async function findGroupVersionByStatus(
  db: Executor,
  workspaceId: string,
  groupId: string,
  status: FormStatus,
): Promise<Form | undefined> {
  const row = await db
    .selectFrom('forms')
    .select(FORM_COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('form_group_id', '=', groupId)
    .where('status', '=', status)
    .executeTakeFirst();
  return row ? toForm(row) : undefined;
}

/** Takes the group's lock (see lockFormGroup) and hands out its next version number. */
export async function nextGroupVersion(db: Executor, workspaceId: string, groupId: string): Promise<number> {
  const row = await db
    .updateTable('form_groups')
    .set({ last_version: sql`last_version + 1`, lock_version: sql`lock_version + 1` })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', groupId)
    .returning('last_version')
    .executeTakeFirstOrThrow();
  return Number(row.last_version);
}

/** Applies a partial update; `updatedAt` is always refreshed. Only DRAFT rows are touched (checked again here). */
export async function updateDraftForm(
  db: Executor,
  workspaceId: string,
  id: string,
  values: Partial<FormValues>,
  extra: { htmlValidation?: HtmlValidation | null; updatedAt: string },
): Promise<boolean> {
  const row: Partial<FormsTable> = { ...valuesToRow(values), updated_at: extra.updatedAt };
  if (extra.htmlValidation !== undefined) row.html_validation = toJsonColumn(extra.htmlValidation);
  const res = await db
    .updateTable('forms')
    .set(row)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('status', '=', 'DRAFT')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function setFormStatus(
  db: Executor,
  workspaceId: string,
  id: string,
  from: FormStatus,
  to: FormStatus,
  at: string,
): Promise<boolean> {
  const set: Partial<FormsTable> = { status: to, updated_at: at };
  if (to === 'PUBLISHED') Object.assign(set, { published_at: at, archived_at: null });
  if (to === 'ARCHIVED') set.archived_at = at;
  const res = await db
    .updateTable('forms')
    .set(set)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('status', '=', from)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function deleteDraftForm(db: Executor, workspaceId: string, id: string): Promise<boolean> {
  const res = await db
    .deleteFrom('forms')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('status', '=', 'DRAFT')
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

export async function countGroupVersions(db: Executor, workspaceId: string, groupId: string): Promise<number> {
  const row = await db
    .selectFrom('forms')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('form_group_id', '=', groupId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export interface StoredHtml {
  html: string | null;
  deployedAt: string | null;
}

export async function getFormHtml(db: Executor, workspaceId: string, id: string): Promise<StoredHtml | undefined> {
  const row = await db
    .selectFrom('forms')
    .select(['html', 'html_deployed_at'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? { html: row.html, deployedAt: toIso(row.html_deployed_at) } : undefined;
}

export async function setDraftFormHtml(
  db: Executor,
  workspaceId: string,
  id: string,
  html: StoredHtml,
  htmlValidation: HtmlValidation | null,
  at: string,
): Promise<boolean> {
  const res = await db
    .updateTable('forms')
    .set({
      html: html.html,
      html_deployed_at: html.deployedAt,
      html_validation: toJsonColumn(htmlValidation),
      updated_at: at,
    })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('status', '=', 'DRAFT')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * Claims a slug for a form group: true if the group holds it now (it may already have), false if another
 * group does. Slugs are public addresses (/f/{slug}), so the check spans workspaces; what it reveals, that
 * the slug is taken, its public page reveals anyway.
 */
export async function claimSlug(db: Executor, workspaceId: string, slug: string, groupId: string): Promise<boolean> {
  await db
    .insertInto('form_slugs')
    .values({ workspace_id: workspaceId, slug, form_group_id: groupId })
    .onConflict((oc) => oc.column('slug').doNothing())
    .execute();
  const row = await db.selectFrom('form_slugs').select('form_group_id').where('slug', '=', slug).executeTakeFirst();
  return row?.form_group_id === groupId;
}

/** Releases the group's slugs that none of its versions uses any more. */
export async function releaseUnusedSlugs(db: Executor, workspaceId: string, groupId: string): Promise<void> {
  await db
    .deleteFrom('form_slugs')
    .where('workspace_id', '=', workspaceId)
    .where('form_group_id', '=', groupId)
    .where('slug', 'not in', (eb) =>
      eb
        .selectFrom('forms')
        .select('slug')
        .where('workspace_id', '=', workspaceId)
        .where('form_group_id', '=', groupId)
        .where('slug', 'is not', null)
        .$narrowType<{ slug: string }>(),
    )
    .execute();
}

/**
 * The PUBLISHED version of the form group that holds `slug`, with its workspace: the one public lookup of
 * forms (a hosted page's address names no workspace; slugs are unique across workspaces for that reason).
 */
/** A PUBLISHED form as its public pages need it: with its workspace and its HTML. */
export type PublishedForm = Form & { workspaceId: string; html: string | null };

export async function findPublishedBySlug(db: Executor, slug: string): Promise<PublishedForm | undefined> {
  const row = await db
    .selectFrom('form_slugs')
    .innerJoin('forms', (j) =>
      j.onRef('forms.form_group_id', '=', 'form_slugs.form_group_id').on('forms.status', '=', 'PUBLISHED'),
    )
    .select([...FORM_COLUMNS.map((c) => `forms.${c}` as const), 'forms.workspace_id', 'forms.html'])
    .where('form_slugs.slug', '=', slug)
    .where('forms.slug', '=', slug)
    .executeTakeFirst();
  return row ? { ...toForm(row), workspaceId: row.workspace_id, html: row.html } : undefined;
}

// ---- counters ------------------------------------------------------------------------------------

/** A form version's counters (`stats`): hosted-page views and embed impressions, submissions that count, double opt-in confirmations. */
export type Counter = 'views' | 'submissions' | 'confirmations';

export async function bumpCounter(db: Executor, workspaceId: string, formId: string, counter: Counter): Promise<void> {
  await db
    .insertInto('form_counters')
    .values({
      form_id: formId,
      workspace_id: workspaceId,
      views: counter === 'views' ? 1 : 0,
      submissions: counter === 'submissions' ? 1 : 0,
      confirmations: counter === 'confirmations' ? 1 : 0,
    })
    .onConflict((oc) => oc.column('form_id').doUpdateSet({ [counter]: sql`form_counters.${sql.ref(counter)} + 1` }))
    .execute();
}

/** A form's `stats`: its counters, and the conversion they make (submissions per view; null before the first view). */
export type FormStats = Record<Counter, number> & { conversion: number | null };

type CounterColumns = { views?: unknown; submissions?: unknown; confirmations?: unknown } | undefined;

function formStats(r: CounterColumns): FormStats {
  const views = Number(r?.views ?? 0);
  const submissions = Number(r?.submissions ?? 0);
  return {
    views,
    submissions,
    confirmations: Number(r?.confirmations ?? 0),
    conversion: views > 0 ? Math.round((submissions / views) * 10_000) / 10_000 : null,
  };
}

export async function getCounters(db: Executor, workspaceId: string, formId: string): Promise<FormStats> {
  const r = await db
    .selectFrom('form_counters')
    .select(['views', 'submissions', 'confirmations'])
    .where('workspace_id', '=', workspaceId)
    .where('form_id', '=', formId)
    .executeTakeFirst();
  return formStats(r);
}
