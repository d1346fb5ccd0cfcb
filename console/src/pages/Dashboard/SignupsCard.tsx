/** New contacts per local day over the last weeks. */
import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { contactKeys } from '../../api/keys';
import { EmptyState, ErrorState, Skeleton } from '../../components';
import { TimeChart } from '../../components/Chart';
import { formatNumber } from '../../lib/format';

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

export function SignupsCard() {
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
    return {
      times: days.map((d) => d / 1000),
      series: [{ label: 'New contacts', values: counts, color: '#2f4fd6', bars: true }],
      total,
      best: Math.max(...counts),
    };
  }, [q.data]);
  return (
    <section className="card stack-sm" aria-labelledby="signups-h">
      <div className="card-header">
        <h2 id="signups-h">New contacts, last {DAYS} days</h2>
        {chart && (
          <span className="stat">
            <span className="stat-value">{formatNumber(chart.total)}</span>
          </span>
        )}
      </div>
      {q.isPending ? (
        <Skeleton lines={6} />
      ) : q.isError ? (
        <ErrorState error={q.error} onRetry={() => void q.refetch()} />
      ) : chart && chart.total === 0 ? (
        <EmptyState
          title="No new contacts in the last 30 days"
          action={<Link to="/forms">Publish a sign-up form</Link>}
        >
          Contacts from forms, imports and the API show here.
        </EmptyState>
      ) : (
        chart && (
          <TimeChart
            times={chart.times}
            series={chart.series}
            label={`New contacts per day over the last ${DAYS} days: ${formatNumber(chart.total)} in all, at most ${formatNumber(chart.best)} in a day.`}
          />
        )
      )}
    </section>
  );
}
