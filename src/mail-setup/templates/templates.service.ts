import { SYSTEM_ACTOR, recordAudit, type AuditActor } from '../../outbox/index.js';
import { type Db, isForeignKeyViolation, isUniqueViolation } from '../../db/connection.js';
import { conflict, notFound, payloadTooLarge, resourceInUse, validationFailed } from '../../errors/errors.js';
import { newId } from '../../lib/ids.js';
import { liquidErrors } from '../../lib/liquid.js';
import { nowIso } from '../../lib/time.js';
import { isBlockDocument } from '../../mail/blocks/grammar.js';
import { withRenderedDocument, type DocumentSettings } from '../../mail/documents.js';
import * as repo from './templates.repository.js';
import type { CreateTemplateInput, Template, UpdateTemplateInput } from './templates.schemas.js';

export const MAX_BODY_BYTES = 2 * 1024 * 1024;

/** html and text up to 2 MiB each (as for broadcasts); every template must parse as Liquid. */
function checkContent(input: { subject?: string | null; html?: string | null; text?: string | null }, base = ''): void {
  for (const key of ['html', 'text'] as const) {
    const v = input[key];
    if (v != null && Buffer.byteLength(v, 'utf8') > MAX_BODY_BYTES)
      throw payloadTooLarge(`${key} must be at most 2 MiB`);
  }
  const errors = liquidErrors({ subject: input.subject, html: input.html, text: input.text }, base);
  if (errors.length) throw validationFailed(errors);
}

/**
 * What a write stores (contract §16): a block document in `editorContent` is checked (422 at its pointers under
 * /editorContent) and rendered to the html and text stored, whatever html or text the write sent; then the usual
 * checks apply to what is stored.
 */
async function storedContent<T extends CreateTemplateInput | UpdateTemplateInput>(
  input: T,
  settings: DocumentSettings,
  lang: () => Promise<string | undefined>,
): Promise<T> {
  const stored = await withRenderedDocument(input, '', settings, lang);
  checkContent(stored);
  return stored;
}

/**
 * What templates need of the installation and of the contexts above (passed in by the root): the renderer's settings,
 * and the workspace's locale (a port: the workspace is Access's, above Mail setup), the language a block document is
 * rendered in.
 */
export interface TemplateSettings extends DocumentSettings {
  localeOf: (workspaceId: string) => Promise<string | undefined>;
}

export class TemplatesService {
  constructor(
    private readonly db: Db,
    private readonly settings: TemplateSettings,
  ) {}

  async create(workspaceId: string, given: CreateTemplateInput): Promise<Template> {
    const input = await storedContent(given, this.settings, () => this.settings.localeOf(workspaceId));
    const now = nowIso();
    const t: Template = {
      id: newId('tmpl'),
      name: input.name,
      alias: input.alias ?? null,
      version: 1,
      subject: input.subject ?? null,
      html: input.html ?? null,
      text: input.text ?? null,
      editorContent: input.editorContent ?? null,
      createdAt: now,
      updatedAt: now,
    };
    await this.aliasChecked(() =>
      this.db.kysely.transaction().execute((trx) => repo.insertTemplate(trx, workspaceId, t)),
    );
    return t;
  }

  async get(workspaceId: string, id: string): Promise<Template> {
    const t = await repo.getTemplate(this.db.kysely, workspaceId, id);
    if (!t) throw notFound('template');
    return t;
  }

  list(workspaceId: string, limit: number, beforeId?: string): Promise<Template[]> {
    return repo.listTemplates(this.db.kysely, workspaceId, limit, beforeId);
  }

  async update(workspaceId: string, id: string, input: UpdateTemplateInput): Promise<Template> {
    if (input.id !== undefined && input.id !== id)
      throw validationFailed([{ path: '/id', message: 'must equal the template id in the path' }]);
    // Partial: a write that leaves a stored block document in place keeps the html and text rendered from it (an html
    // or text sent beside it is ignored, as beside a document sent). `editorContent: null` drops the document first.
    let given: UpdateTemplateInput = input;
    if (input.editorContent === undefined && (input.html !== undefined || input.text !== undefined)) {
      const current = await repo.getTemplate(this.db.kysely, workspaceId, id);
      if (current && isBlockDocument(current.editorContent)) {
        const { html: _html, text: _text, ...rest } = input;
        given = rest;
      }
    }
    const { id: _id, ...values } = await storedContent(given, this.settings, () => this.settings.localeOf(workspaceId));
    const t = await this.aliasChecked(() =>
      this.db.kysely.transaction().execute(async (trx) => {
        // A change of what is sent (subject, html, text) is a new version; the old ones are kept (docs/emails.md).
        const current = await repo.getTemplate(trx, workspaceId, id);
        if (!current) return undefined;
        const changed = (['subject', 'html', 'text'] as const).some(
          (key) => values[key] !== undefined && values[key] !== current[key],
        );
        const updated = await repo.updateTemplate(trx, workspaceId, id, values, nowIso(), { newVersion: changed });
        if (updated && changed) await repo.insertTemplateVersion(trx, workspaceId, updated);
        return updated;
      }),
    );
    if (!t) throw notFound('template');
    return t;
  }

  /** A write that gives an alias another template of the workspace has: 409 alias_taken. */
  private async aliasChecked<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('alias_taken', 'another template of this workspace has this alias');
      throw err;
    }
  }

  async remove(workspaceId: string, id: string, actor: AuditActor = SYSTEM_ACTOR): Promise<void> {
    try {
      await this.db.kysely.transaction().execute(async (trx) => {
        const template = await repo.getTemplate(trx, workspaceId, id);
        if (!template || !(await repo.deleteTemplate(trx, workspaceId, id))) throw notFound('template');
        await recordAudit(trx, workspaceId, actor, {
          action: 'template.deleted',
          target: { type: 'template', id, label: template.name },
        });
      });
    } catch (err) {
      if (isForeignKeyViolation(err))
        throw resourceInUse('a form uses this template as its double opt-in email; point the form elsewhere first');
      throw err;
    }
  }
}
