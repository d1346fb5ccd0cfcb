/**
 * Deleting a template, behind a confirmation. A template that a form sends as its double opt-in email cannot be deleted
 * (409 resource_in_use): the dialog says so in words and names the forms that use it, with links to them.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, ApiError, unwrap } from '../../api/client';
import { formKeys, templateKeys } from '../../api/keys';
import { ConfirmDialog, ErrorSummary, useToast } from '../../components';
import { describeError } from '../../lib/problems';
import type { Template } from '../../lib/templates';

/** The forms (their first 100 versions) whose double opt-in email is this template. */
function useFormsUsing(templateId: string, enabled: boolean) {
  return useQuery({
    queryKey: [...formKeys.lists(), 'using-template', templateId],
    queryFn: async () =>
      unwrap(await api.GET('/v1/forms', { params: { query: { limit: 100 } } })).data.filter(
        (f) => f.doubleOptInEmailId === templateId,
      ),
    enabled,
  });
}

export function DeleteTemplateDialog({
  template,
  onClose,
  onDeleted,
}: {
  template: Template | null;
  onClose: () => void;
  onDeleted?: (t: Template) => void;
}) {
  const qc = useQueryClient();
  const toast = useToast();
  const remove = useMutation({
    mutationFn: async (t: Template) =>
      unwrap(await api.DELETE('/v1/templates/{templateId}', { params: { path: { templateId: t.id } } })),
    onSuccess: (_r, t) => {
      qc.removeQueries({ queryKey: templateKeys.detail(t.id) });
      void qc.invalidateQueries({ queryKey: templateKeys.all });
      toast.success(`Template ${t.name} deleted.`);
      onDeleted?.(t);
      onClose();
    },
  });
  const inUse = remove.error instanceof ApiError && remove.error.code === 'resource_in_use';
  const using = useFormsUsing(template?.id ?? '', inUse && template !== null);
  return (
    <ConfirmDialog
      open={template !== null}
      title={`Delete ${template?.name ?? 'template'}?`}
      danger
      confirmLabel="Delete template"
      busy={remove.isPending}
      onClose={() => {
        remove.reset();
        onClose();
      }}
      onConfirm={() => template && remove.mutate(template)}
    >
      <p>
        The template is deleted for good. Broadcasts and automation emails started from it keep their own copy of the
        content.
      </p>
      {inUse ? (
        <div className="callout callout-warning stack-sm" role="alert">
          <p>
            <strong>This template is in use, so it cannot be deleted.</strong> A form sends it as its double opt-in
            email, the message that asks new subscribers to confirm their address. Each version of a form keeps the
            email it was given, archived versions included, so the template stays in use while any version names it. In
            a draft version you can choose another confirmation email (or the built-in one) under Double opt-in.
          </p>
          {using.data && using.data.length > 0 && (
            <p>
              Used by:{' '}
              {using.data.map((f, i) => (
                <span key={f.id}>
                  {i > 0 && ', '}
                  <Link to={`/forms/${f.id}`}>
                    {f.name} (version {f.version})
                  </Link>
                </span>
              ))}
            </p>
          )}
        </div>
      ) : (
        remove.isError && <ErrorSummary message={describeError(remove.error)} />
      )}
    </ConfirmDialog>
  );
}
