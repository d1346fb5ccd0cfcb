/** The newest broadcasts and their status. */
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { broadcastKeys } from '../../api/keys';
import { EmptyState, QueryState, StatusBadge } from '../../components';
import { formatDate, formatNumber, percent } from '../../lib/format';

export function BroadcastsCard() {
  const q = useQuery({
    queryKey: broadcastKeys.recent(),
    queryFn: async () => unwrap(await api.GET('/v1/broadcasts', { params: { query: { limit: 5 } } })).data,
  });
  return (
    <section className="card stack-sm" aria-labelledby="bc-h">
      <div className="card-header">
        <h2 id="bc-h">Recent broadcasts</h2>
        <Link to="/broadcasts" className="small">
          All broadcasts
        </Link>
      </div>
      <QueryState query={q}>
        {(rows) =>
          rows.length === 0 ? (
            <EmptyState title="No broadcasts yet">
              Broadcasts you send show here with their open, click and bounce rates.
            </EmptyState>
          ) : (
            <div className="table-wrap" tabIndex={0} role="region" aria-label="Recent broadcasts">
              <table className="table">
                <caption className="visually-hidden">Recent broadcasts</caption>
                <thead>
                  <tr>
                    <th scope="col">Broadcast</th>
                    <th scope="col">Status</th>
                    <th scope="col" className="num">
                      Sent
                    </th>
                    <th scope="col" className="num">
                      Opened
                    </th>
                    <th scope="col" className="num">
                      Clicked
                    </th>
                    <th scope="col" className="num">
                      Bounced
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((b) => (
                    <tr key={b.id}>
                      <td>
                        <span className="cell-main">{b.name}</span>
                        <div className="muted small">
                          {b.sentAt ? formatDate(b.sentAt) : (b.emailContent.subject ?? '')}
                        </div>
                      </td>
                      <td>
                        <StatusBadge status={b.status} />
                      </td>
                      <td className="num">{formatNumber(b.stats?.sent)}</td>
                      <td className="num">
                        {b.tracking.opens ? (
                          percent(b.stats?.uniqueOpens, b.stats?.sent)
                        ) : (
                          <span className="muted small">off</span>
                        )}
                      </td>
                      <td className="num">
                        {b.tracking.clicks ? (
                          percent(b.stats?.uniqueClicks, b.stats?.sent)
                        ) : (
                          <span className="muted small">off</span>
                        )}
                      </td>
                      <td className="num">{percent(b.stats?.bounced, b.stats?.sent)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </QueryState>
    </section>
  );
}
