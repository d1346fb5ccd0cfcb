import { useMutation, useQueryClient } from '@tanstack/react-query';
import { describeError } from '../../lib/problems';
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { apiKeyKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import type { paths } from '../../api/generated/schema';
import {
  Button,
  ConfirmDialog,
  CursorTable,
  EmptyState,
  NotAllowed,
  PageHeader,
  StatusBadge,
  useCursorList,
  useToast,
  type Column,
} from '../../components';
import { formatDateTime, relative } from '../../lib/format';
import { CreateKeyDialog } from './CreateKeyDialog';

type Key = paths['/v1/api-keys']['get']['responses'][200]['content']['application/json']['data'][number];

/** A key's scopes in words: "Forms: read and write, Contacts: read", or "Everything (admin)". */
export function permissionWords(scopes: readonly string[]): string {
  if (scopes.includes('admin')) return 'Everything (admin)';
  const by = new Map<string, string>();
  for (const scope of scopes) {
    if (scope === 'send:emails') {
      by.set('transactional email', 'send');
      continue;
    }
    const [verb = '', what = ''] = scope.split(':');
    const words = verb === 'write' ? 'read and write' : verb;
    if (verb === 'write' || !by.has(what)) by.set(what, words);
  }
  return [...by].map(([what, words]) => `${what.charAt(0).toUpperCase()}${what.slice(1)}: ${words}`).join(', ');
}

export default function ApiKeys() {
  const can = useCan();
  const manage = can('manage:keys');
  const toast = useToast();
  const qc = useQueryClient();
  const [creating, setCreating] = useState(false);
  const [revoking, setRevoking] = useState<Key | null>(null);
  const list = useCursorList<Key>(
    apiKeyKeys.list(),
    async (cursor) => unwrap(await api.GET('/v1/api-keys', { params: { query: { cursor, limit: 50 } } })),
    { enabled: manage },
  );
  const revoke = useMutation({
    mutationFn: async (id: string) =>
      unwrap(await api.DELETE('/v1/api-keys/{keyId}', { params: { path: { keyId: id } } })),
    onSuccess: () => {
      toast.success('The key is revoked: requests with it now fail.');
      setRevoking(null);
      void qc.invalidateQueries({ queryKey: apiKeyKeys.list() });
    },
    onError: (err) => toast.error(describeError(err)),
  });

  const columns: Column<Key>[] = [
    { key: 'name', header: 'Name', cell: (k) => <span className="cell-main">{k.name}</span> },
    { key: 'scopes', header: 'Permissions', cell: (k) => <span className="small">{permissionWords(k.scopes)}</span> },
    { key: 'created', header: 'Created', cell: (k) => <span className="nowrap">{formatDateTime(k.createdAt)}</span> },
    { key: 'used', header: 'Last used', cell: (k) => <span className="nowrap">{relative(k.lastUsedAt)}</span> },
    {
      key: 'status',
      header: 'Status',
      cell: (k) =>
        k.revokedAt ? (
          <StatusBadge status="revoked" label={`Revoked ${formatDateTime(k.revokedAt)}`} />
        ) : (
          <StatusBadge status="active" />
        ),
    },
    {
      key: 'actions',
      header: 'Actions',
      hiddenHeader: true,
      cell: (k) =>
        !k.revokedAt ? (
          <Button size="sm" variant="danger" onClick={() => setRevoking(k)} aria-label={`Revoke ${k.name}`}>
            Revoke
          </Button>
        ) : null,
    },
  ];

  if (!manage)
    return (
      <>
        <PageHeader title="API keys" description="Keys let other programs use the API." />
        <NotAllowed page action="manage:keys" title="API keys are managed by admins" />
      </>
    );
  return (
    <>
      <PageHeader
        title="API keys"
        description="Keys let other programs use the API. Each key has only the permissions you give it."
        actions={
          <Button variant="primary" onClick={() => setCreating(true)}>
            Create API key
          </Button>
        }
      />
      <CursorTable
        list={list}
        columns={columns}
        rowKey={(k) => k.id}
        caption="API keys"
        empty={
          <div className="card">
            <EmptyState
              title="No API keys yet"
              action={
                <Button variant="primary" onClick={() => setCreating(true)}>
                  Create API key
                </Button>
              }
            >
              Create a key to call the API from your website or scripts.
            </EmptyState>
          </div>
        }
      />
      <CreateKeyDialog open={creating} onClose={() => setCreating(false)} />
      <ConfirmDialog
        open={revoking !== null}
        title="Revoke this key?"
        confirmLabel="Revoke key"
        danger
        busy={revoke.isPending}
        onClose={() => setRevoking(null)}
        onConfirm={() => revoking && revoke.mutate(revoking.id)}
      >
        <p>
          “{revoking?.name}” stops working at once. Programs that use it will get 401 errors. This cannot be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}
