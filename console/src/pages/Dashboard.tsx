/**
 * The dashboard: new contacts per day over 30 days (GET /v1/stats/contacts: counts per UTC hour, folded here
 * into the viewer's local days, one request whatever the numbers), recent broadcasts with their open, click and
 * bounce rates, and sender health (hard bounces and complaints against thresholds). uPlot comes in the
 * dashboard's chunk (shared with the broadcast report's): no other page loads it, and a lazy chart here would
 * hold the chart back by React's Suspense reveal throttle (300 ms).
 */
import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../api/client';
import { broadcastKeys, contactKeys, workspaceKeys } from '../api/keys';
import { useCan, useSession } from '../api/session';
import { EmptyState, ErrorState, PageHeader, QueryState, Skeleton, StatusBadge } from '../components';
import { TimeChart } from '../components/Chart';
import { formatDate, formatNumber, formatRate, percent } from '../lib/format';

const DAYS = 30;

function startOfDay(t: number): number {
  const d = new Date(t);
  d.setHours(0, 0, 0, 0);
  return d.getTime();
}

function useSignups() {
  return useQuery({
    queryKey: contactKeys.signups(),
    // One day more than shown: the first local day starts before the window's first UTC hour in zones east of UTC.
    queryFn: async () => unwrap(await api.GET('/v1/stats/contacts', { params: { query: { days: DAYS + 1 } } })),
  });
}

function SignupsCard() {
  const q = useSignups();
  const chart = useMemo(() => {
    if (!q.data) return null;
    const first = startOfDay(Date.now()) - (DAYS - 1) * 86_400_000;
    const days = Array.from({ length: DAYS }, (_, i) => first + i * 86_400_000);
    const counts = days.map(() => 0);
    for (const h of q.data.hours) {
      // Midnights are whole days apart, give or take a daylight-saving hour: rounded.
      const i = Math.round((startOfDay(new Date(h.hour).getTime()) - first) / 86_400_000);
      if (i >= 0 && i < DAYS) counts[i]! += h.created;
    }
    const total = counts.reduce((a, n) => a + n, 0);
    return { times: days.map((d) => d / 1000), series: [{ label: 'New contacts', values: counts, color: '#2f4fd6', bars: true }], total, best: Math.max(...counts) };
  }, [q.data]);
  return (
    <section className="card stack-sm" aria-labelledby="signups-h">
      <div className="card-header">
        <h2 id="signups-h">New contacts, last {DAYS} days</h2>
        {chart && <span className="stat"><span className="stat-value">{formatNumber(chart.total)}</span></span>}
      </div>
      {q.isPending ? <Skeleton lines={6} /> : q.isError ? <ErrorState error={q.error} onRetry={() => void q.refetch()} /> : chart && chart.total === 0 ? (
        <EmptyState title="No new contacts in the last 30 days" action={<Link to="/forms">Publish a sign-up form</Link>}>Contacts from forms, imports and the API show here.</EmptyState>
      ) : chart && (
          <TimeChart times={chart.times} series={chart.series} label={`New contacts per day over the last ${DAYS} days: ${formatNumber(chart.total)} in all, at most ${formatNumber(chart.best)} in a day.`} />

      )}
    </section>
  );
}

function BroadcastsCard() {
  const q = useQuery({ queryKey: broadcastKeys.recent(), queryFn: async () => unwrap(await api.GET('/v1/broadcasts', { params: { query: { limit: 5 } } })).data });
  return (
    <section className="card stack-sm" aria-labelledby="bc-h">
      <div className="card-header"><h2 id="bc-h">Recent broadcasts</h2><Link to="/broadcasts" className="small">All broadcasts</Link></div>
      <QueryState query={q}>{(rows) => rows.length === 0 ? <EmptyState title="No broadcasts yet">Broadcasts you send show here with their open, click and bounce rates.</EmptyState> : (
        <div className="table-wrap">
          <table className="table">
            <caption className="visually-hidden">Recent broadcasts</caption>
            <thead><tr><th scope="col">Broadcast</th><th scope="col">Status</th><th scope="col" className="num">Sent</th><th scope="col" className="num">Opened</th><th scope="col" className="num">Clicked</th><th scope="col" className="num">Bounced</th></tr></thead>
            <tbody>
              {rows.map((b) => (
                <tr key={b.id}>
                  <td><span className="cell-main">{b.name}</span><div className="muted small">{b.sentAt ? formatDate(b.sentAt) : b.emailContent.subject ?? ''}</div></td>
                  <td><StatusBadge status={b.status} /></td>
                  <td className="num">{formatNumber(b.stats?.sent)}</td>
                  <td className="num">{b.tracking.opens ? percent(b.stats?.uniqueOpens, b.stats?.sent) : <span className="muted small">off</span>}</td>
                  <td className="num">{b.tracking.clicks ? percent(b.stats?.uniqueClicks, b.stats?.sent) : <span className="muted small">off</span>}</td>
                  <td className="num">{percent(b.stats?.bounced, b.stats?.sent)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}</QueryState>
    </section>
  );
}

const HEALTH_TEXT = { ok: 'Healthy', warning: 'Near the limit', critical: 'Over the limit' } as const;

function HealthCard() {
  const q = useQuery({ queryKey: workspaceKeys.health(), queryFn: async () => unwrap(await api.GET('/v1/workspace/health')) });
  return (
    <section className="card stack-sm" aria-labelledby="health-h">
      <h2 id="health-h">Sender health</h2>
      <QueryState query={q}>{(h) => h.windows.every((w) => w.sent === 0) ? <EmptyState title="Nothing sent yet">Bounce and complaint rates show once mail goes out.</EmptyState> : (
        <div className="stack">
          {h.windows.map((w) => (
            <div key={w.days} className="stack-sm">
              <div className="row-between"><strong>Last {w.days} days</strong><span className="muted small">{formatNumber(w.sent)} sent</span></div>
              {([['Hard bounces', w.hardBounceRate, w.hardBounces], ['Complaints', w.complaintRate, w.complaints]] as const).map(([name, rate, n]) => (
                <div key={name} className="stack-sm">
                  <div className="row-between small"><span>{name}: {formatRate(rate.value)} ({formatNumber(n)})</span><StatusBadge status={rate.status} label={HEALTH_TEXT[rate.status]} /></div>
                  <div className="health-bar" role="img" aria-label={`${name} ${formatRate(rate.value)} of a ${formatRate(rate.threshold)} limit`}>
                    <div className={`health-fill ${rate.status}`} style={{ width: `${Math.min(100, rate.threshold ? (rate.value / rate.threshold) * 100 : 0)}%` }} />
                  </div>
                  <span className="muted small">Limit {formatRate(rate.threshold)}</span>
                </div>
              ))}
            </div>
          ))}
        </div>
      )}</QueryState>
    </section>
  );
}

export default function Dashboard() {
  const session = useSession();
  const can = useCan();
  return (
    <>
      <PageHeader title="Dashboard" description={`Welcome back${session.user.name ? `, ${session.user.name}` : ''}. Here is how ${session.workspace.name} is doing.`} />
      <div className="stack">
        {can('read:contacts') && <SignupsCard />}
        <div className="grid-2">
          {can('read:broadcasts') && <BroadcastsCard />}
          <HealthCard />
        </div>
      </div>
    </>
  );
}
