/**
 * The dashboard: new contacts per day over 30 days (GET /v1/stats/contacts: counts per UTC hour, folded here
 * into the viewer's local days, one request whatever the numbers), recent broadcasts with their open, click and
 * bounce rates, and sender health (hard bounces and complaints against thresholds). uPlot comes in the
 * dashboard's chunk (shared with the broadcast report's): no other page loads it, and a lazy chart here would
 * hold the chart back by React's Suspense reveal throttle (300 ms).
 */
import { useCan, useSession } from '../../api/session';
import { PageHeader } from '../../components';
import { SignupsCard } from './SignupsCard';
import { BroadcastsCard } from './BroadcastsCard';
import { HealthCard } from './HealthCard';

export default function Dashboard() {
  const session = useSession();
  const can = useCan();
  return (
    <>
      <PageHeader
        title="Dashboard"
        description={`Welcome back${session.user.name ? `, ${session.user.name}` : ''}. Here is how ${session.workspace.name} is doing.`}
      />
      <div className="stack">
        {can('read:contacts') && <SignupsCard />}
        <div className="grid-2">
          {can('read:broadcasts') && <BroadcastsCard />}
          <HealthCard />
        </div>
      </div>
    </>
  );
}
