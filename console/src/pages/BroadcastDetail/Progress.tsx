/** A SENDING or PAUSED broadcast's live progress, with pause, resume and cancel. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { broadcastKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import { Button, ConfirmDialog, Skeleton, useToast } from '../../components';
import type { Broadcast } from '../../lib/audience';
import { ZonesTable } from './ZonesTable';
import { formatNumber, percent } from '../../lib/format';
import { describeError } from '../../lib/problems';

function Bar({ label, value, total, tone }: { label: string; value: number; total: number; tone: string }) {
  const pct = total > 0 ? Math.min(100, (value / total) * 100) : 0;
  return (
    <div className="bar-row">
      <div className="row-between small">
        <span>{label}</span>
        <span className="num">
          {formatNumber(value)} <span className="muted">({percent(value, total)})</span>
        </span>
      </div>
      <div
        className={`bar bar-${tone}`}
        role="progressbar"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={total}
        aria-valuenow={value}
        aria-valuetext={`${formatNumber(value)} of ${formatNumber(total)}`}
      >
        <div className="bar-fill" style={{ width: `${pct}%` }} />
      </div>
    </div>
  );
}

export function Progress({ broadcast }: { broadcast: Broadcast }) {
  const can = useCan();
  const qc = useQueryClient();
  const toast = useToast();
  const [canceling, setCanceling] = useState(false);
  const s = broadcast.stats;
  const act = useMutation({
    mutationFn: async (what: 'pause' | 'resume' | 'cancel') => {
      const path = { params: { path: { broadcastId: broadcast.id } } };
      if (what === 'pause') return unwrap(await api.POST('/v1/broadcasts/{broadcastId}/pause', path));
      if (what === 'resume') return unwrap(await api.POST('/v1/broadcasts/{broadcastId}/resume', path));
      return unwrap(await api.POST('/v1/broadcasts/{broadcastId}/cancel', path));
    },
    onSuccess: (b, what) => {
      qc.setQueryData(broadcastKeys.detail(broadcast.id), b);
      setCanceling(false);
      toast.success(
        what === 'pause'
          ? 'Paused: nothing new goes out.'
          : what === 'resume'
            ? 'Resumed.'
            : 'Canceled: undelivered messages will not be sent.',
      );
    },
    onError: (err) => toast.error(describeError(err)),
  });
  const total = s?.recipients ?? 0;
  const done = total - (s?.queued ?? 0);
  const editable = can('write:broadcasts');
  return (
    <section className="card stack" aria-labelledby="progress-h">
      <div className="card-header">
        <h2 id="progress-h">{broadcast.status === 'PAUSED' ? 'Paused' : 'Sending'}</h2>
        {editable && (
          <div className="row">
            {broadcast.status === 'SENDING' ? (
              <Button onClick={() => act.mutate('pause')} loading={act.isPending && act.variables === 'pause'}>
                Pause
              </Button>
            ) : (
              <Button
                variant="primary"
                onClick={() => act.mutate('resume')}
                loading={act.isPending && act.variables === 'resume'}
              >
                Resume
              </Button>
            )}
            <Button variant="danger" onClick={() => setCanceling(true)}>
              Cancel sending
            </Button>
          </div>
        )}
      </div>
      {broadcast.status === 'PAUSED' && broadcast.pausedReason && (
        <div className="callout callout-warning" role="status">
          Paused: {broadcast.pausedReason}
        </div>
      )}
      <p aria-live="polite">
        <strong>{formatNumber(done)}</strong> of <strong>{formatNumber(total)}</strong> handled ({percent(done, total)}
        ). Updated every 2 seconds.
      </p>
      {broadcast.abTest && !s?.abResult?.winner && (
        <p className="muted small" role="status">
          A/B test: so far only the test share is queued; the rest of the audience gets the winning variant once it is
          chosen.
        </p>
      )}
      {s ? (
        <div className="stack-sm">
          <Bar label="Queued" value={s.queued} total={total} tone="info" />
          <Bar label="Sent" value={s.sent} total={total} tone="success" />
          <Bar label="Failed" value={s.failed} total={total} tone="danger" />
          <Bar label="Bounced" value={s.bounced} total={total} tone="warning" />
        </div>
      ) : (
        <Skeleton lines={4} />
      )}
      {broadcast.localSendTime && (
        <p className="muted small">
          Sent at local time: each time zone&rsquo;s contacts get it at {broadcast.localSendTime.slice(11, 16)} their
          time; it stays Sending until the last zone&rsquo;s turn.
        </p>
      )}
      <ZonesTable broadcast={broadcast} />
      <ConfirmDialog
        open={canceling}
        title="Cancel this broadcast?"
        danger
        confirmLabel="Cancel sending"
        busy={act.isPending}
        onClose={() => setCanceling(false)}
        onConfirm={() => act.mutate('cancel')}
      >
        <p>
          Messages already sent stay sent; the {formatNumber(s?.queued ?? 0)} still queued will not go out. A canceled
          broadcast cannot be resumed.
        </p>
      </ConfirmDialog>
    </section>
  );
}
