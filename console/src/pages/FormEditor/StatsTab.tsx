/** Views, submissions and the conversion rate of the form. */
import { formatNumber, percent } from '../../lib/format';
import type { Form } from '../Forms/form';

export function StatsTab({ form }: { form: Form }) {
  const s = form.stats;
  return (
    <div className="card stack">
      <div className="stats-row">
        <div className="stat">
          <span className="stat-value">{formatNumber(s?.views)}</span>
          <span className="stat-label">Views (hosted page and embeds)</span>
        </div>
        <div className="stat">
          <span className="stat-value">{formatNumber(s?.submissions)}</span>
          <span className="stat-label">Submissions</span>
        </div>
        <div className="stat">
          <span className="stat-value">{percent(s?.submissions, s?.views)}</span>
          <span className="stat-label">Conversion</span>
        </div>
        {form.settings.doubleOptIn && (
          <div className="stat">
            <span className="stat-value">{formatNumber(s?.confirmations)}</span>
            <span className="stat-label">Confirmed ({percent(s?.confirmations, s?.submissions)})</span>
          </div>
        )}
      </div>
      <p className="muted small">
        Views count visits of the hosted page and page views with an embed (once per page view, not per popup opening).
        Submissions held for review are not counted until released.
      </p>
    </div>
  );
}
