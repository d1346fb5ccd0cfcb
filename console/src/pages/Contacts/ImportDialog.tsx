/**
 * The CSV/NDJSON import. A CSV's header and first five rows are read in the browser (import-mapping.ts, papaparse)
 * and shown with a choice per column (a contact field, a named property, or left out), guessed from the header
 * names; the file then goes up as it is, with those choices as the `?columns=` map, with the upload's progress and
 * the rows read so far, then the counts in words and the rows skipped by line.
 */
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { api, unwrap, uploadWithProgress, type Upload } from '../../api/client';
import { contactKeys } from '../../api/keys';
import { Button, Dialog, ErrorSummary, Table, type Column } from '../../components';
import type { ImportJob } from '../../lib/audience';
import { formatNumber } from '../../lib/format';
import { describeError } from '../../lib/problems';
import {
  TARGETS,
  checkChoices,
  columnsParam,
  countOf,
  describeChoice,
  guessChoices,
  previewCsv,
  propertyNameFor,
  type Choice,
  type CsvPreview,
  type Target,
} from './import-mapping';

type UploadState =
  | { phase: 'idle' }
  | { phase: 'uploading'; loaded: number; total: number }
  | { phase: 'processing' }
  | { phase: 'done'; job: ImportJob }
  | { phase: 'error'; message: string };

function contentTypeOf(file: File): string | null {
  const name = file.name.toLowerCase();
  if (name.endsWith('.csv') || file.type === 'text/csv') return 'text/csv';
  if (name.endsWith('.ndjson') || name.endsWith('.jsonl') || file.type === 'application/x-ndjson')
    return 'application/x-ndjson';
  return null;
}

/** POST /v1/contacts/imports with the file as it is (and the column map), with the upload's progress. */
function upload(
  file: File,
  type: string,
  columns: Record<string, string | null> | null,
  onProgress: (loaded: number, total: number) => void,
  onSent: () => void,
): Upload<ImportJob> {
  const query = columns ? `?columns=${encodeURIComponent(JSON.stringify(columns))}` : '';
  return uploadWithProgress<ImportJob>(`/v1/contacts/imports${query}`, file, {
    contentType: `${type}; charset=utf-8`,
    onProgress: (loaded, total) => onProgress(loaded, total ?? file.size),
    onSent,
  });
}

/** The counts of a finished (or stopped) import in sentences. */
function ImportSummary({ job }: { job: ImportJob }) {
  const changed = job.created + job.updated;
  return (
    <>
      <p>
        {countOf(job.total, 'row')} read: {countOf(job.created, 'new contact')}, {countOf(job.updated, 'contact')}{' '}
        updated
        {job.skipped > 0 ? `, ${countOf(job.skipped, 'row')} skipped` : ''}.
      </p>
      {job.suppressed > 0 && (
        <p>
          {job.suppressed === 1
            ? 'One of the imported contacts is on the suppression list (its address bounced, complained or was blocked by hand): it kept its status and gets no email.'
            : `${formatNumber(job.suppressed)} of the ${formatNumber(changed)} imported contacts are on the suppression list (their addresses bounced, complained or were blocked by hand): they kept their status and get no email.`}
        </p>
      )}
      {job.skipped > 0 && (
        <p>
          {job.skipped === 1
            ? 'The skipped row was not imported: the table below says why, by its line in the file.'
            : 'Skipped rows were not imported: the table below says why, by their line in the file.'}
        </p>
      )}
    </>
  );
}

function ImportResult({ job, mapping }: { job: ImportJob; mapping: string[] | null }) {
  const columns: Column<ImportJob['errors'][number]>[] = [
    { key: 'line', header: 'Line', numeric: true, cell: (e) => e.line },
    { key: 'reason', header: 'Why it was skipped', cell: (e) => e.reason },
  ];
  return (
    <div className="stack-sm">
      <div
        className={`callout stack-sm import-summary ${job.status === 'COMPLETED' ? (job.skipped ? 'callout-warning' : 'callout-success') : 'callout-danger'}`}
        role="status"
      >
        {job.status === 'COMPLETED' ? (
          <strong>Import finished.</strong>
        ) : (
          <strong>
            The import stopped: {job.error}. The rows before that were imported; fix the file and import it again (the
            same rows are updated, not doubled).
          </strong>
        )}
        <ImportSummary job={job} />
      </div>
      {mapping && (
        <details className="small">
          <summary>How the columns were imported</summary>
          <ul className="import-mapping-done">
            {mapping.map((m) => (
              <li key={m}>{m}</li>
            ))}
          </ul>
        </details>
      )}
      {job.errors.length > 0 && (
        <>
          <h3>{job.errors.length === 1 ? 'Row skipped' : 'Rows skipped'}</h3>
          <div className="scroll-box">
            <Table
              columns={columns}
              rows={job.errors}
              rowKey={(e) => `${e.line}:${e.reason}`}
              caption="Rows skipped by the import"
            />
          </div>
          {job.errorsTruncated > 0 && (
            <p className="muted small">And {countOf(job.errorsTruncated, 'more row')} not listed.</p>
          )}
        </>
      )}
    </div>
  );
}

