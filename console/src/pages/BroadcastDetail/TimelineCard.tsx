/**
 * Sent, opens, clicks and bounces per hour or day of the reader's time zone (the API buckets by it: `tz`), as a chart
 * and a table. A bucket is drawn across its whole hour or day (a bar centred on it, the lines through its middle), so
 * a send at 8:51 shows between 8:00 and 9:00, not as a peak at 8:00.
 */
import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { api, unwrap } from '../../api/client';
import { broadcastKeys } from '../../api/keys';
import { TimeChart } from '../../components/Chart';
import { Button, EmptyState, ErrorState, Skeleton, Table } from '../../components';
import { timeZoneName } from '../../lib/audience';
import { count, formatDate, formatDateTime, formatNumber } from '../../lib/format';

const HOUR = 3_600_000;
const DAY = 86_400_000;
const timeOnly = new Intl.DateTimeFormat(undefined, { timeStyle: 'short' });

/** The zone the browser is in, for the API (`tz`): UTC when the browser does not say. */
function browserZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** "29 Nov 2026, 08:00 – 09:00" for an hour, the date for a day. */
export function bucketLabel(at: string, bucket: 'hour' | 'day'): string {
  if (bucket === 'day') return formatDate(at);
  return `${formatDateTime(at)} – ${timeOnly.format(new Date(new Date(at).getTime() + HOUR))}`;
}

export function TimelineCard({ broadcastId }: { broadcastId: string }) {
  const [bucket, setBucket] = useState<'hour' | 'day'>('hour');
  const tz = browserZone();
  const q = useQuery({
    queryKey: broadcastKeys.timeline(broadcastId, bucket, tz),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/broadcasts/{broadcastId}/timeline', {
          params: { path: { broadcastId }, query: { bucket, tz } },
        }),
      ),
  });
  const chart = useMemo(() => {
    if (!q.data || q.data.data.length === 0) return null;
    const rows = q.data.data;
    // The API leaves empty buckets out: the chart gets every bucket from one before the first to one after
    // the last (at most 500), zeros included, so that a single busy hour does not stretch the axis over years.
    // A local day is 23 or 25 hours long when the clocks change: a stepped day within 2 hours of a bucket is that one
    // (hours are exact: within half an hour, or an hour's neighbours would all fold into it, leaving one point).
    const step = bucket === 'hour' ? HOUR : DAY;
    const near = bucket === 'hour' ? HOUR / 2 : 2 * HOUR;
    const byTime = new Map(rows.map((r) => [new Date(r.at).getTime(), r]));
    const starts = [...byTime.keys()];
    const first = starts[0]! - step;
    const last = Math.min(starts[starts.length - 1]! + step, first + 500 * step);
    const times: number[] = [];
    for (let t = first; t <= last; t += step) {
      const at = starts.find((s) => Math.abs(s - t) < near) ?? t;
      if (times[times.length - 1] !== at) times.push(at);
    }
    const pick = (k: 'sent' | 'opens' | 'clicks' | 'bounces') => times.map((t) => byTime.get(t)?.[k] ?? 0);
    return {
      // Each bucket at its middle: its bar spans the hour or day it counts.
      times: times.map((t) => (t + step / 2) / 1000),
      series: [
        { label: 'Sent', values: pick('sent'), color: '#2f4fd6', bars: true },
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
            label={`Sent, opens, clicks and bounces per ${bucket} (${timeZoneName()}), ${count(chart.rows.length, `${bucket} with activity`, `${bucket}s with activity`)}.`}
          />
          <details>
            <summary>The numbers as a table</summary>
            <Table
              caption={`Per ${bucket}`}
              rowKey={(r) => r.at}
              rows={chart.rows}
              columns={[
                { key: 'at', header: bucket === 'hour' ? 'Hour' : 'Day', cell: (r) => bucketLabel(r.at, bucket) },
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
