/**
 * One broadcast. A DRAFT or SCHEDULED one opens in the composer: fields, pickers, HTML (CodeMirror) and text,
 * the live preview for a chosen contact, the preflight checks, test sends, scheduling in the user's time zone,
 * and the send behind a confirmation with the audience count. While SENDING or PAUSED: the live progress
 * (polled every 2 s) with pause, resume and cancel. Once SENT (or canceled, failed): the report.
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState, type FormEvent } from 'react';
import { Link, useParams } from 'react-router';
import { api, ApiError, unwrap } from '../api/client';
import { broadcastKeys } from '../api/keys';
import { useCan } from '../api/session';
import { TimeChart } from '../components/Chart';
import { CodeEditor } from '../components/CodeEditor';
import { EmailPreview } from '../components/EmailPreview';
import { Button, Checkbox, ConfirmDialog, CursorTable, EmptyState, ErrorState, ErrorSummary, Input, PageHeader, QueryState, Select, Skeleton, Spinner, StatusBadge, Table, Tabs, Textarea, useCursorList, useToast, type Column } from '../components';
import { fromLocalInput, timeZoneName, toLocalInput, useSegments, useTopics, useVerifiedDomains, utcOffset, type Broadcast, type BroadcastUpdate, type Delivery, type DeliveryStatus } from '../lib/audience';
import { formatDateTime, formatNumber, percent } from '../lib/format';
import { nullable, otherErrors, problemOf } from '../lib/forms';
import '../styles/audience.css';

const LIVE = new Set(['SENDING', 'PAUSED']);
const EDITABLE = new Set(['DRAFT', 'SCHEDULED']);

/* ------------------------------------------------------------------ Composer */

interface Draft {
  name: string; from: string; replyTo: string; topicId: string; segmentId: string;
  subject: string; previewText: string; html: string; text: string; opens: boolean; clicks: boolean;
}

function draftOf(b: Broadcast): Draft {
  return {
    name: b.name, from: b.from ?? '', replyTo: b.replyTo ?? '', topicId: b.topicId ?? '', segmentId: b.segmentId ?? '',
    subject: b.emailContent.subject ?? '', previewText: b.emailContent.previewText ?? '', html: b.emailContent.html ?? '', text: b.emailContent.text ?? '',
    opens: b.tracking.opens, clicks: b.tracking.clicks,
  };
}

function bodyOf(d: Draft): BroadcastUpdate {
  return {
    name: d.name.trim(), from: nullable(d.from), replyTo: nullable(d.replyTo), topicId: d.topicId || null, segmentId: d.segmentId || null,
    emailContent: { subject: d.subject === '' ? null : d.subject, previewText: d.previewText === '' ? null : d.previewText, html: d.html === '' ? null : d.html, text: d.text === '' ? null : d.text },
    tracking: { opens: d.opens, clicks: d.clicks },
  };
}

function PreviewCard({ broadcast, contactId, setContactId }: { broadcast: Broadcast; contactId: string; setContactId: (id: string) => void }) {
  const [view, setView] = useState('html');
  const people = useQuery({
    queryKey: broadcastKeys.previewContacts(broadcast.id, broadcast.segmentId, broadcast.topicId),
    queryFn: async () => {
      const audience = unwrap(await api.GET('/v1/broadcasts/{broadcastId}/audience', { params: { path: { broadcastId: broadcast.id }, query: { limit: 20 } } }));
      if (audience.data.length) return audience.data;
      return unwrap(await api.GET('/v1/contacts', { params: { query: { limit: 20 } } })).data;
    },
  });
  const preview = useQuery({
    queryKey: broadcastKeys.preview(broadcast.id, broadcast.updatedAt, contactId),
    queryFn: async () => unwrap(await api.POST('/v1/broadcasts/{broadcastId}/preview', { params: { path: { broadcastId: broadcast.id } }, body: contactId ? { contactId } : {} })),
    placeholderData: keepPreviousData,
    retry: false,
  });
  return (
    <section className="card stack-sm" aria-labelledby="preview-h">
      <div className="card-header">
        <h2 id="preview-h">Preview</h2>
        {preview.isFetching && <Spinner size="sm" label="Rendering…" />}
      </div>
      <Select label="Render for" value={contactId} onChange={(e) => setContactId(e.target.value)} disabled={people.isPending}
        options={[{ value: '', label: 'Sample data (no contact)' }, ...(people.data ?? []).map((c) => ({ value: c.id, label: [c.email, [c.firstName, c.lastName].filter(Boolean).join(' ')].filter(Boolean).join(' — ') }))]}
        hint="The saved version, personalised as this contact will get it." />
      {preview.isPending ? <Skeleton lines={6} /> : preview.isError ? <ErrorState error={preview.error} title="The preview could not be rendered" onRetry={() => void preview.refetch()} /> : preview.data && (
        <>
          <dl className="kv small">
            <dt>Subject</dt><dd data-testid="preview-subject">{preview.data.subject ?? <span className="muted">none yet</span>}</dd>
            <dt>Preview text</dt><dd>{preview.data.previewText ?? <span className="muted">none</span>}</dd>
            <dt>To</dt><dd className="break">{preview.data.contact.email}</dd>
          </dl>
          <Tabs label="Preview format" tabs={[{ id: 'html', label: 'HTML' }, { id: 'text', label: 'Plain text' }]} selected={view} onSelect={setView}>
            {view === 'html' ? (preview.data.html ? <EmailPreview html={preview.data.html} title={`Email preview for ${preview.data.contact.email}`} /> : <p className="muted">No HTML: recipients get the text part.</p>)
              : <pre className="text-preview">{preview.data.text ?? ''}</pre>}
          </Tabs>
        </>
      )}
    </section>
  );
}

