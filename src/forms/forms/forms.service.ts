import { SYSTEM_ACTOR, recordAudit, type AuditActor } from '../../outbox/index.js';
import { type Db, type Executor, isUniqueViolation } from '../../db/connection.js';
import {
  conflict,
  notFound,
  payloadTooLarge,
  unprocessable,
  validationFailed,
  type FieldError,
} from '../../errors/errors.js';
import { newId } from '../../lib/ids.js';
import { normalHttpUrl } from '../../lib/url.js';
import { nowIso } from '../../lib/time.js';
import { firstVerifiedDomain, getTemplate, templateExists } from '../../mail-setup/index.js';
import { MAX_HTML_BYTES, crossValidate, renderDefaultHtml, sanitizeFormHtml } from './forms.html.js';
import { publishedFormsChanged } from './forms.published.js';
import { successMessageErrors } from './forms.success.js';
import * as repo from './forms.repository.js';
import { isDraftEdit, saveDraftEdit } from './forms.save-sql.js';
import {
  RESERVED_FIELD_PREFIX,
  type CreateFormInput,
  type FieldDefinition,
  type Form,
  type FormAppearance,
  type FormHtml,
  type FormSettings,
  type FormStatus,
  type UpdateFormInput,
} from './forms.schemas.js';
import { transition } from './forms.state.js';

export const DEFAULT_SUCCESS_MESSAGE = 'Thanks! Your submission has been received.';

/** Settings as stored: both keys always present (docs/api.md §4 defaults). */
export function normalizeSettings(input: UpdateFormInput['settings'] | undefined): FormSettings {
  const action = input?.successAction ?? { type: 'MESSAGE' as const };
  const errors: FieldError[] = [];
  if (action.type === 'MESSAGE' && action.url !== undefined)
    errors.push({ path: '/settings/successAction/url', message: 'is only for a REDIRECT success action' });
  if (action.type === 'REDIRECT' && action.message !== undefined)
    errors.push({ path: '/settings/successAction/message', message: 'is only for a MESSAGE success action' });
  if (action.type === 'REDIRECT' && action.url === undefined)
    errors.push({ path: '/settings/successAction/url', message: 'is required for a REDIRECT success action' });
  // The message is Liquid over the submission's answers (forms.success.ts): one that does not parse is refused now.
  if (action.type === 'MESSAGE') errors.push(...successMessageErrors(action.message));
  const fields = input?.fields ?? undefined;
  if (fields) errors.push(...fieldProblems(fields));
  if (errors.length) throw validationFailed(errors);
  const appearance = normalizeAppearance(input?.appearance ?? undefined);
  return {
    successAction:
      action.type === 'MESSAGE'
        ? { type: 'MESSAGE', message: action.message ?? DEFAULT_SUCCESS_MESSAGE }
        : { type: 'REDIRECT', url: normalUrl(action.url!) },
    doubleOptIn: input?.doubleOptIn ?? false,
    ...(appearance ? { appearance } : {}),
    ...(fields && Object.keys(fields).length ? { fields } : {}),
    ...(input?.protection ? { protection: { proofOfWork: input.protection.proofOfWork } } : {}),
    ...(input?.captureTimezone ? { captureTimezone: true } : {}),
  };
}

/**
 * A URL as stored: its WHATWG serialisation (punycode host, percent-encoded path), which a Location header or an
 * attribute carries as it is. The schema's `http-url` format has refused whatever has none (normalHttpUrl).
 */
function normalUrl(url: string): string {
  return normalHttpUrl(url) ?? url;
}

/** The URL fields of a form's configuration, each as stored (normalUrl); null and undefined kept. */
function normalizeUrls<T extends { seoImageUrl?: string | null; seoFaviconUrl?: string | null }>(values: T): T {
  const out = { ...values };
  if (typeof out.seoImageUrl === 'string') out.seoImageUrl = normalUrl(out.seoImageUrl);
  if (typeof out.seoFaviconUrl === 'string') out.seoFaviconUrl = normalUrl(out.seoFaviconUrl);
  return out;
}

const pointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** The rules of `settings.fields` a schema cannot say (docs/forms.md, "Fields"). */
function fieldProblems(fields: Record<string, FieldDefinition>): FieldError[] {
  const errors: FieldError[] = [];
  for (const [name, f] of Object.entries(fields)) {
    const at = `/settings/fields/${pointer(name)}`;
    if (name.startsWith(RESERVED_FIELD_PREFIX))
      errors.push({
        path: at,
        message: `field names starting with "${RESERVED_FIELD_PREFIX}" are reserved for the service`,
      });
    const choice = f.type === 'select' || f.type === 'radio' || f.type === 'checkbox';
    if ((f.type === 'select' || f.type === 'radio') && !f.options)
      errors.push({ path: `${at}/options`, message: `is required for a ${f.type} field` });
    if (!choice && f.options)
      errors.push({ path: `${at}/options`, message: 'is only for select, radio and checkbox fields' });
    if (f.options) {
      const seen = new Set<string>();
      f.options.forEach((o, i) => {
        if (seen.has(o)) errors.push({ path: `${at}/options/${i}`, message: `"${o}" is listed twice` });
        seen.add(o);
      });
    }
    if (f.placeholder !== undefined && (f.type === 'radio' || f.type === 'checkbox'))
      errors.push({ path: `${at}/placeholder`, message: `a ${f.type} field shows no placeholder` });
  }
  return errors;
}

function normalizeAppearance(input: FormAppearance | undefined): FormAppearance | undefined {
  if (!input) return undefined;
  const out: FormAppearance = { ...input };
  if (out.brandColor) out.brandColor = out.brandColor.toLowerCase();
  if (out.logoUrl) out.logoUrl = normalUrl(out.logoUrl);
  return Object.keys(out).length ? out : undefined;
}

function checkFieldMapping(mapping: Record<string, string>): void {
  // `_fc…` names are the service's own controls (the honeypot `_fc_hp`, the consent box `_fc_consent`, the challenge).
  const reserved = Object.keys(mapping).filter((k) => k.startsWith('_fc'));
  if (reserved.length)
    throw validationFailed(
      reserved.map((f) => ({
        path: `/fieldMapping/${f.replace(/~/g, '~0').replace(/\//g, '~1')}`,
        message: "names starting with _fc are reserved for the service's own controls",
      })),
    );
  const emailFields = Object.keys(mapping).filter((k) => mapping[k] === 'email');
  if (emailFields.length > 1) {
    throw validationFailed(
      emailFields.slice(1).map((f) => ({
        path: `/fieldMapping/${f.replace(/~/g, '~0').replace(/\//g, '~1')}`,
        message: `maps to email, but "${emailFields[0]}" already does: at most one field maps to email`,
      })),
    );
  }
}

/** A question mapped to the contact's email must be an email field. */
function mappingProblems(
  mapping: Record<string, string>,
  fields: Record<string, FieldDefinition> | undefined,
): FieldError[] {
  return Object.entries(fields ?? {})
    .filter(([field, def]) => mapping[field] === 'email' && def.type !== 'email')
    .map(([field]) => ({
      path: `/settings/fields/${pointer(field)}/type`,
      message: `"${field}" is mapped to email, so its type must be email`,
    }));
}

/** What publishing needs (422 form_incomplete lists each missing item). */
function publishProblems(form: Form): FieldError[] {
  const problems: FieldError[] = [];
  if (form.type === 'SIGN_UP' && !Object.values(form.fieldMapping).includes('email')) {
    problems.push({ path: '/fieldMapping', message: 'a SIGN_UP form needs a field mapped to email' });
  }
  problems.push(...mappingProblems(form.fieldMapping, form.settings.fields));
  if (form.htmlValidation && !form.htmlValidation.valid) {
    for (const e of form.htmlValidation.errors)
      problems.push({ path: '/htmlValidation', message: `${e.code}: ${e.field}` });
  }
  return problems;
}

export class FormsService {
  constructor(private readonly db: Db) {}

  private tx<T>(fn: (trx: Executor) => Promise<T>): Promise<T> {
    return this.db.kysely.transaction().execute(fn);
  }

  private async mustGet(db: Executor, workspaceId: string, id: string): Promise<Form> {
    const form = await repo.getForm(db, workspaceId, id);
    if (!form) throw notFound('form');
    return form;
  }

