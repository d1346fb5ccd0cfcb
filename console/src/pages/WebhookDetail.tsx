import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { describeError } from '../lib/problems';
import { useEffect, useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { api, unwrap } from '../api/client';
import { webhookKeys } from '../api/keys';
import { useCan } from '../api/session';
import type { paths } from '../api/generated/schema';
import {
  Button,
  ConfirmDialog,
  CopyField,
  CursorTable,
  EmptyState,
  ErrorState,
  PageHeader,
  Skeleton,
  StatusBadge,
  useCursorList,
  useToast,
  type Column,
} from '../components';
import { formatDateTime } from '../lib/format';

type Delivery =
  paths['/v1/webhooks/{webhookId}/deliveries']['get']['responses'][200]['content']['application/json']['data'][number];

export default function WebhookDetail() {
  const { webhookId = '' } = useParams();
  const can = useCan();
  const toast = useToast();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [removing, setRemoving] = useState(false);
  // A signing secret is shown only by the answer that made it (creation, rotation): GET never carries it (issue 29).
  const [secret, setSecret] = useState<string | null>(
    () => qc.getQueryData<string>(webhookKeys.newSecret(webhookId)) ?? null,
  );
  useEffect(() => {
    qc.removeQueries({ queryKey: webhookKeys.newSecret(webhookId) });
  }, [qc, webhookId]);
  // While a delivery is pending, and for 20 s after a test event or a retry is queued, the log refreshes itself every 1.5 s.
  const [watchUntil, setWatchUntil] = useState(0);
  const [pending, setPending] = useState(false);
  const polling = pending || Date.now() < watchUntil;
  const q = useQuery({
    queryKey: webhookKeys.detail(webhookId),
    queryFn: async () => unwrap(await api.GET('/v1/webhooks/{webhookId}', { params: { path: { webhookId } } })),
  });
  const deliveries = useCursorList<Delivery>(
    webhookKeys.deliveries(webhookId),
    async (cursor) =>
      unwrap(
        await api.GET('/v1/webhooks/{webhookId}/deliveries', {
          params: { path: { webhookId }, query: { cursor, limit: 25 } },
        }),
      ),
    { refetchInterval: polling ? 1500 : false },
  );
  const anyPending = deliveries.rows.some((d) => d.status === 'PENDING');
  if (anyPending !== pending) setPending(anyPending);
  const canWrite = can('write:webhooks');
  const done = (msg: string) => () => {
    toast.success(msg);
    void qc.invalidateQueries({ queryKey: webhookKeys.detail(webhookId) });
    void qc.invalidateQueries({ queryKey: webhookKeys.deliveries(webhookId) });
  };
  const fail = (err: Error) => toast.error(describeError(err));
  const test = useMutation({
    mutationFn: async () =>
      unwrap(await api.POST('/v1/webhooks/{webhookId}/test', { params: { path: { webhookId } } })),
    onSuccess: () => {
      setWatchUntil(Date.now() + 20_000);
      done('Test event queued.')();
    },
    onError: fail,
  });
  const rotate = useMutation({
    mutationFn: async () =>
      unwrap(await api.POST('/v1/webhooks/{webhookId}/rotate-secret', { params: { path: { webhookId } } })),
    onSuccess: (w) => {
      setSecret(w.secret);
      done('New secret made: update your receiver.')();
    },
    onError: fail,
  });
  const toggle = useMutation({
    mutationFn: async (enabled: boolean) =>
      unwrap(await api.PUT('/v1/webhooks/{webhookId}', { params: { path: { webhookId } }, body: { enabled } })),
    onSuccess: done('Saved.'),
    onError: fail,
  });
  const retry = useMutation({
    mutationFn: async (deliveryId: string) =>
      unwrap(
        await api.POST('/v1/webhooks/{webhookId}/deliveries/{deliveryId}/retry', {
          params: { path: { webhookId, deliveryId } },
        }),
      ),
    onSuccess: () => {
      setWatchUntil(Date.now() + 20_000);
      done('Retry queued.')();
    },
    onError: fail,
  });
  const remove = useMutation({
    mutationFn: async () => unwrap(await api.DELETE('/v1/webhooks/{webhookId}', { params: { path: { webhookId } } })),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: webhookKeys.list() });
      toast.success('Endpoint removed.');
      navigate('/webhooks');
    },
    onError: fail,
  });

  if (q.isPending)
    return (
      <>
        <PageHeader title="Webhook" back={{ to: '/webhooks', label: 'Webhooks' }} />
        <Skeleton lines={8} />
      </>
    );
  if (q.isError)
    return (
      <>
        <PageHeader title="Webhook" back={{ to: '/webhooks', label: 'Webhooks' }} />
        <ErrorState error={q.error} onRetry={() => void q.refetch()} />
      </>
    );
  const w = q.data;
  const columns: Column<Delivery>[] = [
    { key: 'type', header: 'Event', cell: (d) => <span className="cell-value">{d.eventType}</span> },
    { key: 'status', header: 'Status', cell: (d) => <StatusBadge status={d.status} /> },
    { key: 'attempts', header: 'Attempts', numeric: true, cell: (d) => d.attempts },
    {
      key: 'last',
      header: 'Last answer',
      cell: (d) => (
        <span className="small">
          {d.lastStatusCode ?? '—'}
          {d.lastDurationMs != null ? ` in ${d.lastDurationMs} ms` : ''}
          {d.lastError ? <div className="muted">{d.lastError}</div> : null}
        </span>
      ),
    },
    { key: 'at', header: 'Created', cell: (d) => <span className="nowrap">{formatDateTime(d.createdAt)}</span> },
    {
      key: 'actions',
      header: 'Actions',
      hiddenHeader: true,
      cell: (d) =>
        canWrite && d.status === 'FAILED' ? (
          <Button size="sm" onClick={() => retry.mutate(d.id)}>
            Retry
          </Button>
        ) : null,
    },
  ];
  return (
    <>
      <PageHeader
        needs="write:webhooks"
        title={w.description || 'Webhook endpoint'}
        back={{ to: '/webhooks', label: 'Webhooks' }}
        description={
          <span className="row">
            <span className="cell-value">{w.url}</span>
            {w.enabled ? (
              <StatusBadge status="active" label="Enabled" />
            ) : (
              <StatusBadge status="disabled" label="Disabled" />
            )}
          </span>
        }
        actions={
          canWrite && (
            <>
              <Button onClick={() => test.mutate()} loading={test.isPending}>
                Send a test event
              </Button>
              <Button onClick={() => toggle.mutate(!w.enabled)} loading={toggle.isPending}>
                {w.enabled ? 'Disable' : 'Enable'}
              </Button>
              <Button variant="danger" onClick={() => setRemoving(true)}>
                Remove
              </Button>
            </>
          )
        }
      />
      <div className="stack">
        <section className="card stack-sm" aria-labelledby="secret-h">
          <h2 id="secret-h">Signing secret</h2>
          <p className="muted small">
            Verify the <code>webhook-signature</code> header of each request with the endpoint's secret (Standard
            Webhooks).
          </p>
          {secret ? (
            <div className="secret-box stack-sm">
              <strong>Copy this secret now: it is shown only once.</strong>
              <CopyField value={secret} what="signing secret" />
            </div>
          ) : (
            <p className="small">
              The secret is shown only when the endpoint is added or its secret rotated.
              {canWrite ? ' Lost it? Rotate it: the old one keeps signing for 24 hours.' : ''}
            </p>
          )}
          {canWrite && (
            <div>
              <Button size="sm" onClick={() => rotate.mutate()} loading={rotate.isPending}>
                Rotate secret
              </Button>
            </div>
          )}
          {w.disabledReason && <div className="callout callout-warning">Disabled: {w.disabledReason}</div>}
          <p className="small">
            <strong>Events:</strong> {w.eventTypes.join(', ')}
          </p>
        </section>
        <section className="stack-sm" aria-labelledby="deliveries-h">
          <h2 id="deliveries-h">Delivery log</h2>
          <CursorTable
            list={deliveries}
            columns={columns}
            rowKey={(d) => d.id}
            caption="Deliveries"
            empty={
              <div className="card">
                <EmptyState title="No deliveries yet">Send a test event to see one.</EmptyState>
              </div>
            }
          />
        </section>
      </div>
      <ConfirmDialog
        open={removing}
        title="Remove this endpoint?"
        confirmLabel="Remove endpoint"
        danger
        busy={remove.isPending}
        onClose={() => setRemoving(false)}
        onConfirm={() => remove.mutate()}
      >
        <p>No more events are sent to {w.url}.</p>
      </ConfirmDialog>
    </>
  );
}