function PreflightCard({ broadcast }: { broadcast: Broadcast }) {
  const q = useQuery({
    queryKey: broadcastKeys.preflight(broadcast.id, broadcast.updatedAt),
    queryFn: async () => unwrap(await api.POST('/v1/broadcasts/{broadcastId}/preflight', { params: { path: { broadcastId: broadcast.id } } })),
    retry: false,
  });
  const icon = { pass: '✓', warn: '!', fail: '✕' } as const;
  return (
    <section className="card stack-sm" aria-labelledby="preflight-h">
      <div className="card-header">
        <h2 id="preflight-h">Checks before sending</h2>
        <Button size="sm" onClick={() => void q.refetch()} loading={q.isFetching}>Run again</Button>
      </div>
      {q.isPending ? <Skeleton lines={4} /> : q.isError ? <ErrorState error={q.error} onRetry={() => void q.refetch()} /> : (
        <>
          <p className={q.data.ok ? 'callout callout-success' : 'callout callout-danger'} role="status">{q.data.ok ? 'Nothing blocks sending.' : 'Fix the failed checks before sending or scheduling.'}</p>
          <ul className="list-plain checks">
            {q.data.checks.map((c) => (
              <li key={c.id} className={`check-item check-${c.status}`}>
                <span className="check-icon" aria-hidden="true">{icon[c.status]}</span>
                <span><span className="visually-hidden">{c.status === 'pass' ? 'Passed' : c.status === 'warn' ? 'Warning' : 'Failed'}: </span><strong>{c.id.replace(/[_-]/g, ' ')}</strong> — {c.detail}</span>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

function TestSendCard({ broadcast, contactId, beforeSend }: { broadcast: Broadcast; contactId: string; beforeSend: () => Promise<void> }) {
  const [to, setTo] = useState('');
  const emails = to.split(/[\s,;]+/).map((s) => s.trim()).filter(Boolean);
  const send = useMutation({
    mutationFn: async () => {
      await beforeSend();
      return unwrap(await api.POST('/v1/broadcasts/{broadcastId}/test', { params: { path: { broadcastId: broadcast.id } }, body: { emails, ...(contactId ? { contactId } : {}) } }));
    },
  });
  const { fields, message } = problemOf(send.error);
  const tooMany = emails.length > 5;
  const submit = (e: FormEvent) => { e.preventDefault(); if (!tooMany && emails.length) send.mutate(); };
  return (
    <section className="card" aria-labelledby="test-h">
      <h2 id="test-h">Send a test</h2>
      <form className="stack-sm" onSubmit={submit} noValidate>
        <Input label="To (up to 5 addresses)" value={to} onChange={(e) => setTo(e.target.value)} placeholder="you@example.com, colleague@example.com"
          error={tooMany ? 'At most 5 addresses.' : fields['/emails'] ?? Object.entries(fields).find(([p]) => p.startsWith('/emails/'))?.[1]}
          hint="Personalised like the preview; the subject starts with [Test]. Tests count in no statistics." />
        <ErrorSummary message={send.isError && !fields['/emails'] ? message : null} errors={otherErrors(fields, ['/emails', ...Object.keys(fields).filter((p) => p.startsWith('/emails/'))])} />
        <div><Button type="submit" loading={send.isPending} disabled={!emails.length || tooMany}>Send test</Button></div>
        {send.data && (
          <div className="stack-sm" role="status">
            {send.data.sent.length > 0 && <div className="callout callout-success">Sent to {send.data.sent.map((s) => s.email).join(', ')}.</div>}
            {send.data.failed.length > 0 && <div className="callout callout-danger"><strong>Not sent:</strong><ul>{send.data.failed.map((f) => <li key={f.email}>{f.email}: {f.error}</li>)}</ul></div>}
          </div>
        )}
      </form>
    </section>
  );
}

function SendCard({ broadcast, beforeSend, editable }: { broadcast: Broadcast; beforeSend: () => Promise<void>; editable: boolean }) {
  const qc = useQueryClient();
  const toast = useToast();
  const [when, setWhen] = useState(toLocalInput(broadcast.sendAt));
  const [confirming, setConfirming] = useState(false);
  const at = fromLocalInput(when);
  const audience = useQuery({
    queryKey: broadcastKeys.audienceCount(broadcast.id, broadcast.updatedAt),
    queryFn: async () => unwrap(await api.GET('/v1/broadcasts/{broadcastId}/audience', { params: { path: { broadcastId: broadcast.id }, query: { limit: 1 } } })),
    enabled: confirming,
    retry: false,
  });
  const refresh = (b: Broadcast) => {
    qc.setQueryData(broadcastKeys.detail(broadcast.id), b);
    void qc.invalidateQueries({ queryKey: broadcastKeys.lists() });
  };
  const schedule = useMutation({
    mutationFn: async (sendAt: string | null) => {
      await beforeSend();
      return unwrap(await api.PUT('/v1/broadcasts/{broadcastId}', { params: { path: { broadcastId: broadcast.id } }, body: { sendAt } }));
    },
    onSuccess: (b) => { refresh(b); toast.success(b.sendAt ? `Scheduled for ${formatDateTime(b.sendAt)}.` : 'Unscheduled: back to draft.'); },
  });
  const send = useMutation({
    mutationFn: async () => {
      await beforeSend();
      return unwrap(await api.POST('/v1/broadcasts/{broadcastId}/send', { params: { path: { broadcastId: broadcast.id } } }));
    },
    onSuccess: (b) => { setConfirming(false); refresh(b as Broadcast); toast.success('Sending started.'); },
  });
  const sched = problemOf(schedule.error);
  const sent = problemOf(send.error);
  return (
    <section className="card stack-sm" aria-labelledby="send-h">
      <h2 id="send-h">Schedule or send</h2>
      {broadcast.status === 'SCHEDULED' && broadcast.sendAt && (
        <div className="callout callout-info" role="status">Scheduled for <strong>{formatDateTime(broadcast.sendAt)}</strong> ({broadcast.sendAt.replace('.000Z', 'Z')} UTC).</div>
      )}
      <div className="field">
        <label htmlFor="send-at">Send at ({timeZoneName()})</label>
        <input id="send-at" type="datetime-local" className="input" value={when} onChange={(e) => setWhen(e.target.value)} disabled={!editable} aria-describedby="send-at-hint" aria-invalid={sched.fields['/sendAt'] ? true : undefined} />
        <div className="hint" id="send-at-hint">
          {at ? <>Your time, {utcOffset(at)}: that is <strong>{at.toISOString().slice(0, 16).replace('T', ' ')} UTC</strong>.</> : `Pick a date and time in your time zone (${utcOffset(new Date())}).`}
        </div>
        {sched.fields['/sendAt'] && <div className="error">{sched.fields['/sendAt']}</div>}
      </div>
      <ErrorSummary message={schedule.isError && !sched.fields['/sendAt'] ? sched.message : null} errors={otherErrors(sched.fields, ['/sendAt'])} />
      {editable && (
        <div className="row">
          <Button onClick={() => at && schedule.mutate(at.toISOString())} disabled={!at} loading={schedule.isPending && schedule.variables !== null}>{broadcast.status === 'SCHEDULED' ? 'Reschedule' : 'Schedule'}</Button>
          {broadcast.status === 'SCHEDULED' && <Button variant="ghost" onClick={() => schedule.mutate(null)} loading={schedule.isPending && schedule.variables === null}>Unschedule</Button>}
          <Button variant="primary" onClick={() => { send.reset(); setConfirming(true); }}>Send now…</Button>
        </div>
      )}
      <ConfirmDialog open={confirming} title="Send this broadcast now?" confirmLabel={audience.data ? `Send to ${formatNumber(audience.data.count)} contacts` : 'Send now'} busy={send.isPending} onClose={() => setConfirming(false)} onConfirm={() => send.mutate()}>
        <div className="stack-sm">
          {audience.isPending ? <Spinner label="Counting the audience…" /> : audience.isError ? <ErrorSummary message={problemOf(audience.error).message} /> : (
            <p className="audience-count">It goes to <strong data-testid="audience-count">{formatNumber(audience.data.count)}</strong> subscribed contact{audience.data.count === 1 ? '' : 's'} now, once each. This cannot be undone; you can pause or cancel while it sends.</p>
          )}
          <ErrorSummary message={send.isError ? sent.message : null} errors={send.error instanceof ApiError ? (send.error.problem.errors ?? []).map((e) => `${e.path}: ${e.message}`) : []} />
        </div>
      </ConfirmDialog>
    </section>
  );
}

function Composer({ broadcast }: { broadcast: Broadcast }) {
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
    mutationFn: async () => unwrap(await api.PUT('/v1/broadcasts/{broadcastId}', { params: { path: { broadcastId: broadcast.id } }, body: bodyOf(d) })),
    onSuccess: (b) => {
      setSaved(draftOf(b));
      qc.setQueryData(broadcastKeys.detail(broadcast.id), b);
      void qc.invalidateQueries({ queryKey: broadcastKeys.lists() });
    },
  });
  const beforeSend = async () => { if (dirty) await save.mutateAsync(); };
  const submit = (e: FormEvent) => { e.preventDefault(); save.mutate(undefined, { onSuccess: () => toast.success('Broadcast saved.') }); };
  const { fields, message } = problemOf(save.error);
  const shown = ['/name', '/from', '/replyTo', '/topicId', '/segmentId', '/emailContent/subject', '/emailContent/previewText', '/emailContent/html', '/emailContent/text', '/tracking'];
  const fromHint = domains.isPending ? 'Loading your verified domains…' : domains.data?.length
    ? <>Verified domains: {domains.data.map((n, i) => <span key={n}>{i > 0 && ', '}<code>{n}</code></span>)}. Use an address on one of them, e.g. <code>News &lt;news@{domains.data[0]}&gt;</code>.</>
    : <>No verified domain yet: <Link to="/domains">add and verify one</Link> to send.</>;

  return (
    <div className="composer">
      <form className="stack composer-main" onSubmit={submit} noValidate aria-label="Broadcast content">
        <section className="card stack" aria-labelledby="envelope-h">
          <h2 id="envelope-h">Sender and audience</h2>
          <ErrorSummary message={save.isError ? message : null} errors={otherErrors(fields, shown)} />
          <Input label="Name" value={d.name} onChange={(e) => set('name', e.target.value)} error={fields['/name']} required maxLength={255} disabled={!editable} />
          <div className="grid-2">
            <Input label="From" value={d.from} onChange={(e) => set('from', e.target.value)} error={fields['/from']} hint={fromHint} placeholder="Acme <news@example.com>" disabled={!editable} />
            <Input label="Reply-to" type="email" value={d.replyTo} onChange={(e) => set('replyTo', e.target.value)} error={fields['/replyTo']} hint="Optional: where replies go." disabled={!editable} />
          </div>
          <div className="grid-2">
            <Select label="Segment" value={d.segmentId} onChange={(e) => set('segmentId', e.target.value)} error={fields['/segmentId']} disabled={!editable || segments.isPending}
              options={[{ value: '', label: 'Every subscribed contact' }, ...(segments.data ?? []).map((s) => ({ value: s.id, label: s.name }))]} hint={<Link to="/segments/new">Build a segment</Link>} />
            <Select label="Topic" value={d.topicId} onChange={(e) => set('topicId', e.target.value)} error={fields['/topicId']} disabled={!editable || topics.isPending}
              options={[{ value: '', label: 'No topic' }, ...(topics.data ?? []).map((t) => ({ value: t.id, label: t.name }))]} hint="With a topic, only its subscribers get it, and the unsubscribe link can leave just this topic." />
          </div>
        </section>
        <section className="card stack" aria-labelledby="content-h">
          <h2 id="content-h">Content</h2>
          <Input label="Subject" value={d.subject} onChange={(e) => set('subject', e.target.value)} error={fields['/emailContent/subject']} maxLength={998} disabled={!editable} placeholder='Hi {{ contact.firstName | default: "there" }}' />
          <Input label="Preview text" value={d.previewText} onChange={(e) => set('previewText', e.target.value)} error={fields['/emailContent/previewText']} maxLength={500} disabled={!editable} hint="Shown after the subject in most inboxes." />
          <div className="field">
            <span className="label" id="html-label">HTML</span>
            <div className="hint" id="html-help">Liquid: <code>{'{{ contact.firstName }}'}</code>, <code>{'{{ contact.properties.plan }}'}</code>, <code>{'{{ unsubscribe_url }}'}</code>. Escape, then Tab, leaves the editor.</div>
            <CodeEditor value={d.html} onChange={(v) => set('html', v)} label="HTML" readOnly={!editable} describedBy="html-help" />
            {fields['/emailContent/html'] && <div className="error">{fields['/emailContent/html']}</div>}
          </div>
          <Textarea label="Plain text" value={d.text} onChange={(e) => set('text', e.target.value)} error={fields['/emailContent/text']} rows={6} disabled={!editable} hint="Optional: made from the HTML when empty." />
          <fieldset>
            <legend>Tracking</legend>
            <div className="stack-sm">
              <Checkbox label="Count opens" hint="Adds a 1×1 image to the HTML." checked={d.opens} onChange={(e) => set('opens', e.target.checked)} disabled={!editable} />
              <Checkbox label="Count clicks" hint="Links go through this server first." checked={d.clicks} onChange={(e) => set('clicks', e.target.checked)} disabled={!editable} />
            </div>
          </fieldset>
        </section>
        {editable && (
          <div className="save-bar">
            <span className="muted small" aria-live="polite">{dirty ? 'Unsaved changes' : `Saved ${formatDateTime(broadcast.updatedAt)}`}</span>
            <Button type="submit" variant="primary" loading={save.isPending} disabled={!dirty}>Save</Button>
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

/* ------------------------------------------------------------------ Progress */

function Bar({ label, value, total, tone }: { label: string; value: number; total: number; tone: string }) {
  const pct = total > 0 ? Math.min(100, (value / total) * 100) : 0;
  return (
    <div className="bar-row">
      <div className="row-between small"><span>{label}</span><span className="num">{formatNumber(value)} <span className="muted">({percent(value, total)})</span></span></div>
      <div className={`bar bar-${tone}`} role="progressbar" aria-label={label} aria-valuemin={0} aria-valuemax={total} aria-valuenow={value} aria-valuetext={`${formatNumber(value)} of ${formatNumber(total)}`}>
        <div className="bar-fill" style={{ width: `${pct}%` }} />
      </div>
    </div>
  );
}

function Progress({ broadcast }: { broadcast: Broadcast }) {
  const can = useCan();
  const qc = useQueryClient();
  const toast = useToast();
  const [canceling, setCanceling] = useState(false);
  const s = broadcast.stats;
  const act = useMutation({
    mutationFn: async (what: 'pause' | 'resume' | 'cancel') => {
      const path = { params: { path: { broadcastId: broadcast.id } } };
      if (what === 'pause') return unwrap(await api.POST('/v1/broadcasts/{broadcastId}/pause', path));
      if (what === 'resume') return unwrap(await api.POST('/v1/broadcasts/{broadcastId}/resume', path));
      return unwrap(await api.POST('/v1/broadcasts/{broadcastId}/cancel', path));
    },
    onSuccess: (b, what) => {
      qc.setQueryData(broadcastKeys.detail(broadcast.id), b);
      setCanceling(false);
      toast.success(what === 'pause' ? 'Paused: nothing new goes out.' : what === 'resume' ? 'Resumed.' : 'Canceled: undelivered messages will not be sent.');
    },
    onError: (err) => toast.error(problemOf(err).message ?? 'That did not work.'),
  });
  const total = s?.recipients ?? 0;
  const done = total - (s?.queued ?? 0);
  const editable = can('write:broadcasts');
  return (
    <section className="card stack" aria-labelledby="progress-h">
      <div className="card-header">
        <h2 id="progress-h">{broadcast.status === 'PAUSED' ? 'Paused' : 'Sending'}</h2>
        {editable && (
          <div className="row">
            {broadcast.status === 'SENDING' ? <Button onClick={() => act.mutate('pause')} loading={act.isPending && act.variables === 'pause'}>Pause</Button>
              : <Button variant="primary" onClick={() => act.mutate('resume')} loading={act.isPending && act.variables === 'resume'}>Resume</Button>}
            <Button variant="danger" onClick={() => setCanceling(true)}>Cancel sending</Button>
          </div>
        )}
      </div>
      {broadcast.status === 'PAUSED' && broadcast.pausedReason && <div className="callout callout-warning" role="status">Paused: {broadcast.pausedReason}</div>}
      <p aria-live="polite"><strong>{formatNumber(done)}</strong> of <strong>{formatNumber(total)}</strong> handled ({percent(done, total)}). Updated every 2 seconds.</p>
      {s ? (
        <div className="stack-sm">
          <Bar label="Queued" value={s.queued} total={total} tone="info" />
          <Bar label="Sent" value={s.sent} total={total} tone="success" />
          <Bar label="Failed" value={s.failed} total={total} tone="danger" />
          <Bar label="Bounced" value={s.bounced} total={total} tone="warning" />
        </div>
      ) : <Skeleton lines={4} />}
      <ConfirmDialog open={canceling} title="Cancel this broadcast?" danger confirmLabel="Cancel sending" busy={act.isPending} onClose={() => setCanceling(false)} onConfirm={() => act.mutate('cancel')}>
        <p>Messages already sent stay sent; the {formatNumber(s?.queued ?? 0)} still queued will not go out. A canceled broadcast cannot be resumed.</p>
      </ConfirmDialog>
    </section>
  );
}

/* ------------------------------------------------------------------ Report */

function Stat({ label, value, sub }: { label: string; value: string; sub?: string }) {
  return <div className="stat card-stat"><span className="stat-value">{value}</span><span className="stat-label">{label}</span>{sub && <span className="muted small">{sub}</span>}</div>;
}

function TimelineCard({ broadcastId }: { broadcastId: string }) {
  const [bucket, setBucket] = useState<'hour' | 'day'>('hour');
  const q = useQuery({
    queryKey: broadcastKeys.timeline(broadcastId, bucket),
    queryFn: async () => unwrap(await api.GET('/v1/broadcasts/{broadcastId}/timeline', { params: { path: { broadcastId }, query: { bucket } } })),
  });
  const chart = useMemo(() => {
    if (!q.data || q.data.data.length === 0) return null;
    const rows = q.data.data;
    // The API leaves empty buckets out: the chart gets every bucket from one before the first to one after
    // the last (at most 500), zeros included, so that a single busy hour does not stretch the axis over years.
    const step = bucket === 'hour' ? 3_600_000 : 86_400_000;
    const byTime = new Map(rows.map((r) => [new Date(r.at).getTime(), r]));
    const first = new Date(rows[0]!.at).getTime() - step;
    const last = Math.min(new Date(rows[rows.length - 1]!.at).getTime() + step, first + 500 * step);
    const times: number[] = [];
    for (let t = first; t <= last; t += step) times.push(t);
    const pick = (k: 'sent' | 'opens' | 'clicks' | 'bounces') => times.map((t) => byTime.get(t)?.[k] ?? 0);
    return {
      times: times.map((t) => t / 1000),
      series: [
        { label: 'Sent', values: pick('sent'), color: '#2f4fd6' },
        { label: 'Opens', values: pick('opens'), color: '#17703a' },
        { label: 'Clicks', values: pick('clicks'), color: '#8a5300' },
        { label: 'Bounces', values: pick('bounces'), color: '#b42318' },
      ],
      rows,
    };
  }, [q.data, bucket]);
  return (
    <section className="card stack-sm" aria-labelledby="timeline-h">
      <div className="card-header">
        <h2 id="timeline-h">Over time</h2>
        <div className="row" role="group" aria-label="Bucket size">
          <Button size="sm" variant={bucket === 'hour' ? 'primary' : 'secondary'} aria-pressed={bucket === 'hour'} onClick={() => setBucket('hour')}>By hour</Button>
          <Button size="sm" variant={bucket === 'day' ? 'primary' : 'secondary'} aria-pressed={bucket === 'day'} onClick={() => setBucket('day')}>By day</Button>
        </div>
      </div>
      {q.isPending ? <Skeleton lines={6} /> : q.isError ? <ErrorState error={q.error} onRetry={() => void q.refetch()} /> : !chart ? <EmptyState title="Nothing to chart yet" /> : (
        <>
          <TimeChart times={chart.times} series={chart.series} label={`Sent, opens, clicks and bounces per ${bucket} (UTC), ${chart.rows.length} ${bucket}s with activity.`} />
          <details>
            <summary>The numbers as a table</summary>
            <Table caption={`Per ${bucket}`} rowKey={(r) => r.at} rows={chart.rows} columns={[
              { key: 'at', header: bucket === 'hour' ? 'Hour' : 'Day', cell: (r) => formatDateTime(r.at) },
              { key: 'sent', header: 'Sent', numeric: true, cell: (r) => formatNumber(r.sent) },
              { key: 'opens', header: 'Opens', numeric: true, cell: (r) => formatNumber(r.opens) },
              { key: 'clicks', header: 'Clicks', numeric: true, cell: (r) => formatNumber(r.clicks) },
              { key: 'bounces', header: 'Bounces', numeric: true, cell: (r) => formatNumber(r.bounces) },
            ]} />
          </details>
        </>
      )}
    </section>
  );
}

function LinksCard({ broadcastId }: { broadcastId: string }) {
  const q = useQuery({
    queryKey: broadcastKeys.links(broadcastId),
    queryFn: async () => unwrap(await api.GET('/v1/broadcasts/{broadcastId}/links', { params: { path: { broadcastId } } })),
  });
  type Link = NonNullable<typeof q.data>['data'][number];
  const columns: Column<Link>[] = [
    { key: 'url', header: 'Link', cell: (l) => <span className="cell-value">{l.url}</span> },
    { key: 'clicks', header: 'Clicks', numeric: true, cell: (l) => formatNumber(l.clicks) },
    { key: 'unique', header: 'Unique', numeric: true, cell: (l) => formatNumber(l.uniqueClicks) },
  ];
  return (
    <section className="card stack-sm" aria-labelledby="links-h">
      <h2 id="links-h">Link clicks</h2>
      <QueryState query={q}>
        {(data) => data.data.length === 0 ? <EmptyState title="No clicks yet">Clicks by people show here; link scanners are left out.</EmptyState>
          : <Table columns={columns} rows={data.data} rowKey={(l) => l.url} caption="Clicks per link" />}
      </QueryState>
    </section>
  );
}

const DELIVERY_TONES: Record<DeliveryStatus, 'success' | 'danger' | 'warning' | 'info' | 'neutral'> = {
  SENT: 'success', FAILED: 'danger', BOUNCED: 'danger', QUEUED: 'info', SENDING: 'info', PAUSED: 'warning', CANCELED: 'neutral', SKIPPED: 'neutral',
};

function DeliveriesCard({ broadcastId, live }: { broadcastId: string; live: boolean }) {
  const [status, setStatus] = useState<DeliveryStatus | ''>('');
  const list = useCursorList<Delivery>(broadcastKeys.deliveries(broadcastId, status, live), async (cursor) =>
    unwrap(await api.GET('/v1/broadcasts/{broadcastId}/deliveries', { params: { path: { broadcastId }, query: { cursor, limit: 50, ...(status ? { status } : {}) } } })),
  { refetchInterval: live ? 5000 : false });
  const columns: Column<Delivery>[] = [
    { key: 'email', header: 'Recipient', cell: (r) => (r.contactId ? <Link to={`/contacts/${r.contactId}`} className="break">{r.email}</Link> : <span className="break">{r.email}</span>) },
    { key: 'status', header: 'Status', cell: (r) => <StatusBadge status={r.status} tone={DELIVERY_TONES[r.status]} /> },
    { key: 'attempts', header: 'Attempts', numeric: true, cell: (r) => r.attempts },
    { key: 'when', header: 'Sent', cell: (r) => <span className="nowrap">{formatDateTime(r.sentAt)}</span> },
    { key: 'reply', header: 'Last reply', cell: (r) => <span className="cell-value">{r.lastError ?? r.smtpResponse ?? '—'}</span> },
  ];
  return (
    <section className="card stack-sm" aria-labelledby="deliveries-h">
      <div className="card-header">
        <h2 id="deliveries-h">Deliveries</h2>
        <Select label="Status" value={status} onChange={(e) => setStatus(e.target.value as DeliveryStatus | '')}
          options={[{ value: '', label: 'Any' }, ...(['SENT', 'QUEUED', 'SENDING', 'FAILED', 'BOUNCED', 'PAUSED', 'CANCELED', 'SKIPPED'] as const).map((s) => ({ value: s, label: s.charAt(0) + s.slice(1).toLowerCase() }))]} />
      </div>
      <CursorTable list={list} columns={columns} rowKey={(r) => r.id} caption="Deliveries, one per recipient" empty={status ? 'No deliveries with this status' : 'No deliveries'} />
    </section>
  );
}

function Report({ broadcast }: { broadcast: Broadcast }) {
  const s = broadcast.stats;
  return (
    <div className="stack">
      {broadcast.status === 'CANCELED' && <div className="callout callout-warning">This broadcast was canceled; the report covers what went out before.</div>}
      {broadcast.status === 'FAILED' && <div className="callout callout-danger">This broadcast failed. The deliveries below say why.</div>}
      {s ? (
        <section className="card" aria-labelledby="stats-h">
          <h2 id="stats-h">Results</h2>
          <div className="stats-row report-stats">
            <Stat label="Recipients" value={formatNumber(s.recipients)} sub={s.outbox ? `${formatNumber(s.outbox)} only written to the outbox` : undefined} />
            <Stat label="Sent" value={formatNumber(s.sent)} sub={percent(s.sent, s.recipients)} />
            <Stat label="Open rate" value={percent(s.uniqueOpens, s.sent)} sub={`${formatNumber(s.uniqueOpens)} unique · ${formatNumber(s.opened)} opens`} />
            <Stat label="Click rate" value={percent(s.uniqueClicks, s.sent)} sub={`${formatNumber(s.uniqueClicks)} unique · ${formatNumber(s.clicked)} clicks`} />
            <Stat label="Machine opens" value={formatNumber(s.machineOpens)} sub="privacy proxies, scanners: not counted above" />
            <Stat label="Bounces" value={formatNumber(s.bounced)} sub={`${percent(s.bounced, s.recipients)} · ${formatNumber(s.softBounced)} soft`} />
            <Stat label="Failed" value={formatNumber(s.failed)} sub={percent(s.failed, s.recipients)} />
            <Stat label="Complaints" value={formatNumber(s.complained)} sub={percent(s.complained, s.sent)} />
            <Stat label="Unsubscribes" value={formatNumber(s.unsubscribed)} sub={percent(s.unsubscribed, s.sent)} />
          </div>
        </section>
      ) : <Skeleton lines={3} />}
      <TimelineCard broadcastId={broadcast.id} />
      <LinksCard broadcastId={broadcast.id} />
      <DeliveriesCard broadcastId={broadcast.id} live={false} />
    </div>
  );
}

/* ------------------------------------------------------------------ Page */

export default function BroadcastDetail() {
  const { broadcastId = '' } = useParams();
  const q = useQuery({
    queryKey: broadcastKeys.detail(broadcastId),
    queryFn: async () => unwrap(await api.GET('/v1/broadcasts/{broadcastId}', { params: { path: { broadcastId } } })),
    refetchInterval: (query) => (query.state.data && LIVE.has(query.state.data.status) ? 2000 : query.state.data?.status === 'SCHEDULED' ? 15_000 : false),
  });
  const b = q.data;
  const description = b && (
    <span className="row">
      <StatusBadge status={b.status} />
      {b.sentAt && <span className="muted small">sent {formatDateTime(b.sentAt)}</span>}
      {b.status === 'SCHEDULED' && b.sendAt && <span className="muted small">for {formatDateTime(b.sendAt)}</span>}
      {!b.sentAt && b.status !== 'SCHEDULED' && <span className="muted small">created {formatDateTime(b.createdAt)}</span>}
    </span>
  );
  return (
    <>
      <PageHeader title={b?.name ?? 'Broadcast'} description={description} back={{ to: '/broadcasts', label: 'Broadcasts' }} />
      <QueryState query={q} skeleton={10}>
        {(broadcast) => EDITABLE.has(broadcast.status) ? <Composer key={broadcast.id} broadcast={broadcast} />
          : LIVE.has(broadcast.status) ? (
            <div className="stack">
              <Progress broadcast={broadcast} />
              <DeliveriesCard broadcastId={broadcast.id} live />
            </div>
          ) : <Report broadcast={broadcast} />}
      </QueryState>
    </>
  );
}
