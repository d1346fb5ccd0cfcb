/** Segments: the saved filters over the workspace's contacts, newest first. */
import { Link, useNavigate } from 'react-router';
import { api, unwrap } from '../api/client';
import { segmentKeys } from '../api/keys';
import { useCan } from '../api/session';
import { Button, CursorTable, EmptyState, PageHeader, useCursorList, type Column } from '../components';
import type { Segment } from '../lib/audience';
import { formatDateTime } from '../lib/format';
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
  return `${group.mode === 'all' ? 'all' : 'any'} of ${group.items.length} condition${group.items.length === 1 ? '' : 's'}`;
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
    { key: 'filter', header: 'Matches', cell: (s) => describeFilter(s.filter) },
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
