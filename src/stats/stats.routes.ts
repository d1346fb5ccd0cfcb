/**
 * `GET /v1/stats/contacts` (read:contacts): contacts created per hour over the last `days` days, counted by the
 * database in one grouped query, for the console's dashboard chart (which folds the hours into the viewer's local
 * days, exact in any time zone). Contacts are read by their (workspace, id) index from the first id the window can
 * hold: ids are ULIDs, which sort by creation time, so the scan covers the window's contacts only.
 */
import { sql } from 'kysely';
import { encodeTime } from 'ulid';
import { Type } from 'typebox';
import type { Db } from '../db/connection.js';
import type { V1 } from '../http/server.js';

const MAX_DAYS = 90;

const GrowthQuery = Type.Object({
  days: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_DAYS, default: 30, description: `the window, in days back from now (1 to ${MAX_DAYS}; default 30)` })),
});

const GrowthSchema = Type.Object({
  since: Type.String({ format: 'date-time', description: 'the start of the window: the first whole UTC hour `days` days ago' }),
  until: Type.String({ format: 'date-time', description: 'now' }),
  total: Type.Integer({ description: 'contacts created in the window (still in the workspace)' }),
  hours: Type.Array(Type.Object({
    hour: Type.String({ format: 'date-time', description: 'the start of a UTC hour' }),
    created: Type.Integer({ minimum: 1 }),
  }), { description: 'the hours in which contacts were created, oldest first (hours with none are left out)' }),
});

export interface GrowthOptions { db: Db }

export async function contactsGrowth(db: Db, workspaceId: string, days: number, now = Date.now()): Promise<{ since: string; until: string; total: number; hours: { hour: string; created: number }[] }> {
  const since = Math.floor((now - days * 86_400_000) / 3_600_000) * 3_600_000;
  const sinceIso = new Date(since).toISOString();
  const firstId = `ct_${encodeTime(since, 10)}`;
  const hour = db.dialect === 'postgres'
    ? sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24')`
    : sql<string>`substr(created_at, 1, 13)`;
  const rows = await db.kysely.selectFrom('contacts')
    .select([hour.as('hour'), (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('workspace_id', '=', workspaceId)
    .where('id', '>=', firstId)
    .where('created_at', '>=', sinceIso)
    .groupBy(sql`1`)
    .orderBy(sql`1`)
    .execute();
  const hours = rows.map((r) => ({ hour: `${r.hour}:00:00.000Z`, created: Number(r.n) }));
  return { since: sinceIso, until: new Date(now).toISOString(), total: hours.reduce((a, h) => a + h.created, 0), hours };
}

export async function statsRoutes(app: V1, opts: GrowthOptions): Promise<void> {
  app.get('/stats/contacts', {
    schema: {
      tags: ['contacts'],
      summary: 'New contacts per hour over the last days (the console dashboard\'s chart)',
      querystring: GrowthQuery,
      response: { 200: GrowthSchema },
    },
    config: { scope: 'read:contacts' },
  }, (req) => contactsGrowth(opts.db, req.auth.workspaceId, req.query.days ?? 30));
}
