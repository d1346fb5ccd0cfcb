/**
 * Templates: reusable emails (contract §8) — to start a broadcast or an automation email from, and a form's double
 * opt-in email. The list says which are visual (block documents, §16) and which are HTML; a new one starts from the
 * gallery of starter emails or blank (a new visual document in the workspace's brand colour); each opens in the
 * template editor.
 */
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, unwrap } from '../../api/client';
import { templateKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import { Button, CursorTable, EmptyState, PageHeader, useCursorList, type Column } from '../../components';
import { newDocument, useWorkspaceLook } from '../../components/email-editor';
import { TemplateGallery, type PickedTemplate } from '../../components/TemplateGallery';
import { formatDateTime } from '../../lib/format';
import type { Template } from '../../lib/templates';
import { KindBadge } from './KindBadge';
import { DeleteTemplateDialog } from './DeleteTemplateDialog';
import { SendTestDialog } from './SendTestDialog';
import type { NewTemplateState } from './TemplateEditor';

export default function Templates() {
  const can = useCan();
  const navigate = useNavigate();
  const look = useWorkspaceLook();
  const [choosing, setChoosing] = useState(false);
  const [deleting, setDeleting] = useState<Template | null>(null);
  const [testing, setTesting] = useState<Template | null>(null);
  const list = useCursorList<Template>(templateKeys.list(), async (cursor) =>
    unwrap(await api.GET('/v1/templates', { params: { query: { cursor, limit: 50 } } })),
  );
  const canWrite = can('write:broadcasts');
  const canSend = can('send:emails');

  const start = (state: NewTemplateState) => {
    setChoosing(false);
    navigate('/templates/new', { state });
  };
  const picked = (p: PickedTemplate) =>
    start({ name: p.source === 'template' ? `Copy of ${p.name}` : p.name, content: p.content });

  const columns: Column<Template>[] = [
    {
      key: 'name',
      header: 'Name',
      cell: (t) => (
        <Link className="cell-main" to={`/templates/${t.id}`}>
          {t.name}
        </Link>
      ),
    },
    {
      key: 'subject',
      header: 'Subject',
      wideOnly: true,
      cell: (t) => (t.subject ? <span>{t.subject}</span> : <span className="muted">No subject</span>),
    },
    { key: 'kind', header: 'Kind', cell: (t) => <KindBadge template={t} /> },
    {
      key: 'updated',
      header: 'Updated',
      wideOnly: true,
      cell: (t) => <span className="nowrap">{formatDateTime(t.updatedAt)}</span>,
    },
    ...(canWrite || canSend
      ? [
          {
            key: 'actions',
            header: 'Actions',
            hiddenHeader: true,
            cell: (t: Template) => (
              <span className="row">
                {canSend && (
                  <Button size="sm" onClick={() => setTesting(t)} aria-label={`Send a test of ${t.name}`}>
                    Send a test
                  </Button>
                )}
                {canWrite && (
                  <Button size="sm" variant="ghost" onClick={() => setDeleting(t)} aria-label={`Delete ${t.name}`}>
                    Delete
                  </Button>
                )}
              </span>
            ),
          },
        ]
      : []),
  ];
  const newButton = (label: string) =>
    canWrite && (
      <Button variant="primary" onClick={() => setChoosing(true)}>
        {label}
      </Button>
    );
  return (
    <>
      <PageHeader
        needs="write:broadcasts"
        title="Templates"
        description="Reusable emails: start a broadcast or an automation email from one, or send one as a form's confirmation email."
        actions={newButton('New template')}
      />
      <CursorTable
        list={list}
        columns={columns}
        rowKey={(t) => t.id}
        caption="Templates"
        empty={
          <div className="card">
            <EmptyState title="No templates yet" action={newButton('Create a template')}>
              Start from one of the gallery's starter emails (a newsletter, an announcement, a welcome email…) or from a
              blank page.
            </EmptyState>
          </div>
        }
      />
      <TemplateGallery
        open={choosing}
        title="New template"
        onClose={() => setChoosing(false)}
        onPick={picked}
        onBlank={() =>
          start({
            name: '',
            content: {
              subject: null,
              html: null,
              text: null,
              editorContent: newDocument({ brandColor: look.brandColor }),
            },
          })
        }
      />
      <DeleteTemplateDialog template={deleting} onClose={() => setDeleting(null)} />
      <SendTestDialog template={testing} onClose={() => setTesting(null)} />
    </>
  );
}
