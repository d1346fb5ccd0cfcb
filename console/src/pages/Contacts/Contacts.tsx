/**
 * Contacts: a table paged by cursor (Previous/Next; a page is 50 contacts and nothing loads them all), the
 * exact email search (the API's ?email= filter, normalised here as the server does), status and topic
 * filters with the total count and the count of the current filters (GET /v1/contacts/count), the CSV/NDJSON import
 * with its column mapping, upload progress and per-row errors, and the CSV export of a segment.
 */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
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
  useTopics,
  type Contact,
  type ContactStatus,
} from '../../lib/audience';
import { formatDateTime, formatNumber } from '../../lib/format';
import { problemOf } from '../../lib/forms';
import { countOf as count } from './import-mapping';
import { ImportDialog } from './ImportDialog';
import { ExportDialog } from './ExportDialog';
import '../../styles/audience.css';

const PAGE = 50;

export default function Contacts() {
  const can = useCan();
  const topics = useTopics();
  const [emailInput, setEmailInput] = useState('');
  const [email, setEmail] = useState('');
  const [status, setStatus] = useState<ContactStatus | ''>('');
  const [topicId, setTopicId] = useState('');
  // The cursors of the pages before this one: Previous pops, Next pushes.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const [importing, setImporting] = useState(false);
  const [exporting, setExporting] = useState(false);

  const q = useQuery({
    queryKey: contactKeys.list({ email, status, topicId, cursor }),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/contacts', {
          params: {
            query: {
              limit: PAGE,
              cursor,
              ...(email ? { email } : {}),
              ...(status ? { status } : {}),
              ...(topicId ? { topicId } : {}),
            },
          },
        }),
      ),
    placeholderData: keepPreviousData,
  });
  // The total, and the count of the current filters (GET /v1/contacts/count: exact, and cheap at any size).
  const countOf = (filter: { email: string; status: string; topicId: string }) => ({
    queryKey: contactKeys.count(filter),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/contacts/count', {
          params: {
            query: {
              ...(filter.email ? { email: filter.email } : {}),
              ...(filter.status ? { status: filter.status as ContactStatus } : {}),
              ...(filter.topicId ? { topicId: filter.topicId } : {}),
            },
          },
        }),
      ).count,
  });
  const total = useQuery(countOf({ email: '', status: '', topicId: '' }));
  const matching = useQuery({
    ...countOf({ email, status, topicId }),
    enabled: Boolean(email || status || topicId),
  });
  const resetPages = () => setCursors([undefined]);
  const search = (e: FormEvent) => {
    e.preventDefault();
    // What the API does to an email before its exact match: trimmed, lower-cased.
    setEmail(emailInput.trim().toLowerCase());
    resetPages();
  };
  const { fields } = problemOf(q.error);
  const emailError = fields['/query/email']
    ? 'Enter a whole email address, like ana@example.com: the search matches exact addresses only.'
    : null;

  const columns: Column<Contact>[] = [
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
    { key: 'created', header: 'Added', cell: (c) => <span className="nowrap">{formatDateTime(c.createdAt)}</span> },
  ];
  const filtered = Boolean(email || status || topicId);
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
        <form className="filter-search" onSubmit={search} role="search" aria-label="Find a contact by email">
          <Input
            label="Email address"
            type="search"
            inputMode="email"
            autoComplete="off"
            placeholder="ana@example.com"
            value={emailInput}
            onChange={(e) => {
              setEmailInput(e.target.value);
              if (!e.target.value && email) {
                setEmail('');
                resetPages();
              }
            }}
            hint="Exact match on the whole address (case does not matter)."
            error={emailError}
          />
          <Button type="submit">Search</Button>
        </form>
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
      </div>

      {q.isPending ? (
        <Skeleton lines={8} />
      ) : q.isError && !emailError ? (
        <ErrorState error={q.error} onRetry={() => void q.refetch()} />
      ) : !q.data || q.data.data.length === 0 ? (
        <div className="card">
          {filtered || emailError ? (
            <EmptyState
              title={email ? `No contact has the address ${email}` : 'No contacts match these filters'}
              action={
                <Button
                  onClick={() => {
                    setEmail('');
                    setEmailInput('');
                    setStatus('');
                    setTopicId('');
                    resetPages();
                  }}
                >
                  Clear the search and filters
                </Button>
              }
            >
              {email ? 'The search finds whole addresses only.' : 'Try another status or topic.'}
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
        <div className="stack-sm contacts-list" aria-busy={q.isFetching || undefined}>
          {filtered && (
            <p className="contacts-count" aria-live="polite">
              {matching.data === undefined || total.data === undefined
                ? 'Counting the contacts that match…'
                : `${count(matching.data, 'contact matches', 'contacts match')} these filters, of ${count(total.data, 'contact')} in all.`}
            </p>
          )}
          <Table columns={columns} rows={q.data.data} rowKey={(c) => c.id} caption={`Contacts, page ${page}`} />
          <nav className="pager" aria-label="Contact pages">
            <Button onClick={() => setCursors((c) => c.slice(0, -1))} disabled={page === 1 || q.isFetching}>
              ← Previous
            </Button>
            <span className="muted small" aria-live="polite">
              Page {page}
              {pages !== undefined && pages >= page ? ` of ${formatNumber(pages)}` : ''}
              {q.isFetching ? ' (loading…)' : ''}
            </span>
            <Button
              onClick={() => q.data?.nextCursor && setCursors((c) => [...c, q.data!.nextCursor ?? undefined])}
              disabled={!q.data.nextCursor || q.isFetching}
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
