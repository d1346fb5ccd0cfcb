/**
 * One contact: its fields (name, email, status with the suppression note, properties as key/value rows), its
 * topics with a switch each, its activity timeline (GET /v1/contacts/{id}/activity) and deletion.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { api, unwrap } from '../../api/client';
import { contactKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import { Button, ConfirmDialog, ErrorSummary, PageHeader, QueryState, StatusBadge, useToast } from '../../components';
import { CONTACT_TONES, statusLabel } from '../../lib/audience';
import { formatDateTime } from '../../lib/format';
import { describeError } from '../../lib/problems';
import { FieldsCard } from './FieldsCard';
import { TopicsCard } from './TopicsCard';
import { TagsCard } from './TagsCard';
import { ActivityCard } from './ActivityCard';
import '../../styles/audience.css';

export default function ContactDetail() {
  const { contactId = '' } = useParams();
  const can = useCan();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const toast = useToast();
  const [deleting, setDeleting] = useState(false);
  const q = useQuery({
    queryKey: contactKeys.detail(contactId),
    queryFn: async () => unwrap(await api.GET('/v1/contacts/{contactId}', { params: { path: { contactId } } })),
  });
  const remove = useMutation({
    mutationFn: async () => unwrap(await api.DELETE('/v1/contacts/{contactId}', { params: { path: { contactId } } })),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: contactKeys.all });
      toast.success('Contact deleted.');
      navigate('/contacts');
    },
  });
  const editable = can('write:contacts');
  const title = q.data ? [q.data.firstName, q.data.lastName].filter(Boolean).join(' ') || q.data.email : 'Contact';
  return (
    <>
      <PageHeader
        needs="write:contacts"
        title={title}
        back={{ to: '/contacts', label: 'Contacts' }}
        description={
          q.data && (
            <span className="row">
              <span className="break">{q.data.email}</span>
              <StatusBadge
                status={q.data.status}
                tone={CONTACT_TONES[q.data.status]}
                label={statusLabel(q.data.status)}
              />
              {q.data.suppressed && <StatusBadge status="suppressed" tone="danger" label="Suppressed" />}
              <span className="muted small">added {formatDateTime(q.data.createdAt)}</span>
            </span>
          )
        }
        actions={
          editable &&
          q.data && (
            <Button variant="danger" onClick={() => setDeleting(true)}>
              Delete contact
            </Button>
          )
        }
      />
      <QueryState query={q} skeleton={8}>
        {(contact) => (
          <div className="detail-grid">
            <div className="stack">
              <FieldsCard key={contact.id} contact={contact} editable={editable} />
              <TopicsCard contact={contact} editable={editable} />
              <TagsCard contact={contact} editable={editable} />
            </div>
            <ActivityCard contactId={contact.id} topicNames={new Map(contact.topics.map((t) => [t.id, t.name]))} />
          </div>
        )}
      </QueryState>
      <ConfirmDialog
        open={deleting}
        title="Delete this contact?"
        danger
        confirmLabel="Delete contact"
        busy={remove.isPending}
        onClose={() => setDeleting(false)}
        onConfirm={() => remove.mutate()}
      >
        <p>
          {q.data?.email} and its topic choices are deleted for good. Its suppression, if any, stays: a deleted address
          is still not mailed.
        </p>
        {remove.isError && <ErrorSummary message={describeError(remove.error)} />}
      </ConfirmDialog>
    </>
  );
}
