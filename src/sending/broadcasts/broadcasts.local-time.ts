import { audience, type AudienceSpec } from '../../audience/index.js';
import { getWorkspace } from '../../access/index.js';
import type { Dialect, Executor } from '../../db/connection.js';
import { validationFailed } from '../../errors/errors.js';
import { instantOfWallTime, isTimeZone, wallTimeIn } from '../../lib/zones.js';
import { zoneProgress } from '../deliveries/deliveries.repository.js';

/**
 * Local-time sending (issue 34, contract §19, docs/sending.md "Local-time sending"): a broadcast scheduled with
 * `sendAtLocal: true` reaches each recipient at `sendAt`'s wall-clock time in the recipient's zone. `sendAt` is read
 * in the workspace's `settings.timezone` (so the workspace's own zone gets it at `sendAt` exactly), and that
 * wall-clock time is kept with the broadcast (`local_send_time`). The materialiser makes each delivery due at its
 * zone's turn (deliveries/local-time.ts).
 */

/** The workspace's zone (UTC unless set). */
export async function workspaceZone(db: Executor, workspaceId: string): Promise<string> {
  return (await getWorkspace(db, workspaceId))?.settings.timezone ?? 'UTC';
}

/**
 * The plan of a local-time send scheduled for `sendAt`: its wall-clock time and the instant the scheduler starts it
 * (the earliest turn among the zones the audience has now, the workspace's standing in for contacts without one).
 * 422 at /sendAt when the time is past in every one of those zones. A contact who joins later, or moves to a zone
 * whose turn comes before the start, gets it as soon as the send starts, as one whose turn has passed does.
 */
export async function planLocalSend(
  db: Executor,
  dialect: Dialect,
  workspaceId: string,
  spec: AudienceSpec,
  sendAt: string,
  now: string,
): Promise<{ sendTime: string; startAt: string }> {
  const defaultZone = await workspaceZone(db, workspaceId);
  const sendTime = wallTimeIn(Date.parse(sendAt), defaultZone);
  const { query } = await audience(db, dialect, workspaceId, spec);
  const rows = await query.select('contacts.timezone').distinct().execute();
  const zones = new Set(rows.map((r) => (r.timezone && isTimeZone(r.timezone) ? r.timezone : defaultZone)));
  if (zones.size === 0) zones.add(defaultZone);
  const turns = [...zones].map((z) => instantOfWallTime(sendTime, z));
  if (Math.max(...turns) <= Date.parse(now))
    throw validationFailed([
      {
        path: '/sendAt',
        message: `with sendAtLocal, ${sendTime.slice(0, 16).replace('T', ' ')} has already passed in every time zone of the audience`,
        keyword: 'future',
      },
    ]);
  return { sendTime, startAt: new Date(Math.min(...turns)).toISOString() };
}

export interface ZoneProgress {
  timezone: string;
  recipients: number;
  sent: number;
  sendAt: string;
}

/** The report's `stats.zones`: per zone, its recipients, how many were sent, and its turn; earliest turn first. */
export async function zonesOf(
  db: Executor,
  workspaceId: string,
  broadcastId: string,
  sendTime: string,
): Promise<ZoneProgress[]> {
  const rows = await zoneProgress(db, workspaceId, broadcastId);
  return rows
    .map((r) => ({
      timezone: r.zone,
      recipients: r.recipients,
      sent: r.sent,
      sendAt: new Date(instantOfWallTime(sendTime, isTimeZone(r.zone) ? r.zone : 'UTC')).toISOString(),
    }))
    .sort((a, b) => a.sendAt.localeCompare(b.sendAt) || a.timezone.localeCompare(b.timezone));
}