  private async checkTemplate(db: Executor, workspaceId: string, id: string | null | undefined): Promise<void> {
    if (id && !(await templateExists(db, workspaceId, id))) {
      throw unprocessable('invalid_reference', `doubleOptInEmailId names no template of this workspace`, [
        { path: '/doubleOptInEmailId', message: 'names no template of this workspace' },
      ]);
    }
  }

  /** A slug belongs to one form group; the group's versions share it. It is unique across workspaces (see claimSlug). */
  private async claimSlug(
    db: Executor,
    workspaceId: string,
    slug: string | null | undefined,
    groupId: string,
  ): Promise<void> {
    if (!slug) return;
    if (!(await repo.claimSlug(db, workspaceId, slug, groupId)))
      throw conflict('slug_taken', `the slug "${slug}" is already in use; slugs are public addresses (/f/{slug})`);
  }

  async create(workspaceId: string, given: CreateFormInput): Promise<Form> {
    const input = normalizeUrls(given);
    const fieldMapping = input.fieldMapping ?? {};
    checkFieldMapping(fieldMapping);
    const settings = normalizeSettings(input.settings);
    const mismatch = mappingProblems(fieldMapping, settings.fields);
    if (mismatch.length) throw validationFailed(mismatch);
    const id = newId('form');
    const groupId = newId('fgrp');
    const now = nowIso();
    await this.tx(async (trx) => {
      await this.checkTemplate(trx, workspaceId, input.doubleOptInEmailId);
      await repo.insertFormGroup(trx, workspaceId, groupId, now);
      await repo.insertForm(trx, {
        id,
        workspaceId,
        formGroupId: groupId,
        version: 1,
        previousVersionId: null,
        createdAt: now,
        name: input.name,
        description: input.description ?? null,
        type: input.type,
        display: input.display ?? null,
        fieldMapping,
        settings,
        doubleOptInEmailId: input.doubleOptInEmailId ?? null,
        seoTitle: input.seoTitle ?? null,
        seoDescription: input.seoDescription ?? null,
        seoImageUrl: input.seoImageUrl ?? null,
        seoFaviconUrl: input.seoFaviconUrl ?? null,
        slug: input.slug ?? null,
        html: null,
        htmlDeployedAt: null,
        htmlValidation: null,
      });
      await this.claimSlug(trx, workspaceId, input.slug, groupId);
    });
    return this.get(workspaceId, id);
  }

  get(workspaceId: string, id: string): Promise<Form> {
    return this.mustGet(this.db.kysely, workspaceId, id);
  }

  /** The form with its counters: hosted-page views, submissions, double opt-in confirmations. */
  async getWithStats(workspaceId: string, id: string): Promise<Form> {
    const form = await this.get(workspaceId, id);
    return { ...form, stats: await repo.getCounters(this.db.kysely, workspaceId, id) };
  }

  /** Double opt-in needs an email that can go out: a template that links confirm_url, and a domain to send from. */
  private async doubleOptInProblems(db: Executor, workspaceId: string, form: Form): Promise<FieldError[]> {
    if (!form.settings.doubleOptIn) return [];
    const problems: FieldError[] = [];
    if (form.doubleOptInEmailId) {
      const t = await getTemplate(db, workspaceId, form.doubleOptInEmailId);
      if (!t || !`${t.html ?? ''}${t.text ?? ''}`.includes('confirm_url')) {
        problems.push({
          path: '/doubleOptInEmailId',
          message: 'the confirmation template must link {{ confirm_url }}',
        });
      }
    }
    if (!(await firstVerifiedDomain(db, workspaceId))) {
      problems.push({
        path: '/settings/doubleOptIn',
        message: 'sending the confirmation email needs a verified domain in the workspace',
      });
    }
    return problems;
  }

  list(workspaceId: string, opts: { status?: FormStatus; limit: number; beforeId?: string }): Promise<Form[]> {
    return repo.listForms(this.db.kysely, workspaceId, opts);
  }

  async listVersions(workspaceId: string, id: string): Promise<Form[]> {
    const form = await this.get(workspaceId, id);
    return repo.listGroupVersions(this.db.kysely, workspaceId, form.formGroupId);
  }

