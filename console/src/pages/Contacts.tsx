/**
 * Contacts: a table paged by cursor (Previous/Next; a page is 50 contacts and nothing loads them all), the
 * exact email search (the API's ?email= filter, normalised here as the server does), status and topic
 * filters, the CSV/NDJSON import with its upload progress and per-row errors, and the CSV export of a segment.
 */
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, ApiError, requestHeaders, unwrap, type Problem } from '../api/client';
import { contactKeys } from '../api/keys';
import { useCan } from '../api/session';
import { Button, buttonClass, Dialog, EmptyState, ErrorState, ErrorSummary, Input, PageHeader, Select, Skeleton, StatusBadge, Table, type Column } from '../components';
import { CONTACT_STATUSES, CONTACT_TONES, statusLabel, useSegments, useTopics, type Contact, type ContactStatus, type ImportJob } from '../lib/audience';
import { formatDateTime, formatNumber } from '../lib/format';
import { problemOf } from '../lib/forms';
import '../styles/audience.css';

const PAGE = 50;

/* ------------------------------------------------------------------ Import */

type UploadState =
  | { phase: 'idle' }
  | { phase: 'uploading'; loaded: number; total: number }
  | { phase: 'processing' }
  | { phase: 'done'; job: ImportJob }
  | { phase: 'error'; message: string; job?: ImportJob };

function contentTypeOf(file: File): string | null {
  const name = file.name.toLowerCase();
  if (name.endsWith('.csv') || file.type === 'text/csv') return 'text/csv';
  if (name.endsWith('.ndjson') || name.endsWith('.jsonl') || file.type === 'application/x-ndjson') return 'application/x-ndjson';
  return null;
}

/** POST /v1/contacts/imports by XMLHttpRequest, whose upload events give the progress bar. */
function upload(file: File, type: string, onProgress: (loaded: number, total: number) => void, onSent: () => void): { promise: Promise<ImportJob>; abort: () => void } {
  const xhr = new XMLHttpRequest();
  const promise = new Promise<ImportJob>((resolve, reject) => {
    xhr.open('POST', '/v1/contacts/imports');
    xhr.withCredentials = true;
    const headers = new Headers({ Accept: 'application/json' });
    requestHeaders('POST', headers);
    headers.forEach((v, k) => xhr.setRequestHeader(k, v));
    xhr.setRequestHeader('Content-Type', `${type}; charset=utf-8`);
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.upload.onload = () => onSent();
    xhr.onerror = () => reject(new Error('The upload failed: the connection was lost.'));
    xhr.onabort = () => reject(new Error('The upload was stopped.'));
    xhr.onload = () => {
      let body: unknown;
      try {
        body = xhr.responseText ? JSON.parse(xhr.responseText) : undefined;
      } catch {
        body = { detail: xhr.responseText.slice(0, 200) };
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(body as ImportJob);
      else reject(new ApiError(xhr.status, (body as Problem) ?? {}));
    };
    xhr.send(file);
  });
  return { promise, abort: () => xhr.abort() };
}

function ImportResult({ job }: { job: ImportJob }) {
  const columns: Column<ImportJob['errors'][number]>[] = [
    { key: 'line', header: 'Line', numeric: true, cell: (e) => e.line },
    { key: 'reason', header: 'Why it was skipped', cell: (e) => e.reason },
  ];
  return (
    <div className="stack-sm">
      <div className={`callout ${job.status === 'COMPLETED' ? (job.skipped ? 'callout-warning' : 'callout-success') : 'callout-danger'}`} role="status">
        {job.status === 'COMPLETED' ? <strong>Import finished.</strong> : <strong>The import stopped: {job.error}</strong>}
        {' '}{formatNumber(job.total)} rows read: {formatNumber(job.created)} created, {formatNumber(job.updated)} updated, {formatNumber(job.skipped)} skipped
        {job.suppressed > 0 && <>; {formatNumber(job.suppressed)} kept their status because the address is suppressed</>}.
      </div>
      {job.errors.length > 0 && (
        <>
          <h3>Rows skipped</h3>
          <div className="scroll-box"><Table columns={columns} rows={job.errors} rowKey={(e) => `${e.line}:${e.reason}`} caption="Rows skipped by the import" /></div>
          {job.errorsTruncated > 0 && <p className="muted small">And {formatNumber(job.errorsTruncated)} more rows not listed.</p>}
        </>
      )}
    </div>
  );
}

function ImportDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const qc = useQueryClient();
  const fileRef = useRef<HTMLInputElement>(null);
  const abortRef = useRef<(() => void) | null>(null);
  const [file, setFile] = useState<File | null>(null);
  const [fileError, setFileError] = useState<string | null>(null);
  const [state, setState] = useState<UploadState>({ phase: 'idle' });
  const busy = state.phase === 'uploading' || state.phase === 'processing';

  const close = () => {
    if (busy) return;
    setFile(null);
    setFileError(null);
    setState({ phase: 'idle' });
    onClose();
  };

  const start = (e: FormEvent) => {
    e.preventDefault();
    if (!file) { setFileError('Choose a file to import.'); return; }
    const type = contentTypeOf(file);
    if (!type) { setFileError('The file must be CSV (.csv) or NDJSON (.ndjson, .jsonl).'); return; }
    setFileError(null);
    setState({ phase: 'uploading', loaded: 0, total: file.size });
    const { promise, abort } = upload(file, type, (loaded, total) => setState({ phase: 'uploading', loaded, total }), () => setState({ phase: 'processing' }));
    abortRef.current = abort;
    promise.then((job) => {
      setState({ phase: 'done', job });
      void qc.invalidateQueries({ queryKey: contactKeys.all });
    }, (err: unknown) => {
      setState({ phase: 'error', message: problemOf(err).message ?? 'The import failed.' });
    }).finally(() => { abortRef.current = null; });
  };

  const pct = state.phase === 'uploading' && state.total > 0 ? Math.round((state.loaded / state.total) * 100) : state.phase === 'processing' ? 100 : 0;
  return (
    <Dialog open={open} title="Import contacts" onClose={close} busy={busy} footer={
      state.phase === 'done' ? <Button variant="primary" onClick={close}>Done</Button> : (
        <>
          {busy ? <Button onClick={() => abortRef.current?.()} disabled={state.phase !== 'uploading'}>Stop upload</Button> : <Button onClick={close}>Cancel</Button>}
          <Button type="submit" form="import-form" variant="primary" loading={busy}>Import</Button>
        </>
      )
    }>
      <form id="import-form" className="stack" onSubmit={start} noValidate>
        {state.phase === 'error' && <ErrorSummary message={state.message} />}
        {state.phase !== 'done' && (
          <div className="field">
            <label htmlFor="import-file">File</label>
            <input id="import-file" ref={fileRef} type="file" className="input" accept=".csv,.ndjson,.jsonl,text/csv,application/x-ndjson" disabled={busy}
              aria-describedby="import-file-hint" aria-invalid={fileError ? true : undefined}
              onChange={(e) => { setFile(e.target.files?.[0] ?? null); setFileError(null); }} data-autofocus />
            <div className="hint" id="import-file-hint">
              CSV with a header row: <code>email</code> (required), <code>firstName</code>, <code>lastName</code>, <code>status</code>; any other column becomes a property.
              Or NDJSON: one <code>{'{ "email": … }'}</code> object a line. Contacts are created or updated by email.
            </div>
            {fileError && <div className="error" role="alert">{fileError}</div>}
          </div>
        )}
        {busy && (
          <div className="stack-sm">
            <label htmlFor="import-progress" className="small">
              {state.phase === 'uploading' ? `Uploading ${file?.name ?? ''}: ${pct}%` : 'Uploaded; the server is finishing the last rows…'}
            </label>
            <progress id="import-progress" className="progress" max={100} value={pct}>{pct}%</progress>
          </div>
        )}
        {state.phase === 'done' && <ImportResult job={state.job} />}
      </form>
    </Dialog>
  );
}

