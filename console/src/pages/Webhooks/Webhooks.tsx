import { useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { webhookKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import type { paths } from '../../api/generated/schema';
import { Button, CursorTable, EmptyState, PageHeader, StatusBadge, useCursorList, type Column } from '../../components';
import { count, formatDateTime } from '../../lib/format';
import { NewWebhookDialog } from './NewWebhookDialog';

export type Webhook = paths['/v1/webhooks/{webhookId}']['get']['responses'][200]['content']['application/json'];

export default function Webhooks() {
  const can = useCan();
  const [adding, setAdding] = useState(false);
  const list = useCursorList<Webhook>(webhookKeys.list(), async (cursor) =>
    unwrap(await api.GET('/v1/webhooks', { params: { query: { cursor, limit: 50 } } })),
  );
  const canWrite = can('write:webhooks');
  const columns: Column<Webhook>[] = [
    {
      key: 'url',
      header: 'Endpoint',
      cell: (w) => (
        <div>
          <Link className="cell-main cell-value" to={`/webhooks/${w.id}`}>
            {w.url}
          </Link>
          {w.description && <div className="muted small">{w.description}</div>}
        </div>
      ),
    },
    {
      key: 'events',
      header: 'Events',
      cell: (w) => <span className="small">{count(w.eventTypes.length, 'type')}</span>,
    },
    {
      key: 'status',
      header: 'Status',
      cell: (w) =>
        w.enabled ? (
          <StatusBadge status="active" label="Enabled" />
        ) : (
          <StatusBadge status="disabled" label={w.disabledReason ? `Disabled: ${w.disabledReason}` : 'Disabled'} />
        ),
    },
    { key: 'created', header: 'Created', cell: (w) => <span className="nowrap">{formatDateTime(w.createdAt)}</span> },
  ];
  return (
    <>
      <PageHeader
        needs="write:webhooks"
        title="Webhooks"
        description="Signed HTTP callbacks (Standard Webhooks) when contacts, emails and broadcasts change."
        actions={
          canWrite && (
            <Button variant="primary" onClick={() => setAdding(true)}>
              Add endpoint
            </Button>
          )
        }
      />
      <CursorTable
        list={list}
        columns={columns}
        rowKey={(w) => w.id}
        caption="Webhook endpoints"
        empty={
          <div className="card">
            <EmptyState
              title="No webhook endpoints"
              action={
                canWrite && (
                  <Button variant="primary" onClick={() => setAdding(true)}>
                    Add an endpoint
                  </Button>
                )
              }
            >
              Send events to your CRM, data warehouse or chat.
            </EmptyState>
          </div>
        }
      />
      <NewWebhookDialog open={adding} onClose={() => setAdding(false)} />
    </>
  );
}
