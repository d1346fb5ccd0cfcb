/** A segment's name and filter, with the live count of what it matches; saved, renamed or deleted here. */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, ApiError, unwrap } from '../../api/client';
import { segmentKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import {
  FilterBuilder,
  newCondition,
  newGroup,
  toFilter,
  toTree,
  type Filter,
  type Node,
} from '../../components/FilterBuilder';
import {
  Button,
  ConfirmDialog,
  ErrorSummary,
  Input,
  PageHeader,
  Spinner,
  StatusBadge,
  useToast,
} from '../../components';
import {
  CONTACT_TONES,
  statusLabel,
  useDebounced,
  useSentBroadcasts,
  useTags,
  useTopics,
  type Segment,
} from '../../lib/audience';
import { formatNumber, plural } from '../../lib/format';
import { problemOf } from '../../lib/forms';
import { describeError } from '../../lib/problems';

function useLiveCount(filter: Filter) {
  const debounced = useDebounced(filter, 400, JSON.stringify(filter));
  const q = useQuery({
    queryKey: segmentKeys.preview(debounced),
    queryFn: async () => unwrap(await api.POST('/v1/segments/preview', { body: { filter: debounced } })),
    placeholderData: keepPreviousData,
    retry: false,
  });
  const invalid = q.error instanceof ApiError && q.error.status === 422;
  return {
    errors: invalid ? problemOf(q.error).fields : {},
    view: (
      <section className="card live-count" aria-labelledby="count-h">
        <h2 id="count-h">Matching contacts</h2>
        <div aria-live="polite" aria-atomic="true" className="stack-sm">
          {q.isPending ? (
            <Spinner label="Counting…" />
          ) : invalid ? (
            <p className="error">The filter is not complete yet: see the marked conditions.</p>
          ) : q.isError ? (
            <p className="error" role="alert">
              {describeError(q.error)}
            </p>
          ) : (
            q.data && (
              <>
                <div className="stat">
                  <span className="stat-value" data-testid="segment-count">
                    {formatNumber(q.data.count)}
                  </span>
                  <span className="stat-label">
                    {plural(q.data.count, 'contact matches', 'contacts match')}
                    {q.isFetching ? ' (updating…)' : ''}
                  </span>
                </div>
                <p className="small">
                  {formatNumber(q.data.subscribed)} of them {plural(q.data.subscribed, 'is', 'are')} subscribed, and can
                  get broadcasts.
                </p>
              </>
            )
          )}
        </div>
        {q.data && q.data.sample.length > 0 && !invalid && (
          <>
            <h3 className="small muted">Newest matches</h3>
            <ul className="list-plain sample-list">
              {q.data.sample.map((c) => (
                <li key={c.id} className="row-between">
                  <Link to={`/contacts/${c.id}`} className="break">
                    {c.email}
                  </Link>
                  <StatusBadge status={c.status} tone={CONTACT_TONES[c.status]} label={statusLabel(c.status)} />
                </li>
              ))}
            </ul>
          </>
        )}
      </section>
    ),
  };
}

export function Editor({ segment }: { segment: Segment | null }) {
  const can = useCan();
  const qc = useQueryClient();
  const toast = useToast();
  const navigate = useNavigate();
  const topics = useTopics();
  const tags = useTags();
  const sent = useSentBroadcasts(can('read:broadcasts'));
  const editable = can('write:contacts');
  const [name, setName] = useState(segment?.name ?? '');
  const [tree, setTree] = useState<Node>(() => {
    if (!segment) return newGroup('all', [newCondition()]);
    const t = toTree(segment.filter);
    return t.kind === 'group' ? t : newGroup('all', [t]);
  });
  const [showJson, setShowJson] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const filter = useMemo(() => toFilter(tree), [tree]);
  const live = useLiveCount(filter);

  const save = useMutation({
    mutationFn: async () =>
      segment
        ? unwrap(
            await api.PUT('/v1/segments/{segmentId}', {
              params: { path: { segmentId: segment.id } },
              body: { name: name.trim(), filter },
            }),
          )
        : unwrap(await api.POST('/v1/segments', { body: { name: name.trim(), filter } })),
    onSuccess: (s) => {
      void qc.invalidateQueries({ queryKey: segmentKeys.all });
      toast.success(segment ? 'Segment saved.' : `Segment ${s.name} created.`);
      if (!segment) navigate(`/segments/${s.id}`, { replace: true });
      else qc.setQueryData(segmentKeys.detail(s.id), s);
    },
  });
  const remove = useMutation({
    mutationFn: async () =>
      unwrap(await api.DELETE('/v1/segments/{segmentId}', { params: { path: { segmentId: segment!.id } } })),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: segmentKeys.all });
      toast.success('Segment deleted.');
      navigate('/segments');
    },
  });
  const saved = problemOf(save.error, { '/name': 'Name', '/filter/**': 'Condition' });
  // The save's errors win over the preview's (they are the same rules).
  const errors = save.isError ? saved.fields : live.errors;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  const inUse = remove.error instanceof ApiError && remove.error.code === 'resource_in_use';
  const broadcastIds = inUse
    ? (((remove.error as ApiError).problem as { broadcastIds?: string[] }).broadcastIds ?? [])
    : [];

  return (
    <>
      <PageHeader
        needs="write:contacts"
        title={segment ? segment.name : 'New segment'}
        back={{ to: '/segments', label: 'Segments' }}
        actions={
          segment &&
          editable && (
            <Button
              variant="danger"
              onClick={() => {
                remove.reset();
                setDeleting(true);
              }}
            >
              Delete segment
            </Button>
          )
        }
      />
      <form className="segment-layout" onSubmit={submit} noValidate>
        <div className="stack">
          <section className="card stack" aria-labelledby="builder-h">
            <ErrorSummary message={saved.message} errors={saved.rest} />
            <Input
              label="Name"
              value={name}
              onChange={(e) => setName(e.target.value)}
              error={saved.fields['/name']}
              required
              maxLength={200}
              disabled={!editable}
              placeholder="Pro customers in Berlin"
            />
            <div>
              <h2 id="builder-h">Filter</h2>
              {topics.isError && (
                <p className="error small">The topics could not be loaded; topic conditions show their ids.</p>
              )}
              <FilterBuilder
                root={tree}
                onChange={setTree}
                topics={topics.data ?? []}
                tags={tags.data?.map((t) => t.tag)}
                broadcasts={sent.data ?? []}
                errors={errors}
                disabled={!editable}
              />
            </div>
            <div className="row-between">
              <Button
                size="sm"
                variant="ghost"
                aria-expanded={showJson}
                aria-controls="filter-json"
                onClick={() => setShowJson((s) => !s)}
              >
                {showJson ? 'Hide' : 'Show'} the filter as JSON
              </Button>
              {editable && (
                <Button type="submit" variant="primary" loading={save.isPending} disabled={!name.trim()}>
                  {segment ? 'Save segment' : 'Create segment'}
                </Button>
              )}
            </div>
            {showJson && (
              <pre id="filter-json" className="json-view" tabIndex={0} aria-label="The filter as JSON">
                {JSON.stringify(filter, null, 2)}
              </pre>
            )}
          </section>
        </div>
        <div className="segment-side">{live.view}</div>
      </form>
      {segment && (
        <ConfirmDialog
          open={deleting}
          title={`Delete ${segment.name}?`}
          danger
          confirmLabel="Delete segment"
          busy={remove.isPending}
          onClose={() => setDeleting(false)}
          onConfirm={() => remove.mutate()}
        >
          <p>The filter is deleted; no contact is. Broadcasts that use it keep it from being deleted.</p>
          {inUse ? (
            <div className="callout callout-warning" role="alert">
              Broadcasts use this segment:{' '}
              {broadcastIds.map((id, i) => (
                <span key={id}>
                  {i > 0 && ', '}
                  <Link to={`/broadcasts/${id}`}>{id}</Link>
                </span>
              ))}
              . Point them at another segment or delete them first.
            </div>
          ) : (
            remove.isError && <ErrorSummary message={describeError(remove.error)} />
          )}
        </ConfirmDialog>
      )}
    </>
  );
}