/* ------------------------------------------------------------------ Export */

function ExportDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const segments = useSegments();
  const [segmentId, setSegmentId] = useState('');
  const href = `/v1/contacts/export${segmentId ? `?segmentId=${encodeURIComponent(segmentId)}` : ''}`;
  return (
    <Dialog open={open} title="Export contacts as CSV" onClose={onClose} footer={
      <>
        <Button onClick={onClose}>Close</Button>
        <a className={buttonClass('primary')} href={href} download onClick={() => setTimeout(onClose, 300)}>Download CSV</a>
      </>
    }>
      <div className="stack">
        {segments.isError ? <ErrorState error={segments.error} onRetry={() => void segments.refetch()} /> : (
          <Select label="Contacts" value={segmentId} onChange={(e) => setSegmentId(e.target.value)} disabled={segments.isPending}
            options={[{ value: '', label: 'Every contact' }, ...(segments.data ?? []).map((s) => ({ value: s.id, label: `Segment: ${s.name}` }))]}
            hint="The file streams as it is written: a large segment takes a while but never stops halfway." data-autofocus />
        )}
        <p className="muted small">Columns: id, email, firstName, lastName, status, suppressed, properties (as JSON), createdAt, updatedAt. Contacts of every status are included.</p>
      </div>
    </Dialog>
  );
}

/* ------------------------------------------------------------------ List */