  /**
   * Update Form (interface 4.1): DRAFT only; omitted fields unchanged, present ones replaced whole, null
   * clears; updatedAt always refreshed. With deployed HTML, a change of fieldMapping (or type) re-runs
   * the cross-validation and stores its result; the update is applied either way.
   */
  async update(workspaceId: string, id: string, input: UpdateFormInput): Promise<Form> {
    if (input.id !== undefined && input.id !== id)
      throw validationFailed([{ path: '/id', message: 'must equal the form id in the path' }]);
    if (input.fieldMapping) checkFieldMapping(input.fieldMapping);
    const { id: _id, settings, ...rest } = normalizeUrls(input);
    const values: Partial<repo.FormValues> = {
      ...rest,
      ...(settings !== undefined ? { settings: normalizeSettings(settings) } : {}),
    };
    // Most edits (names, texts, SEO fields, settings) touch this row only: one conditional UPDATE does it.
    // A miss (unknown form, or not a draft) falls through to the full path, which says which.
    const needsMore =
      input.slug !== undefined ||
      input.doubleOptInEmailId !== undefined ||
      input.fieldMapping !== undefined ||
      input.type !== undefined ||
      values.settings?.fields !== undefined; // questions are checked against the mapping
    if (!needsMore && isDraftEdit(values)) {
      const updated = await saveDraftEdit(this.db.kysely, workspaceId, id, values, nowIso());
      if (updated) return updated;
    }
    await this.tx(async (trx) => {
      const form = await this.mustGet(trx, workspaceId, id);
      transition(form.status, 'update');
      const mismatch = mappingProblems(
        input.fieldMapping ?? form.fieldMapping,
        (values.settings ?? form.settings).fields,
      );
      if (mismatch.length) throw validationFailed(mismatch);
      await this.checkTemplate(trx, workspaceId, input.doubleOptInEmailId);
      if (input.slug !== undefined) await this.claimSlug(trx, workspaceId, input.slug, form.formGroupId);
      const now = nowIso();
      let htmlValidation;
      if (input.fieldMapping !== undefined || input.type !== undefined || values.settings !== undefined) {
        const stored = await repo.getFormHtml(trx, workspaceId, id);
        if (stored?.html != null)
          htmlValidation = crossValidate(
            input.fieldMapping ?? form.fieldMapping,
            stored.html,
            now,
            values.settings ?? form.settings,
          );
      }
      if (!(await repo.updateDraftForm(trx, workspaceId, id, values, { htmlValidation, updatedAt: now }))) {
        throw conflict('form_not_editable', 'the form stopped being a draft while it was being updated');
      }
      if (input.slug !== undefined) await repo.releaseUnusedSlugs(trx, workspaceId, form.formGroupId);
    });
    return this.get(workspaceId, id);
  }

  async getHtml(workspaceId: string, id: string): Promise<FormHtml> {
    const form = await this.get(workspaceId, id);
    const stored = await repo.getFormHtml(this.db.kysely, workspaceId, id);
    if (stored?.html != null)
      return { html: stored.html, deployedAt: stored.deployedAt, htmlValidation: form.htmlValidation };
    return { html: renderDefaultHtml(form), deployedAt: null, htmlValidation: null };
  }

  /** Deploys custom HTML (sanitized) on a DRAFT and cross-validates the mapping against it; null removes it. */
  async deployHtml(workspaceId: string, id: string, html: string | null): Promise<FormHtml> {
    if (html !== null && Buffer.byteLength(html, 'utf8') > MAX_HTML_BYTES)
      throw payloadTooLarge('html must be at most 512 KiB');
    const clean = html === null ? null : sanitizeFormHtml(html);
    await this.tx(async (trx) => {
      const form = await this.mustGet(trx, workspaceId, id);
      transition(form.status, 'deployHtml');
      const now = nowIso();
      const validation = clean === null ? null : crossValidate(form.fieldMapping, clean, now, form.settings);
      await repo.setDraftFormHtml(
        trx,
        workspaceId,
        id,
        { html: clean, deployedAt: clean === null ? null : now },
        validation,
        now,
      );
    });
    return this.getHtml(workspaceId, id);
  }

