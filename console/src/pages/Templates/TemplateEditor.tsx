/**
 * One template: its name, subject and content, saved with PUT /v1/templates/{id}; duplicated ("Save as template")
 * or deleted from here. `/templates/new` is a template not saved yet, started from the gallery or blank (the router's
 * state carries what was picked); "Create template" saves it and opens it at its own address.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useLocation, useNavigate, useParams } from 'react-router';
import { templateKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import { Button, ErrorState, ErrorSummary, Input, PageHeader, Skeleton, useToast } from '../../components';
import { SaveAsTemplate, templateBody } from '../../components/SaveAsTemplate';
import { formatDateTime } from '../../lib/format';
import { problemOf } from '../../lib/forms';
import { api, unwrap } from '../../api/client';
import { contentOf, isBlockDocument, type EmailContent, type Template } from '../../lib/templates';
import { DeleteTemplateDialog } from './DeleteTemplateDialog';
import { TemplateContent, type ContentDraft } from './TemplateContent';
import { KindBadge } from './KindBadge';
import { SendTestDialog } from './SendTestDialog';
import '../../styles/templates.css';

/** What the Templates page hands a new template through the router: a name to propose and the content to start with. */
export interface NewTemplateState {
  name: string;
  content: EmailContent;
}

interface Draft extends ContentDraft {
  name: string;
  alias: string;
  subject: string;
}

/** What an alias looks like (contract §20): lowercase letters and digits, single hyphens between them. */
const ALIAS = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const ALIAS_RULE = 'Use lowercase letters and digits, with single hyphens between words, like “order-receipt”.';

function draftOf(name: string, c: EmailContent, alias: string | null = null): Draft {
  return {
    name,
    alias: alias ?? '',
    subject: c.subject ?? '',
    html: c.html ?? '',
    text: c.text ?? '',
    editorContent: c.editorContent ?? null,
  };
}

function contentOfDraft(d: Draft): EmailContent {
  return { subject: d.subject, html: d.html, text: d.text, editorContent: d.editorContent };
}

/** The name, subject and content fields with the save button: the same for a new template and a saved one. */
function TemplateForm({
  initial,
  saving,
  error,
  submitLabel,
  onSubmit,
  editable,
}: {
  initial: Draft;
  saving: boolean;
  error: unknown;
  submitLabel: string;
  /** Resolves once saved: what was saved becomes the form's unchanged state. */
  onSubmit: (d: Draft) => Promise<Template>;
  editable: boolean;
}) {
  const [d, setD] = useState<Draft>(initial);
  const [saved, setSaved] = useState<Draft>(initial);
  const dirty = JSON.stringify(d) !== JSON.stringify(saved);
  const { fields, message, rest } = problemOf(error, {
    '/name': 'Name',
    '/alias': { label: 'Alias', messages: { pattern: ALIAS_RULE } },
    '/subject': 'Subject',
    '/html': 'HTML',
    '/text': 'Plain text',
    '/editorContent/**': 'The email',
  });
  // The content's own errors (`/html`, `/editorContent/blocks/2/url`) go to the content editor, the rest up here.
  const contentErrors = Object.fromEntries(
    Object.entries(fields).filter(([p]) => ['/html', '/text'].includes(p) || p.startsWith('/editorContent')),
  );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const sent = d;
    onSubmit(sent).then(
      (t) => {
        if (!isBlockDocument(sent.editorContent)) return setSaved(sent);
        // A visual email's HTML and text are the service's rendering of its blocks: keep the new ones.
        const rendered = { html: t.html ?? '', text: t.text ?? '' };
        setSaved({ ...sent, ...rendered });
        setD((x) => (isBlockDocument(x.editorContent) ? { ...x, ...rendered } : x));
      },
      () => undefined, // shown by the error summary
    );
  };
  return (
    <form className="stack" onSubmit={submit} noValidate>
      <ErrorSummary message={message} errors={rest} />
      <section className="card stack">
        <div className="template-meta">
          <Input
            label="Name"
            hint="For you: recipients never see it."
            value={d.name}
            onChange={(e) => setD({ ...d, name: e.target.value })}
            maxLength={200}
            required
            disabled={!editable}
            error={fields['/name']}
          />
          <Input
            label="Alias (optional)"
            hint="What an application names it by when it sends it (POST /v1/emails with templateId), instead of its ID."
            value={d.alias}
            onChange={(e) => setD({ ...d, alias: e.target.value })}
            placeholder="order-receipt"
            maxLength={100}
            autoComplete="off"
            spellCheck={false}
            disabled={!editable}
            error={d.alias && !ALIAS.test(d.alias) ? ALIAS_RULE : fields['/alias']}
          />
          <Input
            label="Subject"
            hint="Liquid works here: {{ contact.firstName }}."
            value={d.subject}
            onChange={(e) => setD({ ...d, subject: e.target.value })}
            maxLength={998}
            disabled={!editable}
            error={fields['/subject']}
          />
        </div>
      </section>
      <TemplateContent
        value={d}
        onChange={(c) => setD((x) => ({ ...x, html: c.html, text: c.text, editorContent: c.editorContent }))}
        errors={contentErrors}
        editable={editable}
      />
      {editable && (
        <div className="form-actions">
          {dirty && <span className="muted small">Unsaved changes</span>}
          <Button
            type="submit"
            variant="primary"
            loading={saving}
            disabled={!d.name.trim() || Boolean(d.alias && !ALIAS.test(d.alias))}
          >
            {submitLabel}
          </Button>
        </div>
      )}
    </form>
  );
}