/** The first rows with, over each column, what it becomes. */
function PreviewTable({ preview, choices }: { preview: CsvPreview; choices: Choice[] }) {
  const columns: Column<{ i: number; cells: string[] }>[] = preview.header.map((h, c) => ({
    key: String(c),
    header: (
      <span className="import-col-head">
        <span className="break">{h || `Column ${c + 1}`}</span>
        <span className={choices[c]?.target === 'skip' ? 'import-col-target muted' : 'import-col-target'}>
          → {describeChoice(choices[c]!)}
        </span>
      </span>
    ),
    cell: (r) => <span className={choices[c]?.target === 'skip' ? 'muted' : undefined}>{r.cells[c] ?? ''}</span>,
  }));
  return (
    <div className="import-preview" role="region" aria-label="The first rows of the file" tabIndex={0}>
      <Table
        columns={columns}
        rows={preview.rows.map((cells, i) => ({ i, cells }))}
        rowKey={(r) => String(r.i)}
        caption="The first rows of the file, with what each column becomes"
      />
    </div>
  );
}

function MappingStep({
  preview,
  choices,
  errors,
  onChange,
  disabled,
}: {
  preview: CsvPreview;
  choices: Choice[];
  errors: (string | null)[];
  onChange: (i: number, c: Choice) => void;
  disabled: boolean;
}) {
  const uid = useId();
  const sample = (c: number) => preview.rows.map((r) => r[c] ?? '').find((v) => v !== '');
  return (
    <fieldset className="import-mapping stack-sm" disabled={disabled}>
      <legend>Match the columns</legend>
      <p className="muted small">
        {preview.rows.length === 0
          ? 'The file has a header but no rows yet.'
          : `The first ${countOf(preview.rows.length, 'row')} of the file, as they will be imported.`}{' '}
        Choose what each column becomes: a contact field, a custom property, or nothing.
      </p>
      <PreviewTable preview={preview} choices={choices} />
      <div className="import-map-head" aria-hidden="true">
        <span>Column in the file</span>
        <span>Becomes</span>
        <span>Property name</span>
      </div>
      <ol className="import-map-list">
        {preview.header.map((h, i) => {
          const c = choices[i]!;
          const name = h || `Column ${i + 1}`;
          const example = sample(i);
          const id = `${uid}-${i}`;
          const error = errors[i];
          return (
            <li key={i} className="import-map-row">
              <div className="import-map-source">
                <strong className="break">{name}</strong>
                <span className="muted small break">{example ? `e.g. ${example}` : 'empty in these rows'}</span>
              </div>
              <div className="field">
                <label className="visually-hidden" htmlFor={`${id}-target`}>
                  Import “{name}” as
                </label>
                <select
                  id={`${id}-target`}
                  className="select"
                  value={c.target}
                  aria-invalid={error && c.target !== 'property' ? true : undefined}
                  aria-describedby={error ? `${id}-error` : undefined}
                  onChange={(e) => {
                    const target = e.target.value as Target;
                    onChange(i, {
                      target,
                      property: c.property || (target === 'property' ? propertyNameFor(h) : ''),
                    });
                  }}
                >
                  {TARGETS.map((t) => (
                    <option key={t.value} value={t.value}>
                      {t.label}
                    </option>
                  ))}
                </select>
              </div>
              {c.target === 'property' && (
                <div className="field">
                  <label className="visually-hidden" htmlFor={`${id}-property`}>
                    Property name for “{name}”
                  </label>
                  <input
                    id={`${id}-property`}
                    className="input"
                    placeholder="property name"
                    value={c.property}
                    autoComplete="off"
                    spellCheck={false}
                    aria-invalid={error ? true : undefined}
                    aria-describedby={error ? `${id}-error` : undefined}
                    onChange={(e) => onChange(i, { target: 'property', property: e.target.value })}
                  />
                </div>
              )}
              {error && (
                <div className="error import-map-error" id={`${id}-error`}>
                  {error}
                </div>
              )}
            </li>
          );
        })}
      </ol>
    </fieldset>
  );
}

