/**
 * A DRAFT or SCHEDULED broadcast: its sender and audience (saved with Save), its content (saved by itself a moment
 * after each change, with the state shown: the autosave), beside the preview, checks, test send and send.
 *
 * The content is the email block editor when the broadcast holds a block document (contract §16): the editor takes
 * the width of the page under the sender card, with its own live preview; otherwise the HTML code editor and the
 * saved version's preview, as before. Content and envelope saves share one queue, so they reach the server in order.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState, type FormEvent, type ReactNode } from 'react';
import { Link } from 'react-router';
import { ApiError, api, unwrap } from '../../api/client';
import { broadcastKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import {
  EmailContentEditor,
  SaveIndicator,
  describePointer,
  forSaving,
  isBlockDocument,
  useAutosave,
  type BlockDocument,
  type EmailContentValue,
} from '../../components/email-editor';
import { Button, Checkbox, ErrorSummary, Input, Select, useToast } from '../../components';
import { useSegments, useTopics, useVerifiedDomains, type Broadcast, type BroadcastUpdate } from '../../lib/audience';
import { formatDateTime } from '../../lib/format';
import { nullable, problemOf } from '../../lib/forms';
import { PreviewCard } from './PreviewCard';
import { PreflightCard } from './PreflightCard';
import { TestSendCard } from './TestSendCard';
import { SaveAsTemplate } from '../../components/SaveAsTemplate';
import { SendCard } from './SendCard';
import { AbTestCard } from './AbTestCard';

interface Envelope {
  name: string;
  from: string;
  replyTo: string;
  topicId: string;
  segmentId: string;
  opens: boolean;
  clicks: boolean;
  archive: boolean;
}

function envelopeOf(b: Broadcast): Envelope {
  return {
    name: b.name,
    from: b.from ?? '',
    replyTo: b.replyTo ?? '',
    topicId: b.topicId ?? '',
    segmentId: b.segmentId ?? '',
    opens: b.tracking.opens,
    clicks: b.tracking.clicks,
    archive: b.archive,
  };
}

function contentOf(b: Broadcast): EmailContentValue {
  return {
    subject: b.emailContent.subject ?? '',
    previewText: b.emailContent.previewText ?? '',
    html: b.emailContent.html ?? '',
    text: b.emailContent.text ?? '',
    editorContent: b.emailContent.editorContent ?? null,
  };
}

/** The emailContent a save sends: with a block document, the document (the service renders html and text). */
export function contentBody(c: EmailContentValue): NonNullable<BroadcastUpdate['emailContent']> {
  const visual = isBlockDocument(c.editorContent);
  return {
    subject: c.subject ? c.subject : null,
    previewText: c.previewText ? c.previewText : null,
    html: visual || !c.html ? null : c.html,
    text: visual || !c.text ? null : c.text,
    editorContent: visual ? forSaving(c.editorContent as BlockDocument) : (c.editorContent ?? null),
  };
}

function envelopeBody(d: Envelope): BroadcastUpdate {
  return {
    name: d.name.trim(),
    from: nullable(d.from),
    replyTo: nullable(d.replyTo),
    topicId: d.topicId || null,
    segmentId: d.segmentId || null,
    tracking: { opens: d.opens, clicks: d.clicks },
    archive: d.archive,
  };
}

/** The fields of the sender card and the content editor, by the pointer of their errors. */
const LABELS = {
  '/name': 'Name',
  '/from': 'From',
  '/replyTo': 'Reply-to',
  '/topicId': 'Topic',
  '/segmentId': 'Segment',
  '/emailContent/**': 'The email',
  '/emailContent/subject': 'Subject',
  '/emailContent/previewText': 'Preview text',
  '/emailContent/html': 'HTML',
  '/emailContent/text': 'Plain text',
};

/** Field errors under /emailContent as sentences, keyed inside it (what EmailContentEditor shows). */
function contentErrors(err: unknown): Record<string, string> {
  if (!(err instanceof ApiError)) return {};
  const out: Record<string, string> = {};
  for (const [path, sentence] of Object.entries(problemOf(err, LABELS).fields))
    if (path.startsWith('/emailContent/') && !path.endsWith('/**'))
      out[path.slice('/emailContent'.length)] ??= sentence;
  return out;
}

