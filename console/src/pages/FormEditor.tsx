/**
 * One form: every field of Update Form, the custom HTML with its cross-validation, versions (publish and
 * roll back), the live preview of the hosted page with the embed snippet, submissions and stats.
 * Only a DRAFT can be changed; a published form gets a new draft version first.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, unwrap } from '../api/client';
import { formKeys } from '../api/keys';
import { useCan } from '../api/session';
import type { paths } from '../api/generated/schema';
import { CodeEditor } from '../components/CodeEditor';
import { Button, Checkbox, ConfirmDialog, CopyButton, CopyField, CursorTable, EmptyState, ErrorState, ErrorSummary, Input, PageHeader, QueryState, Select, Skeleton, StatusBadge, Tabs, Textarea, useCursorList, useToast, type Column } from '../components';
import { formatDateTime, formatNumber, percent } from '../lib/format';
import { nullable, otherErrors, problemOf } from '../lib/forms';
import { useTemplates } from '../lib/hooks';
import { FORM_TYPES, type Form } from './Forms';
import { AppearanceFieldset, QuestionsFieldset, ResultsTab, appearanceBody, appearanceDraft, questionRows, questionsBody } from './FormAppearance';
import { ProtectionFieldset, ReviewActions, SubmissionStatus } from './FormProtection';

type UpdateBody = NonNullable<paths['/v1/forms/{formId}']['put']['requestBody']>['content']['application/json'];
type Submission = paths['/v1/forms/{formId}/submissions']['get']['responses'][200]['content']['application/json']['data'][number];
type Validation = NonNullable<Form['htmlValidation']>;

const PROPERTIES = ['email', 'firstName', 'lastName'];

interface MappingRow { key: number; field: string; property: string }
let rowKey = 1;

function toRows(mapping: Record<string, string>): MappingRow[] {
  return Object.entries(mapping).map(([field, property]) => ({ key: rowKey++, field, property }));
}

/* ------------------------------------------------------------------ Details */