export function ImportDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const qc = useQueryClient();
  const abortRef = useRef<(() => void) | null>(null);
  const [file, setFile] = useState<File | null>(null);
  const [fileError, setFileError] = useState<string | null>(null);
  const [preview, setPreview] = useState<CsvPreview | null>(null);
  const [choices, setChoices] = useState<Choice[]>([]);
  const [showErrors, setShowErrors] = useState(false);
  // Each refused attempt moves the focus (and the scroll) to the summary of what is wrong, at the top.
  const [refused, setRefused] = useState(0);
  const summaryRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (refused) summaryRef.current?.focus();
  }, [refused]);
  const [mappingDone, setMappingDone] = useState<string[] | null>(null);
  const [state, setState] = useState<UploadState>({ phase: 'idle' });
  const busy = state.phase === 'uploading' || state.phase === 'processing';

  // While the file goes up (and the server reads it as it arrives), the rows read so far: the running job's counts.
  const running = useQuery({
    queryKey: [...contactKeys.all, 'import-running'],
    queryFn: async () => unwrap(await api.GET('/v1/contacts/imports', { params: { query: { limit: 1 } } })),
    enabled: open && busy,
    refetchInterval: 1000,
    gcTime: 0,
  });
  const runningJob = busy && running.data?.data[0]?.status === 'RUNNING' ? running.data.data[0] : null;

  const reset = () => {
    setFile(null);
    setFileError(null);
    setPreview(null);
    setChoices([]);
    setShowErrors(false);
    setMappingDone(null);
    setState({ phase: 'idle' });
  };
  const close = () => {
    if (busy) return;
    reset();
    onClose();
  };

  const choose = (picked: File | null) => {
    setFile(picked);
    setFileError(null);
    setPreview(null);
    setChoices([]);
    setShowErrors(false);
    if (state.phase === 'error') setState({ phase: 'idle' });
    if (!picked) return;
    const type = contentTypeOf(picked);
    if (!type) {
      setFileError('The file must be CSV (.csv) or NDJSON (.ndjson, .jsonl).');
      return;
    }
    if (type !== 'text/csv') return;
    previewCsv(picked).then(
      (p) => {
        setPreview(p);
        setChoices(guessChoices(p.header, p.rows));
      },
      (err: unknown) => setFileError(err instanceof Error ? err.message : 'The file could not be read.'),
    );
  };

  const check = preview ? checkChoices(preview.header, choices) : { byColumn: [], overall: null };
  const mappingProblems = check.byColumn.filter(Boolean).length + (check.overall ? 1 : 0);

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
    if (type === 'text/csv' && !preview) {
      if (!fileError) setFileError('The file is still being read: try again in a moment.');
      return;
    }
    if (preview && mappingProblems > 0) {
      setShowErrors(true);
      setRefused((n) => n + 1);
      return;
    }
    setFileError(null);
    const columns = preview ? columnsParam(preview.header, choices) : null;
    setMappingDone(
      preview ? preview.header.map((h, i) => `${h || `Column ${i + 1}`} → ${describeChoice(choices[i]!)}`) : null,
    );
    setState({ phase: 'uploading', loaded: 0, total: file.size });
    const { promise, abort } = upload(
      file,
      type,
      columns,
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
  const soFar = runningJob ? ` (${countOf(runningJob.total, 'row')} read so far)` : '';
  return (
    <Dialog
      open={open}
      title="Import contacts"
      onClose={close}
      busy={busy}
      wide={Boolean(preview) && state.phase !== 'done'}
      footer={
        state.phase === 'done' ? (
          <>
            <Button onClick={reset}>Import another file</Button>
            <Button variant="primary" onClick={close}>
              Done
            </Button>
          </>
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
      <form id="import-form" className="stack import-form" onSubmit={start} noValidate>
        {state.phase === 'error' && <ErrorSummary message={state.message} />}
        {showErrors && mappingProblems > 0 && state.phase !== 'done' && (
          <div ref={summaryRef} tabIndex={-1} className="import-problems">
            <ErrorSummary
              message={
                mappingProblems === 1
                  ? 'One thing to fix before the import:'
                  : `${formatNumber(mappingProblems)} things to fix before the import:`
              }
              errors={[
                ...(check.overall ? [check.overall] : []),
                ...preview!.header.flatMap((h, i) =>
                  check.byColumn[i] ? [`${h || `Column ${i + 1}`}: ${check.byColumn[i]}`] : [],
                ),
              ]}
            />
          </div>
        )}
        {state.phase !== 'done' && (
          <div className="field">
            <label htmlFor="import-file">File</label>
            <input
              id="import-file"
              type="file"
              className="input"
              accept=".csv,.ndjson,.jsonl,text/csv,application/x-ndjson"
              disabled={busy}
              aria-describedby="import-file-hint"
              aria-invalid={fileError ? true : undefined}
              onChange={(e) => choose(e.target.files?.[0] ?? null)}
              data-autofocus
            />
            <div className="hint" id="import-file-hint">
              A CSV file with a header row (then you match its columns to contact fields), or NDJSON: one{' '}
              <code>{'{ "email": … }'}</code> object a line. Contacts are created or updated by email address.
            </div>
            {fileError && (
              <div className="error" role="alert">
                {fileError}
              </div>
            )}
          </div>
        )}
        {preview && state.phase !== 'done' && (
          <MappingStep
            preview={preview}
            choices={choices}
            errors={showErrors ? check.byColumn : choices.map(() => null)}
            onChange={(i, c) => setChoices((all) => all.map((x, j) => (j === i ? c : x)))}
            disabled={busy}
          />
        )}
        {busy && (
          <div className="stack-sm">
            <label htmlFor="import-progress" className="small">
              {state.phase === 'uploading'
                ? `Uploading ${file?.name ?? ''}: ${pct}%${soFar}`
                : `Uploaded; the server is finishing the last rows${soFar}…`}
            </label>
            <progress id="import-progress" className="progress" max={100} value={pct}>
              {pct}%
            </progress>
          </div>
        )}
        {state.phase === 'done' && <ImportResult job={state.job} mapping={mappingDone} />}
      </form>
    </Dialog>
  );
}
