/** Clicks per link, as the template writes it (a personalised link is one row). */
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { broadcastKeys } from '../../api/keys';
import { EmptyState, QueryState, Table, type Column } from '../../components';
import { formatNumber } from '../../lib/format';

export function LinksCard({ broadcastId }: { broadcastId: string }) {
  const q = useQuery({
    queryKey: broadcastKeys.links(broadcastId),
    queryFn: async () =>
      unwrap(await api.GET('/v1/broadcasts/{broadcastId}/links', { params: { path: { broadcastId } } })),
  });
  type Link = NonNullable<typeof q.data>['data'][number];
  const columns: Column<Link>[] = [
    {
      key: 'url',
      header: 'Link',
      cell: (l) => (
        <div>
          <span className="cell-value">{l.url}</span>
          {/\{\{|\{%/.test(l.url) && (
            <div className="muted small">Personalised: every recipient's own link, together</div>
          )}
        </div>
      ),
    },
    { key: 'clicks', header: 'Clicks', numeric: true, cell: (l) => formatNumber(l.clicks) },
    { key: 'unique', header: 'Unique', numeric: true, cell: (l) => formatNumber(l.uniqueClicks) },
  ];
  return (
    <section className="card stack-sm" aria-labelledby="links-h">
      <h2 id="links-h">Link clicks</h2>
      <QueryState query={q}>
        {(data) =>
          data.data.length === 0 ? (
            <EmptyState title="No clicks yet">Clicks by people show here; link scanners are left out.</EmptyState>
          ) : (
            <Table columns={columns} rows={data.data} rowKey={(l) => l.url} caption="Clicks per link" />
          )
        }
      </QueryState>
    </section>
  );
}
