/** The versions of the form's group: publish one, archive the published one. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { describeError } from '../../lib/problems';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, unwrap } from '../../api/client';
import { formKeys } from '../../api/keys';
import { Button, ConfirmDialog, QueryState, StatusBadge, useToast } from '../../components';
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
          <div className="table-wrap">
            <table className="table">
              <caption className="visually-hidden">Versions</caption>
              <thead>
                <tr>
                  <th scope="col">Version</th>
                  <th scope="col">Status</th>
                  <th scope="col">Created</th>
                  <th scope="col">Published</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.data.map((v) => (
                  <tr key={v.id}>
                    <td>
                      {v.id === form.id ? (
                        <strong>v{v.version} (this one)</strong>
                      ) : (
                        <Link to={`/forms/${v.id}`}>v{v.version}</Link>
                      )}
                    </td>
                    <td>
                      <StatusBadge status={v.status} />
                    </td>
                    <td className="nowrap">{formatDateTime(v.createdAt)}</td>
                    <td className="nowrap">{formatDateTime(v.publishedAt)}</td>
                    <td>
                      {canWrite && v.status === 'DRAFT' && (
                        <Button size="sm" variant="primary" onClick={() => setConfirm(v as Form)}>
                          Publish
                        </Button>
                      )}
                      {canWrite && v.status === 'ARCHIVED' && (
                        <Button size="sm" onClick={() => setConfirm(v as Form)}>
                          Roll back to v{v.version}
                        </Button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
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
