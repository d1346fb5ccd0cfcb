/** Scheduling in the user's time zone, and the send behind a confirmation with the audience count. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ApiError, unwrap } from '../../api/client';
import { broadcastKeys } from '../../api/keys';
import { Button, ConfirmDialog, ErrorSummary, Spinner, useToast } from '../../components';
import { fromLocalInput, timeZoneName, toLocalInput, utcOffset, type Broadcast } from '../../lib/audience';
import { formatDateTime, formatNumber } from '../../lib/format';
import { otherErrors, problemOf } from '../../lib/forms';

export function SendCard({
  broadcast,
  beforeSend,
  editable,
}: {
  broadcast: Broadcast;
  beforeSend: () => Promise<void>;
  editable: boolean;
}) {
  const qc = useQueryClient();
  const toast = useToast();
  const [when, setWhen] = useState(toLocalInput(broadcast.sendAt));
  const [confirming, setConfirming] = useState(false);
  const at = fromLocalInput(when);
  const audience = useQuery({
    queryKey: broadcastKeys.audienceCount(broadcast.id, broadcast.updatedAt),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/broadcasts/{broadcastId}/audience', {
          params: { path: { broadcastId: broadcast.id }, query: { limit: 1 } },
        }),
      ),
    enabled: confirming,
    retry: false,
  });
  const refresh = (b: Broadcast) => {
    qc.setQueryData(broadcastKeys.detail(broadcast.id), b);
    void qc.invalidateQueries({ queryKey: broadcastKeys.lists() });
  };
  const schedule = useMutation({
    mutationFn: async (sendAt: string | null) => {
      await beforeSend();
      return unwrap(
        await api.PUT('/v1/broadcasts/{broadcastId}', {
          params: { path: { broadcastId: broadcast.id } },
          body: { sendAt },
        }),
      );
    },
    onSuccess: (b) => {
      refresh(b);
      toast.success(b.sendAt ? `Scheduled for ${formatDateTime(b.sendAt)}.` : 'Unscheduled: back to draft.');
    },
  });
  const send = useMutation({
    mutationFn: async () => {
      await beforeSend();
      return unwrap(
        await api.POST('/v1/broadcasts/{broadcastId}/send', { params: { path: { broadcastId: broadcast.id } } }),
      );
    },
    onSuccess: (b) => {
      setConfirming(false);
      refresh(b as Broadcast);
      toast.success('Sending started.');
    },
  });
  const sched = problemOf(schedule.error);
  const sent = problemOf(send.error);
  return (
    <section className="card stack-sm" aria-labelledby="send-h">
      <h2 id="send-h">Schedule or send</h2>
      {broadcast.status === 'SCHEDULED' && broadcast.sendAt && (
        <div className="callout callout-info" role="status">
          Scheduled for <strong>{formatDateTime(broadcast.sendAt)}</strong> ({broadcast.sendAt.replace('.000Z', 'Z')}{' '}
          UTC).
        </div>
      )}
      <div className="field">
        <label htmlFor="send-at">Send at ({timeZoneName()})</label>
        <input
          id="send-at"
          type="datetime-local"
          className="input"
          value={when}
          onChange={(e) => setWhen(e.target.value)}
          disabled={!editable}
          aria-describedby="send-at-hint"
          aria-invalid={sched.fields['/sendAt'] ? true : undefined}
        />
        <div className="hint" id="send-at-hint">
          {at ? (
            <>
              Your time, {utcOffset(at)}: that is <strong>{at.toISOString().slice(0, 16).replace('T', ' ')} UTC</strong>
              .
            </>
          ) : (
            `Pick a date and time in your time zone (${utcOffset(new Date())}).`
          )}
        </div>
        {sched.fields['/sendAt'] && <div className="error">{sched.fields['/sendAt']}</div>}
      </div>
      <ErrorSummary
        message={schedule.isError && !sched.fields['/sendAt'] ? sched.message : null}
        errors={otherErrors(sched.fields, ['/sendAt'])}
      />
      {editable && (
        <div className="row">
          <Button
            onClick={() => at && schedule.mutate(at.toISOString())}
            disabled={!at}
            loading={schedule.isPending && schedule.variables !== null}
          >
            {broadcast.status === 'SCHEDULED' ? 'Reschedule' : 'Schedule'}
          </Button>
          {broadcast.status === 'SCHEDULED' && (
            <Button
              variant="ghost"
              onClick={() => schedule.mutate(null)}
              loading={schedule.isPending && schedule.variables === null}
            >
              Unschedule
            </Button>
          )}
          <Button
            variant="primary"
            onClick={() => {
              send.reset();
              setConfirming(true);
            }}
          >
            Send now…
          </Button>
        </div>
      )}
      <ConfirmDialog
        open={confirming}
        title="Send this broadcast now?"
        confirmLabel={audience.data ? `Send to ${formatNumber(audience.data.count)} contacts` : 'Send now'}
        busy={send.isPending}
        onClose={() => setConfirming(false)}
        onConfirm={() => send.mutate()}
      >
        <div className="stack-sm">
          {audience.isPending ? (
            <Spinner label="Counting the audience…" />
          ) : audience.isError ? (
            <ErrorSummary message={problemOf(audience.error).message} />
          ) : (
            <p className="audience-count">
              It goes to <strong data-testid="audience-count">{formatNumber(audience.data.count)}</strong> subscribed
              contact{audience.data.count === 1 ? '' : 's'} now, once each. This cannot be undone; you can pause or
              cancel while it sends.
            </p>
          )}
          <ErrorSummary
            message={send.isError ? sent.message : null}
            errors={
              send.error instanceof ApiError
                ? (send.error.problem.errors ?? []).map((e) => `${e.path}: ${e.message}`)
                : []
            }
          />
        </div>
      </ConfirmDialog>
    </section>
  );
}
