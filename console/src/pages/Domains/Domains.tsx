import { useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { domainKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import type { paths } from '../../api/generated/schema';
import { Button, CursorTable, EmptyState, PageHeader, StatusBadge, useCursorList, type Column } from '../../components';
import { formatDateTime } from '../../lib/format';
import { AddDomainDialog } from './AddDomainDialog';

export type Domain = paths['/v1/domains/{domainId}']['get']['responses'][200]['content']['application/json'];
type ListDomain = paths['/v1/domains']['get']['responses'][200]['content']['application/json']['data'][number];

export default function Domains() {
  const can = useCan();
  const [adding, setAdding] = useState(false);
  const list = useCursorList<ListDomain>(domainKeys.list(), async (cursor) =>
    unwrap(await api.GET('/v1/domains', { params: { query: { cursor, limit: 50 } } })),
  );
  const columns: Column<ListDomain>[] = [
    {
      key: 'name',
      header: 'Domain',
      cell: (d) => (
        <Link className="cell-main" to={`/domains/${d.id}`}>
          {d.name}
        </Link>
      ),
    },
    { key: 'status', header: 'Status', cell: (d) => <StatusBadge status={d.status} /> },
    {
      key: 'verified',
      header: 'Verified',
      cell: (d) => <span className="nowrap">{formatDateTime(d.verifiedAt)}</span>,
    },
    {
      key: 'checked',
      header: 'Last checked',
      cell: (d) => <span className="nowrap">{formatDateTime(d.verification?.checkedAt)}</span>,
    },
  ];
  const canWrite = can('write:domains');
  return (
    <>
      <PageHeader
        needs="write:domains"
        title="Domains"
        description="Domains you send from. Each needs DNS records that prove it is yours and sign your mail (DKIM)."
        actions={
          canWrite && (
            <Button variant="primary" onClick={() => setAdding(true)}>
              Add domain
            </Button>
          )
        }
      />
      <CursorTable
        list={list}
        columns={columns}
        rowKey={(d) => d.id}
        caption="Sending domains"
        empty={
          <div className="card">
            <EmptyState
              title="No sending domains yet"
              action={
                canWrite && (
                  <Button variant="primary" onClick={() => setAdding(true)}>
                    Add your first domain
                  </Button>
                )
              }
            >
              Broadcasts and confirmation emails need a verified domain to send from.
            </EmptyState>
          </div>
        }
      />
      <AddDomainDialog open={adding} onClose={() => setAdding(false)} />
    </>
  );
}