  async remove(workspaceId: string, id: string, actor: AuditActor = SYSTEM_ACTOR): Promise<void> {
    await this.tx(async (trx) => {
      const form = await this.mustGet(trx, workspaceId, id);
      transition(form.status, 'delete');
      await repo.deleteDraftForm(trx, workspaceId, id);
      await recordAudit(trx, workspaceId, actor, {
        action: 'form.deleted',
        target: { type: 'form', id, label: form.name },
        changes: { status: { before: form.status, after: null } },
      });
      if ((await repo.countGroupVersions(trx, workspaceId, form.formGroupId)) === 0)
        await repo.deleteFormGroup(trx, workspaceId, form.formGroupId);
      else await repo.releaseUnusedSlugs(trx, workspaceId, form.formGroupId);
    });
  }

  /** A new DRAFT version of a PUBLISHED form: configuration and HTML copied, version + 1. */
  async createVersion(workspaceId: string, id: string): Promise<Form> {
    const newFormId = newId('form');
    try {
      await this.tx(async (trx) => {
        const current = await this.mustGet(trx, workspaceId, id);
        await repo.lockFormGroup(trx, workspaceId, current.formGroupId);
        const form = await this.mustGet(trx, workspaceId, id); // re-read under the group lock
        transition(form.status, 'createVersion');
        const draft = await repo.findGroupVersionByStatus(trx, workspaceId, form.formGroupId, 'DRAFT');
        if (draft)
          throw conflict('draft_version_exists', 'this form already has a draft version; edit or delete it', {
            draftId: draft.id,
          });
        const html = await repo.getFormHtml(trx, workspaceId, id);
        await repo.insertForm(trx, {
          id: newFormId,
          workspaceId,
          formGroupId: form.formGroupId,
          version: await repo.nextGroupVersion(trx, workspaceId, form.formGroupId),
          previousVersionId: form.id,
          createdAt: nowIso(),
          name: form.name,
          description: form.description,
          type: form.type,
          display: form.display,
          fieldMapping: form.fieldMapping,
          settings: form.settings,
          doubleOptInEmailId: form.doubleOptInEmailId,
          seoTitle: form.seoTitle,
          seoDescription: form.seoDescription,
          seoImageUrl: form.seoImageUrl,
          seoFaviconUrl: form.seoFaviconUrl,
          slug: form.slug,
          html: html?.html ?? null,
          htmlDeployedAt: html?.deployedAt ?? null,
          htmlValidation: form.htmlValidation,
        });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('draft_version_exists', 'this form already has a draft version');
      throw err;
    }
    return this.get(workspaceId, newFormId);
  }

  /**
   * Publishes a DRAFT, or an ARCHIVED version (a rollback). In one transaction, under the group's lock,
   * the group's PUBLISHED version becomes ARCHIVED; the partial unique index is the last word should two
   * publishes ever get past the lock.
   */
  async publish(workspaceId: string, id: string): Promise<Form> {
    try {
      await this.tx(async (trx) => {
        const first = await this.mustGet(trx, workspaceId, id);
        await repo.lockFormGroup(trx, workspaceId, first.formGroupId);
        const form = await this.mustGet(trx, workspaceId, id);
        transition(form.status, 'publish');
        const problems = [...publishProblems(form), ...(await this.doubleOptInProblems(trx, workspaceId, form))];
        if (problems.length) throw unprocessable('form_incomplete', 'the form cannot be published yet', problems);
        const now = nowIso();
        const current = await repo.findGroupVersionByStatus(trx, workspaceId, form.formGroupId, 'PUBLISHED');
        if (current) {
          transition(current.status, 'supersede');
          await repo.setFormStatus(trx, workspaceId, current.id, 'PUBLISHED', 'ARCHIVED', now);
        }
        if (!(await repo.setFormStatus(trx, workspaceId, id, form.status, 'PUBLISHED', now))) {
          throw conflict('invalid_state', 'the form changed while it was being published; retry');
        }
      });
    } catch (err) {
      if (isUniqueViolation(err))
        throw conflict('invalid_state', 'another version of this form was published at the same time; retry');
      throw err;
    } finally {
      // The public pages read the published version of a slug from a cache (forms.published.ts).
      publishedFormsChanged();
    }
    return this.get(workspaceId, id);
  }
}
