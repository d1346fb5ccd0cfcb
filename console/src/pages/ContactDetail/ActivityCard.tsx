/** What happened to a contact, newest first. */
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { contactKeys } from '../../api/keys';
import { Button, EmptyState, ErrorState, MessageSourceLink, Skeleton, useCursorList } from '../../components';
import type { ActivityEvent } from '../../lib/audience';
import { formatDateTime, relative } from '../../lib/format';

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

/** Why someone left, as the unsubscribe page offers it (`data.reason`, docs/bounces.md, "The unsubscribe page"). */
const UNSUBSCRIBE_REASON: Record<string, string> = {
  too_many: 'too many emails',
  not_relevant: 'the emails are not relevant to them',
  never_signed_up: 'they never signed up',
  other: 'another reason',
};

/** How an unsubscribe was asked for (`data.via`, docs/bounces.md): each does something else. */
const UNSUBSCRIBE_VIA: Record<string, string> = {
  'one-click': 'one-click unsubscribe from the mail client (RFC 8058): left what the message was about',
  page: 'on the unsubscribe page',
  mail: 'by mail to the List-Unsubscribe address: from everything, the address suppressed',
};

function eventDetail(e: ActivityEvent, topicNames: Map<string, string>): string | null {
  const d = e.data as Record<string, unknown>;
  const parts: string[] = [];
  if (e.type === 'email.clicked' && typeof d.url === 'string') parts.push(d.url);
  if (e.type === 'contact.updated' && Array.isArray(d.fields))
    parts.push(`Changed: ${(d.fields as string[]).join(', ')}`);
  if (typeof d.topicId === 'string') parts.push(`Topic: ${topicNames.get(d.topicId) ?? d.topicId}`);
  if (typeof d.from === 'string' && e.type.startsWith('contact.')) parts.push(`was ${d.from.toLowerCase()}`);
  if (typeof d.detail === 'string') parts.push(d.detail);
  if (typeof d.error === 'string') parts.push(d.error);
  if (e.type === 'form.submitted' && typeof d.formType === 'string')
    parts.push(d.formType === 'SURVEY' ? 'Survey' : 'Sign-up form');
  if (d.machine === true)
    parts.push(`by a machine${typeof d.reason === 'string' ? ` (${d.reason})` : ''}: not counted as a person`);
  if (typeof d.via === 'string' && UNSUBSCRIBE_VIA[d.via]) parts.push(UNSUBSCRIBE_VIA[d.via]!);
  if (e.type === 'contact.unsubscribed' && typeof d.reason === 'string' && UNSUBSCRIBE_REASON[d.reason])
    parts.push(`Reason: ${UNSUBSCRIBE_REASON[d.reason]}`);
  if (e.type === 'contact.unsubscribed' && typeof d.comment === 'string' && d.comment)
    parts.push(`They wrote: “${d.comment}”`);
  else if (typeof d.source === 'string') parts.push(`via ${d.source.toLowerCase()}`);
  return parts.length ? parts.join(' · ') : null;
}

export function ActivityCard({ contactId, topicNames }: { contactId: string; topicNames: Map<string, string> }) {
  const list = useCursorList<ActivityEvent>(contactKeys.activity(contactId), async (cursor) =>
    unwrap(
      await api.GET('/v1/contacts/{contactId}/activity', {
        params: { path: { contactId }, query: { cursor, limit: 25 } },
      }),
    ),
  );
  return (
    <section className="card" aria-labelledby="activity-h">
      <h2 id="activity-h">Activity</h2>
      {list.isPending ? (
        <Skeleton lines={5} />
      ) : list.isError ? (
        <ErrorState error={list.error} onRetry={() => void list.refetch()} />
      ) : list.rows.length === 0 ? (
        <EmptyState title="No activity yet">Emails, opens, clicks, sign-ups and changes show here.</EmptyState>
      ) : (
        <>
          <ol className="timeline">
            {list.rows.map((e) => {
              const look = EVENT_LOOK[e.type] ?? { icon: '•', label: e.type, tone: 'neutral' };
              const detail = eventDetail(e, topicNames);
              return (
                <li key={e.id} className="timeline-item">
                  <span className={`timeline-icon tone-${look.tone}`} aria-hidden="true">
                    {look.icon}
                  </span>
                  <div className="timeline-body">
                    <div className="row-between">
                      <strong>{look.label}</strong>
                      <time className="muted small" dateTime={e.occurredAt} title={formatDateTime(e.occurredAt)}>
                        {formatDateTime(e.occurredAt)} · {relative(e.occurredAt)}
                      </time>
                    </div>
                    {detail && <div className="small break">{detail}</div>}
                    {e.source && (
                      <div className="small">
                        <MessageSourceLink source={e.source} open />
                      </div>
                    )}
                    {e.type === 'form.submitted' &&
                      typeof (e.data as Record<string, unknown>).formGroupId === 'string' && (
                        <div className="small">
                          <Link to={`/forms/${String((e.data as Record<string, unknown>).formId)}`}>Open the form</Link>
                        </div>
                      )}
                  </div>
                </li>
              );
            })}
          </ol>
          {list.hasNextPage && (
            <div className="table-foot">
              <Button onClick={() => void list.fetchNextPage()} loading={list.isFetchingNextPage}>
                Show older activity
              </Button>
            </div>
          )}
        </>
      )}
    </section>
  );
}
