/**
 * The suppression list (docs/bounces.md): addresses that get no broadcast or automation email, whatever their contact
 * says. A table paged by cursor as the API pages it (Previous/Next, 50 a page), searched by a part of the address and
 * filtered by reason and the day it was added; each entry says why (the bounce or complaint report's words, or the
 * note) and what sent the message it came from (a broadcast or an automation's email, linked). Editors and up add
 * addresses (one, or a pasted list) and remove one, behind a confirmation that says what removing means. The filters
 * live in the URL, so the contact page links here filtered to its address (`?q=`).
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import { contactKeys, suppressionKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import type { paths } from '../../api/generated/schema';
import {
  Button,
  ConfirmDialog,
  EmptyState,
  ErrorState,
  ErrorSummary,
  Input,
  MessageSourceLink,
  PageHeader,
  Select,
  Skeleton,
  StatusBadge,
  Table,
  useToast,
  type Column,
} from '../../components';
import { formatDateTime } from '../../lib/format';
import { useUrlFilters } from '../../lib/url-filters';
import { problemOf } from '../../lib/forms';
import { AddSuppressionsDialog } from './AddSuppressionsDialog';
import '../../styles/audience.css';

export type Suppression = paths['/v1/suppressions/{email}']['get']['responses'][200]['content']['application/json'];
type Reason = Suppression['reason'];

const PAGE = 50;

/** Each reason in words, with its tone and what it means. */
export const REASONS: Record<Reason, { label: string; tone: 'danger' | 'warning' | 'neutral'; means: string }> = {
  BOUNCED: { label: 'Hard bounce', tone: 'danger', means: 'the receiving server said the address does not exist' },
  COMPLAINED: { label: 'Spam complaint', tone: 'danger', means: 'the recipient reported an email as spam' },
  UNSUBSCRIBED: { label: 'Unsubscribed', tone: 'warning', means: 'the recipient unsubscribed from everything' },
  MANUAL: { label: 'Added by hand', tone: 'neutral', means: 'someone added it to the list' },
};

/** A `date` input's day as the instant its local midnight is, `days` later. */
function dayStart(day: string, days = 0): string | undefined {
  if (!/^\d{4}-\d\d-\d\d$/.test(day)) return undefined;
  const d = new Date(`${day}T00:00:00`);
  if (Number.isNaN(d.getTime())) return undefined;
  d.setDate(d.getDate() + days);
  return d.toISOString();
}