function NewTemplate() {
  const location = useLocation();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const toast = useToast();
  const can = useCan();
  const state = (location.state ?? null) as NewTemplateState | null;
  const [initial] = useState(() =>
    draftOf(state?.name ?? '', state?.content ?? { subject: null, html: null, text: null, editorContent: null }),
  );
  const create = useMutation({
    mutationFn: async (d: Draft) =>
      unwrap(
        await api.POST('/v1/templates', {
          body: { ...templateBody(d.name.trim(), contentOfDraft(d)), alias: d.alias.trim() || null },
        }),
      ),
    onSuccess: (t) => {
      qc.setQueryData(templateKeys.detail(t.id), t);
      void qc.invalidateQueries({ queryKey: templateKeys.all });
      toast.success(`Template ${t.name} created.`);
      navigate(`/templates/${t.id}`, { replace: true });
    },
  });
  return (
    <>
      <PageHeader
        title="New template"
        description="Not saved yet: give it a name, change what you like, then create it."
        back={{ to: '/templates', label: 'Templates' }}
      />
      <TemplateForm
        initial={initial}
        saving={create.isPending}
        error={create.error}
        submitLabel="Create template"
        onSubmit={(d) => create.mutateAsync(d)}
        editable={can('write:broadcasts')}
      />
    </>
  );
}

function SavedTemplate({ templateId }: { templateId: string }) {
  const can = useCan();
  const qc = useQueryClient();
  const toast = useToast();
  const navigate = useNavigate();
  const [deleting, setDeleting] = useState<Template | null>(null);
  const [testing, setTesting] = useState(false);
  const q = useQuery({
    queryKey: templateKeys.detail(templateId),
    queryFn: async () => unwrap(await api.GET('/v1/templates/{templateId}', { params: { path: { templateId } } })),
  });
  const save = useMutation({
    mutationFn: async (d: Draft) =>
      unwrap(
        await api.PUT('/v1/templates/{templateId}', {
          params: { path: { templateId } },
          // A template turned from a visual email into HTML drops its document: null clears it.
          body: {
            ...templateBody(d.name.trim(), contentOfDraft(d)),
            alias: d.alias.trim() || null,
            editorContent: d.editorContent ?? null,
          },
        }),
      ),
    onSuccess: (t) => {
      qc.setQueryData(templateKeys.detail(t.id), t);
      void qc.invalidateQueries({ queryKey: templateKeys.list() });
      void qc.invalidateQueries({ queryKey: templateKeys.picker() });
      toast.success('Template saved.');
    },
  });
  const editable = can('write:broadcasts');
  const t = q.data;
  if (q.isPending)
    return (
      <>
        <PageHeader title="Template" back={{ to: '/templates', label: 'Templates' }} />
        <Skeleton lines={8} />
      </>
    );
  if (q.isError || !t)
    return (
      <>
        <PageHeader title="Template" back={{ to: '/templates', label: 'Templates' }} />
        <ErrorState error={q.error} title="This template could not be loaded" onRetry={() => void q.refetch()} />
      </>
    );
  return (
    <>
      <PageHeader
        needs="write:broadcasts"
        title={t.name}
        description={
          <span className="row">
            <KindBadge template={t} />
            <span>
              Version {t.version} · updated {formatDateTime(t.updatedAt)}
            </span>
            {t.alias && (
              <span>
                Alias <code>{t.alias}</code>
              </span>
            )}
          </span>
        }
        back={{ to: '/templates', label: 'Templates' }}
        actions={
          (editable || can('send:emails')) && (
            <>
              {can('send:emails') && <Button onClick={() => setTesting(true)}>Send a test</Button>}
              {editable && (
                <>
                  <SaveAsTemplate
                    label="Duplicate"
                    content={contentOf(t)}
                    defaultName={`Copy of ${t.name}`}
                    onSaved={(copy) => navigate(`/templates/${copy.id}`)}
                  />
                  <Button variant="ghost" onClick={() => setDeleting(t)}>
                    Delete
                  </Button>
                </>
              )}
            </>
          )
        }
      />
      <TemplateForm
        key={t.id}
        initial={draftOf(t.name, contentOf(t), t.alias)}
        saving={save.isPending}
        error={save.error}
        submitLabel="Save template"
        onSubmit={(d) => save.mutateAsync(d)}
        editable={editable}
      />
      <SendTestDialog template={testing ? t : null} onClose={() => setTesting(false)} />
      <DeleteTemplateDialog
        template={deleting}
        onClose={() => setDeleting(null)}
        onDeleted={() => navigate('/templates', { replace: true })}
      />
    </>
  );
}

export default function TemplateEditor() {
  const { templateId = 'new' } = useParams();
  return templateId === 'new' ? <NewTemplate /> : <SavedTemplate key={templateId} templateId={templateId} />;
}
