/** The checks before sending (POST /preflight), run again on demand. */
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { broadcastKeys } from '../../api/keys';
import { Button, ErrorState, Skeleton } from '../../components';
import type { Broadcast } from '../../lib/audience';
import { checkDetail, checkTitle } from '../../lib/preflight';

export function PreflightCard({ broadcast }: { broadcast: Broadcast }) {
  const q = useQuery({
    queryKey: broadcastKeys.preflight(broadcast.id, broadcast.updatedAt),
    queryFn: async () =>
      unwrap(
        await api.POST('/v1/broadcasts/{broadcastId}/preflight', { params: { path: { broadcastId: broadcast.id } } }),
      ),
    retry: false,
  });
  const icon = { pass: '✓', warn: '!', fail: '✕' } as const;
  return (
    <section className="card stack-sm" aria-labelledby="preflight-h">
      <div className="card-header">
        <h2 id="preflight-h">Checks before sending</h2>
        <Button size="sm" onClick={() => void q.refetch()} loading={q.isFetching}>
          Run again
        </Button>
      </div>
      {q.isPending ? (
        <Skeleton lines={4} />
      ) : q.isError ? (
        <ErrorState error={q.error} onRetry={() => void q.refetch()} />
      ) : (
        <>
          <p className={q.data.ok ? 'callout callout-success' : 'callout callout-danger'} role="status">
            {q.data.ok ? 'Nothing blocks sending.' : 'Fix the failed checks before sending or scheduling.'}
          </p>
          <ul className="list-plain checks">
            {q.data.checks.map((c) => (
              <li key={c.id} className={`check-item check-${c.status}`}>
                <span className="check-icon" aria-hidden="true">
                  {icon[c.status]}
                </span>
                <span>
                  <span className="visually-hidden">
                    {c.status === 'pass' ? 'Passed' : c.status === 'warn' ? 'Warning' : 'Failed'}:{' '}
                  </span>
                  <strong>{checkTitle(c)}</strong> — {checkDetail(c)}
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
