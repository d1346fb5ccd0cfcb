/** The workspace's sending health: bounce and complaint rates against their limits. */
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { workspaceKeys } from '../../api/keys';
import { EmptyState, QueryState, StatusBadge } from '../../components';
import { count, formatNumber, formatRate } from '../../lib/format';

const HEALTH_TEXT = { ok: 'Healthy', warning: 'Near the limit', critical: 'Over the limit' } as const;

export function HealthCard() {
  const q = useQuery({
    queryKey: workspaceKeys.health(),
    queryFn: async () => unwrap(await api.GET('/v1/workspace/health')),
  });
  return (
    <section className="card stack-sm" aria-labelledby="health-h">
      <h2 id="health-h">Sender health</h2>
      <QueryState query={q}>
        {(h) =>
          h.windows.every((w) => w.sent === 0) ? (
            <EmptyState title="Nothing sent yet">Bounce and complaint rates show once mail goes out.</EmptyState>
          ) : (
            <div className="stack">
              {h.windows.map((w) => (
                <div key={w.days} className="stack-sm">
                  <div className="row-between">
                    <strong>Last {count(w.days, 'day')}</strong>
                    <span className="muted small">{formatNumber(w.sent)} sent</span>
                  </div>
                  {(
                    [
                      ['Hard bounces', w.hardBounceRate, w.hardBounces],
                      ['Complaints', w.complaintRate, w.complaints],
                    ] as const
                  ).map(([name, rate, n]) => (
                    <div key={name} className="stack-sm">
                      <div className="row-between small">
                        <span>
                          {name}: {formatRate(rate.value)} ({formatNumber(n)})
                        </span>
                        <StatusBadge status={rate.status} label={HEALTH_TEXT[rate.status]} />
                      </div>
                      <div
                        className="health-bar"
                        role="img"
                        aria-label={`${name} ${formatRate(rate.value)} of a ${formatRate(rate.threshold)} limit`}
                      >
                        <div
                          className={`health-fill ${rate.status}`}
                          style={{
                            width: `${Math.min(100, rate.threshold ? (rate.value / rate.threshold) * 100 : 0)}%`,
                          }}
                        />
                      </div>
                      <span className="muted small">Limit {formatRate(rate.threshold)}</span>
                    </div>
                  ))}
                </div>
              ))}
            </div>
          )
        }
      </QueryState>
    </section>
  );
}
