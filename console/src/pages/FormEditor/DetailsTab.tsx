/** A form's details: name, type, slug, field mapping, success action, questions and appearance, protection; saved together. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import { formKeys } from '../../api/keys';
import type { paths } from '../../api/generated/schema';
import { Button, Checkbox, ErrorSummary, Input, Select, Textarea, useToast } from '../../components';
import { nullable, problemOf } from '../../lib/forms';
import { useTemplates } from '../../lib/hooks';
import { FORM_TYPES, type Form } from '../Forms/form';
import { AppearanceFieldset, appearanceBody, appearanceDraft } from './AppearanceFieldset';
import { QuestionsFieldset, questionRows, questionsBody } from './QuestionsFieldset';
import { ProtectionFieldset } from './FormProtection';

type UpdateBody = NonNullable<paths['/v1/forms/{formId}']['put']['requestBody']>['content']['application/json'];

const PROPERTIES = ['email', 'firstName', 'lastName'];

interface MappingRow {
  key: number;
  field: string;
  property: string;
}
let rowKey = 1;

function toRows(mapping: Record<string, string>): MappingRow[] {
  return Object.entries(mapping).map(([field, property]) => ({ key: rowKey++, field, property }));
}

export function DetailsTab({ form, editable }: { form: Form; editable: boolean }) {
  const qc = useQueryClient();
  const toast = useToast();
  const templates = useTemplates();
  const [name, setName] = useState(form.name);
  const [description, setDescription] = useState(form.description ?? '');
  const [type, setType] = useState(form.type);
  const [display, setDisplay] = useState<string>(form.display ?? '');
  const [rows, setRows] = useState<MappingRow[]>(() => toRows(form.fieldMapping));
  const [action, setAction] = useState(form.settings.successAction.type);
  const [message, setMessage] = useState(form.settings.successAction.message ?? 'Thanks for signing up!');
  const [url, setUrl] = useState(form.settings.successAction.url ?? '');
  const [doi, setDoi] = useState(form.settings.doubleOptIn);
  const [template, setTemplate] = useState(form.doubleOptInEmailId ?? '');
  const [seoTitle, setSeoTitle] = useState(form.seoTitle ?? '');
  const [seoDescription, setSeoDescription] = useState(form.seoDescription ?? '');
  const [seoImage, setSeoImage] = useState(form.seoImageUrl ?? '');
  const [seoFavicon, setSeoFavicon] = useState(form.seoFaviconUrl ?? '');
  const [slug, setSlug] = useState(form.slug ?? '');
  const [look, setLook] = useState(() => appearanceDraft(form.settings.appearance));
  const [questions, setQuestions] = useState(() => questionRows(form.settings.fields));
  const [proofOfWork, setProofOfWork] = useState(Boolean(form.settings.protection?.proofOfWork));
  const [captureTimezone, setCaptureTimezone] = useState(Boolean(form.settings.captureTimezone));

  const body = (): UpdateBody => ({
    name: name.trim(),
    description: nullable(description),
    type,
    display: (display || null) as UpdateBody['display'],
    fieldMapping: Object.fromEntries(
      rows.filter((r) => r.field.trim()).map((r) => [r.field.trim(), r.property.trim()]),
    ),
    settings: {
      successAction: action === 'MESSAGE' ? { type: 'MESSAGE', message } : { type: 'REDIRECT', url: url.trim() },
      doubleOptIn: doi,
      appearance: appearanceBody(look),
      fields: questionsBody(questions),
      // Kept on every save: a PUT replaces the settings whole.
      protection: { proofOfWork },
      captureTimezone,
    },
    doubleOptInEmailId: doi && template ? template : null,
    seoTitle: nullable(seoTitle),
    seoDescription: nullable(seoDescription),
    seoImageUrl: nullable(seoImage),
    seoFaviconUrl: nullable(seoFavicon),
    slug: nullable(slug),
  });

  const save = useMutation({
    mutationFn: async () =>
      unwrap(await api.PUT('/v1/forms/{formId}', { params: { path: { formId: form.id } }, body: body() })),
    onSuccess: (f) => {
      qc.setQueryData(formKeys.detail(form.id), f);
      void qc.invalidateQueries({ queryKey: formKeys.lists() });
      toast.success('Form saved.');
    },
  });
  const {
    fields,
    message: problem,
    rest,
  } = problemOf(save.error, {
    '/name': 'Name',
    '/description': 'Description',
    '/type': 'Type',
    '/display': 'Display when embedded',
    '/settings/successAction/message': 'Message',
    '/settings/successAction/url': 'Redirect URL',
    '/doubleOptInEmailId': 'Confirmation email template',
    '/seoTitle': 'Page title',
    '/seoDescription': 'Meta description',
    '/seoImageUrl': 'Share image URL',
    '/seoFaviconUrl': 'Favicon URL',
    '/slug': {
      label: 'Slug',
      messages: { pattern: 'Slug can use lowercase letters, digits and hyphens only (like “spring-offer”).' },
    },
    '/fieldMapping/*': 'Form field',
    '/settings/appearance/**': 'Appearance',
    '/settings/fields/**': 'Question',
  });
  const mappingError = Object.entries(fields).find(([p]) => p.startsWith('/fieldMapping'));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  const mappedNames = useMemo(() => rows.map((r) => r.field.trim()).filter(Boolean), [rows]);
  const preview = useMemo(
    () => ({
      type,
      seoTitle: nullable(seoTitle),
      fieldMapping: Object.fromEntries(
        rows.filter((r) => r.field.trim()).map((r) => [r.field.trim(), r.property.trim()]),
      ),
      settings: { appearance: appearanceBody(look) ?? undefined, fields: questionsBody(questions) ?? undefined },
    }),
    [type, seoTitle, rows, look, questions],
  );
  const origin = location.origin;

  return (
    <form className="stack" onSubmit={submit} noValidate>
      <ErrorSummary message={problem} errors={rest} />
      <fieldset disabled={!editable} className="card stack">
        <legend>General</legend>
        <Input
          label="Name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          required
          maxLength={200}
          error={fields['/name']}
        />
        <Textarea
          label="Description"
          hint="For you and your team; not shown to visitors."
          value={description}
          onChange={(e) => setDescription(e.target.value)}
          rows={2}
          maxLength={2000}
          error={fields['/description']}
        />
        <div className="grid-2">
          <Select
            label="Type"
            value={type}
            onChange={(e) => setType(e.target.value as Form['type'])}
            options={FORM_TYPES}
            error={fields['/type']}
          />
          <Select
            label="Display when embedded"
            value={display}
            onChange={(e) => setDisplay(e.target.value)}
            error={fields['/display']}
            options={[
              { value: '', label: 'Default (inline)' },
              { value: 'INLINE_EMBED', label: 'Inline where the script stands' },
              { value: 'POPUP', label: 'Popup dialog' },
            ]}
          />
        </div>
      </fieldset>

      <fieldset disabled={!editable} className="card stack">
        <legend>Fields</legend>
        <p className="muted small">
          Each form field fills a contact property: <code>email</code>, <code>firstName</code>, <code>lastName</code> or
          a custom key. Field names: a letter, then letters, digits or <code>_</code>.
        </p>
        {rows.length === 0 && (
          <p className="muted">
            No fields. A sign-up form needs at least <code>email → email</code>.
          </p>
        )}
        {rows.map((r, i) => (
          <div className="mapping-row" key={r.key}>
            <Input
              label={`Form field ${i + 1}`}
              value={r.field}
              onChange={(e) => setRows((rs) => rs.map((x) => (x.key === r.key ? { ...x, field: e.target.value } : x)))}
              placeholder="e.g. first_name"
              error={fields[`/fieldMapping/${r.field}`]}
            />
            <span className="mapping-arrow" aria-hidden="true">
              →
            </span>
            <Input
              label={`Contact property ${i + 1}`}
              value={r.property}
              list="contact-properties"
              onChange={(e) =>
                setRows((rs) => rs.map((x) => (x.key === r.key ? { ...x, property: e.target.value } : x)))
              }
              placeholder="e.g. firstName"
            />
            <Button
              variant="ghost"
              onClick={() => setRows((rs) => rs.filter((x) => x.key !== r.key))}
              aria-label={`Remove field ${r.field || i + 1}`}
            >
              Remove
            </Button>
          </div>
        ))}
        <datalist id="contact-properties">
          {PROPERTIES.map((p) => (
            <option key={p} value={p} />
          ))}
        </datalist>
        {mappingError && (
          <p className="error" role="alert">
            {mappingError[0]}: {mappingError[1]}
          </p>
        )}
        <div>
          <Button size="sm" onClick={() => setRows((rs) => [...rs, { key: rowKey++, field: '', property: '' }])}>
            Add field
          </Button>
        </div>
      </fieldset>

      <QuestionsFieldset
        rows={questions}
        onChange={setQuestions}
        mapped={mappedNames}
        errors={fields}
        disabled={!editable}
      />

      <AppearanceFieldset draft={look} onChange={setLook} preview={preview} errors={fields} disabled={!editable} />

      <fieldset disabled={!editable} className="card stack">
        <legend>After a submission</legend>
        <Select
          label="Success action"
          value={action}
          onChange={(e) => setAction(e.target.value as 'MESSAGE' | 'REDIRECT')}
          options={[
            { value: 'MESSAGE', label: 'Show a message' },
            { value: 'REDIRECT', label: 'Redirect to a page' },
          ]}
        />
        {action === 'MESSAGE' ? (
          <Textarea
            label="Message"
            value={message}
            onChange={(e) => setMessage(e.target.value)}
            rows={2}
            maxLength={2000}
            hint={'The answers can appear in it: {{ first_name | default: "friend" }} for the field first_name.'}
            error={fields['/settings/successAction/message']}
          />
        ) : (
          <Input
            label="Redirect URL"
            type="url"
            value={url}
            onChange={(e) => setUrl(e.target.value)}
            placeholder="https://example.com/thanks"
            error={fields['/settings/successAction/url']}
          />
        )}
        <Checkbox
          label="Double opt-in"
          hint="New contacts get an email with a confirmation link and are subscribed only once they confirm."
          checked={doi}
          onChange={(e) => setDoi(e.target.checked)}
        />
        {doi && (
          <Select
            label="Confirmation email template"
            value={template}
            onChange={(e) => setTemplate(e.target.value)}
            error={fields['/doubleOptInEmailId']}
            hint={
              templates.isError
                ? 'The templates could not be loaded.'
                : 'The template needs a {{ confirm_url }} link. Without one, the built-in email is sent.'
            }
            options={[
              { value: '', label: 'Built-in confirmation email' },
              ...(templates.data ?? []).map((t) => ({ value: t.id, label: t.name })),
            ]}
          />
        )}
        <Checkbox
          label="Keep the visitor’s time zone"
          hint="The embedded form sends the browser's time zone, and a new contact gets it, so local-time broadcasts reach them at the right hour. The hosted page runs no script and sends none."
          checked={captureTimezone}
          onChange={(e) => setCaptureTimezone(e.target.checked)}
        />
      </fieldset>

      <ProtectionFieldset enabled={proofOfWork} onChange={setProofOfWork} disabled={!editable} />

      <fieldset disabled={!editable} className="card stack">
        <legend>Address and search engines</legend>
        <Input
          label="Slug"
          hint={`The hosted page's address: ${origin}/f/${slug || 'your-slug'}. Lower-case letters, digits and hyphens.`}
          value={slug}
          onChange={(e) => setSlug(e.target.value.toLowerCase())}
          maxLength={100}
          error={fields['/slug']}
        />
        <div className="grid-2">
          <div className="stack">
            <Input
              label="Page title"
              value={seoTitle}
              onChange={(e) => setSeoTitle(e.target.value)}
              maxLength={200}
              error={fields['/seoTitle']}
              hint={`${seoTitle.length}/200 · search results show about 60 characters`}
            />
            <Textarea
              label="Meta description"
              value={seoDescription}
              onChange={(e) => setSeoDescription(e.target.value)}
              rows={3}
              maxLength={500}
              error={fields['/seoDescription']}
              hint={`${seoDescription.length}/500 · about 155 are shown`}
            />
            <Input
              label="Share image URL"
              type="url"
              value={seoImage}
              onChange={(e) => setSeoImage(e.target.value)}
              placeholder="https://…"
              error={fields['/seoImageUrl']}
            />
            <Input
              label="Favicon URL"
              type="url"
              value={seoFavicon}
              onChange={(e) => setSeoFavicon(e.target.value)}
              placeholder="https://…"
              error={fields['/seoFaviconUrl']}
            />
          </div>
          <div className="stack-sm">
            <span className="label cell-main" id="serp-label">
              Search result preview
            </span>
            <div className="serp" role="img" aria-labelledby="serp-label" aria-describedby="serp-text">
              <div className="serp-url">
                {origin.replace(/^https?:\/\//, '')} › f › {slug || 'your-slug'}
              </div>
              <div className="serp-title">
                {(seoTitle || name).slice(0, 65)}
                {(seoTitle || name).length > 65 ? '…' : ''}
              </div>
              <div className="serp-desc">
                {seoDescription
                  ? `${seoDescription.slice(0, 158)}${seoDescription.length > 158 ? '…' : ''}`
                  : 'Add a description: search engines show it under the title.'}
              </div>
            </div>
            <p id="serp-text" className="visually-hidden">
              {seoTitle || name}. {seoDescription}
            </p>
          </div>
        </div>
      </fieldset>

      {editable && (
        <div className="form-actions">
          <Button type="submit" variant="primary" loading={save.isPending}>
            Save changes
          </Button>
        </div>
      )}
    </form>
  );
}
