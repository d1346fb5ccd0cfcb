/**
 * One contact: its fields (name, email, status with the suppression note, properties as key/value rows), its
 * topics with a switch each, its activity timeline (GET /v1/contacts/{id}/activity) and deletion.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, unwrap } from '../api/client';
import { contactKeys } from '../api/keys';
import { useCan } from '../api/session';
import { Button, ConfirmDialog, EmptyState, ErrorState, ErrorSummary, Input, PageHeader, QueryState, Select, Skeleton, StatusBadge, useCursorList, useToast } from '../components';
import { CONTACT_STATUSES, CONTACT_TONES, statusLabel, type ActivityEvent, type Contact, type ContactStatus } from '../lib/audience';
import { formatDateTime, relative } from '../lib/format';
import { nullable, otherErrors, problemOf } from '../lib/forms';
import '../styles/audience.css';

type PropType = 'text' | 'number' | 'boolean';
interface PropRow { key: number; name: string; type: PropType; value: string }
let nextRow = 1;

function toRows(props: Record<string, unknown>): PropRow[] {
  return Object.entries(props).map(([name, v]) => ({
    key: nextRow++, name,
    type: typeof v === 'number' ? 'number' : typeof v === 'boolean' ? 'boolean' : 'text',
    value: v === null || v === undefined ? '' : String(v),
  }));
}

function fromRows(rows: PropRow[]): { properties: Record<string, string | number | boolean>; errors: Record<number, string> } {
  const properties: Record<string, string | number | boolean> = {};
  const errors: Record<number, string> = {};
  for (const r of rows) {
    const name = r.name.trim();
    if (!name && !r.value) continue;
    if (!/^[a-zA-Z][a-zA-Z0-9_]{0,63}$/.test(name)) { errors[r.key] = 'A key starts with a letter, then letters, digits or _ (up to 64).'; continue; }
    if (name in properties) { errors[r.key] = 'This key is listed twice.'; continue; }
    if (r.type === 'number') {
      const n = Number(r.value);
      if (r.value.trim() === '' || !Number.isFinite(n)) { errors[r.key] = 'Enter a number.'; continue; }
      properties[name] = n;
    } else if (r.type === 'boolean') properties[name] = r.value === 'true';
    else properties[name] = r.value;
  }
  return { properties, errors };
}

/* ------------------------------------------------------------------ Fields */