export default function Contacts() {
  const can = useCan();
  const topics = useTopics();
  const [emailInput, setEmailInput] = useState('');
  const [email, setEmail] = useState('');
  const [status, setStatus] = useState<ContactStatus | ''>('');
  const [topicId, setTopicId] = useState('');
  // The cursors of the pages before this one: Previous pops, Next pushes.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const [importing, setImporting] = useState(false);
  const [exporting, setExporting] = useState(false);

  const q = useQuery({
    queryKey: contactKeys.list({ email, status, topicId, cursor }),
    queryFn: async () => unwrap(await api.GET('/v1/contacts', {
      params: { query: { limit: PAGE, cursor, ...(email ? { email } : {}), ...(status ? { status } : {}), ...(topicId ? { topicId } : {}) } },
    })),
    placeholderData: keepPreviousData,
  });
  const resetPages = () => setCursors([undefined]);
  const search = (e: FormEvent) => {
    e.preventDefault();
    // What the API does to an email before its exact match: trimmed, lower-cased.
    setEmail(emailInput.trim().toLowerCase());
    resetPages();
  };
  const { fields } = problemOf(q.error);
  const emailError = fields['/query/email'] ? 'Enter a whole email address, like ana@example.com: the search matches exact addresses only.' : null;

  const columns: Column<Contact>[] = [
    { key: 'email', header: 'Email', cell: (c) => <Link className="cell-main break" to={`/contacts/${c.id}`}>{c.email}</Link> },
    { key: 'name', header: 'Name', cell: (c) => [c.firstName, c.lastName].filter(Boolean).join(' ') || <span className="muted">—</span> },
    { key: 'status', header: 'Status', cell: (c) => <span className="row"><StatusBadge status={c.status} tone={CONTACT_TONES[c.status]} label={statusLabel(c.status)} />{c.suppressed && <StatusBadge status="suppressed" tone="danger" label="Suppressed" />}</span> },
    { key: 'topics', header: 'Topics', cell: (c) => c.topics.filter((t) => t.subscribed).map((t) => t.name).join(', ') || <span className="muted">—</span> },
    { key: 'created', header: 'Added', cell: (c) => <span className="nowrap">{formatDateTime(c.createdAt)}</span> },
  ];
  const filtered = Boolean(email || status || topicId);
  const page = cursors.length;

  return (
    <>
      <PageHeader title="Contacts" description="Everyone who signed up, was imported or added through the API." actions={
        <>
          <Button onClick={() => setExporting(true)}>Export CSV</Button>
          {can('write:contacts') && <Button variant="primary" onClick={() => setImporting(true)}>Import</Button>}
        </>
      } />
      <div className="card filters">
        <form className="filter-search" onSubmit={search} role="search" aria-label="Find a contact by email">
          <Input label="Email address" type="search" inputMode="email" autoComplete="off" placeholder="ana@example.com" value={emailInput}
            onChange={(e) => { setEmailInput(e.target.value); if (!e.target.value && email) { setEmail(''); resetPages(); } }}
            hint="Exact match on the whole address (case does not matter)." error={emailError} />
          <Button type="submit">Search</Button>
        </form>
        <Select label="Status" value={status} onChange={(e) => { setStatus(e.target.value as ContactStatus | ''); resetPages(); }}
          options={[{ value: '', label: 'Any status' }, ...CONTACT_STATUSES.map((s) => ({ value: s, label: statusLabel(s) }))]} />
        <Select label="Subscribed to topic" value={topicId} onChange={(e) => { setTopicId(e.target.value); resetPages(); }} disabled={topics.isPending}
          options={[{ value: '', label: 'Any topic' }, ...(topics.data ?? []).map((t) => ({ value: t.id, label: t.name }))]} />
      </div>

      {q.isPending ? <Skeleton lines={8} /> : q.isError && !emailError ? <ErrorState error={q.error} onRetry={() => void q.refetch()} /> : !q.data || q.data.data.length === 0 ? (
        <div className="card">
          {filtered || emailError ? (
            <EmptyState title={email ? `No contact has the address ${email}` : 'No contacts match these filters'} action={<Button onClick={() => { setEmail(''); setEmailInput(''); setStatus(''); setTopicId(''); resetPages(); }}>Clear the search and filters</Button>}>
              {email ? 'The search finds whole addresses only.' : 'Try another status or topic.'}
            </EmptyState>
          ) : (
            <EmptyState title="No contacts yet" action={can('write:contacts') && <Button variant="primary" onClick={() => setImporting(true)}>Import contacts</Button>}>
              Contacts arrive through your forms, imports and the API.
            </EmptyState>
          )}
        </div>
      ) : (
        <div className="stack-sm contacts-list" aria-busy={q.isFetching || undefined}>
          <Table columns={columns} rows={q.data.data} rowKey={(c) => c.id} caption={`Contacts, page ${page}`} />
          <nav className="pager" aria-label="Contact pages">
            <Button onClick={() => setCursors((c) => c.slice(0, -1))} disabled={page === 1 || q.isFetching}>← Previous</Button>
            <span className="muted small" aria-live="polite">Page {page}{q.isFetching ? ' (loading…)' : ''}</span>
            <Button onClick={() => q.data?.nextCursor && setCursors((c) => [...c, q.data!.nextCursor ?? undefined])} disabled={!q.data.nextCursor || q.isFetching}>Next →</Button>
          </nav>
        </div>
      )}
      <ImportDialog open={importing} onClose={() => setImporting(false)} />
      <ExportDialog open={exporting} onClose={() => setExporting(false)} />
    </>
  );
}
