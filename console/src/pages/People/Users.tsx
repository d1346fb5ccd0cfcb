/** The workspace's people, their roles (changed in place) and their removal. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { describeError } from '../../lib/problems';
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { userKeys } from '../../api/keys';
import { useCan, useSession, type Role } from '../../api/session';
import type { paths } from '../../api/generated/schema';
import { Button, ConfirmDialog, CursorTable, useCursorList, useToast, type Column } from '../../components';
import { relative, withArticle } from '../../lib/format';

type User = paths['/v1/users']['get']['responses'][200]['content']['application/json']['data'][number];

export const ROLES: { value: Role; label: string }[] = [
  { value: 'viewer', label: 'Viewer — reads everything' },
  { value: 'editor', label: 'Editor — also forms, contacts, broadcasts' },
  { value: 'admin', label: 'Admin — also domains, webhooks, keys, people' },
  { value: 'owner', label: 'Owner — everything, and the workspace' },
];

export function Users() {
  const can = useCan();
  const session = useSession();
  const toast = useToast();
  const qc = useQueryClient();
  const manage = can('manage:people');
  const [removing, setRemoving] = useState<User | null>(null);
  const list = useCursorList<User>(userKeys.list(), async (cursor) =>
    unwrap(await api.GET('/v1/users', { params: { query: { cursor, limit: 50 } } })),
  );
  const setRole = useMutation({
    mutationFn: async ({ id, role }: { id: string; role: Role }) =>
      unwrap(await api.PUT('/v1/users/{userId}', { params: { path: { userId: id } }, body: { role } })),
    onSuccess: (u) => {
      toast.success(`${u.email} is now ${withArticle(u.role)}.`);
      void qc.invalidateQueries({ queryKey: userKeys.list() });
    },
    onError: (err) => {
      toast.error(describeError(err));
      void qc.invalidateQueries({ queryKey: userKeys.list() });
    },
  });
  const remove = useMutation({
    mutationFn: async (id: string) =>
      unwrap(await api.DELETE('/v1/users/{userId}', { params: { path: { userId: id } } })),
    onSuccess: () => {
      toast.success('Removed: their sessions ended.');
      setRemoving(null);
      void qc.invalidateQueries({ queryKey: userKeys.list() });
    },
    onError: (err) => toast.error(describeError(err)),
  });
  const roles = can('admin') ? ROLES : ROLES.filter((r) => r.value !== 'owner');
  const columns: Column<User>[] = [
    {
      key: 'who',
      header: 'Person',
      cell: (u) => (
        <div>
          <span className="cell-main">{u.name || u.email}</span>
          {u.id === session.user.id && <span className="muted"> (you)</span>}
          <div className="muted small">{u.email}</div>
        </div>
      ),
    },
    {
      key: 'role',
      header: 'Role',
      cell: (u) =>
        manage && u.id !== session.user.id && (can('admin') || u.role !== 'owner') ? (
          <select
            className="select"
            aria-label={`Role of ${u.email}`}
            value={u.role}
            onChange={(e) => setRole.mutate({ id: u.id, role: e.target.value as Role })}
          >
            {roles.map((r) => (
              <option key={r.value} value={r.value}>
                {r.value}
              </option>
            ))}
          </select>
        ) : (
          u.role
        ),
    },
    { key: 'last', header: 'Last sign-in', cell: (u) => <span className="nowrap">{relative(u.lastLoginAt)}</span> },
    {
      key: 'actions',
      header: 'Actions',
      hiddenHeader: true,
      cell: (u) =>
        manage && u.id !== session.user.id ? (
          <Button size="sm" variant="danger" onClick={() => setRemoving(u)} aria-label={`Remove ${u.email}`}>
            Remove
          </Button>
        ) : null,
    },
  ];
  return (
    <section className="stack-sm" aria-labelledby="users-h">
      <h2 id="users-h">People</h2>
      <CursorTable
        list={list}
        columns={columns}
        rowKey={(u) => u.id}
        caption="People of the workspace"
        empty="No people yet"
      />
      <ConfirmDialog
        open={removing !== null}
        title={`Remove ${removing?.email}?`}
        confirmLabel="Remove"
        danger
        busy={remove.isPending}
        onClose={() => setRemoving(null)}
        onConfirm={() => removing && remove.mutate(removing.id)}
      >
        <p>They are signed out everywhere at once and can no longer sign in to this workspace.</p>
      </ConfirmDialog>
    </section>
  );
}
