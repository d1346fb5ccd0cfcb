/**
 * Topics: what contacts subscribe to, each with a default (OPT_IN: everyone is in until they opt out;
 * OPT_OUT: nobody is until they opt in). Create, rename, delete; a topic a broadcast uses cannot be deleted.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, ApiError, unwrap } from '../api/client';
import { topicKeys } from '../api/keys';
import { useCan } from '../api/session';
import { Button, ConfirmDialog, CursorTable, Dialog, EmptyState, ErrorSummary, Input, PageHeader, Select, StatusBadge, useCursorList, useToast, type Column } from '../components';
import type { Topic } from '../lib/audience';
import { formatDateTime } from '../lib/format';
import { otherErrors, problemOf } from '../lib/forms';
import '../styles/audience.css';

const DEFAULTS = [
  { value: 'OPT_IN', label: 'Opt-in by default: every contact is subscribed until they opt out' },
  { value: 'OPT_OUT', label: 'Opt-out by default: no contact is subscribed until they opt in' },
];

function TopicDialog({ topic, open, onClose }: { topic: Topic | null; open: boolean; onClose: () => void }) {
  const qc = useQueryClient();
  const toast = useToast();
  const [name, setName] = useState(topic?.name ?? '');
  const [def, setDef] = useState<'OPT_IN' | 'OPT_OUT'>(topic?.defaultSubscription ?? 'OPT_IN');
  const save = useMutation({
    mutationFn: async () => topic
      ? unwrap(await api.PUT('/v1/topics/{topicId}', { params: { path: { topicId: topic.id } }, body: { name: name.trim() } }))
      : unwrap(await api.POST('/v1/topics', { body: { name: name.trim(), defaultSubscription: def } })),
    onSuccess: (t) => {
      void qc.invalidateQueries({ queryKey: topicKeys.all });
      toast.success(topic ? `Renamed to ${t.name}.` : `Topic ${t.name} created.`);
      onClose();
    },
  });
  const { fields, message } = problemOf(save.error);
  const submit = (e: FormEvent) => { e.preventDefault(); save.mutate(); };
  return (
    <Dialog open={open} title={topic ? `Rename ${topic.name}` : 'New topic'} onClose={onClose} busy={save.isPending} footer={
      <>
        <Button onClick={onClose} disabled={save.isPending}>Cancel</Button>
        <Button type="submit" form="topic-form" variant="primary" loading={save.isPending} disabled={!name.trim()}>{topic ? 'Rename' : 'Create topic'}</Button>
      </>
    }>
      <form id="topic-form" className="stack" onSubmit={submit} noValidate>
        <ErrorSummary message={save.isError ? message : null} errors={otherErrors(fields, ['/name', '/defaultSubscription'])} />
        <Input label="Name" value={name} onChange={(e) => setName(e.target.value)} error={fields['/name']} required maxLength={200} hint="Contacts see it on the unsubscribe page." data-autofocus />
        {topic ? (
          <p className="muted small">Default: {topic.defaultSubscription === 'OPT_IN' ? 'opt-in' : 'opt-out'} (fixed when the topic was created).</p>
        ) : (
          <Select label="Default subscription" value={def} onChange={(e) => setDef(e.target.value as 'OPT_IN' | 'OPT_OUT')} options={DEFAULTS} error={fields['/defaultSubscription']} hint="Fixed once the topic exists. A contact's own choice always wins." />
        )}
      </form>
    </Dialog>
  );
}

export default function Topics() {
  const can = useCan();
  const qc = useQueryClient();
  const toast = useToast();
  const [editing, setEditing] = useState<{ topic: Topic | null } | null>(null);
  const [deleting, setDeleting] = useState<Topic | null>(null);
  const list = useCursorList<Topic>(topicKeys.list(), async (cursor) => unwrap(await api.GET('/v1/topics', { params: { query: { cursor, limit: 50 } } })));
  const remove = useMutation({
    mutationFn: async (t: Topic) => unwrap(await api.DELETE('/v1/topics/{topicId}', { params: { path: { topicId: t.id } } })),
    onSuccess: (_r, t) => {
      void qc.invalidateQueries({ queryKey: topicKeys.all });
      toast.success(`Topic ${t.name} deleted.`);
      setDeleting(null);
    },
  });
  const canWrite = can('write:contacts');
  const columns: Column<Topic>[] = [
    { key: 'name', header: 'Topic', cell: (t) => <span className="cell-main">{t.name}</span> },
    { key: 'default', header: 'Default', cell: (t) => <StatusBadge status={t.defaultSubscription} tone={t.defaultSubscription === 'OPT_IN' ? 'success' : 'neutral'} label={t.defaultSubscription === 'OPT_IN' ? 'Opt-in' : 'Opt-out'} /> },
    { key: 'created', header: 'Created', cell: (t) => <span className="nowrap">{formatDateTime(t.createdAt)}</span> },
    ...(canWrite ? [{ key: 'actions', header: 'Actions', hiddenHeader: true, cell: (t: Topic) => (
      <span className="row">
        <Button size="sm" onClick={() => setEditing({ topic: t })} aria-label={`Rename ${t.name}`}>Rename</Button>
        <Button size="sm" variant="ghost" onClick={() => { remove.reset(); setDeleting(t); }} aria-label={`Delete ${t.name}`}>Delete</Button>
      </span>
    ) }] : []),
  ];
  const inUse = remove.error instanceof ApiError && remove.error.code === 'resource_in_use';
  return (
    <>
      <PageHeader title="Topics" description="What contacts can subscribe to, one by one: a newsletter, product news, events. A broadcast can go to one topic's subscribers." actions={canWrite && <Button variant="primary" onClick={() => setEditing({ topic: null })}>New topic</Button>} />
      <CursorTable list={list} columns={columns} rowKey={(t) => t.id} caption="Topics" empty={
        <div className="card"><EmptyState title="No topics yet" action={canWrite && <Button variant="primary" onClick={() => setEditing({ topic: null })}>Create a topic</Button>}>Without topics, a broadcast goes to every subscribed contact of its segment.</EmptyState></div>
      } />
      {editing && <TopicDialog key={editing.topic?.id ?? 'new'} topic={editing.topic} open onClose={() => setEditing(null)} />}
      <ConfirmDialog open={deleting !== null} title={`Delete ${deleting?.name ?? 'topic'}?`} danger confirmLabel="Delete topic" busy={remove.isPending} onClose={() => setDeleting(null)} onConfirm={() => deleting && remove.mutate(deleting)}>
        <p>Contacts' choices for this topic are deleted with it. Segments that name it then match no contact through that condition.</p>
        {inUse ? (
          <div className="callout callout-warning" role="alert">A broadcast still points at this topic, so it cannot be deleted. Point those broadcasts at another topic (or none), or delete the drafts, then try again.</div>
        ) : remove.isError && <ErrorSummary message={problemOf(remove.error).message} />}
      </ConfirmDialog>
    </>
  );
}
