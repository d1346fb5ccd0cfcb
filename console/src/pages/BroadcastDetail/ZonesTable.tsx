/** Local-time sending (docs/sending.md): progress per time zone, each with its local send time and sent/total. */
import type { Broadcast } from '../../lib/audience';
import { formatDateTime, formatNumber } from '../../lib/format';
import { timeIn } from '../../lib/zones';

export function ZonesTable({ broadcast }: { broadcast: Broadcast }) {
  const zones = broadcast.stats?.zones;
  if (!zones?.length) return null;
  const now = Date.now();
  return (
    <div className="table-wrap">
      <table className="table" aria-label="Progress per time zone">
        <caption className="visually-hidden">Sent in each contact&rsquo;s time zone</caption>
        <thead>
          <tr>
            <th scope="col">Time zone</th>
            <th scope="col">Local time</th>
            <th scope="col" className="num">
              Sent
            </th>
          </tr>
        </thead>
        <tbody>
          {zones.map((z) => (
            <tr key={z.timezone}>
              <th scope="row">{z.timezone.replace(/_/g, ' ')}</th>
              <td>
                {timeIn(z.sendAt, z.timezone)}
                <span className="muted small">
                  {' '}
                  · {Date.parse(z.sendAt) > now ? 'due' : 'from'} {formatDateTime(z.sendAt)} your time
                </span>
              </td>
              <td className="num">
                {formatNumber(z.sent)} / {formatNumber(z.recipients)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
