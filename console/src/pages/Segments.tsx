/** Segments: the saved filters over the workspace's contacts, newest first, each with how many contacts it matches now. */
import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate } from 'react-router';
import { api, unwrap } from '../api/client';
import { segmentKeys } from '../api/keys';
import { useCan } from '../api/session';
import { Button, CursorTable, EmptyState, PageHeader, Spinner, useCursorList, type Column } from '../components';
import type { Segment } from '../lib/audience';
import { count, formatDateTime, formatNumber } from '../lib/format';
import '../styles/audience.css';

/** The filter in a few words: "all of 3 conditions". */
export function describeFilter(f: unknown): string {
  if (!f || typeof f !== 'object') return '—';
  const o = f as Record<string, unknown>;
  const group = Array.isArray(o.all)
    ? { mode: 'all', items: o.all }
    : Array.isArray(o.any)
      ? { mode: 'any', items: o.any }
      : null;
  if (!group) return 'one condition';
  if (group.items.length === 0) return group.mode === 'all' ? 'every contact' : 'no contact';
  if (group.items.length === 1) return '1 condition';
  return `${group.mode === 'all' ? 'all' : 'any'} of ${count(group.items.length, 'condition')}`;
}

/**
 * The contacts a segment matches now (GET /v1/segments/{id}/count, bounded by the service's evaluation limit), and how
 * many of them are subscribed: what a broadcast to it would reach. Counted per row, when the row is shown.
 */
function MatchCount({ segment }: { segment: Segment }) {
  const q = useQuery({
    queryKey: segmentKeys.count(segment.id, segment.updatedAt),
    queryFn: async () =>
      unwrap(await api.GET('/v1/segments/{segmentId}/count', { params: { path: { segmentId: segment.id } } })),
    staleTime: 60_000,
    retry: false,
  });
  if (q.isPending) return <Spinner size="sm" label="Counting…" />;
  if (q.isError) return <span className="muted">Not counted</span>;
  return (
    <span className="nowrap" data-testid="segment-count">
      {count(q.data.count, 'contact')}
      <span className="muted small"> · {formatNumber(q.data.subscribed)} subscribed</span>
    </span>
  );
}

export default function Segments() {
  const can = useCan();
  const navigate = useNavigate();
  const list = useCursorList<Segment>(segmentKeys.list(), async (cursor) =>
    unwrap(await api.GET('/v1/segments', { params: { query: { cursor, limit: 50 } } })),
  );
  const columns: Column<Segment>[] = [
    {
      key: 'name',
      header: 'Segment',
      cell: (s) => (
        <Link className="cell-main" to={`/segments/${s.id}`}>
          {s.name}
        </Link>
      ),
    },
    { key: 'count', header: 'Matches', cell: (s) => <MatchCount segment={s} /> },
    { key: 'filter', header: 'Filter', cell: (s) => <span className="muted">{describeFilter(s.filter)}</span> },
    { key: 'updated', header: 'Updated', cell: (s) => <span className="nowrap">{formatDateTime(s.updatedAt)}</span> },
  ];
  const canWrite = can('write:contacts');
  return (
    <>
      <PageHeader
        needs="write:contacts"
        title="Segments"
        description="Saved filters over your contacts: by field, property, sign-up date and topic. A segment is evaluated when it is used, so it is always current."
        actions={
          canWrite && (
            <Button variant="primary" onClick={() => navigate('/segments/new')}>
              New segment
            </Button>
          )
        }
      />
      <CursorTable
        list={list}
        columns={columns}
        rowKey={(s) => s.id}
        caption="Segments"
        empty={
          <div className="card">
            <EmptyState
              title="No segments yet"
              action={
                canWrite && (
                  <Button variant="primary" onClick={() => navigate('/segments/new')}>
                    Build a segment
                  </Button>
                )
              }
            >
              A segment picks the contacts a broadcast goes to.
            </EmptyState>
          </div>
        }
      />
    </>
  );
}
