import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, unwrap } from '../api/client';
import { domainKeys } from '../api/keys';
import { useCan } from '../api/session';
import type { paths } from '../api/generated/schema';
import { Button, CursorTable, Dialog, EmptyState, ErrorSummary, Input, PageHeader, StatusBadge, useCursorList, type Column } from '../components';
import { formatDateTime } from '../lib/format';
import { otherErrors, problemOf } from '../lib/forms';

export type Domain = paths['/v1/domains/{domainId}']['get']['responses'][200]['content']['application/json'];
type ListDomain = paths['/v1/domains']['get']['responses'][200]['content']['application/json']['data'][number];

function AddDomainDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
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
  const { fields, message } = problemOf(add.error);
  const submit = (e: FormEvent) => { e.preventDefault(); add.mutate(); };
  return (
    <Dialog open={open} title="Add a sending domain" onClose={onClose} busy={add.isPending} footer={
      <>
        <Button onClick={onClose} disabled={add.isPending}>Cancel</Button>
        <Button type="submit" form="add-domain" variant="primary" loading={add.isPending} disabled={!name.trim()}>Add domain</Button>
      </>
    }>
      <form id="add-domain" className="stack" onSubmit={submit} noValidate>
        <ErrorSummary message={add.isError ? message : null} errors={otherErrors(fields, ['/name'])} />
        <Input label="Domain" placeholder="example.com" value={name} onChange={(e) => setName(e.target.value)} error={fields['/name']} hint="The part after @ in your From address. You will get DNS records to publish." data-autofocus />
      </form>
    </Dialog>
  );
}

export default function Domains() {
  const can = useCan();
  const [adding, setAdding] = useState(false);
  const list = useCursorList<ListDomain>(domainKeys.list(), async (cursor) => unwrap(await api.GET('/v1/domains', { params: { query: { cursor, limit: 50 } } })));
  const columns: Column<ListDomain>[] = [
    { key: 'name', header: 'Domain', cell: (d) => <Link className="cell-main" to={`/domains/${d.id}`}>{d.name}</Link> },
    { key: 'status', header: 'Status', cell: (d) => <StatusBadge status={d.status} /> },
    { key: 'verified', header: 'Verified', cell: (d) => <span className="nowrap">{formatDateTime(d.verifiedAt)}</span> },
    { key: 'checked', header: 'Last checked', cell: (d) => <span className="nowrap">{formatDateTime(d.verification?.checkedAt)}</span> },
  ];
  const canWrite = can('write:domains');
  return (
    <>
      <PageHeader title="Domains" description="Domains you send from. Each needs DNS records that prove it is yours and sign your mail (DKIM)." actions={canWrite && <Button variant="primary" onClick={() => setAdding(true)}>Add domain</Button>} />
      <CursorTable list={list} columns={columns} rowKey={(d) => d.id} caption="Sending domains" empty={
        <div className="card"><EmptyState title="No sending domains yet" action={canWrite && <Button variant="primary" onClick={() => setAdding(true)}>Add your first domain</Button>}>Broadcasts and confirmation emails need a verified domain to send from.</EmptyState></div>
      } />
      <AddDomainDialog open={adding} onClose={() => setAdding(false)} />
    </>
  );
}
