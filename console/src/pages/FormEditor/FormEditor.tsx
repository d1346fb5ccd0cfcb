/**
 * One form: every field of Update Form, the custom HTML with its cross-validation, versions (publish and
 * roll back), the live preview of the hosted page with the embed snippet, submissions and stats.
 * Only a DRAFT can be changed; a published form gets a new draft version first.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { describeError } from '../../lib/problems';
import { useEffect, useMemo, useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { api, unwrap } from '../../api/client';
import { formKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import { Button, ErrorState, ErrorSummary, PageHeader, Skeleton, StatusBadge, Tabs, useToast } from '../../components';
import { problemOf } from '../../lib/forms';
import { FormActions } from '../Forms/FormActions';
import { ResultsTab } from './ResultsTab';
import { DetailsTab } from './DetailsTab';
import { HtmlTab } from './HtmlTab';
import { VersionsTab } from './VersionsTab';
import { PreviewTab } from './PreviewTab';
import { SubmissionsTab } from './SubmissionsTab';
import { StatsTab } from './StatsTab';
import '../../styles/forms.css';

const TABS = [
  { id: 'details', label: 'Details' },
  { id: 'html', label: 'HTML' },
  { id: 'versions', label: 'Versions' },
  { id: 'preview', label: 'Preview & embed' },
  { id: 'results', label: 'Results' },
  { id: 'submissions', label: 'Submissions' },
  { id: 'stats', label: 'Stats' },
];

export default function FormEditor() {
  const { formId = '' } = useParams();
  const can = useCan();
  const qc = useQueryClient();
  const toast = useToast();
  const navigate = useNavigate();
  const [tab, setTab] = useState(() => new URLSearchParams(location.search).get('tab') ?? 'details');
  const q = useQuery({
    queryKey: formKeys.detail(formId),
    queryFn: async () => unwrap(await api.GET('/v1/forms/{formId}', { params: { path: { formId } } })),
  });
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
    onError: (err) => toast.error(describeError(err)),
  });
  const resetPublish = publish.reset;
  useEffect(() => {
    resetPublish();
  }, [formId, resetPublish]);
  const form = q.data;
  const editable = Boolean(form && form.status === 'DRAFT' && canWrite);
  const key = useMemo(() => (form ? `${form.id}:${form.updatedAt}` : ''), [form]);

  if (q.isPending)
    return (
      <>
        <PageHeader title="Form" back={{ to: '/forms', label: 'Forms' }} />
        <Skeleton lines={8} />
      </>
    );
  if (q.isError || !form)
    return (
      <>
        <PageHeader title="Form" back={{ to: '/forms', label: 'Forms' }} />
        <ErrorState error={q.error} onRetry={() => void q.refetch()} />
      </>
    );
  const publishProblem = problemOf(publish.error);

  return (
    <>
      <PageHeader
        needs="write:forms"
        title={form.name}
        back={{ to: '/forms', label: 'Forms' }}
        description={
          <span className="row">
            <StatusBadge status={form.status} /> <span>Version {form.version}</span>
            {form.slug && form.status === 'PUBLISHED' && (
              <a href={`/f/${form.slug}`} target="_blank" rel="noopener">
                /f/{form.slug}
                <span className="visually-hidden"> (opens a new tab)</span>
              </a>
            )}
          </span>
        }
        actions={
          canWrite && (
            <>
              <FormActions form={form} onDeleted={() => navigate('/forms')} />
              {form.status === 'DRAFT' ? (
                <Button variant="primary" onClick={() => publish.mutate()} loading={publish.isPending}>
                  Publish
                </Button>
              ) : form.status === 'PUBLISHED' ? (
                <Button onClick={() => newVersion.mutate()} loading={newVersion.isPending}>
                  Edit as a new version
                </Button>
              ) : null}
            </>
          )
        }
      />
      {publish.isError && (
        <div style={{ marginBottom: '1rem' }}>
          <ErrorSummary message={`Not published. ${publishProblem.message ?? ''}`} errors={publishProblem.rest} />
        </div>
      )}
      {form.status !== 'DRAFT' && canWrite && (
        <div className="callout callout-info" style={{ marginBottom: '1rem' }}>
          {form.status === 'PUBLISHED'
            ? 'This version is live and cannot be changed. “Edit as a new version” makes a draft copy; publishing it replaces this one.'
            : 'This version is archived. You can roll back to it from the Versions tab.'}
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
