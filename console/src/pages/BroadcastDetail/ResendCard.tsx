/**
 * On a SENT broadcast's report: resend it to the recipients who did not open it (or did not click), contract §18.
 * The button makes the new draft (POST /v1/broadcasts/{id}/resend) and opens it in the composer, where its subject
 * and content can be changed before it is scheduled or sent like any draft.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api, unwrap } from '../../api/client';
import { broadcastKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import { Button, ErrorSummary, useToast } from '../../components';
import type { Broadcast } from '../../lib/audience';
import { count } from '../../lib/format';
import { describeError } from '../../lib/problems';

type To = 'NON_OPENERS' | 'NON_CLICKERS';

export function ResendCard({ broadcast }: { broadcast: Broadcast }) {
  const can = useCan();
  const qc = useQueryClient();
  const toast = useToast();
  const navigate = useNavigate();
  const resend = useMutation({
    mutationFn: async (to: To) =>
      unwrap(
        await api.POST('/v1/broadcasts/{broadcastId}/resend', {
          params: { path: { broadcastId: broadcast.id } },
          body: { to },
        }),
      ),
    onSuccess: (b) => {
      void qc.invalidateQueries({ queryKey: broadcastKeys.lists() });
      qc.setQueryData(broadcastKeys.detail(b.id), b);
      toast.success('A draft of the resend was made: check its subject, then send it.');
      navigate(`/broadcasts/${b.id}`);
    },
  });
  if (broadcast.status !== 'SENT' || !can('write:broadcasts')) return null;
  const s = broadcast.stats;
  // Approximate (a click without an open counts as an open in the resend); the exact number is the draft's audience.
  const unopened = s ? Math.max(0, s.sent - s.uniqueOpens) : null;
  const unclicked = s ? Math.max(0, s.sent - s.uniqueClicks) : null;
  const { opens, clicks } = broadcast.tracking;
  return (
    <section className="card stack-sm" aria-labelledby="resend-h">
      <h2 id="resend-h">Resend</h2>
      <p className="small">
        A new draft with the same content for the recipients who have not opened it, or not clicked a link, until now.
        Opens by machines (privacy proxies, scanners) do not count as opens; unsubscribed and suppressed people are left
        out when it is sent.
      </p>
      <div className="row resend-actions">
        <Button
          onClick={() => resend.mutate('NON_OPENERS')}
          loading={resend.isPending && resend.variables === 'NON_OPENERS'}
          disabled={!opens || resend.isPending}
        >
          Resend to non-openers{unopened !== null && opens ? ` (about ${count(unopened, 'person', 'people')})` : ''}
        </Button>
        <Button
          onClick={() => resend.mutate('NON_CLICKERS')}
          loading={resend.isPending && resend.variables === 'NON_CLICKERS'}
          disabled={!clicks || resend.isPending}
        >
          Resend to non-clickers{unclicked !== null && clicks ? ` (about ${count(unclicked, 'person', 'people')})` : ''}
        </Button>
      </div>
      {(!opens || !clicks) && (
        <p className="muted small">
          This broadcast did not track {!opens && !clicks ? 'opens or clicks' : !opens ? 'opens' : 'clicks'}, so it
          cannot tell who did not {!opens && !clicks ? 'open or click' : !opens ? 'open it' : 'click'}.
        </p>
      )}
      {resend.isError && <ErrorSummary message={describeError(resend.error)} />}
    </section>
  );
}
