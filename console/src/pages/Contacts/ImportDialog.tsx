/** The CSV/NDJSON import: the upload with its progress, then the counts and the rows skipped by line. */
import { useQueryClient } from '@tanstack/react-query';
import { useRef, useState, type FormEvent } from 'react';
import { uploadWithProgress, type Upload } from '../../api/client';
import { contactKeys } from '../../api/keys';
import { Button, Dialog, ErrorSummary, Table, type Column } from '../../components';
import type { ImportJob } from '../../lib/audience';
import { count, formatNumber } from '../../lib/format';
import { describeError } from '../../lib/problems';

type UploadState =
  | { phase: 'idle' }
  | { phase: 'uploading'; loaded: number; total: number }
  | { phase: 'processing' }
  | { phase: 'done'; job: ImportJob }
  | { phase: 'error'; message: string; job?: ImportJob };

function contentTypeOf(file: File): string | null {
  const name = file.name.toLowerCase();
  if (name.endsWith('.csv') || file.type === 'text/csv') return 'text/csv';
  if (name.endsWith('.ndjson') || name.endsWith('.jsonl') || file.type === 'application/x-ndjson')
    return 'application/x-ndjson';
  return null;
}

/** POST /v1/contacts/imports with the file as it is, with the upload's progress. */
function upload(
  file: File,
  type: string,
  onProgress: (loaded: number, total: number) => void,
  onSent: () => void,
): Upload<ImportJob> {
  return uploadWithProgress<ImportJob>('/v1/contacts/imports', file, {
    contentType: `${type}; charset=utf-8`,
    onProgress: (loaded, total) => onProgress(loaded, total ?? file.size),
    onSent,
  });
}

function ImportResult({ job }: { job: ImportJob }) {
  const columns: Column<ImportJob['errors'][number]>[] = [
    { key: 'line', header: 'Line', numeric: true, cell: (e) => e.line },
    { key: 'reason', header: 'Why it was skipped', cell: (e) => e.reason },
  ];
  return (
    <div className="stack-sm">
      <div
        className={`callout ${job.status === 'COMPLETED' ? (job.skipped ? 'callout-warning' : 'callout-success') : 'callout-danger'}`}
        role="status"
      >
        {job.status === 'COMPLETED' ? (
          <strong>Import finished.</strong>
        ) : (
          <strong>The import stopped: {job.error}</strong>
        )}{' '}
        {count(job.total, 'row')} read: {formatNumber(job.created)} created, {formatNumber(job.updated)} updated,{' '}
        {formatNumber(job.skipped)} skipped
        {job.suppressed > 0 && (
          <>; {formatNumber(job.suppressed)} kept their status because the address is suppressed</>
        )}
        .
      </div>
      {job.errors.length > 0 && (
        <>
          <h3>Rows skipped</h3>
          <div className="scroll-box">
            <Table
              columns={columns}
              rows={job.errors}
              rowKey={(e) => `${e.line}:${e.reason}`}
              caption="Rows skipped by the import"
            />
          </div>
          {job.errorsTruncated > 0 && (
            <p className="muted small">And {formatNumber(job.errorsTruncated)} more rows not listed.</p>
          )}
        </>
      )}
    </div>
  );
}

export function ImportDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
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
    if (!file) {
      setFileError('Choose a file to import.');
      return;
    }
    const type = contentTypeOf(file);
    if (!type) {
      setFileError('The file must be CSV (.csv) or NDJSON (.ndjson, .jsonl).');
      return;
    }
    setFileError(null);
    setState({ phase: 'uploading', loaded: 0, total: file.size });
    const { promise, abort } = upload(
      file,
      type,
      (loaded, total) => setState({ phase: 'uploading', loaded, total }),
      () => setState({ phase: 'processing' }),
    );
    abortRef.current = abort;
    promise
      .then(
        (job) => {
          setState({ phase: 'done', job });
          void qc.invalidateQueries({ queryKey: contactKeys.all });
        },
        (err: unknown) => {
          setState({ phase: 'error', message: describeError(err) });
        },
      )
      .finally(() => {
        abortRef.current = null;
      });
  };

  const pct =
    state.phase === 'uploading' && state.total > 0
      ? Math.round((state.loaded / state.total) * 100)
      : state.phase === 'processing'
        ? 100
        : 0;
  return (
    <Dialog
      open={open}
      title="Import contacts"
      onClose={close}
      busy={busy}
      footer={
        state.phase === 'done' ? (
          <Button variant="primary" onClick={close}>
            Done
          </Button>
        ) : (
          <>
            {busy ? (
              <Button onClick={() => abortRef.current?.()} disabled={state.phase !== 'uploading'}>
                Stop upload
              </Button>
            ) : (
              <Button onClick={close}>Cancel</Button>
            )}
            <Button type="submit" form="import-form" variant="primary" loading={busy}>
              Import
            </Button>
          </>
        )
      }
    >
      <form id="import-form" className="stack" onSubmit={start} noValidate>
        {state.phase === 'error' && <ErrorSummary message={state.message} />}
        {state.phase !== 'done' && (
          <div className="field">
            <label htmlFor="import-file">File</label>
            <input
              id="import-file"
              ref={fileRef}
              type="file"
              className="input"
              accept=".csv,.ndjson,.jsonl,text/csv,application/x-ndjson"
              disabled={busy}
              aria-describedby="import-file-hint"
              aria-invalid={fileError ? true : undefined}
              onChange={(e) => {
                setFile(e.target.files?.[0] ?? null);
                setFileError(null);
              }}
              data-autofocus
            />
            <div className="hint" id="import-file-hint">
              CSV with a header row: <code>email</code> (required), <code>firstName</code>, <code>lastName</code>,{' '}
              <code>status</code>; any other column becomes a property. Or NDJSON: one <code>{'{ "email": … }'}</code>{' '}
              object a line. Contacts are created or updated by email.
            </div>
            {fileError && (
              <div className="error" role="alert">
                {fileError}
              </div>
            )}
          </div>
        )}
        {busy && (
          <div className="stack-sm">
            <label htmlFor="import-progress" className="small">
              {state.phase === 'uploading'
                ? `Uploading ${file?.name ?? ''}: ${pct}%`
                : 'Uploaded; the server is finishing the last rows…'}
            </label>
            <progress id="import-progress" className="progress" max={100} value={pct}>
              {pct}%
            </progress>
          </div>
        )}
        {state.phase === 'done' && <ImportResult job={state.job} />}
      </form>
    </Dialog>
  );
}
