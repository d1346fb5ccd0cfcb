import { sql } from 'kysely';
import type { Executor } from '../../db/connection.js';
import type { TemplatesTable } from '../../db/schema.js';
import { fromJsonColumn, toJsonColumn } from '../../lib/json.js';
import { toIso } from '../../lib/time.js';
import type { Template } from './templates.schemas.js';

const COLUMNS = [
  'id',
  'name',
  'alias',
  'version',
  'subject',
  'html',
  'text',
  'editor_content',
  'created_at',
  'updated_at',
] as const;

function toTemplate(
  r: Omit<Pick<TemplatesTable, (typeof COLUMNS)[number]>, 'version'> & { version: number },
): Template {
  return {
    id: r.id,
    name: r.name,
    alias: r.alias,
    version: Number(r.version),
    subject: r.subject,
    html: r.html,
    text: r.text,
    editorContent: fromJsonColumn(r.editor_content),
    createdAt: toIso(r.created_at),
    updatedAt: toIso(r.updated_at),
  };
}

export async function templateExists(db: Executor, workspaceId: string, id: string): Promise<boolean> {
  const row = await db
    .selectFrom('templates')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row !== undefined;
}

export async function getTemplate(db: Executor, workspaceId: string, id: string): Promise<Template | undefined> {
  const r = await db
    .selectFrom('templates')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return r ? toTemplate(r) : undefined;
}

export async function listTemplates(
  db: Executor,
  workspaceId: string,
  limit: number,
  beforeId?: string,
): Promise<Template[]> {
  let q = db.selectFrom('templates').select(COLUMNS).where('workspace_id', '=', workspaceId);
  if (beforeId) q = q.where('id', '<', beforeId);
  return (await q.orderBy('id', 'desc').limit(limit).execute()).map(toTemplate);
}

export async function insertTemplate(db: Executor, workspaceId: string, t: Template): Promise<void> {
  await db
    .insertInto('templates')
    .values({
      id: t.id,
      workspace_id: workspaceId,
      name: t.name,
      alias: t.alias,
      version: t.version,
      subject: t.subject,
      html: t.html,
      text: t.text,
      editor_content: toJsonColumn(t.editorContent),
      created_at: t.createdAt,
      updated_at: t.updatedAt,
    })
    .execute();
  await insertTemplateVersion(db, workspaceId, t);
}

/** A version's content, kept (template_versions): what an email that used it was rendered from. */
export async function insertTemplateVersion(
  db: Executor,
  workspaceId: string,
  t: Pick<Template, 'id' | 'version' | 'subject' | 'html' | 'text' | 'updatedAt'>,
): Promise<void> {
  await db
    .insertInto('template_versions')
    .values({
      template_id: t.id,
      version: t.version,
      workspace_id: workspaceId,
      subject: t.subject,
      html: t.html,
      text: t.text,
      created_at: t.updatedAt,
    })
    .execute();
}

/** One kept version of a template (docs/emails.md: a re-render uses what was sent). */
export async function getTemplateVersion(
  db: Executor,
  workspaceId: string,
  id: string,
  version: number,
): Promise<{ subject: string | null; html: string | null; text: string | null } | undefined> {
  return db
    .selectFrom('template_versions')
    .select(['subject', 'html', 'text'])
    .where('workspace_id', '=', workspaceId)
    .where('template_id', '=', id)
    .where('version', '=', version)
    .executeTakeFirst();
}

export async function updateTemplate(
  db: Executor,
  workspaceId: string,
  id: string,
  values: Partial<Pick<Template, 'name' | 'alias' | 'subject' | 'html' | 'text' | 'editorContent'>>,
  updatedAt: string,
  opts: { newVersion?: boolean } = {},
): Promise<Template | undefined> {
  const { editorContent, ...columns } = values;
  const r = await db
    .updateTable('templates')
    .set({
      ...columns,
      ...(editorContent !== undefined ? { editor_content: toJsonColumn(editorContent) } : {}),
      ...(opts.newVersion ? { version: sql<number>`version + 1` } : {}),
      updated_at: updatedAt,
    })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .returning(COLUMNS)
    .executeTakeFirst();
  return r ? toTemplate(r) : undefined;
}

export async function deleteTemplate(db: Executor, workspaceId: string, id: string): Promise<boolean> {
  const res = await db
    .deleteFrom('templates')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** A template by its id or its alias, with its current version (what a transactional email renders: docs/emails.md). */
export async function findTemplateByIdOrAlias(
  db: Executor,
  workspaceId: string,
  idOrAlias: string,
): Promise<
  { id: string; version: number; subject: string | null; html: string | null; text: string | null } | undefined
> {
  const r = await db
    .selectFrom('templates')
    .select(['id', 'version', 'subject', 'html', 'text'])
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('id', '=', idOrAlias), eb('alias', '=', idOrAlias)]))
    .executeTakeFirst();
  return r ? { ...r, version: Number(r.version) } : undefined;
}
