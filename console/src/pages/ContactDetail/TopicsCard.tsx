/** A contact's topic subscriptions, each switched at once. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { contactKeys } from '../../api/keys';
import { useToast } from '../../components';
import type { Contact } from '../../lib/audience';
import { describeError } from '../../lib/problems';

export function TopicsCard({ contact, editable }: { contact: Contact; editable: boolean }) {
  const qc = useQueryClient();
  const toast = useToast();
  const toggle = useMutation({
    mutationFn: async ({ id, subscribed }: { id: string; subscribed: boolean }) =>
      unwrap(
        await api.PUT('/v1/contacts/{contactId}', {
          params: { path: { contactId: contact.id } },
          body: { topics: [{ id, subscribed }] },
        }),
      ),
    // The switch moves at once; a failure puts it back. A read of the contact still under way (after a save, say)
    // is cancelled first, or its answer would put the switch back where it was.
    onMutate: async ({ id, subscribed }) => {
      await qc.cancelQueries({ queryKey: contactKeys.detail(contact.id) });
      qc.setQueryData<Contact>(
        contactKeys.detail(contact.id),
        (c) => c && { ...c, topics: c.topics.map((t) => (t.id === id ? { ...t, subscribed } : t)) },
      );
    },
    onSuccess: (c, v) => {
      qc.setQueryData(contactKeys.detail(contact.id), c);
      void qc.invalidateQueries({ queryKey: contactKeys.activity(contact.id) });
      toast.success(
        `${v.subscribed ? 'Subscribed to' : 'Unsubscribed from'} ${c.topics.find((t) => t.id === v.id)?.name ?? 'the topic'}.`,
      );
    },
    onError: (err) => {
      qc.setQueryData(contactKeys.detail(contact.id), contact);
      void qc.invalidateQueries({ queryKey: contactKeys.detail(contact.id) });
      toast.error(describeError(err));
    },
  });
  return (
    <section className="card" aria-labelledby="topics-h">
      <h2 id="topics-h">Topics</h2>
      {contact.topics.length === 0 ? (
        <p className="muted">
          This workspace has no topics yet. <Link to="/topics">Create one</Link>.
        </p>
      ) : (
        <ul className="list-plain topic-switches">
          {contact.topics.map((t) => (
            <li key={t.id}>
              <label className="switch">
                <input
                  type="checkbox"
                  role="switch"
                  checked={t.subscribed}
                  disabled={!editable || toggle.isPending}
                  onChange={(e) => toggle.mutate({ id: t.id, subscribed: e.target.checked })}
                />
                <span className="switch-track" aria-hidden="true" />
                <span>{t.name}</span>
              </label>
            </li>
          ))}
        </ul>
      )}
      <p className="muted small">A switch shows the contact's own choice, or else the topic's default.</p>
    </section>
  );
}
