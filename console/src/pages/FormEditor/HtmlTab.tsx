/** The form's own HTML (CodeMirror), checked on save. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { formKeys } from '../../api/keys';
import { CodeEditor } from '../../components/CodeEditor';
import { Button, ErrorState, ErrorSummary, Skeleton, useToast } from '../../components';
import { formatDateTime } from '../../lib/format';
import { problemOf } from '../../lib/forms';
import type { Form } from '../Forms/form';
import { ValidationPanel } from './ValidationPanel';

export function HtmlTab({ form, editable }: { form: Form; editable: boolean }) {
  const qc = useQueryClient();
  const toast = useToast();
  const q = useQuery({
    queryKey: formKeys.html(form.id),
    queryFn: async () => unwrap(await api.GET('/v1/forms/{formId}/html', { params: { path: { formId: form.id } } })),
  });
  const [draft, setDraft] = useState<string | null>(null);
  const deploy = useMutation({
    mutationFn: async (html: string | null) =>
      unwrap(await api.PUT('/v1/forms/{formId}/html', { params: { path: { formId: form.id } }, body: { html } })),
    onSuccess: (res, html) => {
      qc.setQueryData(formKeys.html(form.id), res);
      void qc.invalidateQueries({ queryKey: formKeys.detail(form.id) });
      setDraft(null);
      toast.success(
        html === null
          ? 'Custom HTML removed: the form is rendered from its fields.'
          : res.htmlValidation?.valid === false
            ? 'HTML deployed, with errors to fix.'
            : 'HTML deployed.',
      );
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
          {q.data.deployedAt
            ? `Custom HTML deployed ${formatDateTime(q.data.deployedAt)}.`
            : 'This is the HTML rendered from the form’s fields; edit and deploy it to customise the form.'}{' '}
          It is sanitised on deploy (no scripts, no inline event handlers). Press Escape, then Tab, to leave the editor.
        </p>
        <CodeEditor value={value} onChange={setDraft} label="Form HTML" readOnly={!editable} describedBy="html-help" />
        <ErrorSummary message={deploy.isError ? message : null} />
        {editable && (
          <div className="form-actions">
            {q.data.deployedAt && (
              <Button onClick={() => deploy.mutate(null)} disabled={deploy.isPending}>
                Remove custom HTML
              </Button>
            )}
            <Button onClick={() => setDraft(null)} disabled={draft === null || deploy.isPending}>
              Discard changes
            </Button>
            <Button variant="primary" onClick={() => deploy.mutate(value)} loading={deploy.isPending}>
              Deploy HTML
            </Button>
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
