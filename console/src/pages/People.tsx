/** People: the workspace's users and their roles, invitations, and the signed-in user's own sessions. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client';
import { userKeys } from '../api/keys';
import { useCan, useSession, type Role } from '../api/session';
import type { paths } from '../api/generated/schema';
import { Button, ConfirmDialog, CursorTable, Dialog, EmptyState, ErrorSummary, Input, PageHeader, QueryState, Select, StatusBadge, useCursorList, useToast, type Column } from '../components';
import { formatDateTime, relative } from '../lib/format';
import { otherErrors, problemOf } from '../lib/forms';

type User = paths['/v1/users']['get']['responses'][200]['content']['application/json']['data'][number];
type Invitation = paths['/v1/invitations']['get']['responses'][200]['content']['application/json']['data'][number];
type SessionRow = paths['/v1/session/sessions']['get']['responses'][200]['content']['application/json']['data'][number];

const ROLES: { value: Role; label: string }[] = [
  { value: 'viewer', label: 'Viewer — reads everything' },
  { value: 'editor', label: 'Editor — also forms, contacts, broadcasts' },
  { value: 'admin', label: 'Admin — also domains, webhooks, keys, people' },
  { value: 'owner', label: 'Owner — everything, and the workspace' },
];

function InviteDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const qc = useQueryClient();
  const toast = useToast();
  const can = useCan();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('editor');
  const invite = useMutation({
    mutationFn: async () => unwrap(await api.POST('/v1/invitations', { body: { email: email.trim(), role } })),
    onSuccess: (inv) => {
      void qc.invalidateQueries({ queryKey: userKeys.invitations() });
      toast.success(inv.emailSent === false ? `Invitation created, but no email could be sent to ${inv.email}.` : `Invitation sent to ${inv.email}.`);
      setEmail('');
      onClose();
    },
  });
  const { fields, message } = problemOf(invite.error);
  const submit = (e: FormEvent) => { e.preventDefault(); invite.mutate(); };
  // Only a holder of `admin` (an owner) gives the owner role, as the API checks.
  const roles = can('admin') ? ROLES : ROLES.filter((r) => r.value !== 'owner');
  return (
    <Dialog open={open} title="Invite a person" onClose={onClose} busy={invite.isPending} footer={
      <>
        <Button onClick={onClose} disabled={invite.isPending}>Cancel</Button>
        <Button type="submit" form="invite" variant="primary" loading={invite.isPending} disabled={!email.trim()}>Send invitation</Button>
      </>
    }>
      <form id="invite" className="stack" onSubmit={submit} noValidate>
        <ErrorSummary message={invite.isError ? message : null} errors={otherErrors(fields, ['/email', '/role'])} />
        <Input label="Email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} error={fields['/email']} hint="They get a link, valid 7 days, to choose their name and password." data-autofocus />
        <Select label="Role" value={role} onChange={(e) => setRole(e.target.value as Role)} options={roles} error={fields['/role']} />
      </form>
    </Dialog>
  );
}

function Users() {
  const can = useCan();
  const session = useSession();
  const toast = useToast();
  const qc = useQueryClient();
  const manage = can('manage:people');
  const [removing, setRemoving] = useState<User | null>(null);
  const list = useCursorList<User>(userKeys.list(), async (cursor) => unwrap(await api.GET('/v1/users', { params: { query: { cursor, limit: 50 } } })));
  const setRole = useMutation({
    mutationFn: async ({ id, role }: { id: string; role: Role }) => unwrap(await api.PUT('/v1/users/{userId}', { params: { path: { userId: id } }, body: { role } })),
    onSuccess: (u) => { toast.success(`${u.email} is now ${u.role}.`); void qc.invalidateQueries({ queryKey: userKeys.list() }); },
    onError: (err) => { toast.error(err.message); void qc.invalidateQueries({ queryKey: userKeys.list() }); },
  });
  const remove = useMutation({
    mutationFn: async (id: string) => unwrap(await api.DELETE('/v1/users/{userId}', { params: { path: { userId: id } } })),
    onSuccess: () => { toast.success('Removed: their sessions ended.'); setRemoving(null); void qc.invalidateQueries({ queryKey: userKeys.list() }); },
    onError: (err) => toast.error(err.message),
  });
  const roles = can('admin') ? ROLES : ROLES.filter((r) => r.value !== 'owner');
  const columns: Column<User>[] = [
    { key: 'who', header: 'Person', cell: (u) => <div><span className="cell-main">{u.name || u.email}</span>{u.id === session.user.id && <span className="muted"> (you)</span>}<div className="muted small">{u.email}</div></div> },
    { key: 'role', header: 'Role', cell: (u) => manage && u.id !== session.user.id && (can('admin') || u.role !== 'owner') ? (
      <select className="select" aria-label={`Role of ${u.email}`} value={u.role} onChange={(e) => setRole.mutate({ id: u.id, role: e.target.value as Role })}>
        {roles.map((r) => <option key={r.value} value={r.value}>{r.value}</option>)}
      </select>
    ) : u.role },
    { key: 'last', header: 'Last sign-in', cell: (u) => <span className="nowrap">{relative(u.lastLoginAt)}</span> },
    { key: 'actions', header: 'Actions', hiddenHeader: true, cell: (u) => manage && u.id !== session.user.id ? <Button size="sm" variant="danger" onClick={() => setRemoving(u)} aria-label={`Remove ${u.email}`}>Remove</Button> : null },
  ];
  return (
    <section className="stack-sm" aria-labelledby="users-h">
      <h2 id="users-h">People</h2>
      <CursorTable list={list} columns={columns} rowKey={(u) => u.id} caption="People of the workspace" empty="No people yet" />
      <ConfirmDialog open={removing !== null} title={`Remove ${removing?.email}?`} confirmLabel="Remove" danger busy={remove.isPending} onClose={() => setRemoving(null)} onConfirm={() => removing && remove.mutate(removing.id)}>
        <p>They are signed out everywhere at once and can no longer sign in to this workspace.</p>
      </ConfirmDialog>
    </section>
  );
}

function Invitations({ onInvite }: { onInvite: () => void }) {
  const can = useCan();
  const toast = useToast();
  const qc = useQueryClient();
  const manage = can('manage:people');
  const list = useCursorList<Invitation>(userKeys.invitations(), async (cursor) => unwrap(await api.GET('/v1/invitations', { params: { query: { cursor, limit: 50 } } })), { enabled: manage });
  const revoke = useMutation({
    mutationFn: async (id: string) => unwrap(await api.DELETE('/v1/invitations/{invitationId}', { params: { path: { invitationId: id } } })),
    onSuccess: () => { toast.success('Invitation revoked.'); void qc.invalidateQueries({ queryKey: userKeys.invitations() }); },
    onError: (err) => toast.error(err.message),
  });
  if (!manage) return null;
  const columns: Column<Invitation>[] = [
    { key: 'email', header: 'Email', cell: (i) => <span className="cell-main">{i.email}</span> },
    { key: 'role', header: 'Role', cell: (i) => i.role },
    { key: 'status', header: 'Status', cell: (i) => <StatusBadge status={i.status === 'EXPIRED' ? 'expired' : i.status} /> },
    { key: 'expires', header: 'Expires', cell: (i) => <span className="nowrap">{formatDateTime(i.expiresAt)}</span> },
    { key: 'actions', header: 'Actions', hiddenHeader: true, cell: (i) => i.status === 'PENDING' ? <Button size="sm" onClick={() => revoke.mutate(i.id)} aria-label={`Revoke the invitation of ${i.email}`}>Revoke</Button> : null },
  ];
  return (
    <section className="stack-sm" aria-labelledby="inv-h">
      <h2 id="inv-h">Invitations</h2>
      <CursorTable list={list} columns={columns} rowKey={(i) => i.id} caption="Invitations" empty={<div className="card"><EmptyState title="No invitations" action={<Button onClick={onInvite}>Invite a person</Button>} /></div>} />
    </section>
  );
}

/** "Chrome 131 on Linux" from a User-Agent header; the header itself stays in the cell's title. */
function browserName(ua: string | null | undefined): string {
  if (!ua) return 'Unknown browser';
  const version = (re: RegExp) => re.exec(ua)?.[1]?.split('.')[0];
  const browser = /Edg\//.test(ua) ? `Edge ${version(/Edg\/([\d.]+)/)}`
    : /Firefox\//.test(ua) ? `Firefox ${version(/Firefox\/([\d.]+)/)}`
    : /HeadlessChrome\//.test(ua) ? `Headless Chrome ${version(/HeadlessChrome\/([\d.]+)/)}`
    : /Chrome\//.test(ua) ? `Chrome ${version(/Chrome\/([\d.]+)/)}`
    : /Safari\//.test(ua) && /Version\//.test(ua) ? `Safari ${version(/Version\/([\d.]+)/)}`
    : /curl\//.test(ua) ? 'curl' : null;
  const os = /iPhone|iPad/.test(ua) ? 'iOS' : /Android/.test(ua) ? 'Android' : /Windows/.test(ua) ? 'Windows' : /Mac OS X|Macintosh/.test(ua) ? 'macOS' : /CrOS/.test(ua) ? 'ChromeOS' : /Linux/.test(ua) ? 'Linux' : null;
  if (!browser) return ua.length > 60 ? `${ua.slice(0, 57)}…` : ua;
  return os ? `${browser} on ${os}` : browser;
}

