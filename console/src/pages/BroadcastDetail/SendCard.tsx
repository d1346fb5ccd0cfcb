/**
 * Scheduling in the user's time zone, and the send behind a confirmation with the audience count. Both buttons stay
 * off while the broadcast lacks what it needs, with the reason and a checklist from the preflight (lib/preflight.ts):
 * scheduling needs a sender on a verified domain, a subject and content; sending now also someone to send to.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { broadcastKeys } from '../../api/keys';
import { Button, ConfirmDialog, ErrorSummary, Spinner, useToast } from '../../components';
import { fromLocalInput, timeZoneName, toLocalInput, utcOffset, type Broadcast } from '../../lib/audience';
import { count, formatDateTime, formatNumber, plural } from '../../lib/format';
import { problemOf } from '../../lib/forms';
import { sendChecklist } from '../../lib/preflight';
import { describeError } from '../../lib/problems';

export function SendCard({
  broadcast,
  beforeSend,
  editable,
  unsaved = false,
}: {
  broadcast: Broadcast;
  beforeSend: () => Promise<void>;
  editable: boolean;
  /** The sender card has changes not saved yet: the checklist is the saved version's, and a click saves first. */
  unsaved?: boolean;
}) {
  const qc = useQueryClient();
  const toast = useToast();
  const [when, setWhen] = useState(toLocalInput(broadcast.sendAt));
  const [confirming, setConfirming] = useState(false);
  const at = fromLocalInput(when);
  // The same query as the checks card (one request for both).
  const preflight = useQuery({
    queryKey: broadcastKeys.preflight(broadcast.id, broadcast.updatedAt),
    queryFn: async () =>
      unwrap(
        await api.POST('/v1/broadcasts/{broadcastId}/preflight', { params: { path: { broadcastId: broadcast.id } } }),
      ),
    retry: false,
    enabled: editable,
  });
  // Unknown (checking, or the checks failed to run): the buttons stay on and the service decides.
  const list = preflight.data ? sendChecklist(preflight.data.checks) : null;
  const blocksSend = !unsaved && !!list?.blocksSend;
  const blocksSchedule = !unsaved && !!list?.blocksSchedule;
  const missing = list ? list.items.filter((i) => !i.done) : [];
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
  const sched = problemOf(schedule.error, { '/sendAt': 'Send time' });
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
      <ErrorSummary message={sched.message} errors={sched.rest} />
      {editable && list && (
        <div className="stack-sm" id="send-checklist">
          {missing.length > 0 && !unsaved ? (
            <p className="send-blocked" role="status">
              <strong>{blocksSchedule ? 'It cannot be sent or scheduled yet' : 'It cannot be sent now'}</strong>:{' '}
              {missing.length === 1 ? 'one thing is' : `${missing.length} things are`} missing.
            </p>
          ) : unsaved ? (
            <p className="muted small">
              Checked as last saved: your unsaved changes are saved when you send or schedule.
            </p>
          ) : (
            <p className="muted small">Everything it needs is there.</p>
          )}
          <ul className="list-plain checks" aria-label="What it needs">
            {list.items.map((i) => (
              <li key={i.id} className={`check-item ${i.done ? 'check-pass' : 'check-fail'}`}>
                <span className="check-icon" aria-hidden="true">
                  {i.done ? '✓' : '✕'}
                </span>
                <span>
                  <span className="visually-hidden">{i.done ? 'Done: ' : 'Missing: '}</span>
                  {i.label}
                </span>
              </li>
            ))}
          </ul>
        </div>
      )}
      {editable && (
        <div className="row">
          <Button
            onClick={() => at && schedule.mutate(at.toISOString())}
            disabled={!at || blocksSchedule}
            aria-describedby={blocksSchedule ? 'send-checklist' : !at ? 'send-at-hint' : undefined}
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
            disabled={blocksSend}
            aria-describedby={blocksSend ? 'send-checklist' : undefined}
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
        confirmLabel={audience.data ? `Send to ${count(audience.data.count, 'contact')}` : 'Send now'}
        busy={send.isPending}
        onClose={() => setConfirming(false)}
        onConfirm={() => send.mutate()}
      >
        <div className="stack-sm">
          {audience.isPending ? (
            <Spinner label="Counting the audience…" />
          ) : audience.isError ? (
            <ErrorSummary message={describeError(audience.error)} />
          ) : (
            <p className="audience-count">
              It goes to <strong data-testid="audience-count">{formatNumber(audience.data.count)}</strong> subscribed
              {plural(audience.data.count, 'contact')} now, once each. This cannot be undone; you can pause or cancel
              while it sends.
            </p>
          )}
          <ErrorSummary message={sent.message} errors={sent.rest} />
        </div>
      </ConfirmDialog>
    </section>
  );
}
