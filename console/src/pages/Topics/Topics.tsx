/**
 * Topics: what contacts subscribe to, each with a default (OPT_IN: everyone is in until they opt out;
 * OPT_OUT: nobody is until they opt in). Create, rename, delete; a topic a broadcast uses cannot be deleted.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ApiError, unwrap } from '../../api/client';
import { topicKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import {
  Button,
  ConfirmDialog,
  CursorTable,
  EmptyState,
  ErrorSummary,
  PageHeader,
  StatusBadge,
  useCursorList,
  useToast,
  type Column,
} from '../../components';
import type { Topic } from '../../lib/audience';
import { formatDateTime } from '../../lib/format';
import { describeError } from '../../lib/problems';
import { TopicDialog } from './TopicDialog';
import '../../styles/audience.css';

export default function Topics() {
  const can = useCan();
  const qc = useQueryClient();
  const toast = useToast();
  const [editing, setEditing] = useState<{ topic: Topic | null } | null>(null);
  const [deleting, setDeleting] = useState<Topic | null>(null);
  const list = useCursorList<Topic>(topicKeys.list(), async (cursor) =>
    unwrap(await api.GET('/v1/topics', { params: { query: { cursor, limit: 50 } } })),
  );
  const remove = useMutation({
    mutationFn: async (t: Topic) =>
      unwrap(await api.DELETE('/v1/topics/{topicId}', { params: { path: { topicId: t.id } } })),
    onSuccess: (_r, t) => {
      void qc.invalidateQueries({ queryKey: topicKeys.all });
      toast.success(`Topic ${t.name} deleted.`);
      setDeleting(null);
    },
  });
  const canWrite = can('write:contacts');
  const columns: Column<Topic>[] = [
    { key: 'name', header: 'Topic', cell: (t) => <span className="cell-main">{t.name}</span> },
    {
      key: 'default',
      header: 'Default',
      cell: (t) => (
        <StatusBadge
          status={t.defaultSubscription}
          tone={t.defaultSubscription === 'OPT_IN' ? 'success' : 'neutral'}
          label={t.defaultSubscription === 'OPT_IN' ? 'Opt-in' : 'Opt-out'}
        />
      ),
    },
    { key: 'created', header: 'Created', cell: (t) => <span className="nowrap">{formatDateTime(t.createdAt)}</span> },
    ...(canWrite
      ? [
          {
            key: 'actions',
            header: 'Actions',
            hiddenHeader: true,
            cell: (t: Topic) => (
              <span className="row">
                <Button size="sm" onClick={() => setEditing({ topic: t })} aria-label={`Rename ${t.name}`}>
                  Rename
                </Button>
                <Button
                  size="sm"
                  variant="ghost"
                  onClick={() => {
                    remove.reset();
                    setDeleting(t);
                  }}
                  aria-label={`Delete ${t.name}`}
                >
                  Delete
                </Button>
              </span>
            ),
          },
        ]
      : []),
  ];
  const inUse = remove.error instanceof ApiError && remove.error.code === 'resource_in_use';
  return (
    <>
      <PageHeader
        needs="write:contacts"
        title="Topics"
        description="What contacts can subscribe to, one by one: a newsletter, product news, events. A broadcast can go to one topic's subscribers."
        actions={
          canWrite && (
            <Button variant="primary" onClick={() => setEditing({ topic: null })}>
              New topic
            </Button>
          )
        }
      />
      <CursorTable
        list={list}
        columns={columns}
        rowKey={(t) => t.id}
        caption="Topics"
        empty={
          <div className="card">
            <EmptyState
              title="No topics yet"
              action={
                canWrite && (
                  <Button variant="primary" onClick={() => setEditing({ topic: null })}>
                    Create a topic
                  </Button>
                )
              }
            >
              Without topics, a broadcast goes to every subscribed contact of its segment.
            </EmptyState>
          </div>
        }
      />
      {editing && (
        <TopicDialog key={editing.topic?.id ?? 'new'} topic={editing.topic} open onClose={() => setEditing(null)} />
      )}
      <ConfirmDialog
        open={deleting !== null}
        title={`Delete ${deleting?.name ?? 'topic'}?`}
        danger
        confirmLabel="Delete topic"
        busy={remove.isPending}
        onClose={() => setDeleting(null)}
        onConfirm={() => deleting && remove.mutate(deleting)}
      >
        <p>
          Contacts' choices for this topic are deleted with it. Segments that name it then match no contact through that
          condition.
        </p>
        {inUse ? (
          <div className="callout callout-warning" role="alert">
            A broadcast still points at this topic, so it cannot be deleted. Point those broadcasts at another topic (or
            none), or delete the drafts, then try again.
          </div>
        ) : (
          remove.isError && <ErrorSummary message={describeError(remove.error)} />
        )}
      </ConfirmDialog>
    </>
  );
}