export default function Suppressions() {
  const can = useCan();
  const qc = useQueryClient();
  const toast = useToast();
  const { params, setFilter, clearFilters } = useUrlFilters();
  const q = params.get('q') ?? '';
  const reason = (params.get('reason') ?? '') as Reason | '';
  const from = params.get('from') ?? '';
  const until = params.get('until') ?? '';
  const [search, setSearch] = useState(q);
  // The cursors of the pages before this one, per filter: Previous pops, Next pushes; a new filter starts again.
  const filterKey = JSON.stringify([q, reason, from, until]);
  const [pages, setPages] = useState<{ key: string; cursors: (string | undefined)[] }>({
    key: filterKey,
    cursors: [undefined],
  });
  const cursors = pages.key === filterKey ? pages.cursors : [undefined];
  const setCursors = (next: (string | undefined)[]) => setPages({ key: filterKey, cursors: next });
  const cursor = cursors[cursors.length - 1];
  const [adding, setAdding] = useState(false);
  const [removing, setRemoving] = useState<Suppression | null>(null);

  const since = dayStart(from);
  const before = dayStart(until, 1);
  const list = useQuery({
    queryKey: suppressionKeys.list({ q, reason, since: since ?? '', before: before ?? '', cursor }),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/suppressions', {
          params: {
            query: {
              limit: PAGE,
              cursor,
              ...(q ? { q } : {}),
              ...(reason ? { reason } : {}),
              ...(since ? { since } : {}),
              ...(before ? { before } : {}),
            },
          },
        }),
      ),
    placeholderData: keepPreviousData,
  });

  const submitSearch = (e: FormEvent) => {
    e.preventDefault();
    setFilter({ q: search.trim() });
  };
  const clear = () => {
    setSearch('');
    clearFilters();
  };

  const remove = useMutation({
    mutationFn: async (email: string) =>
      unwrap(await api.DELETE('/v1/suppressions/{email}', { params: { path: { email } } })),
    onSuccess: (_data, email) => {
      void qc.invalidateQueries({ queryKey: suppressionKeys.all });
      void qc.invalidateQueries({ queryKey: contactKeys.all });
      toast.success(`${email} was removed from the suppression list.`);
      setRemoving(null);
    },
  });

  const editable = can('write:contacts');
  const columns: Column<Suppression>[] = [
    {
      key: 'email',
      header: 'Address',
      cell: (s) => (
        <div className="stack-xs suppression-cell">
          <span className="cell-main break">{s.email}</span>
          {/* At a phone's width the reason and the day come here: their columns are left out. */}
          <span className="narrow-only row small">
            <StatusBadge status={s.reason} tone={REASONS[s.reason].tone} label={REASONS[s.reason].label} />
            <span className="muted">{formatDateTime(s.createdAt)}</span>
          </span>
          {s.source && (
            <span className="small">
              <MessageSourceLink source={s.source} />
            </span>
          )}
          {s.detail && <span className="muted small break clamp-3">{s.detail}</span>}
        </div>
      ),
    },
    {
      key: 'reason',
      header: 'Reason',
      wideOnly: true,
      cell: (s) => <StatusBadge status={s.reason} tone={REASONS[s.reason].tone} label={REASONS[s.reason].label} />,
    },
    {
      key: 'created',
      header: 'Added',
      wideOnly: true,
      cell: (s) => <span className="nowrap">{formatDateTime(s.createdAt)}</span>,
    },
    ...(editable
      ? [
          {
            key: 'actions',
            header: 'Actions',
            hiddenHeader: true,
            cell: (s: Suppression) => (
              <Button size="sm" onClick={() => setRemoving(s)} aria-label={`Remove ${s.email} from the list`}>
                Remove
              </Button>
            ),
          },
        ]
      : []),
  ];
  const filtered = Boolean(q || reason || from || until);
  const page = cursors.length;
  const rows = list.data?.data ?? [];
  const { fields } = problemOf(list.error);
  const dateError = fields['/query/since'] || fields['/query/before'] ? 'Pick a day from the calendar.' : null;

  return (
    <>
      <PageHeader
        title="Suppressions"
        description="Addresses that get no broadcast or automation email, whatever their contact says: hard bounces, spam complaints, unsubscribes from everything and addresses added by hand."
        actions={
          editable && (
            <Button variant="primary" onClick={() => setAdding(true)}>
              Add addresses
            </Button>
          )
        }
      />
      <div className="card filters suppression-filters">
        <form className="filter-search" onSubmit={submitSearch} role="search" aria-label="Find suppressed addresses">
          <Input
            label="Address contains"
            type="search"
            autoComplete="off"
            placeholder="ana@example.com or @example.com"
            value={search}
            onChange={(e) => {
              setSearch(e.target.value);
              if (!e.target.value && q) setFilter({ q: '' });
            }}
            hint="Any part of the address; case does not matter."
          />
          <Button type="submit">Search</Button>
        </form>
        <Select
          label="Reason"
          value={reason}
          onChange={(e) => setFilter({ reason: e.target.value })}
          options={[
            { value: '', label: 'Any reason' },
            ...(Object.keys(REASONS) as Reason[]).map((r) => ({ value: r, label: REASONS[r].label })),
          ]}
        />
        <Input
          label="Added from"
          type="date"
          value={from}
          max={until || undefined}
          onChange={(e) => setFilter({ from: e.target.value })}
          error={dateError}
        />
        <Input
          label="Added until"
          type="date"
          value={until}
          min={from || undefined}
          onChange={(e) => setFilter({ until: e.target.value })}
        />
      </div>

      {list.isPending ? (
        <Skeleton lines={8} />
      ) : list.isError && !dateError ? (
        <ErrorState error={list.error} onRetry={() => void list.refetch()} />
      ) : rows.length === 0 ? (
        <div className="card">
          {filtered ? (
            <EmptyState
              title={q ? `No suppressed address contains “${q}”` : 'No suppressed address matches these filters'}
              action={<Button onClick={clear}>Clear the search and filters</Button>}
            >
              {q
                ? 'This address gets broadcasts and automation emails, if its contact is subscribed.'
                : 'Try another reason or other days.'}
            </EmptyState>
          ) : (
            <EmptyState
              title="No suppressed addresses"
              action={
                editable && (
                  <Button variant="primary" onClick={() => setAdding(true)}>
                    Add addresses
                  </Button>
                )
              }
            >
              Hard bounces, spam complaints and unsubscribes from everything are added here by themselves.
            </EmptyState>
          )}
        </div>
      ) : (
        <div className="stack-sm" aria-busy={list.isFetching || undefined}>
          <Table columns={columns} rows={rows} rowKey={(s) => s.email} caption={`Suppressed addresses, page ${page}`} />
          <nav className="pager" aria-label="Suppression list pages">
            <Button onClick={() => setCursors(cursors.slice(0, -1))} disabled={page === 1 || list.isFetching}>
              ← Previous
            </Button>
            <span className="muted small" aria-live="polite">
              Page {page}
              {list.isFetching ? ' (loading…)' : ''}
            </span>
            <Button
              onClick={() => list.data?.nextCursor && setCursors([...cursors, list.data.nextCursor])}
              disabled={!list.data?.nextCursor || list.isFetching}
            >
              Next →
            </Button>
          </nav>
        </div>
      )}

      <AddSuppressionsDialog open={adding} onClose={() => setAdding(false)} />
      <ConfirmDialog
        open={removing !== null}
        title="Remove this address from the suppression list?"
        confirmLabel="Remove from the list"
        danger
        busy={remove.isPending}
        onClose={() => {
          setRemoving(null);
          remove.reset();
        }}
        onConfirm={() => removing && remove.mutate(removing.email)}
      >
        {removing && (
          <div className="stack-sm">
            <p>
              <strong className="break">{removing.email}</strong> may be mailed again: broadcasts and automation emails
              go to it as soon as its contact is Subscribed.
            </p>
            <p className="muted small">
              It is on the list because {REASONS[removing.reason].means}. A contact with this address keeps its status:
              change it on the contact&apos;s page. A new hard bounce or complaint puts the address back.
            </p>
            {remove.isError && <ErrorSummary message={problemOf(remove.error).message} />}
          </div>
        )}
      </ConfirmDialog>
    </>
  );
}
