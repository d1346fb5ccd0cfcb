/** A sent (or canceled, failed) broadcast's results, over time, per link and per recipient. */
import { Skeleton } from '../../components';
import type { Broadcast } from '../../lib/audience';
import { count, formatNumber, percent } from '../../lib/format';
import { TimelineCard } from './TimelineCard';
import { LinksCard } from './LinksCard';
import { DeliveriesCard } from './DeliveriesCard';
import { AbResultsCard } from './AbResultsCard';
import { ResendCard } from './ResendCard';
import { ArchiveCard } from './ArchiveCard';
import { ZonesTable } from './ZonesTable';

function Stat({ label, value, sub }: { label: string; value: string; sub?: string }) {
  return (
    <div className="stat card-stat">
      <span className="stat-value">{value}</span>
      <span className="stat-label">{label}</span>
      {sub && <span className="muted small">{sub}</span>}
    </div>
  );
}

export function Report({ broadcast }: { broadcast: Broadcast }) {
  const s = broadcast.stats;
  return (
    <div className="stack">
      {broadcast.status === 'CANCELED' && (
        <div className="callout callout-warning">
          This broadcast was canceled; the report covers what went out before.
        </div>
      )}
      {broadcast.status === 'FAILED' && (
        <div className="callout callout-danger">This broadcast failed. The deliveries below say why.</div>
      )}
      {s ? (
        <section className="card" aria-labelledby="stats-h">
          <h2 id="stats-h">Results</h2>
          <div className="stats-row report-stats">
            <Stat
              label="Recipients"
              value={formatNumber(s.recipients)}
              sub={s.outbox ? `${formatNumber(s.outbox)} only written to the outbox` : undefined}
            />
            <Stat label="Sent" value={formatNumber(s.sent)} sub={percent(s.sent, s.recipients)} />
            <Stat
              label="Open rate"
              value={percent(s.uniqueOpens, s.sent)}
              sub={`${formatNumber(s.uniqueOpens)} unique · ${count(s.opened, 'open')}`}
            />
            <Stat
              label="Click rate"
              value={percent(s.uniqueClicks, s.sent)}
              sub={`${formatNumber(s.uniqueClicks)} unique · ${count(s.clicked, 'click')}`}
            />
            <Stat
              label="Machine opens"
              value={formatNumber(s.machineOpens)}
              sub="privacy proxies, scanners: not counted above"
            />
            <Stat
              label="Bounces"
              value={formatNumber(s.bounced)}
              sub={`${percent(s.bounced, s.recipients)} · ${formatNumber(s.softBounced)} soft`}
            />
            <Stat label="Failed" value={formatNumber(s.failed)} sub={percent(s.failed, s.recipients)} />
            <Stat label="Complaints" value={formatNumber(s.complained)} sub={percent(s.complained, s.sent)} />
            <Stat label="Unsubscribes" value={formatNumber(s.unsubscribed)} sub={percent(s.unsubscribed, s.sent)} />
          </div>
          <ZonesTable broadcast={broadcast} />
        </section>
      ) : (
        <Skeleton lines={3} />
      )}
      {broadcast.abTest && <AbResultsCard broadcast={broadcast} />}
      <ResendCard broadcast={broadcast} />
      <TimelineCard broadcastId={broadcast.id} />
      <LinksCard broadcastId={broadcast.id} />
      <DeliveriesCard broadcastId={broadcast.id} live={false} />
      {broadcast.status === 'SENT' && <ArchiveCard broadcast={broadcast} />}
    </div>
  );
}
