import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client';
import { apiKeyKeys } from '../api/keys';
import { useCan } from '../api/session';
import type { paths } from '../api/generated/schema';
import { Button, Checkbox, ConfirmDialog, CopyField, CursorTable, Dialog, EmptyState, ErrorSummary, Input, PageHeader, StatusBadge, useCursorList, useToast, type Column } from '../components';
import { formatDateTime, relative } from '../lib/format';
import { otherErrors, problemOf } from '../lib/forms';

type Key = paths['/v1/api-keys']['get']['responses'][200]['content']['application/json']['data'][number];
type Scope = NonNullable<paths['/v1/api-keys']['post']['requestBody']>['content']['application/json']['scopes'][number];
type Created = paths['/v1/api-keys']['post']['responses'][201]['content']['application/json'];

const AREAS = ['forms', 'contacts', 'broadcasts', 'domains', 'webhooks'] as const;

function CreateKeyDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const qc = useQueryClient();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Set<Scope>>(new Set(['read:forms']));
  const [created, setCreated] = useState<Created | null>(null);
  const create = useMutation({
    mutationFn: async () => unwrap(await api.POST('/v1/api-keys', { body: { name: name.trim(), scopes: [...scopes] } })),
    onSuccess: (key) => {
      setCreated(key);
      void qc.invalidateQueries({ queryKey: apiKeyKeys.list() });
    },
  });
  const close = () => {
    setName(''); setScopes(new Set(['read:forms'])); setCreated(null); create.reset();
    onClose();
  };
  const toggle = (s: Scope, on: boolean) => setScopes((prev) => {
    const next = new Set(prev);
    if (on) next.add(s); else next.delete(s);
    return next;
  });
  const { fields, message } = problemOf(create.error);
  const submit = (e: FormEvent) => { e.preventDefault(); create.mutate(); };

  if (created) {
    return (
      <Dialog open={open} title="Your new API key" onClose={close} footer={<Button variant="primary" onClick={close} data-autofocus>Done</Button>}>
        <div className="stack-sm">
          <div className="secret-box stack-sm">
            <strong>Copy this key now: it is shown only once.</strong>
            <CopyField value={created.key ?? ''} what="API key" />
          </div>
          <p className="muted small">“{created.name}” can: {created.scopes.join(', ')}. Send it as <code>Authorization: Bearer …</code>.</p>
        </div>
      </Dialog>
    );
  }
  return (
    <Dialog open={open} title="Create an API key" onClose={close} busy={create.isPending} footer={
      <>
        <Button onClick={close} disabled={create.isPending}>Cancel</Button>
        <Button variant="primary" type="submit" form="create-key" loading={create.isPending} disabled={scopes.size === 0 || !name.trim()}>Create key</Button>
      </>
    }>
      <form id="create-key" className="stack" onSubmit={submit} noValidate>
        <ErrorSummary message={create.isError ? message : null} errors={otherErrors(fields, ['/name', '/scopes'])} />
        <Input label="Name" hint="Who or what uses it, e.g. “Website sign-up”." value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} error={fields['/name']} data-autofocus />
        <fieldset>
          <legend>Permissions</legend>
          <div className="stack-sm">
            <Checkbox label="Admin (everything, including keys and workspace settings)" checked={scopes.has('admin')} onChange={(e) => toggle('admin', e.target.checked)} />
            {AREAS.map((a) => (
              <div key={a} className="row">
                <span className="cell-main" style={{ minWidth: '7rem' }}>{a[0]!.toUpperCase() + a.slice(1)}</span>
                <Checkbox label="Read" checked={scopes.has(`read:${a}` as Scope)} onChange={(e) => toggle(`read:${a}` as Scope, e.target.checked)} disabled={scopes.has('admin')} aria-label={`Read ${a}`} />
                <Checkbox label="Write" checked={scopes.has(`write:${a}` as Scope)} onChange={(e) => toggle(`write:${a}` as Scope, e.target.checked)} disabled={scopes.has('admin')} aria-label={`Write ${a}`} />
              </div>
            ))}
            {fields['/scopes'] && <p className="error">{fields['/scopes']}</p>}
          </div>
        </fieldset>
      </form>
    </Dialog>
  );
}

export default function ApiKeys() {
  const can = useCan();
  const manage = can('manage:keys');
  const toast = useToast();
  const qc = useQueryClient();
  const [creating, setCreating] = useState(false);
  const [revoking, setRevoking] = useState<Key | null>(null);
  const list = useCursorList<Key>(apiKeyKeys.list(), async (cursor) => unwrap(await api.GET('/v1/api-keys', { params: { query: { cursor, limit: 50 } } })));
  const revoke = useMutation({
    mutationFn: async (id: string) => unwrap(await api.DELETE('/v1/api-keys/{keyId}', { params: { path: { keyId: id } } })),
    onSuccess: () => {
      toast.success('The key is revoked: requests with it now fail.');
      setRevoking(null);
      void qc.invalidateQueries({ queryKey: apiKeyKeys.list() });
    },
    onError: (err) => toast.error(err.message),
  });

  const columns: Column<Key>[] = [
    { key: 'name', header: 'Name', cell: (k) => <span className="cell-main">{k.name}</span> },
    { key: 'scopes', header: 'Permissions', cell: (k) => <span className="small">{k.scopes.join(', ')}</span> },
    { key: 'created', header: 'Created', cell: (k) => <span className="nowrap">{formatDateTime(k.createdAt)}</span> },
    { key: 'used', header: 'Last used', cell: (k) => <span className="nowrap">{relative(k.lastUsedAt)}</span> },
    { key: 'status', header: 'Status', cell: (k) => k.revokedAt ? <StatusBadge status="revoked" label={`Revoked ${formatDateTime(k.revokedAt)}`} /> : <StatusBadge status="active" /> },
    { key: 'actions', header: 'Actions', hiddenHeader: true, cell: (k) => manage && !k.revokedAt ? <Button size="sm" variant="danger" onClick={() => setRevoking(k)} aria-label={`Revoke ${k.name}`}>Revoke</Button> : null },
  ];

  return (
    <>
      <PageHeader title="API keys" description="Keys let other programs use the API. Each key has only the permissions you give it." actions={manage && <Button variant="primary" onClick={() => setCreating(true)}>Create API key</Button>} />
      {!manage && <div className="callout callout-info" style={{ marginBottom: '1rem' }}>Only admins can create and revoke API keys.</div>}
      <CursorTable list={list} columns={columns} rowKey={(k) => k.id} caption="API keys" empty={
        <div className="card"><EmptyState title="No API keys yet" action={manage && <Button variant="primary" onClick={() => setCreating(true)}>Create API key</Button>}>Create a key to call the API from your website or scripts.</EmptyState></div>
      } />
      <CreateKeyDialog open={creating} onClose={() => setCreating(false)} />
      <ConfirmDialog open={revoking !== null} title="Revoke this key?" confirmLabel="Revoke key" danger busy={revoke.isPending} onClose={() => setRevoking(null)} onConfirm={() => revoking && revoke.mutate(revoking.id)}>
        <p>“{revoking?.name}” stops working at once. Programs that use it will get 401 errors. This cannot be undone.</p>
      </ConfirmDialog>
    </>
  );
}