function FieldsCard({ contact, editable }: { contact: Contact; editable: boolean }) {
  const qc = useQueryClient();
  const toast = useToast();
  const [email, setEmail] = useState(contact.email);
  const [firstName, setFirstName] = useState(contact.firstName ?? '');
  const [lastName, setLastName] = useState(contact.lastName ?? '');
  const [status, setStatus] = useState<ContactStatus>(contact.status);
  const [rows, setRows] = useState<PropRow[]>(() => toRows(contact.properties));
  const [rowErrors, setRowErrors] = useState<Record<number, string>>({});

  const save = useMutation({
    mutationFn: async (properties: Record<string, string | number | boolean>) => unwrap(await api.PUT('/v1/contacts/{contactId}', {
      params: { path: { contactId: contact.id } },
      body: { email: email.trim(), firstName: nullable(firstName), lastName: nullable(lastName), status, properties },
    })),
    onSuccess: (c) => {
      qc.setQueryData(contactKeys.detail(contact.id), c);
      void qc.invalidateQueries({ queryKey: contactKeys.lists() });
      void qc.invalidateQueries({ queryKey: contactKeys.activity(contact.id) });
      setStatus(c.status);
      setEmail(c.email);
      toast.success(c.suppressed && status === 'SUBSCRIBED' && c.status !== 'SUBSCRIBED' ? 'Saved; the address is suppressed, so the status was kept.' : 'Contact saved.');
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const { properties, errors } = fromRows(rows);
    setRowErrors(errors);
    if (Object.keys(errors).length) return;
    save.mutate(properties);
  };
  const { fields, message } = problemOf(save.error);
  const update = (key: number, patch: Partial<PropRow>) => setRows((rs) => rs.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  const propError = (name: string) => Object.entries(fields).find(([p]) => p === `/properties/${name}`)?.[1];

  return (
    <section className="card" aria-labelledby="fields-h">
      <h2 id="fields-h">Details</h2>
      <form className="stack" onSubmit={submit} noValidate>
        <ErrorSummary message={save.isError ? message : null} errors={otherErrors(fields, ['/email', '/firstName', '/lastName', '/status', ...Object.keys(fields).filter((p) => p.startsWith('/properties/'))])} />
        <Input label="Email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} error={fields['/email']} disabled={!editable} required />
        <div className="grid-2">
          <Input label="First name" value={firstName} onChange={(e) => setFirstName(e.target.value)} error={fields['/firstName']} disabled={!editable} maxLength={200} />
          <Input label="Last name" value={lastName} onChange={(e) => setLastName(e.target.value)} error={fields['/lastName']} disabled={!editable} maxLength={200} />
        </div>
        <Select label="Status" value={status} onChange={(e) => setStatus(e.target.value as ContactStatus)} disabled={!editable} error={fields['/status']}
          options={CONTACT_STATUSES.map((s) => ({ value: s, label: statusLabel(s) }))}
          hint={contact.suppressed
            ? <span className="suppressed-note">This address is on the suppression list: it gets no broadcast whatever its status, and setting it to Subscribed keeps it suppressed. Only removing it from the suppression list (or the contact confirming a sign-up) lifts that.</span>
            : 'Only Subscribed contacts get broadcasts.'} />
        <fieldset>
          <legend>Properties</legend>
          <div className="stack-sm">
            {rows.length === 0 && <p className="muted small">No properties. Forms and imports add them; you can add your own.</p>}
            {rows.map((r, i) => (
              <div className="prop-row" key={r.key}>
                <Input label="Key" value={r.name} onChange={(e) => update(r.key, { name: e.target.value })} disabled={!editable} error={rowErrors[r.key] ?? propError(r.name)} id={`prop-key-${r.key}`} aria-label={`Property ${i + 1} key`} />
                <Select label="Type" value={r.type} onChange={(e) => update(r.key, { type: e.target.value as PropType, value: e.target.value === 'boolean' ? 'true' : r.value })} disabled={!editable} aria-label={`Property ${i + 1} type`}
                  options={[{ value: 'text', label: 'Text' }, { value: 'number', label: 'Number' }, { value: 'boolean', label: 'Yes/no' }]} />
                {r.type === 'boolean' ? (
                  <Select label="Value" value={r.value} onChange={(e) => update(r.key, { value: e.target.value })} disabled={!editable} aria-label={`Property ${i + 1} value`}
                    options={[{ value: 'true', label: 'Yes (true)' }, { value: 'false', label: 'No (false)' }]} />
                ) : (
                  <Input label="Value" value={r.value} inputMode={r.type === 'number' ? 'decimal' : undefined} onChange={(e) => update(r.key, { value: e.target.value })} disabled={!editable} aria-label={`Property ${i + 1} value`} />
                )}
                {editable && <Button variant="ghost" className="prop-remove" onClick={() => setRows((rs) => rs.filter((x) => x.key !== r.key))} aria-label={`Remove property ${r.name || i + 1}`}>Remove</Button>}
              </div>
            ))}
            {editable && <div><Button size="sm" onClick={() => setRows((rs) => [...rs, { key: nextRow++, name: '', type: 'text', value: '' }])}>Add property</Button></div>}
          </div>
        </fieldset>
        {editable && <div className="form-actions"><Button type="submit" variant="primary" loading={save.isPending}>Save contact</Button></div>}
      </form>
    </section>
  );
}

/* ------------------------------------------------------------------ Topics */

function TopicsCard({ contact, editable }: { contact: Contact; editable: boolean }) {
  const qc = useQueryClient();
  const toast = useToast();
  const toggle = useMutation({
    mutationFn: async ({ id, subscribed }: { id: string; subscribed: boolean }) => unwrap(await api.PUT('/v1/contacts/{contactId}', {
      params: { path: { contactId: contact.id } }, body: { topics: [{ id, subscribed }] },
    })),
    // The switch moves at once; a failure puts it back. A read of the contact still under way (after a save, say)
    // is cancelled first, or its answer would put the switch back where it was.
    onMutate: async ({ id, subscribed }) => {
      await qc.cancelQueries({ queryKey: contactKeys.detail(contact.id) });
      qc.setQueryData<Contact>(contactKeys.detail(contact.id), (c) => c && { ...c, topics: c.topics.map((t) => (t.id === id ? { ...t, subscribed } : t)) });
    },
    onSuccess: (c, v) => {
      qc.setQueryData(contactKeys.detail(contact.id), c);
      void qc.invalidateQueries({ queryKey: contactKeys.activity(contact.id) });
      toast.success(`${v.subscribed ? 'Subscribed to' : 'Unsubscribed from'} ${c.topics.find((t) => t.id === v.id)?.name ?? 'the topic'}.`);
    },
    onError: (err) => {
      qc.setQueryData(contactKeys.detail(contact.id), contact);
      void qc.invalidateQueries({ queryKey: contactKeys.detail(contact.id) });
      toast.error(problemOf(err).message ?? 'The change was not saved.');
    },
  });
  return (
    <section className="card" aria-labelledby="topics-h">
      <h2 id="topics-h">Topics</h2>
      {contact.topics.length === 0 ? <p className="muted">This workspace has no topics yet. <Link to="/topics">Create one</Link>.</p> : (
        <ul className="list-plain topic-switches">
          {contact.topics.map((t) => (
            <li key={t.id}>
              <label className="switch">
                <input type="checkbox" role="switch" checked={t.subscribed} disabled={!editable || toggle.isPending}
                  onChange={(e) => toggle.mutate({ id: t.id, subscribed: e.target.checked })} />
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

/* ------------------------------------------------------------------ Activity */

const EVENT_LOOK: Record<string, { icon: string; label: string; tone: string }> = {
  'email.sent': { icon: '✉', label: 'Email sent', tone: 'info' },
  'email.opened': { icon: '◉', label: 'Opened an email', tone: 'success' },
  'email.clicked': { icon: '↗', label: 'Clicked a link', tone: 'success' },
  'email.bounced': { icon: '⚠', label: 'Email bounced (hard)', tone: 'danger' },
  'email.soft_bounced': { icon: '⚠', label: 'Email soft-bounced', tone: 'warning' },
  'email.complained': { icon: '⚑', label: 'Reported as spam', tone: 'danger' },
  'email.failed': { icon: '✕', label: 'Email failed', tone: 'danger' },
  'contact.created': { icon: '+', label: 'Contact created', tone: 'info' },
  'contact.updated': { icon: '✎', label: 'Contact updated', tone: 'neutral' },
  'contact.subscribed': { icon: '✓', label: 'Subscribed', tone: 'success' },
  'contact.unsubscribed': { icon: '−', label: 'Unsubscribed', tone: 'warning' },
  'contact.deleted': { icon: '✕', label: 'Contact deleted', tone: 'danger' },
  'form.submitted': { icon: '▤', label: 'Submitted a form', tone: 'info' },
};

function eventDetail(e: ActivityEvent, topicNames: Map<string, string>): string | null {
  const d = e.data as Record<string, unknown>;
  const parts: string[] = [];
  if (e.type === 'email.clicked' && typeof d.url === 'string') parts.push(d.url);
  if (e.type === 'contact.updated' && Array.isArray(d.fields)) parts.push(`Changed: ${(d.fields as string[]).join(', ')}`);
  if (typeof d.topicId === 'string') parts.push(`Topic: ${topicNames.get(d.topicId) ?? d.topicId}`);
  if (typeof d.from === 'string' && e.type.startsWith('contact.')) parts.push(`was ${d.from.toLowerCase()}`);
  if (typeof d.detail === 'string') parts.push(d.detail);
  if (typeof d.error === 'string') parts.push(d.error);
  if (e.type === 'form.submitted' && typeof d.formType === 'string') parts.push(d.formType === 'SURVEY' ? 'Survey' : 'Sign-up form');
  if (d.machine === true) parts.push(`by a machine${typeof d.reason === 'string' ? ` (${d.reason})` : ''}: not counted as a person`);
  if (typeof d.source === 'string') parts.push(`via ${d.source.toLowerCase()}`);
  return parts.length ? parts.join(' · ') : null;
}

function ActivityCard({ contactId, topicNames }: { contactId: string; topicNames: Map<string, string> }) {
  const list = useCursorList<ActivityEvent>(contactKeys.activity(contactId), async (cursor) =>
    unwrap(await api.GET('/v1/contacts/{contactId}/activity', { params: { path: { contactId }, query: { cursor, limit: 25 } } })));
  return (
    <section className="card" aria-labelledby="activity-h">
      <h2 id="activity-h">Activity</h2>
      {list.isPending ? <Skeleton lines={5} /> : list.isError ? <ErrorState error={list.error} onRetry={() => void list.refetch()} /> : list.rows.length === 0 ? (
        <EmptyState title="No activity yet">Emails, opens, clicks, sign-ups and changes show here.</EmptyState>
      ) : (
        <>
          <ol className="timeline">
            {list.rows.map((e) => {
              const look = EVENT_LOOK[e.type] ?? { icon: '•', label: e.type, tone: 'neutral' };
              const detail = eventDetail(e, topicNames);
              return (
                <li key={e.id} className="timeline-item">
                  <span className={`timeline-icon tone-${look.tone}`} aria-hidden="true">{look.icon}</span>
                  <div className="timeline-body">
                    <div className="row-between">
                      <strong>{look.label}</strong>
                      <time className="muted small" dateTime={e.occurredAt} title={formatDateTime(e.occurredAt)}>{formatDateTime(e.occurredAt)} · {relative(e.occurredAt)}</time>
                    </div>
                    {detail && <div className="small break">{detail}</div>}
                    {e.broadcastId && <div className="small"><Link to={`/broadcasts/${e.broadcastId}`}>Open the broadcast</Link></div>}
                    {e.type === 'form.submitted' && typeof (e.data as Record<string, unknown>).formGroupId === 'string' && <div className="small"><Link to={`/forms/${String((e.data as Record<string, unknown>).formId)}`}>Open the form</Link></div>}
                  </div>
                </li>
              );
            })}
          </ol>
          {list.hasNextPage && <div className="table-foot"><Button onClick={() => void list.fetchNextPage()} loading={list.isFetchingNextPage}>Show older activity</Button></div>}
        </>
      )}
    </section>
  );
}

/* ------------------------------------------------------------------ Page */

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
  const title = q.data ? ([q.data.firstName, q.data.lastName].filter(Boolean).join(' ') || q.data.email) : 'Contact';
  return (
    <>
      <PageHeader title={title} back={{ to: '/contacts', label: 'Contacts' }}
        description={q.data && <span className="row"><span className="break">{q.data.email}</span><StatusBadge status={q.data.status} tone={CONTACT_TONES[q.data.status]} label={statusLabel(q.data.status)} />{q.data.suppressed && <StatusBadge status="suppressed" tone="danger" label="Suppressed" />}<span className="muted small">added {formatDateTime(q.data.createdAt)}</span></span>}
        actions={editable && q.data && <Button variant="danger" onClick={() => setDeleting(true)}>Delete contact</Button>} />
      <QueryState query={q} skeleton={8}>
        {(contact) => (
          <div className="detail-grid">
            <div className="stack">
              <FieldsCard key={contact.id} contact={contact} editable={editable} />
              <TopicsCard contact={contact} editable={editable} />
            </div>
            <ActivityCard contactId={contact.id} topicNames={new Map(contact.topics.map((t) => [t.id, t.name]))} />
          </div>
        )}
      </QueryState>
      <ConfirmDialog open={deleting} title="Delete this contact?" danger confirmLabel="Delete contact" busy={remove.isPending} onClose={() => setDeleting(false)} onConfirm={() => remove.mutate()}>
        <p>{q.data?.email} and its topic choices are deleted for good. Its suppression, if any, stays: a deleted address is still not mailed.</p>
        {remove.isError && <ErrorSummary message={problemOf(remove.error).message} />}
      </ConfirmDialog>
    </>
  );
}
