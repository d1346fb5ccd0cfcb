/**
 * Tables of API lists. Lists page by cursor (`nextCursor`): useCursorList keeps the pages loaded so far
 * and "Load more" fetches the next one; nothing ever loads a whole collection.
 */
import { useInfiniteQuery, type QueryKey } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Button } from './Button';
import { EmptyState, ErrorState, Skeleton } from './States';

export interface Column<T> {
  key: string;
  header: ReactNode;
  cell: (row: T) => ReactNode;
  numeric?: boolean;
  /** A header only screen readers hear (an actions column). */
  hiddenHeader?: boolean;
  /**
   * Left out at a phone's width (below 560 px): figures the row's own page shows too. At that width the other
   * columns stack in a card per row, each cell under its header's words (data-label); an actions column comes last.
   */
  wideOnly?: boolean;
}

function cellClass<T>(c: Column<T>): string | undefined {
  return [c.numeric ? 'num' : '', c.wideOnly ? 'wide-only' : ''].filter(Boolean).join(' ') || undefined;
}

export function Table<T>({
  columns,
  rows,
  rowKey,
  caption,
}: {
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string;
  caption?: string;
}) {
  return (
    <div className="table-wrap table-wrap-cards" tabIndex={0} role="region" aria-label={caption}>
      <table className="table table-cards">
        {caption && <caption className="visually-hidden">{caption}</caption>}
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.key} scope="col" className={cellClass(c)}>
                {c.hiddenHeader ? <span className="visually-hidden">{c.header}</span> : c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={rowKey(r)}>
              {columns.map((c) => (
                <td
                  key={c.key}
                  className={cellClass(c)}
                  data-label={typeof c.header === 'string' && !c.hiddenHeader ? c.header : undefined}
                >
                  {c.cell(r)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/** A cursor-paged list: `fetchPage(cursor)` answers one page of the API. */
export function useCursorList<T>(
  key: QueryKey,
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
  options: { enabled?: boolean; refetchInterval?: number | false } = {},
) {
  const q = useInfiniteQuery({
    queryKey: key,
    queryFn: ({ pageParam }) => fetchPage(pageParam),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    enabled: options.enabled,
    refetchInterval: options.refetchInterval,
  });
  const rows = q.data?.pages.flatMap((p) => p.data) ?? [];
  return { ...q, rows };
}

/** A cursor-paged table with its loading, empty and error states and the "Load more" button. */
export function CursorTable<T>({
  list,
  columns,
  rowKey,
  caption,
  empty,
}: {
  list: ReturnType<typeof useCursorList<T>>;
  columns: Column<T>[];
  rowKey: (row: T) => string;
  caption: string;
  empty: ReactNode;
}) {
  if (list.isPending) return <Skeleton lines={5} />;
  if (list.isError) return <ErrorState error={list.error} onRetry={() => void list.refetch()} />;
  if (list.rows.length === 0) return typeof empty === 'string' ? <EmptyState title={empty} /> : <>{empty}</>;
  return (
    <div className="stack-sm">
      <Table columns={columns} rows={list.rows} rowKey={rowKey} caption={caption} />
      {list.hasNextPage && (
        <div className="table-foot">
          <Button onClick={() => void list.fetchNextPage()} loading={list.isFetchingNextPage}>
            Load more
          </Button>
        </div>
      )}
    </div>
  );
}
