/**
 * Bulk actions on the contacts selected in the list, or on every contact its filters match (POST /v1/contacts/bulk,
 * docs/contacts.md "Bulk actions"): add or remove a tag, subscribe or unsubscribe (to a topic, or the contact's status),
 * delete after a confirmation. The job runs on the server; its progress is polled here until it ends.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { api, unwrap } from '../../api/client';
import { contactKeys } from '../../api/keys';
import type { paths } from '../../api/generated/schema';
import { Button, ConfirmDialog, Input, Select, useToast } from '../../components';
import type { Filter } from '../../components/FilterBuilder';
import { count, formatNumber } from '../../lib/format';
import { describeProblem } from '../../lib/problems';

type BulkBody = NonNullable<paths['/v1/contacts/bulk']['post']['requestBody']>['content']['application/json'];
type Action = BulkBody['action'];

const ACTIONS: { value: Action; label: string; doing: string }[] = [
  { value: 'tag', label: 'Add a tag', doing: 'Tagging' },
  { value: 'untag', label: 'Remove a tag', doing: 'Removing the tag from' },
  { value: 'subscribe', label: 'Subscribe', doing: 'Subscribing' },
  { value: 'unsubscribe', label: 'Unsubscribe', doing: 'Unsubscribing' },
  { value: 'delete', label: 'Delete', doing: 'Deleting' },
];

/** The list's filters as a segment filter (what "select all that match" acts on). */
export function filterOfList(f: { q: string; status: string; topicId: string; tag: string }): Filter {
  const all: Filter[] = [];
  if (f.q)
    all.push({
      any: (['email', 'firstName', 'lastName'] as const).map((field) => ({
        field,
        op: 'contains' as const,
        value: f.q,
      })),
    });
  if (f.status) all.push({ field: 'status', op: 'eq', value: f.status });
  if (f.topicId) all.push({ topic: f.topicId, subscribed: true });
  if (f.tag) all.push({ tag: f.tag, has: true });
  return { all };
}

export function BulkBar({
  selected,
  allMatching,
  matching,
  filter,
  topics,
  tags,
  onDone,
}: {
  /** The contacts ticked (when not allMatching). */
  selected: string[];
  /** Every contact the filters match, not just those ticked. */
  allMatching: boolean;
  matching: number | undefined;
  filter: Filter;
  topics: { id: string; name: string }[];
  tags: string[];
  onDone: () => void;
}) {
  const qc = useQueryClient();
  const toast = useToast();
  const listId = useId();
  const [action, setAction] = useState<Action>('tag');
  const [tag, setTag] = useState('');
  const [topicId, setTopicId] = useState('');
  const [confirming, setConfirming] = useState(false);
  const [job, setJob] = useState<{ id: string; matched: number; doing: string } | null>(null);
  const n = allMatching ? (matching ?? 0) : selected.length;
  const doing = ACTIONS.find((a) => a.value === action)!.doing;

  const start = useMutation({
    mutationFn: async () => {
      const body: BulkBody = {
        action,
        ...(action === 'tag' || action === 'untag' ? { tag: tag.trim() } : {}),
        ...((action === 'subscribe' || action === 'unsubscribe') && topicId ? { topicId } : {}),
        ...(allMatching ? { filter } : { ids: selected }),
      };
      return unwrap(await api.POST('/v1/contacts/bulk', { body }));
    },
    onSuccess: (r) => {
      setConfirming(false);
      setJob({ id: r.jobId, matched: r.matched, doing });
      toast.show(`${doing} ${count(r.matched, 'contact')}…`);
      onDone();
    },
    onError: () => setConfirming(false),
  });
  const progress = useQuery({
    queryKey: contactKeys.bulk(job?.id ?? ''),
    enabled: job !== null,
    queryFn: async () => unwrap(await api.GET('/v1/contacts/bulk/{jobId}', { params: { path: { jobId: job!.id } } })),
    refetchInterval: (q) => (q.state.data?.status === 'RUNNING' || !q.state.data ? 1000 : false),
  });
  const state = progress.data;
  const [told, setTold] = useState<string | null>(null);
  if (job && state && state.status !== 'RUNNING' && told !== job.id) {
    setTold(job.id);
    void qc.invalidateQueries({ queryKey: contactKeys.all });
    if (state.status === 'COMPLETED')
      toast.success(
        `Done: ${count(state.processed - state.failed, 'contact')}${state.failed ? `; ${count(state.failed, 'contact')} could not be changed (100 tags already)` : ''}.`,
      );
    else toast.error(`The bulk action stopped: ${state.error ?? 'unknown reason'}.`);
  }
  const problem = start.error
    ? describeProblem(start.error, { '/tag': 'Tag', '/topicId': 'Topic', '/ids/*': 'Contact' })
    : null;
  const needsTag = action === 'tag' || action === 'untag';
  const topical = action === 'subscribe' || action === 'unsubscribe';

  return (
    <div className="stack-sm">
      {n > 0 && (
        <div className="bulk-bar" role="region" aria-label="Bulk actions">
          <span className="bulk-count">
            {allMatching ? `All ${count(n, 'contact')} that match` : `${count(n, 'contact')} selected`}
          </span>
          <Select
            label="Action"
            value={action}
            onChange={(e) => setAction(e.target.value as Action)}
            options={ACTIONS.map((a) => ({ value: a.value, label: a.label }))}
          />
          {needsTag && (
            <>
              <Input
                label="Tag"
                value={tag}
                maxLength={64}
                list={listId}
                onChange={(e) => setTag(e.target.value)}
                error={problem?.fields['/tag']}
              />
              <datalist id={listId}>
                {tags.slice(0, 50).map((t) => (
                  <option key={t} value={t} />
                ))}
              </datalist>
            </>
          )}
          {topical && (
            <Select
              label="To"
              value={topicId}
              onChange={(e) => setTopicId(e.target.value)}
              error={problem?.fields['/topicId']}
              options={[
                { value: '', label: 'All email (their status)' },
                ...topics.map((t) => ({ value: t.id, label: `Topic: ${t.name}` })),
              ]}
            />
          )}
          <Button
            variant={action === 'delete' ? 'danger' : 'primary'}
            disabled={start.isPending || (needsTag && !tag.trim())}
            onClick={() => (action === 'delete' ? setConfirming(true) : start.mutate())}
          >
            Apply
          </Button>
          {problem?.message && (
            <p className="error small" role="alert">
              {problem.message} {problem.rest.join(' ')}
            </p>
          )}
        </div>
      )}
      {job && state && (
        <div className="bulk-progress" role="status" aria-live="polite">
          <span>
            {state.status === 'RUNNING'
              ? `${job.doing}: ${formatNumber(state.processed)} of ${count(state.matched, 'contact')} done…`
              : state.status === 'COMPLETED'
                ? `${job.doing} done: ${count(state.processed, 'contact')}.`
                : `Stopped after ${count(state.processed, 'contact')}: ${state.error ?? ''}`}
          </span>
          <progress max={Math.max(1, state.matched)} value={state.processed} />
        </div>
      )}
      <ConfirmDialog
        open={confirming}
        title={`Delete ${count(n, 'contact')}?`}
        confirmLabel={`Delete ${count(n, 'contact')}`}
        danger
        busy={start.isPending}
        onConfirm={() => start.mutate()}
        onClose={() => setConfirming(false)}
      >
        <p>Their data, topic choices and tags go; a suppressed address stays suppressed. This cannot be undone.</p>
      </ConfirmDialog>
    </div>
  );
}
