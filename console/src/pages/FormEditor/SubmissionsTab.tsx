/** The form group's submissions, the held ones for review. */
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { formKeys } from '../../api/keys';
import type { paths } from '../../api/generated/schema';
import { Checkbox, CursorTable, EmptyState, useCursorList, type Column } from '../../components';
import { formatDateTime } from '../../lib/format';
import type { Form } from '../Forms/form';
import { ReviewActions, SubmissionStatus } from './FormProtection';

type Submission =
  paths['/v1/forms/{formId}/submissions']['get']['responses'][200]['content']['application/json']['data'][number];

export function SubmissionsTab({ form }: { form: Form }) {
  const [held, setHeld] = useState(false);
  const list = useCursorList<Submission>(formKeys.submissions(form.formGroupId, held), async (cursor) =>
    unwrap(
      await api.GET('/v1/forms/{formId}/submissions', {
        params: {
          path: { formId: form.id },
          query: { cursor, limit: 25, ...(held ? { status: 'HELD' as const } : {}) },
        },
      }),
    ),
  );
  const columns: Column<Submission>[] = [
    { key: 'at', header: 'Received', cell: (s) => <span className="nowrap">{formatDateTime(s.createdAt)}</span> },
    { key: 'status', header: 'Status', cell: (s) => <SubmissionStatus s={s} /> },
    {
      key: 'data',
      header: 'Answers',
      cell: (s) => (
        <dl className="kv small">
          {s.answers
            .filter((a) => a.value !== null)
            .map((a) => (
              <div key={a.field} className="contents">
                <dt>{a.label}</dt>
                <dd>{Array.isArray(a.value) ? a.value.join(', ') : a.value}</dd>
              </div>
            ))}
        </dl>
      ),
    },
    {
      key: 'consent',
      header: 'Consent',
      cell: (s) =>
        s.consent ? (
          <span className="nowrap" title={s.consent.text}>
            Given {formatDateTime(s.consent.acceptedAt)}
          </span>
        ) : (
          <span className="muted">—</span>
        ),
    },
    { key: 'source', header: 'Source', cell: (s) => s.source.toLowerCase() },
    { key: 'version', header: 'Version', cell: (s) => `v${s.formVersion}` },
    {
      key: 'review',
      header: <span className="visually-hidden">Review</span>,
      cell: (s) => <ReviewActions formId={form.id} s={s} />,
    },
  ];
  return (
    <div className="stack">
      <Checkbox
        label="Only those held for review"
        hint="Sign-ups that came in a burst (one network, one address pattern) wait here: nobody was signed up or mailed. Release signs the person up; discard drops it."
        checked={held}
        onChange={(e) => setHeld(e.target.checked)}
      />
      <CursorTable
        list={list}
        columns={columns}
        rowKey={(s) => s.id}
        caption="Submissions"
        empty={
          <div className="card">
            <EmptyState title={held ? 'Nothing held for review' : 'No submissions yet'}>
              {held
                ? 'Bursts of sign-ups are held here until you release or discard them.'
                : 'Submissions to every version of this form appear here.'}
            </EmptyState>
          </div>
        }
      />
    </div>
  );
}
