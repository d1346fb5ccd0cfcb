/** The deliveries, one per recipient, filtered by status (polled while the broadcast sends). */
import { useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { broadcastKeys } from '../../api/keys';
import { CursorTable, Select, StatusBadge, useCursorList, type Column } from '../../components';
import type { Delivery, DeliveryStatus } from '../../lib/audience';
import { formatDateTime } from '../../lib/format';

const DELIVERY_TONES: Record<DeliveryStatus, 'success' | 'danger' | 'warning' | 'info' | 'neutral'> = {
  SENT: 'success',
  FAILED: 'danger',
  BOUNCED: 'danger',
  QUEUED: 'info',
  SENDING: 'info',
  PAUSED: 'warning',
  CANCELED: 'neutral',
  SKIPPED: 'neutral',
};

export function DeliveriesCard({ broadcastId, live }: { broadcastId: string; live: boolean }) {
  const [status, setStatus] = useState<DeliveryStatus | ''>('');
  const list = useCursorList<Delivery>(
    broadcastKeys.deliveries(broadcastId, status, live),
    async (cursor) =>
      unwrap(
        await api.GET('/v1/broadcasts/{broadcastId}/deliveries', {
          params: { path: { broadcastId }, query: { cursor, limit: 50, ...(status ? { status } : {}) } },
        }),
      ),
    { refetchInterval: live ? 5000 : false },
  );
  const columns: Column<Delivery>[] = [
    {
      key: 'email',
      header: 'Recipient',
      cell: (r) =>
        r.contactId ? (
          <Link to={`/contacts/${r.contactId}`} className="break">
            {r.email}
          </Link>
        ) : (
          <span className="break">{r.email}</span>
        ),
    },
    { key: 'status', header: 'Status', cell: (r) => <StatusBadge status={r.status} tone={DELIVERY_TONES[r.status]} /> },
    { key: 'attempts', header: 'Attempts', numeric: true, cell: (r) => r.attempts },
    { key: 'when', header: 'Sent', cell: (r) => <span className="nowrap">{formatDateTime(r.sentAt)}</span> },
    {
      key: 'reply',
      header: 'Last reply',
      cell: (r) => <span className="cell-value">{r.lastError ?? r.smtpResponse ?? '—'}</span>,
    },
  ];
  return (
    <section className="card stack-sm" aria-labelledby="deliveries-h">
      <div className="card-header">
        <h2 id="deliveries-h">Deliveries</h2>
        <Select
          label="Status"
          value={status}
          onChange={(e) => setStatus(e.target.value as DeliveryStatus | '')}
          options={[
            { value: '', label: 'Any' },
            ...(['SENT', 'QUEUED', 'SENDING', 'FAILED', 'BOUNCED', 'PAUSED', 'CANCELED', 'SKIPPED'] as const).map(
              (s) => ({ value: s, label: s.charAt(0) + s.slice(1).toLowerCase() }),
            ),
          ]}
        />
      </div>
      <CursorTable
        list={list}
        columns={columns}
        rowKey={(r) => r.id}
        caption="Deliveries, one per recipient"
        empty={status ? 'No deliveries with this status' : 'No deliveries'}
      />
    </section>
  );
}
