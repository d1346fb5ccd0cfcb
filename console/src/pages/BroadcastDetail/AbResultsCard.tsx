/**
 * An A/B broadcast's variants side by side (docs/ab-tests.md): each one's test share, opens and clicks, rates, the
 * winner's badge, the lead and its confidence in plain words, and, before the choice, "Pick this variant".
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { broadcastKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import { Button, ConfirmDialog, useToast } from '../../components';
import type { Broadcast } from '../../lib/audience';
import { count, formatDateTime, formatNumber, percent } from '../../lib/format';
import { describeError } from '../../lib/problems';

type Stats = NonNullable<Broadcast['stats']>;
type Result = NonNullable<Stats['abResult']>;

const name = (id: string) => id.toUpperCase();

/** "B leads by 3.1 points; 97% confidence" (or why there is nothing to say yet). */
export function standingSentence(r: Result, variants: NonNullable<Stats['variants']>): string {
  const metric = r.winnerBy === 'OPENS' ? 'open' : 'click';
  if (!variants.some((v) => v.sent > 0)) return 'Nothing has been sent to the test share yet.';
  if (!r.leader || !r.runnerUp) return '';
  if (r.margin === 0)
    return `No variant leads: the ${metric} rates are equal so far (a tie goes to ${name(r.leader)}).`;
  const confidence = r.significance ? `; ${Math.round(r.significance.confidence * 100)}% confidence` : '';
  const hint =
    r.significance && r.significance.confidence < 0.9
      ? ' The difference may be chance: more recipients or a longer wait would tell.'
      : '';
  return `${name(r.leader)} leads ${name(r.runnerUp)} by ${r.margin.toFixed(1)} points of ${metric} rate${confidence}.${hint}`;
}

export function AbResultsCard({ broadcast }: { broadcast: Broadcast }) {
  const can = useCan();
  const qc = useQueryClient();
  const toast = useToast();
  const [picking, setPicking] = useState<string | null>(null);
  const s = broadcast.stats;
  const pick = useMutation({
    mutationFn: async (variant: string) =>
      unwrap(
        await api.POST('/v1/broadcasts/{broadcastId}/ab/winner', {
          params: { path: { broadcastId: broadcast.id } },
          body: { variant },
        }),
      ),
    onSuccess: (b) => {
      qc.setQueryData(broadcastKeys.detail(broadcast.id), b);
      setPicking(null);
      toast.success('Winner picked: the rest of the audience gets it next.');
    },
    onError: (err) => {
      setPicking(null);
      toast.error(describeError(err));
    },
  });
  if (!s?.variants || !s.abResult) return null;
  const r = s.abResult;
  const open = !r.winner && (broadcast.status === 'SENDING' || broadcast.status === 'PAUSED');
  const test = broadcast.abTest;
  return (
    <section className="card stack" aria-labelledby="ab-results-h">
      <div className="row-between">
        <h2 id="ab-results-h">A/B test</h2>
        <span className="muted small">
          {r.winner
            ? `Winner ${name(r.winner)} chosen ${formatDateTime(r.chosenAt)}`
            : r.decidesAt
              ? `The winner is chosen ${formatDateTime(r.decidesAt)}`
              : 'The test share is being queued'}
          {' · by '}
          {r.winnerBy === 'OPENS' ? 'open rate' : 'click rate'}
        </span>
      </div>
      <p aria-live="polite">{standingSentence(r, s.variants)}</p>
      <div className="ab-results">
        {s.variants.map((v) => {
          const subject = test?.variants.find((x) => x.id === v.id)?.subject;
          return (
            <div key={v.id} className={`ab-result${v.winner ? ' ab-winner' : ''}`} data-variant={v.id}>
              <div className="row-between">
                <strong>Variant {name(v.id)}</strong>
                {v.winner && <span className="badge badge-success">Winner</span>}
                {!r.winner && r.leader === v.id && r.margin > 0 && <span className="badge badge-info">Leading</span>}
              </div>
              {subject && <div className="muted small ab-subject">{subject}</div>}
              <dl className="ab-figures">
                <dt>Recipients</dt>
                <dd className="num">{formatNumber(v.recipients)}</dd>
                <dt>Sent</dt>
                <dd className="num">{formatNumber(v.sent)}</dd>
                <dt>Open rate</dt>
                <dd className="num">
                  {percent(v.uniqueOpens, v.sent)}{' '}
                  <span className="muted small">{count(v.uniqueOpens, 'person', 'people')}</span>
                </dd>
                <dt>Click rate</dt>
                <dd className="num">
                  {percent(v.uniqueClicks, v.sent)}{' '}
                  <span className="muted small">{count(v.uniqueClicks, 'person', 'people')}</span>
                </dd>
              </dl>
              {open && can('write:broadcasts') && (
                <Button size="sm" variant="secondary" onClick={() => setPicking(v.id)}>
                  Pick this variant
                </Button>
              )}
            </div>
          );
        })}
      </div>
      <ConfirmDialog
        open={picking !== null}
        title={`Send variant ${name(picking ?? '')} to the rest?`}
        confirmLabel={`Pick variant ${name(picking ?? '')}`}
        busy={pick.isPending}
        onConfirm={() => picking && pick.mutate(picking)}
        onClose={() => setPicking(null)}
      >
        The test stops now: everyone in the audience who has not received this broadcast gets variant{' '}
        {name(picking ?? '')}. This cannot be undone.
      </ConfirmDialog>
    </section>
  );
}
