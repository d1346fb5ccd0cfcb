/** A new sending domain: its name; its DNS records are on its page. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { api, unwrap } from '../../api/client';
import { domainKeys } from '../../api/keys';
import { Button, Dialog, ErrorSummary, Input } from '../../components';
import { problemOf } from '../../lib/forms';

export function AddDomainDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const add = useMutation({
    mutationFn: async () => unwrap(await api.POST('/v1/domains', { body: { name: name.trim().toLowerCase() } })),
    onSuccess: (d) => {
      void qc.invalidateQueries({ queryKey: domainKeys.lists() });
      onClose();
      navigate(`/domains/${d.id}`);
    },
  });
  const { fields, message, rest } = problemOf(add.error, {
    '/name': { label: 'Domain', messages: { pattern: 'Domain must be a domain name, like example.com.' } },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    add.mutate();
  };
  return (
    <Dialog
      open={open}
      title="Add a sending domain"
      onClose={onClose}
      busy={add.isPending}
      footer={
        <>
          <Button onClick={onClose} disabled={add.isPending}>
            Cancel
          </Button>
          <Button type="submit" form="add-domain" variant="primary" loading={add.isPending} disabled={!name.trim()}>
            Add domain
          </Button>
        </>
      }
    >
      <form id="add-domain" className="stack" onSubmit={submit} noValidate>
        <ErrorSummary message={message} errors={rest} />
        <Input
          label="Domain"
          placeholder="example.com"
          value={name}
          onChange={(e) => setName(e.target.value)}
          error={fields['/name']}
          hint="The part after @ in your From address. You will get DNS records to publish."
          data-autofocus
        />
      </form>
    </Dialog>
  );
}
