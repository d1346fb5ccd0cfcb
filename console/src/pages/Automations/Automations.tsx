/** Automations: welcome sequences and follow-ups, with their status, version and trigger; new ones start as drafts. */
import { useState } from 'react';
import { Link } from 'react-router';
import { useCan } from '../../api/session';
import { automationKeys } from '../../api/keys';
import {
  Button,
  CursorTable,
  EmptyState,
  PageHeader,
  Select,
  StatusBadge,
  useCursorList,
  type Column,
} from '../../components';
import { automationsApi, triggerSummary, type Automation, type AutomationStatus } from '../../lib/automations';
import { useFormGroups } from '../../lib/automation-hooks';
import { useSegments, useTopics } from '../../lib/audience';
import { count, formatDateTime } from '../../lib/format';
import { NewAutomationDialog } from './NewAutomationDialog';
import '../../styles/automations.css';

const STATUSES = [
  { value: '', label: 'Any status' },
  { value: 'DRAFT', label: 'Drafts' },
  { value: 'ACTIVE', label: 'Active' },
  { value: 'PAUSED', label: 'Paused' },
];

export default function Automations() {
  const can = useCan();
  const [status, setStatus] = useState<AutomationStatus | ''>('');
  const [creating, setCreating] = useState(false);
  const forms = useFormGroups();
  const topics = useTopics();
  const segments = useSegments();
  const names = {
    forms: new Map((forms.data ?? []).map((f) => [f.id, f.name])),
    topics: new Map((topics.data ?? []).map((t) => [t.id, t.name])),
    segments: new Map((segments.data ?? []).map((s) => [s.id, s.name])),
  };
  const list = useCursorList<Automation>(automationKeys.list(status), (cursor) =>
    automationsApi.list({ cursor, limit: 25, status: status || undefined }),
  );
  const columns: Column<Automation>[] = [
    {
      key: 'name',
      header: 'Automation',
      cell: (a) => (
        <div>
          <Link className="cell-main" to={`/automations/${a.id}`}>
            {a.name}
          </Link>
          <div className="muted small">
            {a.steps.length === 0 ? 'No steps yet' : count(countSteps(a.steps), 'step')}
          </div>
        </div>
      ),
    },
    { key: 'status', header: 'Status', cell: (a) => <StatusBadge status={a.status} /> },
    { key: 'version', header: 'Version', numeric: true, wideOnly: true, cell: (a) => `v${a.version}` },
    {
      key: 'trigger',
      header: 'Starts when',
      cell: (a) => <span className="break">{triggerSummary(a.trigger, names)}</span>,
    },
    {
      key: 'updated',
      header: 'Updated',
      wideOnly: true,
      cell: (a) => <span className="nowrap">{formatDateTime(a.updatedAt)}</span>,
    },
  ];
  const canWrite = can('write:broadcasts');
  return (
    <>
      <PageHeader
        needs="write:broadcasts"
        title="Automations"
        description="Welcome series and follow-ups that run by themselves: a trigger lets contacts in, and each walks the steps."
        actions={
          canWrite && (
            <Button variant="primary" onClick={() => setCreating(true)}>
              New automation
            </Button>
          )
        }
      />
      <div className="row filters-row">
        <Select
          label="Status"
          value={status}
          onChange={(e) => setStatus(e.target.value as AutomationStatus | '')}
          options={STATUSES}
        />
      </div>
      <CursorTable
        list={list}
        columns={columns}
        rowKey={(a) => a.id}
        caption="Automations"
        empty={
          <div className="card">
            <EmptyState
              title={status ? 'No automations with this status' : 'No automations yet'}
              action={
                canWrite &&
                !status && (
                  <Button variant="primary" onClick={() => setCreating(true)}>
                    Build your first automation
                  </Button>
                )
              }
            >
              A welcome email when someone signs up, a follow-up two days later, another path for your pro customers.
            </EmptyState>
          </div>
        }
      />
      {canWrite && (
        <NewAutomationDialog key={creating ? 'open' : 'closed'} open={creating} onClose={() => setCreating(false)} />
      )}
    </>
  );
}

function countSteps(steps: Automation['steps']): number {
  let n = 0;
  for (const s of steps) {
    n += 1;
    if (s.type === 'branch') n += countSteps(s.then) + countSteps(s.else);
    if (s.type === 'split') for (const a of s.arms) n += countSteps(a.steps);
  }
  return n;
}
