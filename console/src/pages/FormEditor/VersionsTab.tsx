/** The versions of the form's group: publish one, archive the published one. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { describeError } from '../../lib/problems';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, unwrap } from '../../api/client';
import { formKeys } from '../../api/keys';
import { Button, ConfirmDialog, QueryState, StatusBadge, Table, useToast } from '../../components';
import { formatDateTime } from '../../lib/format';
import type { Form } from '../Forms/form';

export function VersionsTab({ form, canWrite }: { form: Form; canWrite: boolean }) {
  const qc = useQueryClient();
  const toast = useToast();
  const navigate = useNavigate();
  const [confirm, setConfirm] = useState<Form | null>(null);
  const q = useQuery({
    queryKey: formKeys.versions(form.id),
    queryFn: async () =>
      unwrap(await api.GET('/v1/forms/{formId}/versions', { params: { path: { formId: form.id } } })),
  });
  const publish = useMutation({
    mutationFn: async (id: string) =>
      unwrap(await api.POST('/v1/forms/{formId}/publish', { params: { path: { formId: id } } })),
    onSuccess: (f) => {
      setConfirm(null);
      void qc.invalidateQueries({ queryKey: formKeys.versions() });
      void qc.invalidateQueries({ queryKey: formKeys.lists() });
      qc.setQueryData(formKeys.detail(f.id), f);
      toast.success(`Version ${f.version} is live.`);
      navigate(`/forms/${f.id}`);
    },
    onError: (err) => toast.error(describeError(err)),
  });
  return (
    <QueryState query={q}>
      {(data) => (
        <>
          <Table
            rows={data.data as Form[]}
            rowKey={(v) => v.id}
            caption="Versions"
            columns={[
              {
                key: 'version',
                header: 'Version',
                cell: (v) =>
                  v.id === form.id ? (
                    <strong>v{v.version} (this one)</strong>
                  ) : (
                    <Link to={`/forms/${v.id}`}>v{v.version}</Link>
                  ),
              },
              { key: 'status', header: 'Status', cell: (v) => <StatusBadge status={v.status} /> },
              {
                key: 'created',
                header: 'Created',
                cell: (v) => <span className="nowrap">{formatDateTime(v.createdAt)}</span>,
              },
              {
                key: 'published',
                header: 'Published',
                cell: (v) => <span className="nowrap">{formatDateTime(v.publishedAt)}</span>,
              },
              {
                key: 'actions',
                header: 'Actions',
                hiddenHeader: true,
                cell: (v) =>
                  canWrite && v.status === 'DRAFT' ? (
                    <Button size="sm" variant="primary" onClick={() => setConfirm(v)}>
                      Publish
                    </Button>
                  ) : canWrite && v.status === 'ARCHIVED' ? (
                    <Button size="sm" onClick={() => setConfirm(v)}>
                      Roll back to v{v.version}
                    </Button>
                  ) : null,
              },
            ]}
          />
          <ConfirmDialog
            open={confirm !== null}
            title={
              confirm?.status === 'ARCHIVED'
                ? `Roll back to version ${confirm?.version}?`
                : `Publish version ${confirm?.version}?`
            }
            confirmLabel={confirm?.status === 'ARCHIVED' ? 'Roll back' : 'Publish'}
            busy={publish.isPending}
            onClose={() => setConfirm(null)}
            onConfirm={() => confirm && publish.mutate(confirm.id)}
          >
            <p>
              Version {confirm?.version} becomes the live form at its address; the version live now is archived (you can
              roll back to it later).
            </p>
          </ConfirmDialog>
        </>
      )}
    </QueryState>
  );
}