function MySessions() {
  const toast = useToast();
  const qc = useQueryClient();
  const q = useQuery({ queryKey: userKeys.sessions(), queryFn: async () => unwrap(await api.GET('/v1/session/sessions')) });
  const end = useMutation({
    mutationFn: async (id: string) => unwrap(await api.DELETE('/v1/session/sessions/{sessionId}', { params: { path: { sessionId: id } } })),
    onSuccess: () => { toast.success('Signed out on that browser.'); void qc.invalidateQueries({ queryKey: userKeys.sessions() }); },
    onError: (err) => toast.error(err.message),
  });
  const columns: Column<SessionRow>[] = [
    { key: 'ua', header: 'Browser', cell: (s) => <div className="row"><span title={s.userAgent ?? undefined}>{browserName(s.userAgent)}</span>{s.current && <StatusBadge status="active" label="This browser" />}</div> },
    { key: 'ip', header: 'Address', cell: (s) => s.ip ?? '—' },
    { key: 'seen', header: 'Last active', cell: (s) => <span className="nowrap">{relative(s.lastSeenAt)}</span> },
    { key: 'actions', header: 'Actions', hiddenHeader: true, cell: (s) => s.current ? null : <Button size="sm" onClick={() => end.mutate(s.id)}>Sign out</Button> },
  ];
  return (
    <section className="stack-sm" aria-labelledby="sess-h">
      <h2 id="sess-h">Your sessions</h2>
      <QueryState query={q}>{(d) => d.data.length === 0 ? <div className="card"><EmptyState title="No sessions">You are using an API key.</EmptyState></div> : (
        <CursorTableStatic rows={d.data} columns={columns} />
      )}</QueryState>
    </section>
  );
}

function CursorTableStatic({ rows, columns }: { rows: SessionRow[]; columns: Column<SessionRow>[] }) {
  return (
    <div className="table-wrap">
      <table className="table">
        <caption className="visually-hidden">Your sessions</caption>
        <thead><tr>{columns.map((c) => <th key={c.key} scope="col">{c.hiddenHeader ? <span className="visually-hidden">{c.header}</span> : c.header}</th>)}</tr></thead>
        <tbody>{rows.map((r) => <tr key={r.id}>{columns.map((c) => <td key={c.key}>{c.cell(r)}</td>)}</tr>)}</tbody>
      </table>
    </div>
  );
}

export default function People() {
  const can = useCan();
  const [inviting, setInviting] = useState(false);
  return (
    <>
      <PageHeader title="People" description="Who can sign in to this workspace, with what role." actions={can('manage:people') && <Button variant="primary" onClick={() => setInviting(true)}>Invite a person</Button>} />
      <div className="stack">
        <Users />
        <Invitations onInvite={() => setInviting(true)} />
        <MySessions />
      </div>
      <InviteDialog open={inviting} onClose={() => setInviting(false)} />
    </>
  );
}
