/** A new form: its name and type. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { api, unwrap } from '../../api/client';
import { formKeys } from '../../api/keys';
import { Button, Dialog, ErrorSummary, Input, Select } from '../../components';
import { problemOf } from '../../lib/forms';
import { FORM_TYPES } from './form';

export function NewFormDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [name, setName] = useState('');
  const [type, setType] = useState<'SIGN_UP' | 'SURVEY'>('SIGN_UP');
  const create = useMutation({
    mutationFn: async () =>
      unwrap(await api.POST('/v1/forms', { body: { name: name.trim(), type, fieldMapping: { email: 'email' } } })),
    onSuccess: (form) => {
      void qc.invalidateQueries({ queryKey: formKeys.lists() });
      onClose();
      navigate(`/forms/${form.id}`);
    },
  });
  const { fields, message, rest } = problemOf(create.error, { '/name': 'Name', '/type': 'Type' });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <Dialog
      open={open}
      title="New form"
      onClose={onClose}
      busy={create.isPending}
      footer={
        <>
          <Button onClick={onClose} disabled={create.isPending}>
            Cancel
          </Button>
          <Button type="submit" form="new-form" variant="primary" loading={create.isPending} disabled={!name.trim()}>
            Create form
          </Button>
        </>
      }
    >
      <form id="new-form" className="stack" onSubmit={submit} noValidate>
        <ErrorSummary message={message} errors={rest} />
        <Input
          label="Name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          required
          maxLength={200}
          error={fields['/name']}
          hint="For you; visitors see the page title."
          data-autofocus
        />
        <Select
          label="Type"
          value={type}
          onChange={(e) => setType(e.target.value as 'SIGN_UP' | 'SURVEY')}
          options={FORM_TYPES}
          error={fields['/type']}
          hint="A sign-up form creates or updates a contact; a survey records answers."
        />
      </form>
    </Dialog>
  );
}