function DetailsTab({ form, editable }: { form: Form; editable: boolean }) {
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

  const body = (): UpdateBody => ({
    name: name.trim(),
    description: nullable(description),
    type,
    display: (display || null) as UpdateBody['display'],
    fieldMapping: Object.fromEntries(rows.filter((r) => r.field.trim()).map((r) => [r.field.trim(), r.property.trim()])),
    settings: {
      successAction: action === 'MESSAGE' ? { type: 'MESSAGE', message } : { type: 'REDIRECT', url: url.trim() },
      doubleOptIn: doi,
      appearance: appearanceBody(look),
      fields: questionsBody(questions),
      // Kept on every save: a PUT replaces the settings whole.
      protection: { proofOfWork },
    },
    doubleOptInEmailId: doi && template ? template : null,
    seoTitle: nullable(seoTitle),
    seoDescription: nullable(seoDescription),
    seoImageUrl: nullable(seoImage),
    seoFaviconUrl: nullable(seoFavicon),
    slug: nullable(slug),
  });

  const save = useMutation({
    mutationFn: async () => unwrap(await api.PUT('/v1/forms/{formId}', { params: { path: { formId: form.id } }, body: body() })),
    onSuccess: (f) => {
      qc.setQueryData(formKeys.detail(form.id), f);
      void qc.invalidateQueries({ queryKey: formKeys.lists() });
      toast.success('Form saved.');
    },
  });
  const { fields, message: problem } = problemOf(save.error);
  const shown = ['/name', '/description', '/type', '/display', '/settings/successAction/message', '/settings/successAction/url', '/doubleOptInEmailId', '/seoTitle', '/seoDescription', '/seoImageUrl', '/seoFaviconUrl', '/slug'];
  const mappingError = Object.entries(fields).find(([p]) => p.startsWith('/fieldMapping'));
  const submit = (e: FormEvent) => { e.preventDefault(); save.mutate(); };
  const mappedNames = useMemo(() => rows.map((r) => r.field.trim()).filter(Boolean), [rows]);
  const preview = useMemo(() => ({
    type, seoTitle: nullable(seoTitle),
    fieldMapping: Object.fromEntries(rows.filter((r) => r.field.trim()).map((r) => [r.field.trim(), r.property.trim()])),
    settings: { appearance: appearanceBody(look) ?? undefined, fields: questionsBody(questions) ?? undefined },
  }), [type, seoTitle, rows, look, questions]);
  const origin = location.origin;

  return (
    <form className="stack" onSubmit={submit} noValidate>
      <ErrorSummary message={save.isError ? problem : null} errors={otherErrors(fields, shown).filter((e) => !e.startsWith('/fieldMapping') && !e.startsWith('/settings/appearance/') && !e.startsWith('/settings/fields/'))} />
      <fieldset disabled={!editable} className="card stack">
        <legend>General</legend>
        <Input label="Name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} error={fields['/name']} />
        <Textarea label="Description" hint="For you and your team; not shown to visitors." value={description} onChange={(e) => setDescription(e.target.value)} rows={2} maxLength={2000} error={fields['/description']} />
        <div className="grid-2">
          <Select label="Type" value={type} onChange={(e) => setType(e.target.value as Form['type'])} options={FORM_TYPES} error={fields['/type']} />
          <Select label="Display when embedded" value={display} onChange={(e) => setDisplay(e.target.value)} error={fields['/display']}
            options={[{ value: '', label: 'Default (inline)' }, { value: 'INLINE_EMBED', label: 'Inline where the script stands' }, { value: 'POPUP', label: 'Popup dialog' }]} />
        </div>
      </fieldset>

      <fieldset disabled={!editable} className="card stack">
        <legend>Fields</legend>
        <p className="muted small">Each form field fills a contact property: <code>email</code>, <code>firstName</code>, <code>lastName</code> or a custom key. Field names: a letter, then letters, digits or <code>_</code>.</p>
        {rows.length === 0 && <p className="muted">No fields. A sign-up form needs at least <code>email → email</code>.</p>}
        {rows.map((r, i) => (
          <div className="mapping-row" key={r.key}>
            <Input label={`Form field ${i + 1}`} value={r.field} onChange={(e) => setRows((rs) => rs.map((x) => x.key === r.key ? { ...x, field: e.target.value } : x))} placeholder="e.g. first_name" error={fields[`/fieldMapping/${r.field}`]} />
            <span className="mapping-arrow" aria-hidden="true">→</span>
            <Input label={`Contact property ${i + 1}`} value={r.property} list="contact-properties" onChange={(e) => setRows((rs) => rs.map((x) => x.key === r.key ? { ...x, property: e.target.value } : x))} placeholder="e.g. firstName" />
            <Button variant="ghost" onClick={() => setRows((rs) => rs.filter((x) => x.key !== r.key))} aria-label={`Remove field ${r.field || i + 1}`}>Remove</Button>
          </div>
        ))}
        <datalist id="contact-properties">{PROPERTIES.map((p) => <option key={p} value={p} />)}</datalist>
        {mappingError && <p className="error" role="alert">{mappingError[0]}: {mappingError[1]}</p>}
        <div><Button size="sm" onClick={() => setRows((rs) => [...rs, { key: rowKey++, field: '', property: '' }])}>Add field</Button></div>
      </fieldset>

      <QuestionsFieldset rows={questions} onChange={setQuestions} mapped={mappedNames} errors={fields} disabled={!editable} />

      <AppearanceFieldset draft={look} onChange={setLook} preview={preview} errors={fields} disabled={!editable} />

      <fieldset disabled={!editable} className="card stack">
        <legend>After a submission</legend>
        <Select label="Success action" value={action} onChange={(e) => setAction(e.target.value as 'MESSAGE' | 'REDIRECT')} options={[{ value: 'MESSAGE', label: 'Show a message' }, { value: 'REDIRECT', label: 'Redirect to a page' }]} />
        {action === 'MESSAGE'
          ? <Textarea label="Message" value={message} onChange={(e) => setMessage(e.target.value)} rows={2} maxLength={2000} error={fields['/settings/successAction/message']} />
          : <Input label="Redirect URL" type="url" value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://example.com/thanks" error={fields['/settings/successAction/url']} />}
        <Checkbox label="Double opt-in" hint="New contacts get an email with a confirmation link and are subscribed only once they confirm." checked={doi} onChange={(e) => setDoi(e.target.checked)} />
        {doi && (
          <Select label="Confirmation email template" value={template} onChange={(e) => setTemplate(e.target.value)} error={fields['/doubleOptInEmailId']}
            hint={templates.isError ? 'The templates could not be loaded.' : 'The template needs a {{ confirm_url }} link. Without one, the built-in email is sent.'}
            options={[{ value: '', label: 'Built-in confirmation email' }, ...(templates.data ?? []).map((t) => ({ value: t.id, label: t.name }))]} />
        )}
      </fieldset>

      <ProtectionFieldset enabled={proofOfWork} onChange={setProofOfWork} disabled={!editable} />

      <fieldset disabled={!editable} className="card stack">
        <legend>Address and search engines</legend>
        <Input label="Slug" hint={`The hosted page's address: ${origin}/f/${slug || 'your-slug'}. Lower-case letters, digits and hyphens.`} value={slug} onChange={(e) => setSlug(e.target.value.toLowerCase())} maxLength={100} error={fields['/slug']} />
        <div className="grid-2">
          <div className="stack">
            <Input label="Page title" value={seoTitle} onChange={(e) => setSeoTitle(e.target.value)} maxLength={200} error={fields['/seoTitle']} hint={`${seoTitle.length}/200 · search results show about 60 characters`} />
            <Textarea label="Meta description" value={seoDescription} onChange={(e) => setSeoDescription(e.target.value)} rows={3} maxLength={500} error={fields['/seoDescription']} hint={`${seoDescription.length}/500 · about 155 are shown`} />
            <Input label="Share image URL" type="url" value={seoImage} onChange={(e) => setSeoImage(e.target.value)} placeholder="https://…" error={fields['/seoImageUrl']} />
            <Input label="Favicon URL" type="url" value={seoFavicon} onChange={(e) => setSeoFavicon(e.target.value)} placeholder="https://…" error={fields['/seoFaviconUrl']} />
          </div>
          <div className="stack-sm">
            <span className="label cell-main" id="serp-label">Search result preview</span>
            <div className="serp" role="img" aria-labelledby="serp-label" aria-describedby="serp-text">
              <div className="serp-url">{origin.replace(/^https?:\/\//, '')} › f › {slug || 'your-slug'}</div>
              <div className="serp-title">{(seoTitle || name).slice(0, 65)}{(seoTitle || name).length > 65 ? '…' : ''}</div>
              <div className="serp-desc">{seoDescription ? `${seoDescription.slice(0, 158)}${seoDescription.length > 158 ? '…' : ''}` : 'Add a description: search engines show it under the title.'}</div>
            </div>
            <p id="serp-text" className="visually-hidden">{seoTitle || name}. {seoDescription}</p>
          </div>
        </div>
      </fieldset>

      {editable && <div className="form-actions"><Button type="submit" variant="primary" loading={save.isPending}>Save changes</Button></div>}
    </form>
  );
}

/* --------------------------------------------------------------------- HTML */

function ValidationPanel({ validation }: { validation: Validation | null | undefined }) {
  if (!validation) return <div className="callout callout-info">The service renders the form from its fields. Deploy custom HTML to see its cross-validation here.</div>;
  return (
    <div className="stack-sm" aria-live="polite">
      <div className={`callout ${validation.valid ? 'callout-success' : 'callout-danger'}`}>
        <strong>{validation.valid ? 'The HTML matches the form’s fields.' : 'The HTML does not match the form’s fields.'}</strong>
        <div className="small">Checked {formatDateTime(validation.checkedAt)}</div>
      </div>
      {validation.errors.length > 0 && (
        <div>
          <h3>Errors (block publishing)</h3>
          <ul className="small">{validation.errors.map((e, i) => <li key={i}><code>{e.code}</code> on <code>{e.field}</code></li>)}</ul>
        </div>
      )}
      {validation.warnings.length > 0 && (
        <div>
          <h3>Warnings</h3>
          <ul className="small">{validation.warnings.map((e, i) => <li key={i}><code>{e.code}</code> on <code>{e.field}</code></li>)}</ul>
        </div>
      )}
    </div>
  );
}

function HtmlTab({ form, editable }: { form: Form; editable: boolean }) {
  const qc = useQueryClient();
  const toast = useToast();
  const q = useQuery({ queryKey: formKeys.html(form.id), queryFn: async () => unwrap(await api.GET('/v1/forms/{formId}/html', { params: { path: { formId: form.id } } })) });
  const [draft, setDraft] = useState<string | null>(null);
  const deploy = useMutation({
    mutationFn: async (html: string | null) => unwrap(await api.PUT('/v1/forms/{formId}/html', { params: { path: { formId: form.id } }, body: { html } })),
    onSuccess: (res, html) => {
      qc.setQueryData(formKeys.html(form.id), res);
      void qc.invalidateQueries({ queryKey: formKeys.detail(form.id) });
      setDraft(null);
      toast.success(html === null ? 'Custom HTML removed: the form is rendered from its fields.' : res.htmlValidation?.valid === false ? 'HTML deployed, with errors to fix.' : 'HTML deployed.');
    },
  });
  if (q.isPending) return <Skeleton lines={8} />;
  if (q.isError) return <ErrorState error={q.error} onRetry={() => void q.refetch()} />;
  const value = draft ?? q.data.html;
  const { message } = problemOf(deploy.error);
  return (
    <div className="editor-grid">
      <div className="stack-sm">
        <p className="muted small" id="html-help">
          {q.data.deployedAt ? `Custom HTML deployed ${formatDateTime(q.data.deployedAt)}.` : 'This is the HTML rendered from the form’s fields; edit and deploy it to customise the form.'} It is sanitised on deploy (no scripts, no inline event handlers). Press Escape, then Tab, to leave the editor.
        </p>
        <CodeEditor value={value} onChange={setDraft} label="Form HTML" readOnly={!editable} describedBy="html-help" />
        <ErrorSummary message={deploy.isError ? message : null} />
        {editable && (
          <div className="form-actions">
            {q.data.deployedAt && <Button onClick={() => deploy.mutate(null)} disabled={deploy.isPending}>Remove custom HTML</Button>}
            <Button onClick={() => setDraft(null)} disabled={draft === null || deploy.isPending}>Discard changes</Button>
            <Button variant="primary" onClick={() => deploy.mutate(value)} loading={deploy.isPending}>Deploy HTML</Button>
          </div>
        )}
      </div>
      <aside className="card" aria-label="Cross-validation">
        <h2>Cross-validation</h2>
        <ValidationPanel validation={q.data.htmlValidation} />
      </aside>
    </div>
  );
}

/* ----------------------------------------------------------------- Versions */

function VersionsTab({ form, canWrite }: { form: Form; canWrite: boolean }) {
  const qc = useQueryClient();
  const toast = useToast();
  const navigate = useNavigate();
  const [confirm, setConfirm] = useState<Form | null>(null);
  const q = useQuery({ queryKey: formKeys.versions(form.id), queryFn: async () => unwrap(await api.GET('/v1/forms/{formId}/versions', { params: { path: { formId: form.id } } })) });
  const publish = useMutation({
    mutationFn: async (id: string) => unwrap(await api.POST('/v1/forms/{formId}/publish', { params: { path: { formId: id } } })),
    onSuccess: (f) => {
      setConfirm(null);
      void qc.invalidateQueries({ queryKey: formKeys.versions() });
      void qc.invalidateQueries({ queryKey: formKeys.lists() });
      qc.setQueryData(formKeys.detail(f.id), f);
      toast.success(`Version ${f.version} is live.`);
      navigate(`/forms/${f.id}`);
    },
    onError: (err) => toast.error(err.message),
  });
  return (
    <QueryState query={q}>{(data) => (
      <>
        <div className="table-wrap">
          <table className="table">
            <caption className="visually-hidden">Versions</caption>
            <thead><tr><th scope="col">Version</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Published</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
            <tbody>
              {data.data.map((v) => (
                <tr key={v.id}>
                  <td>{v.id === form.id ? <strong>v{v.version} (this one)</strong> : <Link to={`/forms/${v.id}`}>v{v.version}</Link>}</td>
                  <td><StatusBadge status={v.status} /></td>
                  <td className="nowrap">{formatDateTime(v.createdAt)}</td>
                  <td className="nowrap">{formatDateTime(v.publishedAt)}</td>
                  <td>
                    {canWrite && v.status === 'DRAFT' && <Button size="sm" variant="primary" onClick={() => setConfirm(v as Form)}>Publish</Button>}
                    {canWrite && v.status === 'ARCHIVED' && <Button size="sm" onClick={() => setConfirm(v as Form)}>Roll back to v{v.version}</Button>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <ConfirmDialog open={confirm !== null} title={confirm?.status === 'ARCHIVED' ? `Roll back to version ${confirm?.version}?` : `Publish version ${confirm?.version}?`}
          confirmLabel={confirm?.status === 'ARCHIVED' ? 'Roll back' : 'Publish'} busy={publish.isPending} onClose={() => setConfirm(null)} onConfirm={() => confirm && publish.mutate(confirm.id)}>
          <p>Version {confirm?.version} becomes the live form at its address; the version live now is archived (you can roll back to it later).</p>
        </ConfirmDialog>
      </>
    )}</QueryState>
  );
}

/* --------------------------------------------------------- Preview & embed */

function PreviewTab({ form }: { form: Form }) {
  const [reload, setReload] = useState(0);
  if (form.status !== 'PUBLISHED' || !form.slug) {
    return (
      <div className="card">
        <EmptyState title="Publish the form to preview its hosted page">
          {form.slug ? 'Only the published version is served at its address.' : 'Give the form a slug (Details tab), then publish it.'}
        </EmptyState>
      </div>
    );
  }
  const pageUrl = `${location.origin}/f/${form.slug}`;
  const snippet = `<script src="${pageUrl}/embed.js" async></script>`;
  return (
    <div className="grid-2">
      <section className="card stack-sm">
        <div className="card-header">
          <h2>Hosted page</h2>
          <div className="row">
            <Button size="sm" onClick={() => setReload((n) => n + 1)}>Reload</Button>
            <a className="btn btn-sm" href={pageUrl} target="_blank" rel="noopener">Open in a new tab<span className="visually-hidden"> (opens a new tab)</span></a>
          </div>
        </div>
        <iframe key={reload} className="preview-frame" title={`Preview of ${form.name}`} src={`/f/${form.slug}?preview=1`} sandbox="" />
      </section>
      <section className="card stack">
        <h2>Share and embed</h2>
        <div className="stack-sm"><span className="cell-main">Page address</span><CopyField value={pageUrl} what="page address" /></div>
        <div className="stack-sm">
          <span className="cell-main">Embed on your site</span>
          <p className="muted small">Paste where the form should appear{form.display === 'POPUP' ? ' (it opens as a popup; add data-formcast-open to a button to open it on click)' : ''}.</p>
          <pre className="card mono small">{snippet}</pre>
          <div><CopyButton text={snippet} label="Copy snippet" /></div>
        </div>
      </section>
    </div>
  );
}

/* ------------------------------------------------------ Submissions, stats */

function SubmissionsTab({ form }: { form: Form }) {
  const [held, setHeld] = useState(false);
  const list = useCursorList<Submission>(formKeys.submissions(form.formGroupId, held), async (cursor) =>
    unwrap(await api.GET('/v1/forms/{formId}/submissions', { params: { path: { formId: form.id }, query: { cursor, limit: 25, ...(held ? { status: 'HELD' as const } : {}) } } })));
  const columns: Column<Submission>[] = [
    { key: 'at', header: 'Received', cell: (s) => <span className="nowrap">{formatDateTime(s.createdAt)}</span> },
    { key: 'status', header: 'Status', cell: (s) => <SubmissionStatus s={s} /> },
    { key: 'data', header: 'Answers', cell: (s) => <dl className="kv small">{s.answers.filter((a) => a.value !== null).map((a) => <div key={a.field} className="contents"><dt>{a.label}</dt><dd>{Array.isArray(a.value) ? a.value.join(', ') : a.value}</dd></div>)}</dl> },
    { key: 'consent', header: 'Consent', cell: (s) => (s.consent ? <span className="nowrap" title={s.consent.text}>Given {formatDateTime(s.consent.acceptedAt)}</span> : <span className="muted">—</span>) },
    { key: 'source', header: 'Source', cell: (s) => s.source.toLowerCase() },
    { key: 'version', header: 'Version', cell: (s) => `v${s.formVersion}` },
    { key: 'review', header: <span className="visually-hidden">Review</span>, cell: (s) => <ReviewActions formId={form.id} s={s} /> },
  ];
  return (
    <div className="stack">
      <Checkbox label="Only those held for review" hint="Sign-ups that came in a burst (one network, one address pattern) wait here: nobody was signed up or mailed. Release signs the person up; discard drops it." checked={held} onChange={(e) => setHeld(e.target.checked)} />
      <CursorTable list={list} columns={columns} rowKey={(s) => s.id} caption="Submissions"
        empty={<div className="card"><EmptyState title={held ? 'Nothing held for review' : 'No submissions yet'}>{held ? 'Bursts of sign-ups are held here until you release or discard them.' : 'Submissions to every version of this form appear here.'}</EmptyState></div>} />
    </div>
  );
}

function StatsTab({ form }: { form: Form }) {
  const s = form.stats;
  return (
    <div className="card stack">
      <div className="stats-row">
        <div className="stat"><span className="stat-value">{formatNumber(s?.views)}</span><span className="stat-label">Views (hosted page and embeds)</span></div>
        <div className="stat"><span className="stat-value">{formatNumber(s?.submissions)}</span><span className="stat-label">Submissions</span></div>
        <div className="stat"><span className="stat-value">{percent(s?.submissions, s?.views)}</span><span className="stat-label">Conversion</span></div>
        {form.settings.doubleOptIn && <div className="stat"><span className="stat-value">{formatNumber(s?.confirmations)}</span><span className="stat-label">Confirmed ({percent(s?.confirmations, s?.submissions)})</span></div>}
      </div>
      <p className="muted small">Views count visits of the hosted page and page views with an embed (once per page view, not per popup opening). Submissions held for review are not counted until released.</p>
    </div>
  );
}

/* --------------------------------------------------------------------- Page */

const TABS = [
  { id: 'details', label: 'Details' }, { id: 'html', label: 'HTML' }, { id: 'versions', label: 'Versions' },
  { id: 'preview', label: 'Preview & embed' }, { id: 'results', label: 'Results' }, { id: 'submissions', label: 'Submissions' }, { id: 'stats', label: 'Stats' },
];

export default function FormEditor() {
  const { formId = '' } = useParams();
  const can = useCan();
  const qc = useQueryClient();
  const toast = useToast();
  const navigate = useNavigate();
  const [tab, setTab] = useState(() => (new URLSearchParams(location.search).get('tab') ?? 'details'));
  const q = useQuery({ queryKey: formKeys.detail(formId), queryFn: async () => unwrap(await api.GET('/v1/forms/{formId}', { params: { path: { formId } } })) });
  const canWrite = can('write:forms');
  const publish = useMutation({
    mutationFn: async () => unwrap(await api.POST('/v1/forms/{formId}/publish', { params: { path: { formId } } })),
    onSuccess: (f) => {
      qc.setQueryData(formKeys.detail(f.id), f);
      void qc.invalidateQueries({ queryKey: formKeys.lists() });
      void qc.invalidateQueries({ queryKey: formKeys.versions() });
      toast.success(`Published: version ${f.version} is live.`);
    },
  });
  const newVersion = useMutation({
    mutationFn: async () => unwrap(await api.POST('/v1/forms/{formId}/versions', { params: { path: { formId } } })),
    onSuccess: (f) => {
      void qc.invalidateQueries({ queryKey: formKeys.versions() });
      toast.success(`Draft version ${f.version} created.`);
      navigate(`/forms/${f.id}`);
    },
    onError: (err) => toast.error(err.message),
  });
  const resetPublish = publish.reset;
  useEffect(() => { resetPublish(); }, [formId, resetPublish]);
  const form = q.data;
  const editable = Boolean(form && form.status === 'DRAFT' && canWrite);
  const key = useMemo(() => (form ? `${form.id}:${form.updatedAt}` : ''), [form]);

  if (q.isPending) return <><PageHeader title="Form" back={{ to: '/forms', label: 'Forms' }} /><Skeleton lines={8} /></>;
  if (q.isError || !form) return <><PageHeader title="Form" back={{ to: '/forms', label: 'Forms' }} /><ErrorState error={q.error} onRetry={() => void q.refetch()} /></>;
  const publishProblem = problemOf(publish.error);

  return (
    <>
      <PageHeader
        title={form.name}
        back={{ to: '/forms', label: 'Forms' }}
        description={<span className="row"><StatusBadge status={form.status} /> <span>Version {form.version}</span>{form.slug && form.status === 'PUBLISHED' && <a href={`/f/${form.slug}`} target="_blank" rel="noopener">/f/{form.slug}<span className="visually-hidden"> (opens a new tab)</span></a>}</span>}
        actions={canWrite && (
          form.status === 'DRAFT'
            ? <Button variant="primary" onClick={() => publish.mutate()} loading={publish.isPending}>Publish</Button>
            : form.status === 'PUBLISHED' ? <Button onClick={() => newVersion.mutate()} loading={newVersion.isPending}>Edit as a new version</Button> : null
        )}
      />
      {publish.isError && <div style={{ marginBottom: '1rem' }}><ErrorSummary message={`Not published: ${publishProblem.message}`} errors={otherErrors(publishProblem.fields, [])} /></div>}
      {form.status !== 'DRAFT' && canWrite && (
        <div className="callout callout-info" style={{ marginBottom: '1rem' }}>
          {form.status === 'PUBLISHED' ? 'This version is live and cannot be changed. “Edit as a new version” makes a draft copy; publishing it replaces this one.' : 'This version is archived. You can roll back to it from the Versions tab.'}
        </div>
      )}
      <Tabs tabs={TABS} selected={tab} onSelect={setTab} label="Form sections">
        {tab === 'details' && <DetailsTab key={key} form={form} editable={editable} />}
        {tab === 'html' && <HtmlTab key={form.id} form={form} editable={editable} />}
        {tab === 'versions' && <VersionsTab form={form} canWrite={canWrite} />}
        {tab === 'preview' && <PreviewTab form={form} />}
        {tab === 'results' && <ResultsTab formId={form.id} />}
        {tab === 'submissions' && <SubmissionsTab form={form} />}
        {tab === 'stats' && <StatsTab form={form} />}
      </Tabs>
    </>
  );
}
