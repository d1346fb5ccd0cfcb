/**
 * Contacts: a table paged by cursor (Previous/Next; a page is 50 contacts and nothing loads them all), the search as
 * you type (the API's ?q=: part of an email or name, debounced), status, topic and tag filters with the total count
 * and the count of the current filters (GET /v1/contacts/count), contacts ticked (or all that match) for bulk actions
 * (BulkBar), the CSV/NDJSON import with its column mapping, upload progress and per-row errors, and the CSV export
 * of a segment.
 */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { contactKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import {
  Button,
  EmptyState,
  ErrorState,
  Input,
  PageHeader,
  Select,
  Skeleton,
  StatusBadge,
  Table,
  type Column,
} from '../../components';
import {
  CONTACT_STATUSES,
  CONTACT_TONES,
  statusLabel,
  useDebounced,
  useTags,
  useTopics,
  type Contact,
  type ContactStatus,
} from '../../lib/audience';
import { formatDateTime, formatNumber } from '../../lib/format';
import { problemOf } from '../../lib/forms';
import { countOf as count } from './import-mapping';
import { ImportDialog } from './ImportDialog';
import { ExportDialog } from './ExportDialog';
import { BulkBar, filterOfList } from './BulkBar';
import '../../styles/audience.css';

const PAGE = 50;

export default function Contacts() {
  const can = useCan();
  const topics = useTopics();
  const tags = useTags();
  const [searchInput, setSearchInput] = useState('');
  // Searched as the user types, once the words stop changing for 300 ms.
  const q = useDebounced(searchInput.trim(), 300);
  const [status, setStatus] = useState<ContactStatus | ''>('');
  const [topicId, setTopicId] = useState('');
  const [tag, setTag] = useState('');
  // Contacts ticked for a bulk action, or every contact the filters match.
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [allMatching, setAllMatching] = useState(false);
  // The cursors of the pages before this one: Previous pops, Next pushes.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const [importing, setImporting] = useState(false);
  const [exporting, setExporting] = useState(false);

  const list = useQuery({
    queryKey: contactKeys.list({ q, status, topicId, tag, cursor }),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/contacts', {
          params: {
            query: {
              limit: PAGE,
              cursor,
              ...(q ? { q } : {}),
              ...(status ? { status } : {}),
              ...(topicId ? { topicId } : {}),
              ...(tag ? { tag } : {}),
            },
          },
        }),
      ),
    placeholderData: keepPreviousData,
  });
  // The total, and the count of the current filters (GET /v1/contacts/count: exact, and cheap at any size).
  const countOf = (filter: { q: string; status: string; topicId: string; tag: string }) => ({
    queryKey: contactKeys.count(filter),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/contacts/count', {
          params: {
            query: {
              ...(filter.q ? { q: filter.q } : {}),
              ...(filter.status ? { status: filter.status as ContactStatus } : {}),
              ...(filter.topicId ? { topicId: filter.topicId } : {}),
              ...(filter.tag ? { tag: filter.tag } : {}),
            },
          },
        }),
      ).count,
  });
  const total = useQuery(countOf({ q: '', status: '', topicId: '', tag: '' }));
  const filtered = Boolean(q || status || topicId || tag);
  const matching = useQuery({ ...countOf({ q, status, topicId, tag }), enabled: filtered });
  const clearSelection = () => {
    setSelected(new Set());
    setAllMatching(false);
  };
  const resetPages = () => {
    setCursors([undefined]);
    clearSelection();
  };
  // A new search starts at the first page, with nothing ticked.
  useEffect(() => resetPages(), [q]);
  const { fields } = problemOf(list.error);
  const searchError = fields['/query/q'] ? 'Search with at most 200 characters.' : null;
  const rows = list.data?.data ?? [];
  const pageTicked = rows.length > 0 && rows.every((c) => selected.has(c.id));
  const tick = (id: string, on: boolean) => {
    setAllMatching(false);
    setSelected((s) => {
      const next = new Set(s);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  };
  const tickPage = (on: boolean) => {
    setAllMatching(false);
    setSelected(on ? new Set(rows.map((c) => c.id)) : new Set());
  };
  const writable = can('write:contacts');

  const columns: Column<Contact>[] = [
    ...(writable
      ? [
          {
            key: 'select',
            header: (
              <input
                type="checkbox"
                className="select-cell"
                aria-label="Select the contacts of this page"
                checked={pageTicked || allMatching}
                onChange={(e) => tickPage(e.target.checked)}
              />
            ),
            cell: (c: Contact) => (
              <span className="select-cell">
                <input
                  type="checkbox"
                  aria-label={`Select ${c.email}`}
                  checked={allMatching || selected.has(c.id)}
                  onChange={(e) => tick(c.id, e.target.checked)}
                />
              </span>
            ),
          },
        ]
      : []),
    {
      key: 'email',
      header: 'Email',
      cell: (c) => (
        <Link className="cell-main break" to={`/contacts/${c.id}`}>
          {c.email}
        </Link>
      ),
    },
    {
      key: 'name',
      header: 'Name',
      cell: (c) => [c.firstName, c.lastName].filter(Boolean).join(' ') || <span className="muted">—</span>,
    },
    {
      key: 'status',
      header: 'Status',
      cell: (c) => (
        <span className="row">
          <StatusBadge status={c.status} tone={CONTACT_TONES[c.status]} label={statusLabel(c.status)} />
          {c.suppressed && <StatusBadge status="suppressed" tone="danger" label="Suppressed" />}
        </span>
      ),
    },
    {
      key: 'topics',
      header: 'Topics',
      cell: (c) =>
        c.topics
          .filter((t) => t.subscribed)
          .map((t) => t.name)
          .join(', ') || <span className="muted">—</span>,
    },
    {
      key: 'tags',
      header: 'Tags',
      cell: (c) =>
        c.tags.length ? (
          <span className="tag-list">
            {c.tags.slice(0, 5).map((t) => (
              <span key={t} className="tag-chip">
                {t}
              </span>
            ))}
            {c.tags.length > 5 && <span className="muted small">+{c.tags.length - 5}</span>}
          </span>
        ) : (
          <span className="muted">—</span>
        ),
    },
    { key: 'created', header: 'Added', cell: (c) => <span className="nowrap">{formatDateTime(c.createdAt)}</span> },
  ];
  const page = cursors.length;
  const listed = filtered ? matching.data : total.data;
  const pages = listed === undefined ? undefined : Math.max(1, Math.ceil(listed / PAGE));

  return (
    <>
      <PageHeader
        needs="write:contacts"
        title="Contacts"
        description={
          total.data === undefined
            ? 'Everyone who signed up, was imported or added through the API.'
            : `${count(total.data, 'contact')}: everyone who signed up, was imported or added through the API.`
        }
        actions={
          <>
            <Button onClick={() => setExporting(true)}>Export CSV</Button>
            {can('write:contacts') && (
              <Button variant="primary" onClick={() => setImporting(true)}>
                Import
              </Button>
            )}
          </>
        }
      />
      <div className="card filters">
        <div className="filter-search" role="search" aria-label="Search contacts">
          <Input
            label="Search"
            type="search"
            autoComplete="off"
            placeholder="ana, @example.com, Lovelace"
            value={searchInput}
            maxLength={200}
            onChange={(e) => setSearchInput(e.target.value)}
            hint="Part of an email address or a name; results update as you type."
            error={searchError}
          />
        </div>
        <Select
          label="Status"
          value={status}
          onChange={(e) => {
            setStatus(e.target.value as ContactStatus | '');
            resetPages();
          }}
          options={[
            { value: '', label: 'Any status' },
            ...CONTACT_STATUSES.map((s) => ({ value: s, label: statusLabel(s) })),
          ]}
        />
        <Select
          label="Subscribed to topic"
          value={topicId}
          onChange={(e) => {
            setTopicId(e.target.value);
            resetPages();
          }}
          disabled={topics.isPending}
          options={[
            { value: '', label: 'Any topic' },
            ...(topics.data ?? []).map((t) => ({ value: t.id, label: t.name })),
          ]}
        />
        <Select
          label="Tag"
          value={tag}
          onChange={(e) => {
            setTag(e.target.value);
            resetPages();
          }}
          disabled={tags.isPending}
          options={[
            { value: '', label: 'Any tag' },
            ...(tags.data ?? []).map((t) => ({ value: t.tag, label: `${t.tag} (${formatNumber(t.contacts)})` })),
          ]}
        />
      </div>
      {writable && (
        <BulkBar
          selected={[...selected]}
          allMatching={allMatching}
          matching={filtered ? matching.data : total.data}
          filter={filterOfList({ q, status, topicId, tag })}
          topics={topics.data ?? []}
          tags={(tags.data ?? []).map((t) => t.tag)}
          onDone={clearSelection}
        />
      )}

      {list.isPending ? (
        <Skeleton lines={8} />
      ) : list.isError && !searchError ? (
        <ErrorState error={list.error} onRetry={() => void list.refetch()} />
      ) : !list.data || list.data.data.length === 0 ? (
        <div className="card">
          {filtered || searchError ? (
            <EmptyState
              title={q ? `No contact matches “${q}”` : 'No contacts match these filters'}
              action={
                <Button
                  onClick={() => {
                    setSearchInput('');
                    setStatus('');
                    setTopicId('');
                    setTag('');
                    resetPages();
                  }}
                >
                  Clear the search and filters
                </Button>
              }
            >
              {q ? 'The search looks in email addresses and names.' : 'Try another status, topic or tag.'}
            </EmptyState>
          ) : (
            <EmptyState
              title="No contacts yet"
              action={
                can('write:contacts') && (
                  <Button variant="primary" onClick={() => setImporting(true)}>
                    Import contacts
                  </Button>
                )
              }
            >
              Contacts arrive through your forms, imports and the API.
            </EmptyState>
          )}
        </div>
      ) : (
        <div className="stack-sm contacts-list" aria-busy={list.isFetching || undefined}>
          {filtered && (
            <p className="contacts-count" aria-live="polite">
              {matching.data === undefined || total.data === undefined
                ? 'Counting the contacts that match…'
                : `${count(matching.data, 'contact matches', 'contacts match')} these filters, of ${count(total.data, 'contact')} in all.`}
            </p>
          )}
          {writable && pageTicked && !allMatching && (filtered ? matching.data : total.data)! > rows.length && (
            <p className="row">
              <span>All {count(rows.length, 'contact')} on this page are selected.</span>
              <Button size="sm" variant="ghost" onClick={() => setAllMatching(true)}>
                Select all {formatNumber((filtered ? matching.data : total.data) ?? 0)} that match
              </Button>
            </p>
          )}
          {writable && (allMatching || selected.size > 0) && (
            <p className="row">
              <Button size="sm" variant="ghost" onClick={clearSelection}>
                Clear the selection
              </Button>
            </p>
          )}
          <Table columns={columns} rows={list.data.data} rowKey={(c) => c.id} caption={`Contacts, page ${page}`} />
          <nav className="pager" aria-label="Contact pages">
            <Button onClick={() => setCursors((c) => c.slice(0, -1))} disabled={page === 1 || list.isFetching}>
              ← Previous
            </Button>
            <span className="muted small" aria-live="polite">
              Page {page}
              {pages !== undefined && pages >= page ? ` of ${formatNumber(pages)}` : ''}
              {list.isFetching ? ' (loading…)' : ''}
            </span>
            <Button
              onClick={() => list.data?.nextCursor && setCursors((c) => [...c, list.data!.nextCursor ?? undefined])}
              disabled={!list.data.nextCursor || list.isFetching}
            >
              Next →
            </Button>
          </nav>
        </div>
      )}
      <ImportDialog open={importing} onClose={() => setImporting(false)} />
      <ExportDialog open={exporting} onClose={() => setExporting(false)} />
    </>
  );
}
