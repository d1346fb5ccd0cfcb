/** Broadcasts: every broadcast with its status and headline stats, newest first; new ones start as drafts. */
import { useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { broadcastKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import type { paths } from '../../api/generated/schema';
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
import type { BroadcastStatus } from '../../lib/audience';
import { formatDateTime, formatNumber, percent } from '../../lib/format';
import { BroadcastActions } from './BroadcastActions';
import { NewBroadcastDialog } from './NewBroadcastDialog';
import '../../styles/audience.css';

type ListBroadcast = paths['/v1/broadcasts']['get']['responses'][200]['content']['application/json']['data'][number];

const STATUSES: { value: BroadcastStatus | ''; label: string }[] = [
  { value: '', label: 'Any status' },
  { value: 'DRAFT', label: 'Drafts' },
  { value: 'SCHEDULED', label: 'Scheduled' },
  { value: 'SENDING', label: 'Sending' },
  { value: 'PAUSED', label: 'Paused' },
  { value: 'SENT', label: 'Sent' },
  { value: 'CANCELED', label: 'Canceled' },
  { value: 'FAILED', label: 'Failed' },
];

export default function Broadcasts() {
  const can = useCan();
  const [status, setStatus] = useState<BroadcastStatus | ''>('');
  const [creating, setCreating] = useState(false);
  const list = useCursorList<ListBroadcast>(
    broadcastKeys.list(status),
    async (cursor) =>
      unwrap(
        await api.GET('/v1/broadcasts', { params: { query: { cursor, limit: 25, ...(status ? { status } : {}) } } }),
      ),
    { refetchInterval: 10_000 },
  );
  const columns: Column<ListBroadcast>[] = [
    {
      key: 'name',
      header: 'Broadcast',
      cell: (b) => (
        <div>
          <Link className="cell-main" to={`/broadcasts/${b.id}`}>
            {b.name}
          </Link>
          <div className="muted small break">{b.emailContent.subject ?? 'No subject yet'}</div>
        </div>
      ),
    },
    { key: 'status', header: 'Status', cell: (b) => <StatusBadge status={b.status} /> },
    { key: 'recipients', header: 'Recipients', numeric: true, cell: (b) => formatNumber(b.stats?.recipients) },
    { key: 'open', header: 'Opened', numeric: true, cell: (b) => percent(b.stats?.uniqueOpens, b.stats?.sent) },
    { key: 'click', header: 'Clicked', numeric: true, cell: (b) => percent(b.stats?.uniqueClicks, b.stats?.sent) },
    { key: 'bounce', header: 'Bounced', numeric: true, cell: (b) => percent(b.stats?.bounced, b.stats?.recipients) },
    {
      key: 'when',
      header: 'When',
      cell: (b) => (
        <span className="nowrap">
          {b.sentAt
            ? `Sent ${formatDateTime(b.sentAt)}`
            : b.sendAt
              ? `For ${formatDateTime(b.sendAt)}`
              : `Created ${formatDateTime(b.createdAt)}`}
        </span>
      ),
    },
    ...(can('write:broadcasts')
      ? [
          {
            key: 'actions',
            header: 'Actions',
            hiddenHeader: true,
            cell: (b: ListBroadcast) => <BroadcastActions broadcast={b} size="sm" />,
          },
        ]
      : []),
  ];
  return (
    <>
      <PageHeader
        needs="write:broadcasts"
        title="Broadcasts"
        description="Emails to a segment of your contacts: compose, test, send or schedule, then read the report."
        actions={
          can('write:broadcasts') && (
            <Button variant="primary" onClick={() => setCreating(true)}>
              New broadcast
            </Button>
          )
        }
      />
      <div className="row filters-row">
        <Select
          label="Status"
          value={status}
          onChange={(e) => setStatus(e.target.value as BroadcastStatus | '')}
          options={STATUSES}
        />
      </div>
      <CursorTable
        list={list}
        columns={columns}
        rowKey={(b) => b.id}
        caption="Broadcasts"
        empty={
          <div className="card">
            <EmptyState
              title={status ? 'No broadcasts with this status' : 'No broadcasts yet'}
              action={
                can('write:broadcasts') &&
                !status && (
                  <Button variant="primary" onClick={() => setCreating(true)}>
                    Write your first broadcast
                  </Button>
                )
              }
            >
              A broadcast goes once to every subscribed contact of a segment.
            </EmptyState>
          </div>
        }
      />
      <NewBroadcastDialog open={creating} onClose={() => setCreating(false)} />
    </>
  );
}
