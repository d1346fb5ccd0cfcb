/**
 * The audit log (GET /v1/audit-log, docs/audit-log.md): who changed what in the workspace, newest first, in plain words
 * ("Lin created the API key “Zapier”"), with the fields that changed. Filters: what (an action or a kind of thing),
 * who (a person), and a date range. Admins and owners read it; others are told who can.
 */
import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { api, unwrap } from '../../api/client';
import { auditKeys, userKeys } from '../../api/keys';
import { useCan, useSession } from '../../api/session';
import { CursorTable, EmptyState, Input, PageHeader, Select, useCursorList, type Column } from '../../components';
import { formatDateTime } from '../../lib/format';
import { ACTION_GROUPS, actionLabel, changeLines, describe, type AuditEntry } from './describe';
import '../../styles/audit.css';

/** A date input's day as the start of that day (from) or of the next (to), in the reader's zone, as RFC 3339. */
function dayBound(day: string, end: boolean): string | undefined {
  if (!day) return undefined;
  const d = new Date(`${day}T00:00:00`);
  if (Number.isNaN(d.getTime())) return undefined;
  if (end) d.setDate(d.getDate() + 1);
  return d.toISOString();
}

export default function AuditLog() {
  const can = useCan();
  const session = useSession();
  const allowed = can('read:audit');
  const [action, setAction] = useState('');
  const [actor, setActor] = useState('');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const people = useQuery({
    queryKey: userKeys.list(),
    queryFn: async () => unwrap(await api.GET('/v1/users', { params: { query: { limit: 100 } } })),
    enabled: allowed,
  });
  const names = useMemo(
    () => new Map((people.data?.data ?? []).map((u) => [u.id, u.name || u.email] as [string, string])),
    [people.data],
  );
  const list = useCursorList<AuditEntry>(
    auditKeys.list({ action, actor, from, to }),
    async (cursor) =>
      unwrap(
        await api.GET('/v1/audit-log', {
          params: {
            query: {
              cursor,
              limit: 50,
              ...(action ? { action } : {}),
              ...(actor ? { actor } : {}),
              ...(from ? { from: dayBound(from, false) } : {}),
              ...(to ? { to: dayBound(to, true) } : {}),
            },
          },
        }),
      ),
    { enabled: allowed },
  );
  const me = session.user.id;
  const columns: Column<AuditEntry>[] = [
    {
      key: 'what',
      header: 'What happened',
      cell: (e) => {
        const lines = changeLines(e);
        return (
          <div className="stack-sm audit-what">
            <span className="cell-main">{describe(e, me, names)}</span>
            {lines.length > 0 && (
              <ul className="audit-changes muted small" aria-label="Changes">
                {lines.map((l) => (
                  <li key={l}>{l}</li>
                ))}
              </ul>
            )}
            <span className="muted small audit-when-narrow">{formatDateTime(e.occurredAt)}</span>
          </div>
        );
      },
    },
    {
      key: 'when',
      header: 'When',
      wideOnly: true,
      cell: (e) => <span className="nowrap small">{formatDateTime(e.occurredAt)}</span>,
    },
    {
      key: 'from',
      header: 'From',
      wideOnly: true,
      cell: (e) => <span className="muted small">{e.ip ?? '—'}</span>,
    },
  ];
  const filtered = Boolean(action || actor || from || to);
  return (
    <>
      <PageHeader
        title="Audit log"
        description="Who changed what in this workspace: settings, API keys, people, domains, webhooks, sends and suppressions. Kept for a year."
      />
      {!allowed ? (
        <div className="card">
          <EmptyState title="Only admins and owners can read the audit log">
            Ask an admin or an owner of the workspace if you need to know who changed something.
          </EmptyState>
        </div>
      ) : (
        <>
          <div className="audit-filters" role="search" aria-label="Filter the audit log">
            <Select
              label="What"
              value={action}
              onChange={(ev) => setAction(ev.target.value)}
              options={[
                { value: '', label: 'Everything' },
                ...ACTION_GROUPS.flatMap((g) =>
                  g.value === 'deleted'
                    ? g.actions.map((a) => ({ value: a, label: `${g.label}: ${actionLabel(a).toLowerCase()}` }))
                    : [
                        { value: g.value, label: `${g.label}: all` },
                        ...g.actions.map((a) => ({ value: a, label: `${g.label}: ${actionLabel(a).toLowerCase()}` })),
                      ],
                ),
              ]}
            />
            <Select
              label="Who"
              value={actor}
              onChange={(ev) => setActor(ev.target.value)}
              options={[
                { value: '', label: 'Anyone' },
                ...(people.data?.data ?? []).map((u) => ({
                  value: u.id,
                  label: u.id === me ? `You (${u.email})` : u.name ? `${u.name} (${u.email})` : u.email,
                })),
                { value: 'cli', label: 'The formcast command' },
              ]}
            />
            <Input
              label="From"
              type="date"
              value={from}
              max={to || undefined}
              onChange={(ev) => setFrom(ev.target.value)}
            />
            <Input
              label="To"
              type="date"
              value={to}
              min={from || undefined}
              onChange={(ev) => setTo(ev.target.value)}
            />
          </div>
          <CursorTable
            list={list}
            columns={columns}
            rowKey={(e) => e.id}
            caption="Changes to the workspace, newest first"
            empty={
              <div className="card">
                <EmptyState title={filtered ? 'Nothing matches these filters' : 'No changes yet'}>
                  {filtered
                    ? 'Try another person, kind of change or date range.'
                    : 'Changes to settings, keys, people, domains, webhooks, sends and suppressions will be listed here.'}
                </EmptyState>
              </div>
            }
          />
        </>
      )}
    </>
  );
}
