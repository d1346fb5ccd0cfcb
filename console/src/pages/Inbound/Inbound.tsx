/**
 * Reports to review (GET /v1/inbound): what the bounce processor received and kept instead of applying, newest first,
 * for 30 days: a bounce in a wording it does not know, a report at postmaster@, abuse@ or fbl@ that proves no message
 * of yours, a report whose original names another message than its address, mail at dmarc@ that is not a report.
 * Each row says why; "View" shows the message as it came (its first 256 KiB).
 */
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { inboundKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import type { paths } from '../../api/generated/schema';
import { Button, CursorTable, Dialog, EmptyState, PageHeader, useCursorList, type Column } from '../../components';
import { formatDateTime, formatNumber } from '../../lib/format';
import '../../styles/deliverability.css';

type Kept = paths['/v1/inbound']['get']['responses'][200]['content']['application/json']['data'][number];

/** The first bytes of a kept message as text (latin1 keeps every byte; headers are ASCII). */
function rawText(b64: string, max = 64 * 1024): string {
  const bin = atob(b64);
  const bytes = Uint8Array.from(bin.slice(0, max), (c) => c.charCodeAt(0));
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  return bin.length > max ? `${text}\n\n… (${formatNumber(bin.length - max)} more bytes)` : text;
}

/** Where it arrived, in words: the VERP address of one message, or a fixed mailbox of the bounce domain. */
function arrival(rcptTo: string): string {
  const m = /^([^@+]+)(\+[^@]*)?@/.exec(rcptTo);
  if (!m) return rcptTo;
  if (m[2]) return m[1] === 'unsubscribe' ? 'an unsubscribe address' : "one message's bounce address";
  return `${m[1]}@`;
}

export default function Inbound() {
  const can = useCan();
  const [open, setOpen] = useState<Kept | null>(null);
  const allowed = can('read:contacts');
  const list = useCursorList<Kept>(
    inboundKeys.list(),
    async (cursor) => unwrap(await api.GET('/v1/inbound', { params: { query: { cursor, limit: 50 } } })),
    { enabled: allowed },
  );
  const columns: Column<Kept>[] = [
    {
      key: 'message',
      header: 'Message',
      cell: (k) => (
        <div className="stack-sm">
          <span className="cell-main">{k.subject || '(no subject)'}</span>
          <span className="muted small">
            {formatDateTime(k.receivedAt)} · from{' '}
            {k.mailFrom ? <span className="cell-value">{k.mailFrom}</span> : 'no sender (as bounces come)'} to{' '}
            {arrival(k.rcptTo)}
          </span>
        </div>
      ),
    },
    { key: 'why', header: 'Why it was kept', cell: (k) => <span className="small">{k.reason}</span> },
    {
      key: 'size',
      header: 'Size',
      numeric: true,
      wideOnly: true,
      cell: (k) => <span className="nowrap">{formatNumber(k.size)} B</span>,
    },
    {
      key: 'view',
      header: 'Message',
      hiddenHeader: true,
      cell: (k) => (
        <Button size="sm" onClick={() => setOpen(k)} aria-label={`View the message "${k.subject || 'no subject'}"`}>
          View
        </Button>
      ),
    },
  ];
  return (
    <>
      <PageHeader
        title="Reports to review"
        description="Mail the bounce processor received but did not apply: a bounce it could not read, a complaint that proves no message of yours, mail at postmaster@, abuse@ or dmarc@ that is not a report. Nothing here changed a contact. Kept 30 days."
      />
      {!allowed ? (
        <div className="card">
          <EmptyState title="Not available to your role">Reading kept reports needs access to contacts.</EmptyState>
        </div>
      ) : (
        <CursorTable
          list={list}
          columns={columns}
          rowKey={(k) => k.id}
          caption="Inbound mail kept for review"
          empty={
            <div className="card">
              <EmptyState title="Nothing to review">
                Every bounce, complaint and report that arrived was read and applied (or was an auto-reply).
              </EmptyState>
            </div>
          }
        />
      )}
      <Dialog open={open !== null} title={open?.subject || 'Kept message'} onClose={() => setOpen(null)}>
        {open && (
          <div className="stack-sm">
            <dl className="kv small">
              <dt>Received</dt>
              <dd>{formatDateTime(open.receivedAt)}</dd>
              <dt>To</dt>
              <dd className="cell-value">{open.rcptTo}</dd>
              <dt>From</dt>
              <dd className="cell-value">{open.mailFrom || '<>'}</dd>
              <dt>Why</dt>
              <dd>{open.reason}</dd>
            </dl>
            <pre className="raw-message" tabIndex={0} aria-label="The message as received">
              {rawText(open.raw)}
            </pre>
          </div>
        )}
      </Dialog>
    </>
  );
}
