/** Duplicate and Delete for one form (its list row and its page): a copy is a new draft; only a draft is deleted. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api, unwrap } from '../../api/client';
import { formKeys } from '../../api/keys';
import { CopyDeleteActions, useToast } from '../../components';
import { duplicateForm } from '../../lib/duplicate';

interface FormLike {
  id: string;
  name: string;
  status: 'DRAFT' | 'PUBLISHED' | 'ARCHIVED';
  slug: string | null;
  version: number;
}

function whyNot(f: FormLike): string | null {
  if (f.status === 'PUBLISHED')
    return `only a draft can be deleted, and this version is published${f.slug ? ` (its page /f/${f.slug} is live)` : ''}.`;
  if (f.status === 'ARCHIVED')
    return 'only a draft can be deleted, and this is an archived version, kept so that you can roll back to it.';
  return null;
}

export function FormActions({
  form,
  size = 'md',
  onDeleted,
}: {
  form: FormLike;
  size?: 'sm' | 'md';
  onDeleted?: () => void;
}) {
  const qc = useQueryClient();
  const toast = useToast();
  const navigate = useNavigate();
  const duplicate = useMutation({
    mutationFn: () => duplicateForm(form.id),
    onSuccess: (copy) => {
      void qc.invalidateQueries({ queryKey: formKeys.lists() });
      toast.success(`Copied: “${copy.name}” is a new draft.`);
      navigate(`/forms/${copy.id}`);
    },
    onError: (err) => toast.error(`Not copied: ${err.message}`),
  });
  const remove = useMutation({
    mutationFn: async () => unwrap(await api.DELETE('/v1/forms/{formId}', { params: { path: { formId: form.id } } })),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: formKeys.lists() });
      void qc.invalidateQueries({ queryKey: formKeys.versions() });
      qc.removeQueries({ queryKey: formKeys.detail(form.id) });
      toast.success(`Deleted the draft “${form.name}”.`);
      onDeleted?.();
    },
    onError: (err) => toast.error(`Not deleted: ${err.message}`),
  });
  return (
    <CopyDeleteActions
      kind="form"
      name={form.name}
      size={size}
      whyNot={whyNot(form)}
      explanation={
        form.status === 'PUBLISHED'
          ? 'Its submissions and stats stay with it. To change it, open it and use “Edit as a new version”: publishing the new draft archives this version. Duplicate makes an independent copy.'
          : 'Its submissions and stats stay with it. The form’s versions are on its Versions tab.'
      }
      deleteNote={
        form.version > 1
          ? 'This draft version is deleted; the form’s other versions stay as they are.'
          : 'The draft and its settings are deleted.'
      }
      onDuplicate={() => duplicate.mutate()}
      duplicating={duplicate.isPending}
      onDelete={() => remove.mutate()}
      deleting={remove.isPending}
    />
  );
}
