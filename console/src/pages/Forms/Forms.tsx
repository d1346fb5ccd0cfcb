import { useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { formKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import type { paths } from '../../api/generated/schema';
import {
  Button,
  CursorTable,
  EmptyState,
  PageHeader,
  Select,
  StatusBadge,
  useCursorList,
  type Column,
} from '../../components';
import { formatDateTime, formatNumber, percent } from '../../lib/format';
import { FormActions } from './FormActions';
import { NewFormDialog } from './NewFormDialog';

type ListForm = paths['/v1/forms']['get']['responses'][200]['content']['application/json']['data'][number];
type Status = NonNullable<NonNullable<paths['/v1/forms']['get']['parameters']['query']>['status']>;

export default function Forms() {
  const can = useCan();
  const [status, setStatus] = useState<Status | ''>('');
  const [creating, setCreating] = useState(false);
  const list = useCursorList<ListForm>(formKeys.list(status), async (cursor) =>
    unwrap(await api.GET('/v1/forms', { params: { query: { cursor, limit: 25, ...(status ? { status } : {}) } } })),
  );
  const columns: Column<ListForm>[] = [
    {
      key: 'name',
      header: 'Form',
      cell: (f) => (
        <div>
          <Link className="cell-main" to={`/forms/${f.id}`}>
            {f.name}
          </Link>
          <div className="muted small">{f.slug ? `/f/${f.slug}` : 'no address yet'}</div>
        </div>
      ),
    },
    { key: 'type', header: 'Type', wideOnly: true, cell: (f) => (f.type === 'SIGN_UP' ? 'Sign-up' : 'Survey') },
    {
      key: 'status',
      header: 'Status',
      cell: (f) => (
        <StatusBadge status={f.status} label={`${f.status[0]}${f.status.slice(1).toLowerCase()} · v${f.version}`} />
      ),
    },
    { key: 'views', header: 'Views', numeric: true, wideOnly: true, cell: (f) => formatNumber(f.stats?.views) },
    {
      key: 'subs',
      header: 'Submissions',
      numeric: true,
      wideOnly: true,
      cell: (f) => formatNumber(f.stats?.submissions),
    },
    {
      key: 'conv',
      header: 'Conversion',
      numeric: true,
      wideOnly: true,
      cell: (f) => percent(f.stats?.submissions, f.stats?.views),
    },
    {
      key: 'updated',
      header: 'Updated',
      wideOnly: true,
      cell: (f) => <span className="nowrap">{formatDateTime(f.updatedAt)}</span>,
    },
    ...(can('write:forms')
      ? [
          {
            key: 'actions',
            header: 'Actions',
            hiddenHeader: true,
            cell: (f: ListForm) => <FormActions form={f} size="sm" />,
          },
        ]
      : []),
  ];
  return (
    <>
      <PageHeader
        needs="write:forms"
        title="Forms"
        description="Sign-up forms and surveys: hosted pages and embeds on your site."
        actions={
          can('write:forms') && (
            <Button variant="primary" onClick={() => setCreating(true)}>
              New form
            </Button>
          )
        }
      />
      <div className="row" style={{ marginBottom: '1rem' }}>
        <Select
          label="Status"
          value={status}
          onChange={(e) => setStatus(e.target.value as Status | '')}
          options={[
            { value: '', label: 'All' },
            { value: 'DRAFT', label: 'Drafts' },
            { value: 'PUBLISHED', label: 'Published' },
            { value: 'ARCHIVED', label: 'Archived' },
          ]}
        />
      </div>
      <CursorTable
        list={list}
        columns={columns}
        rowKey={(f) => f.id}
        caption="Forms"
        empty={
          <div className="card">
            <EmptyState
              title={status ? 'No forms with this status' : 'No forms yet'}
              action={
                can('write:forms') &&
                !status && (
                  <Button variant="primary" onClick={() => setCreating(true)}>
                    Create your first form
                  </Button>
                )
              }
            >
              A form collects sign-ups on a hosted page or on your own site.
            </EmptyState>
          </div>
        }
      />
      <NewFormDialog open={creating} onClose={() => setCreating(false)} />
    </>
  );
}
