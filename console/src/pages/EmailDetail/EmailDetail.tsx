/**
 * One transactional email (GET /v1/emails/{id}, docs/emails.md): who sent it to whom, each recipient's status with
 * the last error, its tags, template (and version), attachments and headers, and its content as sent in a sandboxed
 * iframe (HTML) or as text. While a recipient is queued the page asks again every few seconds.
 *
 * What happened after sending: each recipient's status, and the email's events (GET /v1/emails/{id}/events: sent,
 * bounced, reported as spam, and with tracking on opened and clicked), newest first, each naming its recipient.
 */
import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { api, unwrap } from '../../api/client';
import { emailKeys, templateKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import { ErrorState, NotAllowed, PageHeader, Skeleton, Table, type Column } from '../../components';
import { ContentTabs } from '../../components/ContentTabs';
import { formatDateTime } from '../../lib/format';
import { formatBytes } from '../../lib/templates';
import { EmailStatusBadge, statusMeans, type EmailDetail as Email } from '../Emails/EmailBits';
import '../../styles/emails.css';

type Recipient = Email['recipients'][number];

const TYPE_WORDS: Record<Recipient['type'], string> = { to: 'To', cc: 'Cc', bcc: 'Bcc' };

export default function EmailDetail() {
  const can = useCan();
  if (!can('send:emails'))
    return (
      <>
        <PageHeader title="Email" back={{ to: '/emails', label: 'Emails' }} />
        <NotAllowed page action="send:emails" title="Transactional email is for editors, admins and owners" />
      </>
    );
  return <EmailPage />;
}

function EmailPage() {
  const { emailId = '' } = useParams();
  const q = useQuery({
    queryKey: emailKeys.detail(emailId),
    queryFn: async () => unwrap(await api.GET('/v1/emails/{emailId}', { params: { path: { emailId } } })),
    refetchInterval: (query) => (query.state.data?.recipients.some((r) => r.status === 'QUEUED') ? 3000 : false),
  });
  const back = { to: '/emails', label: 'Emails' };
  if (q.isPending)
    return (
      <>
        <PageHeader title="Email" back={back} />
        <Skeleton lines={8} />
      </>
    );
  if (q.isError)
    return (
      <>
        <PageHeader title="Email" back={back} />
        <ErrorState error={q.error} onRetry={() => void q.refetch()} />
      </>
    );
  const e = q.data;
  return (
    <>
      <PageHeader
        title={e.subject}
        back={back}
        description={
          <span className="row">
            <EmailStatusBadge status={e.status} />
            <span>Sent {formatDateTime(e.createdAt)}</span>
          </span>
        }
      />
      <div className="email-detail">
        <div className="stack">
          <Envelope email={e} />
          <Recipients email={e} />
          <Events email={e} />
          <Details email={e} />
        </div>
        <Content email={e} />
      </div>
    </>
  );
}

function Envelope({ email: e }: { email: Email }) {
  return (
    <section className="card" aria-labelledby="envelope-h">
      <h2 id="envelope-h">Message</h2>
      <dl className="kv">
        <dt>From</dt>
        <dd className="break">{e.from}</dd>
        <dt>To</dt>
        <dd className="break">{e.to.join(', ')}</dd>
        {e.cc.length > 0 && (
          <>
            <dt>Cc</dt>
            <dd className="break">{e.cc.join(', ')}</dd>
          </>
        )}
        {e.bcc.length > 0 && (
          <>
            <dt>Bcc</dt>
            <dd className="break">{e.bcc.join(', ')}</dd>
          </>
        )}
        {e.replyTo && (
          <>
            <dt>Reply to</dt>
            <dd className="break">{e.replyTo}</dd>
          </>
        )}
        <dt>Subject</dt>
        <dd className="break">{e.subject}</dd>
        <dt>Template</dt>
        <dd>
          <TemplateLink id={e.templateId} version={e.templateVersion} />
        </dd>
        <dt>Tags</dt>
        <dd>
          {e.tags.length ? (
            <span className="row">
              {e.tags.map((t) => (
                <Link key={t} className="badge badge-neutral" to={`/emails?tag=${encodeURIComponent(t)}`}>
                  {t}
                </Link>
              ))}
            </span>
          ) : (
            <span className="muted">none</span>
          )}
        </dd>
        <dt>Tracking</dt>
        <dd>
          {e.tracking.opens || e.tracking.clicks
            ? [e.tracking.opens ? 'opens' : '', e.tracking.clicks ? 'clicks' : ''].filter(Boolean).join(' and ')
            : 'off'}
        </dd>
        <dt>ID</dt>
        <dd className="break">
          <code>{e.id}</code>
        </dd>
      </dl>
    </section>
  );
}

function TemplateLink({ id, version }: { id: string | null; version: number | null }) {
  const t = useQuery({
    queryKey: templateKeys.detail(id ?? ''),
    queryFn: async () => unwrap(await api.GET('/v1/templates/{templateId}', { params: { path: { templateId: id! } } })),
    enabled: Boolean(id),
    retry: false,
  });
  if (!id) return <span className="muted">none (its own content)</span>;
  const v = version !== null ? ` (version ${version})` : '';
  if (t.isError) return <span className="muted">a deleted template{v}</span>;
  return (
    <Link to={`/templates/${id}`}>
      {t.data?.name ?? 'the template'}
      {v}
    </Link>
  );
}

function Recipients({ email: e }: { email: Email }) {
  const columns: Column<Recipient>[] = [
    {
      key: 'email',
      header: 'Recipient',
      cell: (r) => (
        <span className="email-stack">
          <span className="cell-main break">{r.email}</span>
          <span className="muted small">{TYPE_WORDS[r.type]}</span>
        </span>
      ),
    },
    {
      key: 'status',
      header: 'Status',
      cell: (r) => (
        <span className="email-stack">
          <EmailStatusBadge status={r.status} />
          <span className="muted small break">{r.lastError ?? statusMeans(r.status)}</span>
          {r.status === 'SUPPRESSED' && (
            <Link className="small" to={`/suppressions?q=${encodeURIComponent(r.email)}`}>
              See it on the suppression list
            </Link>
          )}
        </span>
      ),
    },
  ];
  return (
    <section className="card" aria-labelledby="recipients-h">
      <h2 id="recipients-h">Recipients</h2>
      <Table
        columns={columns}
        rows={e.recipients}
        rowKey={(r) => `${r.type} ${r.email}`}
        caption="Each recipient's status"
      />
      <p className="muted small">Each recipient gets the message in a delivery of its own.</p>
    </section>
  );
}

const EVENT_WORDS: Record<string, { label: string; tone: string }> = {
  'email.sent': { label: 'Sent', tone: 'info' },
  'email.opened': { label: 'Opened', tone: 'success' },
  'email.clicked': { label: 'Clicked', tone: 'success' },
  'email.bounced': { label: 'Bounced', tone: 'danger' },
  'email.soft_bounced': { label: 'Soft-bounced', tone: 'warning' },
  'email.complained': { label: 'Reported as spam', tone: 'danger' },
  'email.failed': { label: 'Failed', tone: 'danger' },
};

interface EmailEvent {
  id: string;
  type: string;
  occurredAt: string;
  data: Record<string, unknown>;
}

/** What happened to the email's messages after they left, newest first (GET /v1/emails/{id}/events). */
function Events({ email: e }: { email: Email }) {
  const queued = e.recipients.some((r) => r.status === 'QUEUED');
  const q = useQuery({
    queryKey: emailKeys.events(e.id),
    queryFn: async () =>
      unwrap(await api.GET('/v1/emails/{emailId}/events', { params: { path: { emailId: e.id } } }))
        .data as EmailEvent[],
    refetchInterval: queued ? 3000 : false,
  });
  const detail = (ev: EmailEvent) => {
    const d = ev.data;
    if (ev.type === 'email.clicked' && typeof d.url === 'string') return d.url;
    if (typeof d.error === 'string') return d.error;
    if (typeof d.detail === 'string') return d.detail;
    if (d.machine === true) return 'by a machine (a scanner or a proxy): not counted as a person';
    return null;
  };
  const columns: Column<EmailEvent>[] = [
    {
      key: 'type',
      header: 'Event',
      cell: (ev) => {
        const look = EVENT_WORDS[ev.type] ?? { label: ev.type, tone: 'neutral' };
        return <span className={`badge badge-${look.tone}`}>{look.label}</span>;
      },
    },
    { key: 'who', header: 'Recipient', cell: (ev) => <span className="break">{String(ev.data.email ?? '')}</span> },
    {
      key: 'when',
      header: 'When',
      cell: (ev) => (
        <span className="email-stack">
          <span>{formatDateTime(ev.occurredAt)}</span>
          {detail(ev) && <span className="muted small break">{detail(ev)}</span>}
        </span>
      ),
    },
  ];
  return (
    <section className="card" aria-labelledby="events-h">
      <h2 id="events-h">Events</h2>
      {q.isPending ? (
        <Skeleton lines={3} />
      ) : q.isError ? (
        <ErrorState error={q.error} onRetry={() => void q.refetch()} />
      ) : q.data.length ? (
        <Table
          columns={columns}
          rows={q.data}
          rowKey={(ev) => ev.id}
          caption="What happened to the messages, newest first"
        />
      ) : (
        <p className="muted">{queued ? 'Nothing yet: the message is on its way.' : 'No events.'}</p>
      )}
      <p className="muted small">
        The same events reach your <Link to="/webhooks">webhooks</Link>, with this email&apos;s ID.
      </p>
    </section>
  );
}

function Details({ email: e }: { email: Email }) {
  const headers = Object.entries(e.headers);
  return (
    <section className="card" aria-labelledby="details-h">
      <h2 id="details-h">Attachments and headers</h2>
      <h3 className="small">Attachments</h3>
      {e.attachments.length ? (
        <ul className="email-list">
          {e.attachments.map((a, i) => (
            <li key={i} className="break">
              {a.filename}{' '}
              <span className="muted small">
                ({formatBytes(a.size)}, {a.contentType})
              </span>
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted">None.</p>
      )}
      <h3 className="small">Headers you added</h3>
      {headers.length ? (
        <dl className="kv small">
          {headers.map(([k, v]) => (
            <div key={k} className="contents">
              <dt className="break">{k}</dt>
              <dd className="break">{v}</dd>
            </div>
          ))}
        </dl>
      ) : (
        <p className="muted">None.</p>
      )}
    </section>
  );
}

function Content({ email: e }: { email: Email }) {
  return (
    <section className="card email-content" aria-labelledby="content-h">
      <h2 id="content-h">Content</h2>
      <ContentTabs
        label="Content format"
        html={e.html}
        text={e.text}
        title={`The email “${e.subject}” as sent`}
        noHtml="No HTML: it was sent as plain text."
        textClassName="email-text"
        initial={e.html || !e.text ? 'html' : 'text'}
      />
    </section>
  );
}
