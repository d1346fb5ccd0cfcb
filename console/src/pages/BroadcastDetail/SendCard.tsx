/**
 * Scheduling in the user's time zone, and the send behind a confirmation with the audience count. Both buttons stay
 * off while the broadcast lacks what it needs, with the reason and a checklist from the preflight (lib/preflight.ts):
 * scheduling needs a sender on a verified domain, a subject and content; sending now also someone to send to.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { broadcastKeys, workspaceKeys } from '../../api/keys';
import { Button, Checkbox, ConfirmDialog, ErrorSummary, Spinner, useToast } from '../../components';
import { fromLocalInput, timeZoneName, toLocalInput, utcOffset, type Broadcast } from '../../lib/audience';
import { count, formatDateTime, formatNumber, plural } from '../../lib/format';
import { problemOf } from '../../lib/forms';
import { sendChecklist } from '../../lib/preflight';
import { describeError } from '../../lib/problems';
import { instantIn } from '../../lib/zones';

/** A wall-clock time (YYYY-MM-DDTHH:mm[:ss]) as words, e.g. "Sun 28 Mar 2027, 09:00", with no zone of its own. */
function localLabel(wall: string): string {
  const d = new Date(`${wall.slice(0, 16)}:00Z`);
  if (Number.isNaN(d.getTime())) return wall;
  return new Intl.DateTimeFormat(undefined, {
    timeZone: 'UTC',
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
  }).format(d);
}

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
  // Local-time sending (docs/sending.md): the time picked is a wall-clock time for every contact, sent as that time
  // in the workspace's zone, which the service reads it back in.
  const workspace = useQuery({
    queryKey: workspaceKeys.detail(),
    queryFn: async () => unwrap(await api.GET('/v1/workspace')),
  });
  const wsZone = workspace.data?.settings.timezone ?? 'UTC';
  const [local, setLocal] = useState(broadcast.sendAtLocal);
  const [when, setWhen] = useState(
    broadcast.localSendTime ? broadcast.localSendTime.slice(0, 16) : toLocalInput(broadcast.sendAt),
  );
  const [confirming, setConfirming] = useState(false);
  const at = local ? instantIn(when, wsZone) : fromLocalInput(when);
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
          body: sendAt === null ? { sendAt } : { sendAt, sendAtLocal: local },
        }),
      );
    },
    onSuccess: (b) => {
      refresh(b);
      toast.success(
        b.localSendTime
          ? `Scheduled for ${localLabel(b.localSendTime)} in each contact's time zone.`
          : b.sendAt
            ? `Scheduled for ${formatDateTime(b.sendAt)}.`
            : 'Unscheduled: back to draft.',
      );
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
  const sched = problemOf(schedule.error, { '/sendAt': 'Send time', '/sendAtLocal': 'Local time' });
  const sent = problemOf(send.error);
  return (
    <section className="card stack-sm" aria-labelledby="send-h">
      <h2 id="send-h">Schedule or send</h2>
      {broadcast.status === 'SCHEDULED' && broadcast.localSendTime && (
        <div className="callout callout-info" role="status">
          Scheduled for <strong>{localLabel(broadcast.localSendTime)}</strong> in each contact&rsquo;s time zone.
        </div>
      )}
      {broadcast.status === 'SCHEDULED' && broadcast.sendAt && !broadcast.localSendTime && (
        <div className="callout callout-info" role="status">
          Scheduled for <strong>{formatDateTime(broadcast.sendAt)}</strong> ({broadcast.sendAt.replace('.000Z', 'Z')}{' '}
          UTC).
        </div>
      )}
      <div className="field">
        <label htmlFor="send-at">{local ? 'Send at (each contact’s own time)' : `Send at (${timeZoneName()})`}</label>
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
          {local ? (
            when ? (
              <>
                Each contact gets it at <strong>{localLabel(when)}</strong> in their own time zone; contacts without one
                at that time in the workspace&rsquo;s zone ({wsZone}). Where that time has already passed when sending
                starts, it goes out right away. It shows as Sending until the last time zone&rsquo;s turn.
              </>
            ) : (
              'Pick the date and time your contacts should get it, wherever they are.'
            )
          ) : at ? (
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
      <Checkbox
        label="Send at this time in each contact’s time zone"
        hint="Like sending one email per time zone: people in Tokyo, Berlin and New York each get it at the hour you pick, their time."
        checked={local}
        onChange={(e) => setLocal(e.target.checked)}
        disabled={!editable}
      />
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
