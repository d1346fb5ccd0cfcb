/** Pending and past invitations, revoked here. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { describeError } from '../../lib/problems';
import { api, unwrap } from '../../api/client';
import { userKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import type { paths } from '../../api/generated/schema';
import { Button, CursorTable, EmptyState, StatusBadge, useCursorList, useToast, type Column } from '../../components';
import { formatDateTime } from '../../lib/format';

type Invitation = paths['/v1/invitations']['get']['responses'][200]['content']['application/json']['data'][number];

export function Invitations({ onInvite }: { onInvite: () => void }) {
  const can = useCan();
  const toast = useToast();
  const qc = useQueryClient();
  const manage = can('manage:people');
  const list = useCursorList<Invitation>(
    userKeys.invitations(),
    async (cursor) => unwrap(await api.GET('/v1/invitations', { params: { query: { cursor, limit: 50 } } })),
    { enabled: manage },
  );
  const revoke = useMutation({
    mutationFn: async (id: string) =>
      unwrap(await api.DELETE('/v1/invitations/{invitationId}', { params: { path: { invitationId: id } } })),
    onSuccess: () => {
      toast.success('Invitation revoked.');
      void qc.invalidateQueries({ queryKey: userKeys.invitations() });
    },
    onError: (err) => toast.error(describeError(err)),
  });
  if (!manage) return null;
  const columns: Column<Invitation>[] = [
    { key: 'email', header: 'Email', cell: (i) => <span className="cell-main">{i.email}</span> },
    { key: 'role', header: 'Role', cell: (i) => i.role },
    {
      key: 'status',
      header: 'Status',
      cell: (i) => <StatusBadge status={i.status === 'EXPIRED' ? 'expired' : i.status} />,
    },
    { key: 'expires', header: 'Expires', cell: (i) => <span className="nowrap">{formatDateTime(i.expiresAt)}</span> },
    {
      key: 'actions',
      header: 'Actions',
      hiddenHeader: true,
      cell: (i) =>
        i.status === 'PENDING' ? (
          <Button size="sm" onClick={() => revoke.mutate(i.id)} aria-label={`Revoke the invitation of ${i.email}`}>
            Revoke
          </Button>
        ) : null,
    },
  ];
  return (
    <section className="stack-sm" aria-labelledby="inv-h">
      <h2 id="inv-h">Invitations</h2>
      <CursorTable
        list={list}
        columns={columns}
        rowKey={(i) => i.id}
        caption="Invitations"
        empty={
          <div className="card">
            <EmptyState title="No invitations" action={<Button onClick={onInvite}>Invite a person</Button>} />
          </div>
        }
      />
    </section>
  );
}
