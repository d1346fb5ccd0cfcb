/**
 * The domain page's DMARC card (GET /v1/domains/{id}/dmarc): what receivers reported of mail sent with the domain in
 * From over the last 7, 30 or 90 days: how much passed DMARC, which addresses sent as the domain, and why the failing
 * ones failed. An address that fails is a relay not set up for the domain (its DKIM or SPF) or someone spoofing it.
 */
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { domainKeys } from '../../api/keys';
import type { paths } from '../../api/generated/schema';
import { CopyField, EmptyState, QueryState, Select, StatusBadge } from '../../components';
import { count, formatDate, formatNumber, percent } from '../../lib/format';
import '../../styles/deliverability.css';

type Report = paths['/v1/domains/{domainId}/dmarc']['get']['responses'][200]['content']['application/json'];
type Source = Report['sources'][number];

const RANGES = [
  { value: '7', label: 'Last 7 days' },
  { value: '30', label: 'Last 30 days' },
  { value: '90', label: 'Last 90 days' },
];

const isoDay = (t: number) => new Date(t).toISOString().slice(0, 10);

function sourceStatus(s: Source) {
  if (s.fail === 0) return <StatusBadge status="ok" label="Passes" />;
  if (s.pass === 0) return <StatusBadge status="critical" label="Fails" />;
  return <StatusBadge status="warning" label={`${percent(s.fail, s.messages)} fail`} />;
}

/** Quarantined and refused messages of a source, in words (empty when none). */
function handled(s: Source): string {
  return [
    s.quarantined ? `${formatNumber(s.quarantined)} to spam` : '',
    s.rejected ? `${formatNumber(s.rejected)} refused` : '',
  ]
    .filter(Boolean)
    .join(' · ');
}

/**
 * The sources, one row each. A table of its own rather than the shared one: on a phone each row is a block of labelled
 * lines (deliverability.css), so why an address fails is read without scrolling sideways; where it must still scroll,
 * the scroll area is a focusable, labelled region (the cells hold no control that would take focus).
 */
function SourcesTable({ sources, domainName }: { sources: Source[]; domainName: string }) {
  const caption = `Addresses that sent mail as ${domainName}`;
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label={caption}>
      <table className="table dmarc-table">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Sending address</th>
            <th scope="col" className="num">
              Messages
            </th>
            <th scope="col">DMARC</th>
            <th scope="col" className="num wide-only">
              SPF aligned
            </th>
            <th scope="col" className="num wide-only">
              DKIM aligned
            </th>
            <th scope="col">Why it fails</th>
          </tr>
        </thead>
        <tbody>
          {sources.map((s) => (
            <tr key={s.ip}>
              <td>
                <div className="stack-sm">
                  <span className="cell-value cell-main">{s.ip}</span>
                  <span className="muted small">
                    {s.reporters.join(', ')} ·{' '}
                    {s.firstDay === s.lastDay
                      ? formatDate(s.firstDay)
                      : `${formatDate(s.firstDay)} – ${formatDate(s.lastDay)}`}
                  </span>
                </div>
              </td>
              <td className="num" data-label="Messages">
                {formatNumber(s.messages)}
              </td>
              <td data-label="DMARC">
                <div className="stack-sm">
                  {sourceStatus(s)}
                  {handled(s) && <span className="muted small">{handled(s)}</span>}
                </div>
              </td>
              <td className="num wide-only">{percent(s.spfAligned, s.messages)}</td>
              <td className="num wide-only">{percent(s.dkimAligned, s.messages)}</td>
              <td data-label="Why it fails">
                {s.why.length === 0 ? (
                  <span className="muted small">—</span>
                ) : (
                  <ul className="plain-list small">
                    {s.why.map((w) => (
                      <li key={w.reason}>
                        {w.reason} <span className="muted">({count(w.messages, 'message')})</span>
                      </li>
                    ))}
                  </ul>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function DmarcReports({ domainId, domainName }: { domainId: string; domainName: string }) {
  const [days, setDays] = useState('30');
  const to = isoDay(Date.now());
  const from = isoDay(Date.now() - (Number(days) - 1) * 86_400_000);
  const q = useQuery({
    queryKey: domainKeys.dmarc(domainId, from, to),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/domains/{domainId}/dmarc', {
          params: { path: { domainId }, query: { from, to } },
        }),
      ),
  });
  const rua = `dmarc@bounces.${domainName}`;
  return (
    <section className="card stack-sm" aria-labelledby="dmarc-h">
      <div className="card-header">
        <h2 id="dmarc-h">DMARC reports</h2>
        <Select
          label="Period"
          className="field-inline"
          value={days}
          onChange={(e) => setDays(e.target.value)}
          options={RANGES}
        />
      </div>
      <QueryState query={q}>
        {(r) =>
          r.summary.messages === 0 ? (
            <EmptyState title="No DMARC reports for this period">
              Receivers such as Google, Yahoo and Microsoft send a daily report of every address that sent mail as{' '}
              {domainName} when the domain&apos;s DMARC record asks them to. Add <code>rua=mailto:{rua}</code> to the
              TXT record at <code>_dmarc.{domainName}</code>, for example:
            </EmptyState>
          ) : (
            <div className="stack">
              <div className="stats-row">
                <div className="stat">
                  <span className="stat-value">{formatNumber(r.summary.messages)}</span>
                  <span className="stat-label">messages reported</span>
                </div>
                <div className="stat">
                  <span className="stat-value">{percent(r.summary.pass, r.summary.messages)}</span>
                  <span className="stat-label">passed DMARC</span>
                </div>
                <div className="stat">
                  <span className="stat-value">{formatNumber(r.summary.fail)}</span>
                  <span className="stat-label">failed</span>
                </div>
                <div className="stat">
                  <span className="stat-value">{formatNumber(r.summary.quarantined + r.summary.rejected)}</span>
                  <span className="stat-label">sent to spam or refused</span>
                </div>
                <div className="stat">
                  <span className="stat-value">{formatNumber(r.summary.sources)}</span>
                  <span className="stat-label">sending addresses</span>
                </div>
              </div>
              {r.summary.fail > 0 ? (
                <div className="callout callout-warning">
                  {count(r.summary.fail, 'message')} from{' '}
                  {r.sources.filter((s) => s.fail > 0).length === 1
                    ? 'one address'
                    : `${r.sources.filter((s) => s.fail > 0).length} addresses`}{' '}
                  failed DMARC. An address you know is a service not set up for {domainName}: give it a DKIM key of the
                  domain, or a Return-Path under it. One you do not know is sending as you.
                </div>
              ) : (
                <div className="callout callout-success">
                  Everything the receivers saw from {domainName} passed DMARC.
                </div>
              )}
              <SourcesTable sources={r.sources} domainName={domainName} />
              <p className="muted small">
                {count(r.summary.reports, 'report')} from {r.summary.reporters.join(', ')}, {formatDate(r.from)} to{' '}
                {formatDate(r.to)}.
              </p>
            </div>
          )
        }
      </QueryState>
      {q.data?.summary.messages === 0 && (
        <CopyField value={`v=DMARC1; p=none; rua=mailto:${rua}`} what="DMARC record value" />
      )}
    </section>
  );
}
