/** The automation's runs, newest first, filtered by status. */
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { automationKeys, contactKeys } from '../../api/keys';
import { CursorTable, EmptyState, Select, StatusBadge, useCursorList, type Column } from '../../components';
import {
  allSteps,
  automationsApi,
  stepLabel,
  type Automation,
  type DraftStep,
  type Run,
  type RunStatus,
} from '../../lib/automations';
import { formatDateTime } from '../../lib/format';

/** A run's contact by its email (runs name the contact by id; each is asked for once and cached). */
function ContactCell({ id }: { id: string }) {
  const q = useQuery({
    queryKey: contactKeys.detail(id),
    queryFn: async () => unwrap(await api.GET('/v1/contacts/{contactId}', { params: { path: { contactId: id } } })),
    staleTime: 60_000,
    retry: false,
  });
  return (
    <Link to={`/contacts/${id}`} className="break">
      {q.data?.email ?? (q.isError ? id : '…')}
    </Link>
  );
}

const RUN_TONES: Record<RunStatus, 'success' | 'info' | 'neutral' | 'warning'> = {
  ACTIVE: 'info',
  WAITING: 'warning',
  COMPLETED: 'success',
  EXITED: 'neutral',
};

export function RunsPanel({
  automation,
  numbers,
  steps,
}: {
  automation: Automation;
  numbers: Map<string, number>;
  steps: DraftStep[];
}) {
  const [status, setStatus] = useState<RunStatus | ''>('');
  const list = useCursorList<Run>(
    automationKeys.runs(automation.id, status),
    (cursor) => automationsApi.runs(automation.id, { cursor, limit: 50, status: status || undefined }),
    { refetchInterval: automation.status === 'ACTIVE' ? 10_000 : false },
  );
  const byId = new Map(allSteps(steps).map((s) => [s.id, s]));
  const columns: Column<Run>[] = [
    { key: 'contact', header: 'Contact', cell: (r) => <ContactCell id={r.contactId} /> },
    { key: 'status', header: 'Status', cell: (r) => <StatusBadge status={r.status} tone={RUN_TONES[r.status]} /> },
    {
      key: 'step',
      header: 'Step',
      cell: (r) => (
        <span className="nowrap">
          {r.stepId ? (
            byId.get(r.stepId) ? (
              `${numbers.get(r.stepId)}. ${stepLabel(byId.get(r.stepId)!.type)}`
            ) : (
              <code>{r.stepId}</code>
            )
          ) : (
            '—'
          )}
        </span>
      ),
    },
    { key: 'version', header: 'Version', numeric: true, wideOnly: true, cell: (r) => `v${r.version}` },
    { key: 'entered', header: 'Entered', cell: (r) => <span className="nowrap">{formatDateTime(r.enteredAt)}</span> },
    {
      key: 'due',
      header: 'Due / finished',
      cell: (r) => (
        <span className="nowrap">
          {r.finishedAt ? formatDateTime(r.finishedAt) : r.dueAt ? formatDateTime(r.dueAt) : '—'}
        </span>
      ),
    },
    { key: 'reason', header: 'Exit reason', wideOnly: true, cell: (r) => r.exitReason ?? '—' },
  ];
  return (
    <section className="stack-sm" aria-labelledby="runs-h">
      <div className="card-header">
        <h2 id="runs-h">Runs</h2>
        <Select
          label="Status"
          value={status}
          onChange={(e) => setStatus(e.target.value as RunStatus | '')}
          options={[
            { value: '', label: 'Any' },
            { value: 'ACTIVE', label: 'Active' },
            { value: 'WAITING', label: 'Waiting' },
            { value: 'COMPLETED', label: 'Completed' },
            { value: 'EXITED', label: 'Exited' },
          ]}
        />
      </div>
      <CursorTable
        list={list}
        columns={columns}
        rowKey={(r) => r.id}
        caption="Runs, newest first"
        empty={
          <div className="card">
            <EmptyState title={status ? 'No runs with this status' : 'No runs yet'}>
              {automation.status === 'ACTIVE'
                ? 'Each contact that meets the trigger starts a run.'
                : 'Runs start once the automation is active.'}
            </EmptyState>
          </div>
        }
      />
    </section>
  );
}
