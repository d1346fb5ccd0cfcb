/** What the Emails page and an email's page share: the statuses in words, and who an email went to. */
import type { paths } from '../../api/generated/schema';
import { StatusBadge } from '../../components';

export type EmailSummary = paths['/v1/emails']['get']['responses'][200]['content']['application/json']['data'][number];
export type EmailDetail = paths['/v1/emails/{emailId}']['get']['responses'][200]['content']['application/json'];
type Status = EmailSummary['status'];

const LOOK: Record<Status, { label: string; tone: 'info' | 'success' | 'danger' | 'warning'; means: string }> = {
  QUEUED: { label: 'Queued', tone: 'info', means: 'waiting to be sent' },
  SENT: { label: 'Sent', tone: 'success', means: 'the receiving server accepted it' },
  BOUNCED: { label: 'Bounced', tone: 'danger', means: 'the receiving server said the address does not exist' },
  FAILED: { label: 'Failed', tone: 'danger', means: 'it could not be delivered after its retries' },
  SUPPRESSED: {
    label: 'Suppressed',
    tone: 'warning',
    means: 'not sent: the address is suppressed after a hard bounce or a spam complaint',
  },
};

export const EMAIL_STATUSES = (Object.keys(LOOK) as Status[]).map((s) => ({ value: s, ...LOOK[s] }));

export function EmailStatusBadge({ status }: { status: Status }) {
  return <StatusBadge status={status} tone={LOOK[status].tone} label={LOOK[status].label} />;
}

export function statusMeans(status: Status): string {
  return LOOK[status].means;
}

/** "ana@example.com", "ana@example.com and 2 more". */
export function recipientsLine(e: Pick<EmailSummary, 'to' | 'cc' | 'bcc'>): string {
  const all = [...e.to, ...e.cc, ...e.bcc];
  return all.length > 1 ? `${all[0]} and ${all.length - 1} more` : (all[0] ?? '');
}
