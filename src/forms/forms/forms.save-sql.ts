import { sql } from 'kysely';
import type { Executor } from '../../db/connection.js';
import { Precompiled } from '../../db/precompiled.js';
import { FORM_COLUMNS, settingsToColumn, toForm, type FormValues } from './forms.repository.js';
import type { Form } from './forms.schemas.js';

/**
 * The form save's one statement, PUT /v1/forms/{id} being the API's busiest write: the edit of a draft's own fields
 * (names, texts, SEO fields, settings without questions), which needs nothing else read or written. One fixed
 * statement, built and compiled once per database: each column is set behind a '1'/'0' flag (no parameter needs a type
 * on PostgreSQL), so any set of fields runs the same SQL text. Building and compiling the query on each save cost
 * ~24 µs of CPU per request, a third of the request (bench/README.md, "bench:api", issue 30).
 */
export type DraftEdit = Partial<
  Pick<
    FormValues,
    'name' | 'description' | 'display' | 'settings' | 'seoTitle' | 'seoDescription' | 'seoImageUrl' | 'seoFaviconUrl'
  >
>;

const EDITABLE = [
  ['name', 'name'],
  ['description', 'description'],
  ['display', 'display'],
  ['settings', 'settings'],
  ['seoTitle', 'seo_title'],
  ['seoDescription', 'seo_description'],
  ['seoImageUrl', 'seo_image_url'],
  ['seoFaviconUrl', 'seo_favicon_url'],
] as const;

const FIELDS: ReadonlySet<string> = new Set(EDITABLE.map(([field]) => field));

/** Whether the statement covers every field of `values` (a field it does not set would be lost). */
export function isDraftEdit(values: Partial<FormValues>): values is DraftEdit {
  return Object.keys(values).every((k) => FIELDS.has(k));
}

const saveDraft = new Precompiled((db, param) =>
  db
    .updateTable('forms')
    .set((eb) => ({
      ...Object.fromEntries(
        EDITABLE.map(([field, column]) => [
          column,
          sql`case when ${param(`set_${field}`)} = '1' then ${param(field)} else ${eb.ref(column)} end`,
        ]),
      ),
      updated_at: param('updatedAt'),
    }))
    .where('workspace_id', '=', param('workspaceId'))
    .where('id', '=', param('id'))
    .where('status', '=', 'DRAFT')
    .returning(FORM_COLUMNS),
);

/**
 * Applies `edit` to the form if it is a DRAFT and returns it, or returns undefined (missing, or not a draft) for the
 * caller to explain.
 */
export async function saveDraftEdit(
  db: Executor,
  workspaceId: string,
  id: string,
  edit: DraftEdit,
  updatedAt: string,
): Promise<Form | undefined> {
  const values: Record<string, unknown> = { workspaceId, id, updatedAt };
  for (const [field] of EDITABLE) {
    const value = edit[field];
    values[`set_${field}`] = value !== undefined ? '1' : '0';
    values[field] = value === undefined ? null : field === 'settings' ? settingsToColumn(edit.settings!) : value;
  }
  const row = await saveDraft.executeTakeFirst(db, values);
  return row ? toForm(row) : undefined;
}
