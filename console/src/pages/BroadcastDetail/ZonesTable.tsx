/** Local-time sending (docs/sending.md): progress per time zone, each with its local send time and sent/total. */
import { Table } from '../../components';
import type { Broadcast } from '../../lib/audience';
import { formatDateTime, formatNumber } from '../../lib/format';
import { timeIn } from '../../lib/zones';

type Zone = NonNullable<NonNullable<Broadcast['stats']>['zones']>[number];

export function ZonesTable({ broadcast }: { broadcast: Broadcast }) {
  const zones = broadcast.stats?.zones;
  if (!zones?.length) return null;
  const now = Date.now();
  return (
    <Table<Zone>
      caption="Progress per time zone"
      rows={zones}
      rowKey={(z) => z.timezone}
      columns={[
        { key: 'zone', header: 'Time zone', cell: (z) => <strong>{z.timezone.replace(/_/g, ' ')}</strong> },
        {
          key: 'local',
          header: 'Local time',
          cell: (z) => (
            <span>
              {timeIn(z.sendAt, z.timezone)}
              <span className="muted small zone-when">
                {Date.parse(z.sendAt) > now ? 'Due' : 'From'} {formatDateTime(z.sendAt)}, your time
              </span>
            </span>
          ),
        },
        {
          key: 'sent',
          header: 'Sent',
          numeric: true,
          cell: (z) => `${formatNumber(z.sent)} / ${formatNumber(z.recipients)}`,
        },
      ]}
    />
  );
}
