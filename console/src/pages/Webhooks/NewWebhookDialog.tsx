/** A new endpoint: its URL and the events it gets; its secret is shown once on its page. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { api, unwrap } from '../../api/client';
import { webhookKeys } from '../../api/keys';
import { Button, Checkbox, Dialog, ErrorSummary, Input } from '../../components';
import { problemOf } from '../../lib/forms';
import type { Webhook } from './Webhooks';

type EventType = Webhook['eventTypes'][number];

export const EVENT_TYPES: EventType[] = [
  'contact.created',
  'contact.updated',
  'contact.subscribed',
  'contact.unsubscribed',
  'contact.deleted',
  'form.submitted',
  'email.sent',
  'email.opened',
  'email.clicked',
  'email.bounced',
  'email.soft_bounced',
  'email.complained',
  'email.failed',
  'broadcast.sending',
  'broadcast.paused',
  'broadcast.sent',
  'broadcast.canceled',
  'broadcast.ab_winner_chosen',
];

export function NewWebhookDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [types, setTypes] = useState<Set<EventType>>(new Set(['contact.created']));
  const create = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/v1/webhooks', {
          body: {
            url: url.trim(),
            eventTypes: [...types],
            ...(description.trim() ? { description: description.trim() } : {}),
          },
        }),
      ),
    onSuccess: (w) => {
      // The secret is in this answer only: handed to the endpoint's page in memory (not the URL or history) to show once.
      if (w.secret) qc.setQueryData(webhookKeys.newSecret(w.id), w.secret);
      void qc.invalidateQueries({ queryKey: webhookKeys.list() });
      onClose();
      navigate(`/webhooks/${w.id}`);
    },
  });
  const { fields, message, rest } = problemOf(create.error, {
    '/url': 'URL',
    '/description': 'Description',
    '/eventTypes': 'Events',
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <Dialog
      open={open}
      title="Add a webhook endpoint"
      onClose={onClose}
      busy={create.isPending}
      footer={
        <>
          <Button onClick={onClose} disabled={create.isPending}>
            Cancel
          </Button>
          <Button
            type="submit"
            form="new-webhook"
            variant="primary"
            loading={create.isPending}
            disabled={!url.trim() || types.size === 0}
          >
            Add endpoint
          </Button>
        </>
      }
    >
      <form id="new-webhook" className="stack" onSubmit={submit} noValidate>
        <ErrorSummary message={create.isError ? message : null} errors={rest} />
        <Input
          label="URL"
          type="url"
          placeholder="https://example.com/hooks/formcast"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          error={fields['/url']}
          data-autofocus
        />
        <Input
          label="Description"
          value={description}
          onChange={(e) => setDescription(e.target.value)}
          error={fields['/description']}
        />
        <fieldset>
          <legend>Events</legend>
          <div className="grid-2">
            {EVENT_TYPES.map((t) => (
              <Checkbox
                key={t}
                label={t}
                checked={types.has(t)}
                onChange={(e) =>
                  setTypes((s) => {
                    const n = new Set(s);
                    if (e.target.checked) n.add(t);
                    else n.delete(t);
                    return n;
                  })
                }
              />
            ))}
          </div>
          {fields['/eventTypes'] && <p className="error">{fields['/eventTypes']}</p>}
        </fieldset>
      </form>
    </Dialog>
  );
}
