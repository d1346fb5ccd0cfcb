/** A topic, new or renamed: its name, description and default subscription. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import { topicKeys } from '../../api/keys';
import { Button, Dialog, ErrorSummary, Input, Select, useToast } from '../../components';
import type { Topic } from '../../lib/audience';
import { problemOf } from '../../lib/forms';

const DEFAULTS = [
  { value: 'OPT_IN', label: 'Opt-in by default: every contact is subscribed until they opt out' },
  { value: 'OPT_OUT', label: 'Opt-out by default: no contact is subscribed until they opt in' },
];

export function TopicDialog({ topic, open, onClose }: { topic: Topic | null; open: boolean; onClose: () => void }) {
  const qc = useQueryClient();
  const toast = useToast();
  const [name, setName] = useState(topic?.name ?? '');
  const [def, setDef] = useState<'OPT_IN' | 'OPT_OUT'>(topic?.defaultSubscription ?? 'OPT_IN');
  const save = useMutation({
    mutationFn: async () =>
      topic
        ? unwrap(
            await api.PUT('/v1/topics/{topicId}', {
              params: { path: { topicId: topic.id } },
              body: { name: name.trim() },
            }),
          )
        : unwrap(await api.POST('/v1/topics', { body: { name: name.trim(), defaultSubscription: def } })),
    onSuccess: (t) => {
      void qc.invalidateQueries({ queryKey: topicKeys.all });
      toast.success(topic ? `Renamed to ${t.name}.` : `Topic ${t.name} created.`);
      onClose();
    },
  });
  const { fields, message, rest } = problemOf(save.error, {
    '/name': 'Name',
    '/defaultSubscription': 'Default subscription',
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  return (
    <Dialog
      open={open}
      title={topic ? `Rename ${topic.name}` : 'New topic'}
      onClose={onClose}
      busy={save.isPending}
      footer={
        <>
          <Button onClick={onClose} disabled={save.isPending}>
            Cancel
          </Button>
          <Button type="submit" form="topic-form" variant="primary" loading={save.isPending} disabled={!name.trim()}>
            {topic ? 'Rename' : 'Create topic'}
          </Button>
        </>
      }
    >
      <form id="topic-form" className="stack" onSubmit={submit} noValidate>
        <ErrorSummary message={save.isError ? message : null} errors={rest} />
        <Input
          label="Name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          error={fields['/name']}
          required
          maxLength={200}
          hint="Contacts see it on the unsubscribe page."
          data-autofocus
        />
        {topic ? (
          <p className="muted small">
            Default: {topic.defaultSubscription === 'OPT_IN' ? 'opt-in' : 'opt-out'} (fixed when the topic was created).
          </p>
        ) : (
          <Select
            label="Default subscription"
            value={def}
            onChange={(e) => setDef(e.target.value as 'OPT_IN' | 'OPT_OUT')}
            options={DEFAULTS}
            error={fields['/defaultSubscription']}
            hint="Fixed once the topic exists. A contact's own choice always wins."
          />
        )}
      </form>
    </Dialog>
  );
}
