/** Sent, opens, clicks and bounces per hour or day, as a chart and a table. */
import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { api, unwrap } from '../../api/client';
import { broadcastKeys } from '../../api/keys';
import { TimeChart } from '../../components/Chart';
import { Button, EmptyState, ErrorState, Skeleton, Table } from '../../components';
import { formatDateTime, formatNumber } from '../../lib/format';

export function TimelineCard({ broadcastId }: { broadcastId: string }) {
  const [bucket, setBucket] = useState<'hour' | 'day'>('hour');
  const q = useQuery({
    queryKey: broadcastKeys.timeline(broadcastId, bucket),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/broadcasts/{broadcastId}/timeline', {
          params: { path: { broadcastId }, query: { bucket } },
        }),
      ),
  });
  const chart = useMemo(() => {
    if (!q.data || q.data.data.length === 0) return null;
    const rows = q.data.data;
    // The API leaves empty buckets out: the chart gets every bucket from one before the first to one after
    // the last (at most 500), zeros included, so that a single busy hour does not stretch the axis over years.
    const step = bucket === 'hour' ? 3_600_000 : 86_400_000;
    const byTime = new Map(rows.map((r) => [new Date(r.at).getTime(), r]));
    const first = new Date(rows[0]!.at).getTime() - step;
    const last = Math.min(new Date(rows[rows.length - 1]!.at).getTime() + step, first + 500 * step);
    const times: number[] = [];
    for (let t = first; t <= last; t += step) times.push(t);
    const pick = (k: 'sent' | 'opens' | 'clicks' | 'bounces') => times.map((t) => byTime.get(t)?.[k] ?? 0);
    return {
      times: times.map((t) => t / 1000),
      series: [
        { label: 'Sent', values: pick('sent'), color: '#2f4fd6' },
        { label: 'Opens', values: pick('opens'), color: '#17703a' },
        { label: 'Clicks', values: pick('clicks'), color: '#8a5300' },
        { label: 'Bounces', values: pick('bounces'), color: '#b42318' },
      ],
      rows,
    };
  }, [q.data, bucket]);
  return (
    <section className="card stack-sm" aria-labelledby="timeline-h">
      <div className="card-header">
        <h2 id="timeline-h">Over time</h2>
        <div className="row" role="group" aria-label="Bucket size">
          <Button
            size="sm"
            variant={bucket === 'hour' ? 'primary' : 'secondary'}
            aria-pressed={bucket === 'hour'}
            onClick={() => setBucket('hour')}
          >
            By hour
          </Button>
          <Button
            size="sm"
            variant={bucket === 'day' ? 'primary' : 'secondary'}
            aria-pressed={bucket === 'day'}
            onClick={() => setBucket('day')}
          >
            By day
          </Button>
        </div>
      </div>
      {q.isPending ? (
        <Skeleton lines={6} />
      ) : q.isError ? (
        <ErrorState error={q.error} onRetry={() => void q.refetch()} />
      ) : !chart ? (
        <EmptyState title="Nothing to chart yet" />
      ) : (
        <>
          <TimeChart
            times={chart.times}
            series={chart.series}
            label={`Sent, opens, clicks and bounces per ${bucket} (UTC), ${chart.rows.length} ${bucket}s with activity.`}
          />
          <details>
            <summary>The numbers as a table</summary>
            <Table
              caption={`Per ${bucket}`}
              rowKey={(r) => r.at}
              rows={chart.rows}
              columns={[
                { key: 'at', header: bucket === 'hour' ? 'Hour' : 'Day', cell: (r) => formatDateTime(r.at) },
                { key: 'sent', header: 'Sent', numeric: true, cell: (r) => formatNumber(r.sent) },
                { key: 'opens', header: 'Opens', numeric: true, cell: (r) => formatNumber(r.opens) },
                { key: 'clicks', header: 'Clicks', numeric: true, cell: (r) => formatNumber(r.clicks) },
                { key: 'bounces', header: 'Bounces', numeric: true, cell: (r) => formatNumber(r.bounces) },
              ]}
            />
          </details>
        </>
      )}
    </section>
  );
}
