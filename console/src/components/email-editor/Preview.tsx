/**
 * The live preview: the document as the send renders it (POST /v1/email-documents/render, a moment after the last
 * change), personalised for a chosen contact, in a fully sandboxed iframe (frame.ts), as a desktop inbox (scaled to
 * fit the panel) or a phone (390 px), light or dark; the renderer's warnings beside it, each naming its block.
 */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useId, useMemo, useRef, useState } from 'react';
import { api, unwrap } from '../../api/client';
import { emailDocumentKeys } from '../../api/keys';
import { useRecentContacts } from '../../lib/automation-hooks';
import { useDebounced } from '../../lib/audience';
import { cspNonce } from '../../lib/csp';
import { Button } from '../Button';
import { Select } from '../Field';
import { ErrorState, Spinner } from '../States';
import { renderDocument } from './api';
import type { BlockDocument } from './document';
import { frameDocument } from './frame';
import { BLOCK_LABELS, blockAt, locate } from './operations';

const DESKTOP = 640;
const PHONE = 390;

function contactLabel(c: { email: string; firstName?: string | null; lastName?: string | null }): string {
  const name = [c.firstName, c.lastName].filter(Boolean).join(' ');
  return name ? `${name} — ${c.email}` : c.email;
}

export function LivePreview({
  doc,
  sent,
  contactId,
  onContactId,
  onSelectBlock,
}: {
  /** The editor's document (its ids name the blocks of `sent`). */
  doc: BlockDocument;
  /** What is rendered: the document as a save sends it (operations.ts forSaving). */
  sent: BlockDocument;
  contactId: string;
  onContactId: (id: string) => void;
  onSelectBlock: (id: string) => void;
}) {
  const [device, setDevice] = useState<'desktop' | 'phone'>('desktop');
  const [dark, setDark] = useState(false);
  const json = useMemo(() => JSON.stringify(sent), [sent]);
  const debounced = useDebounced(json, 600);
  const rendered = useQuery({
    queryKey: emailDocumentKeys.render(debounced, contactId),
    queryFn: ({ signal }) => renderDocument(JSON.parse(debounced) as BlockDocument, contactId, signal),
    placeholderData: keepPreviousData,
    // Once more after a failure (a request cut short, a busy server): a preview that failed once stayed the previous
    // contact's until the next edit.
    retry: 1,
    staleTime: 60_000,
  });
  const sentForWarnings = useMemo(() => JSON.parse(debounced) as BlockDocument, [debounced]);

  const recent = useRecentContacts();
  const [found, setFound] = useState<
    { id: string; email: string; firstName?: string | null; lastName?: string | null }[]
  >([]);
  const [email, setEmail] = useState('');
  const [findError, setFindError] = useState<string | null>(null);
  const [finding, setFinding] = useState(false);
  const find = async () => {
    const e = email.trim();
    if (!e) return;
    setFinding(true);
    setFindError(null);
    try {
      const hit = unwrap(await api.GET('/v1/contacts', { params: { query: { email: e, limit: 1 } } })).data[0];
      if (!hit) setFindError(`No contact has the address ${e}.`);
      else {
        setFound((xs) => [hit, ...xs.filter((x) => x.id !== hit.id)]);
        onContactId(hit.id);
        setEmail('');
      }
    } catch {
      setFindError('The search did not work; try again.');
    } finally {
      setFinding(false);
    }
  };
  const options = [...found, ...(recent.data ?? []).filter((c) => !found.some((f) => f.id === c.id))];

  const html = rendered.data?.html;
  const srcDoc = useMemo(() => (html ? frameDocument(html, { dark, nonce: cspNonce() }) : ''), [html, dark]);

  // The desktop view is 640 px wide, scaled down to fit the panel.
  const box = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setWidth(el.clientWidth));
    ro.observe(el);
    setWidth(el.clientWidth);
    return () => ro.disconnect();
  }, []);
  const frameWidth = device === 'desktop' ? DESKTOP : PHONE;
  // The phone's frame is drawn around the screen (a 6 px border), the desktop's with 1 px.
  const border = device === 'desktop' ? 1 : 6;
  const scale = width && width < frameWidth + 2 * border ? (width - 2 * border) / frameWidth : 1;
  const frameHeight = device === 'desktop' ? 720 : 700;
  const findId = useId();

  const warnings = rendered.data?.warnings ?? [];
  return (
    <section className="stack-sm ee-preview" aria-labelledby="ee-preview-h">
      <div className="card-header">
        <h3 id="ee-preview-h" className="ee-panel-title">
          Preview
        </h3>
        {rendered.isFetching && <Spinner size="sm" label="Rendering the preview…" />}
      </div>
      <div className="row ee-preview-modes">
        <div className="ee-segmented" role="group" aria-label="Screen">
          <button type="button" aria-pressed={device === 'desktop'} onClick={() => setDevice('desktop')}>
            Desktop
          </button>
          <button type="button" aria-pressed={device === 'phone'} onClick={() => setDevice('phone')}>
            Phone
          </button>
        </div>
        <div className="ee-segmented" role="group" aria-label="Colours">
          <button type="button" aria-pressed={!dark} onClick={() => setDark(false)}>
            Light
          </button>
          <button type="button" aria-pressed={dark} onClick={() => setDark(true)}>
            Dark
          </button>
        </div>
      </div>
      <Select
        label="Personalise for"
        value={contactId}
        onChange={(e) => onContactId(e.target.value)}
        disabled={recent.isPending}
        options={[
          { value: '', label: 'Sample data (no contact)' },
          ...options.map((c) => ({ value: c.id, label: contactLabel(c) })),
        ]}
        hint="Merge tags filled in as this contact will get them."
      />
      <div className="field">
        <label htmlFor={findId}>Find a contact by email</label>
        <div className="row ee-find">
          <input
            id={findId}
            className="input"
            type="email"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') {
                e.preventDefault();
                void find();
              }
            }}
            placeholder="ada@example.com"
            aria-describedby={findError ? `${findId}-error` : undefined}
          />
          <Button size="sm" onClick={() => void find()} loading={finding} disabled={!email.trim()}>
            Find
          </Button>
        </div>
        {findError && (
          <div className="error" id={`${findId}-error`} role="alert">
            {findError}
          </div>
        )}
      </div>
      <div className="ee-frame-box" ref={box}>
        {rendered.isError && !html ? (
          <ErrorState
            error={rendered.error}
            title="The preview could not be rendered"
            onRetry={() => void rendered.refetch()}
          />
        ) : (
          <div
            className="ee-frame-wrap"
            style={{ height: `${frameHeight * scale}px`, width: `${frameWidth * scale}px` }}
            data-device={device}
          >
            {srcDoc && (
              <iframe
                className="ee-frame"
                title={`Email preview, ${device}, ${dark ? 'dark' : 'light'}`}
                sandbox=""
                srcDoc={srcDoc}
                style={{
                  width: `${frameWidth}px`,
                  height: `${frameHeight}px`,
                  transform: scale < 1 ? `scale(${scale})` : undefined,
                  colorScheme: dark ? 'dark' : 'light',
                }}
              />
            )}
          </div>
        )}
      </div>
      {rendered.isError && html && (
        <p className="error small" role="alert">
          The newest changes could not be rendered; this is the last version that could.{' '}
          <button type="button" className="ee-link-button" onClick={() => void rendered.refetch()}>
            Try again
          </button>
        </p>
      )}
      {warnings.length > 0 && (
        <div className="stack-sm" aria-labelledby="ee-warnings-h">
          <h4 id="ee-warnings-h" className="ee-panel-title">
            {warnings.length === 1 ? '1 thing to look at' : `${warnings.length} things to look at`}
          </h4>
          <ul className="ee-warnings">
            {warnings.map((w, i) => {
              const at = blockAt(sentForWarnings, w.path);
              const block = at ? locate(doc, at.id) : null;
              return (
                <li key={`${w.path}-${w.code}-${i}`}>
                  {block ? (
                    <button type="button" className="ee-link-button" onClick={() => onSelectBlock(at!.id)}>
                      {BLOCK_LABELS[block.block.type]}
                      {block.parent ? ' (in columns)' : ` (block ${block.index + 1})`}
                    </button>
                  ) : (
                    <strong>Email</strong>
                  )}
                  : {w.message}
                </li>
              );
            })}
          </ul>
        </div>
      )}
    </section>
  );
}
