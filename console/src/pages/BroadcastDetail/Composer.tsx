/** A DRAFT or SCHEDULED broadcast: its fields, pickers, HTML and text, beside the preview, checks, test send and send. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { broadcastKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import { CodeEditor } from '../../components/CodeEditor';
import { Button, Checkbox, ErrorSummary, Input, Select, Textarea, useToast } from '../../components';
import { useSegments, useTopics, useVerifiedDomains, type Broadcast, type BroadcastUpdate } from '../../lib/audience';
import { formatDateTime } from '../../lib/format';
import { nullable, otherErrors, problemOf } from '../../lib/forms';
import { PreviewCard } from './PreviewCard';
import { PreflightCard } from './PreflightCard';
import { TestSendCard } from './TestSendCard';
import { SendCard } from './SendCard';

interface Draft {
  name: string;
  from: string;
  replyTo: string;
  topicId: string;
  segmentId: string;
  subject: string;
  previewText: string;
  html: string;
  text: string;
  opens: boolean;
  clicks: boolean;
}

function draftOf(b: Broadcast): Draft {
  return {
    name: b.name,
    from: b.from ?? '',
    replyTo: b.replyTo ?? '',
    topicId: b.topicId ?? '',
    segmentId: b.segmentId ?? '',
    subject: b.emailContent.subject ?? '',
    previewText: b.emailContent.previewText ?? '',
    html: b.emailContent.html ?? '',
    text: b.emailContent.text ?? '',
    opens: b.tracking.opens,
    clicks: b.tracking.clicks,
  };
}

function bodyOf(d: Draft): BroadcastUpdate {
  return {
    name: d.name.trim(),
    from: nullable(d.from),
    replyTo: nullable(d.replyTo),
    topicId: d.topicId || null,
    segmentId: d.segmentId || null,
    emailContent: {
      subject: d.subject === '' ? null : d.subject,
      previewText: d.previewText === '' ? null : d.previewText,
      html: d.html === '' ? null : d.html,
      text: d.text === '' ? null : d.text,
    },
    tracking: { opens: d.opens, clicks: d.clicks },
  };
}

export function Composer({ broadcast }: { broadcast: Broadcast }) {
  const can = useCan();
  const qc = useQueryClient();
  const toast = useToast();
  const editable = can('write:broadcasts');
  const topics = useTopics();
  const segments = useSegments();
  const domains = useVerifiedDomains();
  const [saved, setSaved] = useState<Draft>(() => draftOf(broadcast));
  const [d, setD] = useState<Draft>(saved);
  const [contactId, setContactId] = useState('');
  const dirty = JSON.stringify(d) !== JSON.stringify(saved);
  const set = <K extends keyof Draft>(k: K, v: Draft[K]) => setD((x) => ({ ...x, [k]: v }));

  const save = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.PUT('/v1/broadcasts/{broadcastId}', {
          params: { path: { broadcastId: broadcast.id } },
          body: bodyOf(d),
        }),
      ),
    onSuccess: (b) => {
      setSaved(draftOf(b));
      qc.setQueryData(broadcastKeys.detail(broadcast.id), b);
      void qc.invalidateQueries({ queryKey: broadcastKeys.lists() });
    },
  });
  const beforeSend = async () => {
    if (dirty) await save.mutateAsync();
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate(undefined, { onSuccess: () => toast.success('Broadcast saved.') });
  };
  const { fields, message } = problemOf(save.error);
  const shown = [
    '/name',
    '/from',
    '/replyTo',
    '/topicId',
    '/segmentId',
    '/emailContent/subject',
    '/emailContent/previewText',
    '/emailContent/html',
    '/emailContent/text',
    '/tracking',
  ];
  const fromHint = domains.isPending ? (
    'Loading your verified domains…'
  ) : domains.data?.length ? (
    <>
      Verified domains:{' '}
      {domains.data.map((n, i) => (
        <span key={n}>
          {i > 0 && ', '}
          <code>{n}</code>
        </span>
      ))}
      . Use an address on one of them, e.g. <code>News &lt;news@{domains.data[0]}&gt;</code>.
    </>
  ) : (
    <>
      No verified domain yet: <Link to="/domains">add and verify one</Link> to send.
    </>
  );

  return (
    <div className="composer">
      <form className="stack composer-main" onSubmit={submit} noValidate aria-label="Broadcast content">
        <section className="card stack" aria-labelledby="envelope-h">
          <h2 id="envelope-h">Sender and audience</h2>
          <ErrorSummary message={save.isError ? message : null} errors={otherErrors(fields, shown)} />
          <Input
            label="Name"
            value={d.name}
            onChange={(e) => set('name', e.target.value)}
            error={fields['/name']}
            required
            maxLength={255}
            disabled={!editable}
          />
          <div className="grid-2">
            <Input
              label="From"
              value={d.from}
              onChange={(e) => set('from', e.target.value)}
              error={fields['/from']}
              hint={fromHint}
              placeholder="Acme <news@example.com>"
              disabled={!editable}
            />
            <Input
              label="Reply-to"
              type="email"
              value={d.replyTo}
              onChange={(e) => set('replyTo', e.target.value)}
              error={fields['/replyTo']}
              hint="Optional: where replies go."
              disabled={!editable}
            />
          </div>
          <div className="grid-2">
            <Select
              label="Segment"
              value={d.segmentId}
              onChange={(e) => set('segmentId', e.target.value)}
              error={fields['/segmentId']}
              disabled={!editable || segments.isPending}
              options={[
                { value: '', label: 'Every subscribed contact' },
                ...(segments.data ?? []).map((s) => ({ value: s.id, label: s.name })),
              ]}
              hint={<Link to="/segments/new">Build a segment</Link>}
            />
            <Select
              label="Topic"
              value={d.topicId}
              onChange={(e) => set('topicId', e.target.value)}
              error={fields['/topicId']}
              disabled={!editable || topics.isPending}
              options={[
                { value: '', label: 'No topic' },
                ...(topics.data ?? []).map((t) => ({ value: t.id, label: t.name })),
              ]}
              hint="With a topic, only its subscribers get it, and the unsubscribe link can leave just this topic."
            />
          </div>
        </section>
        <section className="card stack" aria-labelledby="content-h">
          <h2 id="content-h">Content</h2>
          <Input
            label="Subject"
            value={d.subject}
            onChange={(e) => set('subject', e.target.value)}
            error={fields['/emailContent/subject']}
            maxLength={998}
            disabled={!editable}
            placeholder='Hi {{ contact.firstName | default: "there" }}'
          />
          <Input
            label="Preview text"
            value={d.previewText}
            onChange={(e) => set('previewText', e.target.value)}
            error={fields['/emailContent/previewText']}
            maxLength={500}
            disabled={!editable}
            hint="Shown after the subject in most inboxes."
          />
          <div className="field">
            <span className="label" id="html-label">
              HTML
            </span>
            <div className="hint" id="html-help">
              Liquid: <code>{'{{ contact.firstName }}'}</code>, <code>{'{{ contact.properties.plan }}'}</code>,{' '}
              <code>{'{{ unsubscribe_url }}'}</code>. Escape, then Tab, leaves the editor.
            </div>
            <CodeEditor
              value={d.html}
              onChange={(v) => set('html', v)}
              label="HTML"
              readOnly={!editable}
              describedBy="html-help"
            />
            {fields['/emailContent/html'] && <div className="error">{fields['/emailContent/html']}</div>}
          </div>
          <Textarea
            label="Plain text"
            value={d.text}
            onChange={(e) => set('text', e.target.value)}
            error={fields['/emailContent/text']}
            rows={6}
            disabled={!editable}
            hint="Optional: made from the HTML when empty."
          />
          <fieldset>
            <legend>Tracking</legend>
            <div className="stack-sm">
              <Checkbox
                label="Count opens"
                hint="Adds a 1×1 image to the HTML."
                checked={d.opens}
                onChange={(e) => set('opens', e.target.checked)}
                disabled={!editable}
              />
              <Checkbox
                label="Count clicks"
                hint="Links go through this server first."
                checked={d.clicks}
                onChange={(e) => set('clicks', e.target.checked)}
                disabled={!editable}
              />
            </div>
          </fieldset>
        </section>
        {editable && (
          <div className="save-bar">
            <span className="muted small" aria-live="polite">
              {dirty ? 'Unsaved changes' : `Saved ${formatDateTime(broadcast.updatedAt)}`}
            </span>
            <Button type="submit" variant="primary" loading={save.isPending} disabled={!dirty}>
              Save
            </Button>
          </div>
        )}
      </form>
      <div className="stack composer-side">
        <PreviewCard broadcast={broadcast} contactId={contactId} setContactId={setContactId} />
        <PreflightCard broadcast={broadcast} />
        {editable && <TestSendCard broadcast={broadcast} contactId={contactId} beforeSend={beforeSend} />}
        <SendCard key={broadcast.sendAt ?? 'none'} broadcast={broadcast} beforeSend={beforeSend} editable={editable} />
      </div>
    </div>
  );
}
