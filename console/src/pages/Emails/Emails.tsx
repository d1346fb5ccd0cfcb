/**
 * Emails: the workspace's transactional email (contract §20, docs/emails.md), what an application sent through
 * `POST /v1/emails` or SMTP submission, newest first. Searched by a recipient's address as it is typed (debounced),
 * filtered by status, template and tag; the filters live in the URL. Each row opens the email's page.
 */
import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { emailKeys } from '../../api/keys';
import { useCan, useSession } from '../../api/session';
import {
  Button,
  CopyButton,
  CursorTable,
  EmptyState,
  Input,
  NotAllowed,
  PageHeader,
  Select,
  useCursorList,
  type Column,
} from '../../components';
import { useDebounced } from '../../lib/audience';
import { useDefaultFrom } from '../../lib/automation-hooks';
import { EMAIL_STATUSES, EmailStatusBadge, recipientsLine, type EmailSummary } from './EmailBits';
import { formatDateTime } from '../../lib/format';
import { useUrlFilters } from '../../lib/url-filters';
import { useTemplates } from '../../lib/hooks';
import '../../styles/emails.css';

const PAGE = 50;
const DESCRIPTION =
  'What your applications send one at a time through the API or SMTP: receipts, password resets, notifications. Newest first.';

export default function Emails() {
  const can = useCan();
  if (!can('send:emails'))
    return (
      <>
        <PageHeader title="Emails" description={DESCRIPTION} />
        <NotAllowed page action="send:emails" title="Transactional email is for editors, admins and owners" />
      </>
    );
  return <EmailLog />;
}

function EmailLog() {
  const { params, setFilter, clearFilters } = useUrlFilters();
  const recipient = params.get('recipient') ?? '';
  const status = params.get('status') ?? '';
  const templateId = params.get('template') ?? '';
  const tag = params.get('tag') ?? '';
  const [typed, setTyped] = useState(recipient);
  const [typedTag, setTypedTag] = useState(tag);
  const debouncedRecipient = useDebounced(typed.trim(), 400);
  const debouncedTag = useDebounced(typedTag.trim(), 400);
  const templates = useTemplates();

  // What is typed reaches the address (and so the query) once the typing pauses.
  useEffect(() => {
    if (debouncedRecipient !== recipient) setFilter({ recipient: debouncedRecipient });
  }, [debouncedRecipient]);
  useEffect(() => {
    if (debouncedTag !== tag) setFilter({ tag: debouncedTag });
  }, [debouncedTag]);
  const tagOk = !tag || /^[A-Za-z0-9_.:-]{1,100}$/.test(tag);

  const filter = { recipient, status, templateId, tag: tagOk ? tag : '' };
  const list = useCursorList<EmailSummary>(emailKeys.list(filter), async (cursor) =>
    unwrap(
      await api.GET('/v1/emails', {
        params: {
          query: {
            limit: PAGE,
            cursor,
            ...(recipient ? { recipient } : {}),
            ...(status ? { status: status as EmailSummary['status'] } : {}),
            ...(templateId ? { templateId } : {}),
            ...(filter.tag ? { tag: filter.tag } : {}),
          },
        },
      }),
    ),
  );
  const templateName = new Map((templates.data ?? []).map((t) => [t.id, t.name]));
  const filtered = Boolean(recipient || status || templateId || tag);
  const clear = () => {
    setTyped('');
    setTypedTag('');
    clearFilters();
  };

  const columns: Column<EmailSummary>[] = [
    {
      key: 'to',
      header: 'To',
      cell: (e) => (
        <Link className="cell-main break" to={`/emails/${e.id}`}>
          {recipientsLine(e)}
        </Link>
      ),
    },
    {
      key: 'subject',
      header: 'Subject',
      cell: (e) => (
        <span className="email-stack">
          <span className="break">{e.subject}</span>
          {(e.templateId || e.tags.length > 0) && (
            <span className="muted small break">
              {[
                e.templateId
                  ? templateName.has(e.templateId)
                    ? `Template: ${templateName.get(e.templateId)}`
                    : 'From a template'
                  : '',
                ...e.tags,
              ]
                .filter(Boolean)
                .join(' · ')}
            </span>
          )}
        </span>
      ),
    },
    { key: 'status', header: 'Status', cell: (e) => <EmailStatusBadge status={e.status} /> },
    { key: 'sent', header: 'Sent', cell: (e) => <span className="nowrap">{formatDateTime(e.createdAt)}</span> },
  ];

  return (
    <>
      <PageHeader title="Emails" description={DESCRIPTION} />
      <div className="card filters email-filters">
        <div role="search" aria-label="Find emails" className="filter-search">
          <Input
            label="Recipient"
            type="search"
            autoComplete="off"
            placeholder="ana@example.com"
            value={typed}
            onChange={(e) => setTyped(e.target.value)}
            hint="The whole address, in To, Cc or Bcc; case does not matter."
          />
        </div>
        <Select
          label="Status"
          value={status}
          onChange={(e) => setFilter({ status: e.target.value })}
          options={[
            { value: '', label: 'Any status' },
            ...EMAIL_STATUSES.map((s) => ({ value: s.value, label: s.label })),
          ]}
        />
        <Select
          label="Template"
          value={templateId}
          onChange={(e) => setFilter({ template: e.target.value })}
          options={[
            { value: '', label: 'Any template' },
            ...(templates.data ?? []).map((t) => ({ value: t.id, label: t.name })),
          ]}
        />
        <Input
          label="Tag"
          autoComplete="off"
          placeholder="receipt"
          value={typedTag}
          onChange={(e) => setTypedTag(e.target.value)}
          error={tagOk ? undefined : 'A tag has only letters, digits and . _ : -'}
        />
      </div>
      <CursorTable
        list={list}
        columns={columns}
        rowKey={(e) => e.id}
        caption="Emails"
        empty={
          <div className="card">
            {filtered ? (
              <EmptyState
                title={recipient ? `No email to ${recipient}` : 'No email matches these filters'}
                action={<Button onClick={clear}>Clear the search and filters</Button>}
              >
                {recipient ? 'Search by the whole address.' : 'Try another status, template or tag.'}
              </EmptyState>
            ) : (
              <NoEmailsYet />
            )}
          </div>
        }
      />
    </>
  );
}

/** How to send the first one: a curl line to copy, and where to read more. */
function NoEmailsYet() {
  const session = useSession();
  const defaultFrom = useDefaultFrom();
  const body = JSON.stringify({
    from: defaultFrom.data ?? 'hello@your-domain.com',
    to: [session.user.email],
    subject: 'Hello',
    text: 'It works.',
  });
  const curl = [
    `curl ${location.origin}/v1/emails \\`,
    `  -H "Authorization: Bearer $FORMCAST_KEY" -H "Content-Type: application/json" \\`,
    // In single quotes for the shell: a quote of the body's own closes them, adds itself and opens them again.
    `  -d '${body.replace(/'/g, `'\\''`)}'`,
  ].join('\n');
  return (
    <EmptyState
      title="No emails sent yet"
      action={
        <div className="stack-sm email-empty">
          <pre className="code-block" tabIndex={0} aria-label="A curl command that sends an email">
            {curl}
          </pre>
          <div className="row">
            <CopyButton text={curl} what="command" />
            <a href="/docs">API reference</a>
            <span className="muted small">SDK and SMTP settings: docs/emails.md</span>
          </div>
        </div>
      }
    >
      Send one from your application with an API key that may send transactional email, from an address on a verified
      domain:
    </EmptyState>
  );
}