export function Composer({ broadcast }: { broadcast: Broadcast }) {
  const can = useCan();
  const qc = useQueryClient();
  const toast = useToast();
  const editable = can('write:broadcasts');
  const topics = useTopics();
  const segments = useSegments();
  const domains = useVerifiedDomains();
  const [saved, setSaved] = useState<Envelope>(() => envelopeOf(broadcast));
  const [d, setD] = useState<Envelope>(saved);
  const [content, setContent] = useState<EmailContentValue>(() => contentOf(broadcast));
  const [contactId, setContactId] = useState('');
  const dirty = JSON.stringify(d) !== JSON.stringify(saved);
  const set = <K extends keyof Envelope>(k: K, v: Envelope[K]) => setD((x) => ({ ...x, [k]: v }));
  const visual = isBlockDocument(content.editorContent);

  const put = async (body: BroadcastUpdate) => {
    const b = unwrap(
      await api.PUT('/v1/broadcasts/{broadcastId}', { params: { path: { broadcastId: broadcast.id } }, body }),
    );
    // The page's cache gets the answer; the editor's local content is never replaced by it.
    qc.setQueryData(broadcastKeys.detail(broadcast.id), b);
    return b;
  };
  const autosave = useAutosave({
    value: content,
    save: (c) => put({ emailContent: contentBody(c) }),
    enabled: editable,
    savedAt: broadcast.updatedAt ? new Date(broadcast.updatedAt) : null,
  });

  const save = useMutation({
    mutationFn: async () => {
      const sent = content;
      const b = await autosave.run(() => put({ ...envelopeBody(d), emailContent: contentBody(sent) }));
      autosave.markSaved(sent);
      return b;
    },
    onSuccess: (b) => {
      setSaved(envelopeOf(b));
      void qc.invalidateQueries({ queryKey: broadcastKeys.lists() });
    },
  });
  const beforeSend = async () => {
    if (!(await autosave.flush()))
      throw new Error('The newest changes to the email could not be saved: see the message in the editor.');
    if (dirty) await save.mutateAsync();
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate(undefined, { onSuccess: () => toast.success('Broadcast saved.') });
  };
  const { fields, message, rest } = problemOf(save.error, LABELS);
  const errorsOfContent = useMemo(
    () => ({ ...contentErrors(autosave.state.error), ...contentErrors(save.error) }),
    [autosave.state.error, save.error],
  );
  const doc = visual ? (content.editorContent as BlockDocument) : null;
  const describe = (pointer: string) => describePointer(doc, pointer);
  const status = editable && <SaveIndicator state={autosave.state} onRetry={autosave.retry} describe={describe} />;

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

  const envelope = (
    <section className="card stack" aria-labelledby="envelope-h">
      <h2 id="envelope-h">Sender and audience</h2>
      <ErrorSummary message={message} errors={rest} />
      {broadcast.resendOf && (
        <div className="callout callout-info">
          A resend: it goes to the recipients of{' '}
          <Link to={`/broadcasts/${broadcast.resendOf.broadcastId}`}>the original</Link> who had not{' '}
          {broadcast.resendOf.to === 'NON_OPENERS' ? 'opened it' : 'clicked a link in it'} on{' '}
          {formatDateTime(broadcast.resendOf.asOf)}, and are still subscribed. A segment or topic chosen below narrows
          it further.
        </div>
      )}
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
            {
              value: '',
              label: broadcast.resendOf
                ? `No segment (every ${broadcast.resendOf.to === 'NON_OPENERS' ? 'non-opener' : 'non-clicker'})`
                : 'Every subscribed contact',
            },
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
      <fieldset>
        <legend>Archive</legend>
        <Checkbox
          label="Show in the public archive"
          hint="Once sent, anyone can read it on your archive page and its feed, without any subscriber's data (set the address in Settings)."
          checked={d.archive}
          onChange={(e) => set('archive', e.target.checked)}
          disabled={!editable}
        />
      </fieldset>
    </section>
  );

  const editor = (
    <EmailContentEditor
      value={content}
      onChange={setContent}
      readOnly={!editable}
      showSubject
      errors={errorsOfContent}
      contactId={contactId}
      onContactId={setContactId}
      status={status}
      idPrefix="broadcast"
    />
  );

  const saveBar: ReactNode = editable && (
    <div className="save-bar">
      <span className="muted small" aria-live="polite">
        {dirty
          ? 'Unsaved changes to the sender and audience'
          : `Sender and audience saved ${formatDateTime(broadcast.updatedAt)}; the content saves by itself.`}
      </span>
      <Button type="submit" variant="primary" loading={save.isPending} disabled={!dirty && !save.isError}>
        Save
      </Button>
    </div>
  );

  const side = (
    <>
      <PreflightCard broadcast={broadcast} />
      {editable && <TestSendCard broadcast={broadcast} contactId={contactId} beforeSend={beforeSend} />}
      <SendCard
        key={broadcast.sendAt ?? 'none'}
        broadcast={broadcast}
        beforeSend={beforeSend}
        editable={editable}
        unsaved={dirty}
      />
      <section className="card stack-sm" aria-labelledby="reuse-h">
        <h2 id="reuse-h">Reuse this email</h2>
        <p className="muted small">
          Keep its content as a template, to start other broadcasts and automation emails from.
        </p>
        <SaveAsTemplate
          content={{ ...content, subject: content.subject ?? null }}
          defaultName={broadcast.name}
          variant="secondary"
        />
      </section>
    </>
  );

  if (visual)
    return (
      <div className="composer composer-visual">
        <div className="stack composer-main">
          <form className="stack" onSubmit={submit} noValidate aria-label="Broadcast settings">
            {envelope}
            {saveBar}
          </form>
          <AbTestCard broadcast={broadcast} editable={editable} />
        </div>
        <div className="stack composer-side">{side}</div>
        <section className="card stack composer-content" aria-labelledby="content-h">
          <h2 id="content-h">Content</h2>
          {editor}
        </section>
      </div>
    );

  return (
    <div className="composer">
      <div className="stack composer-main">
        <form className="stack" onSubmit={submit} noValidate aria-label="Broadcast content">
          {envelope}
          <section className="card stack" aria-labelledby="content-h">
            <h2 id="content-h">Content</h2>
            {editor}
          </section>
          {saveBar}
        </form>
        <AbTestCard broadcast={broadcast} editable={editable} />
      </div>
      <div className="stack composer-side">
        <PreviewCard broadcast={broadcast} contactId={contactId} setContactId={setContactId} />
        {side}
      </div>
    </div>
  );
}
