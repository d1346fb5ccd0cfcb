/**
 * The floor for bench/track.bench.ts (issue 36, goal 4): the work Formcast's `GET /t/o/{token}` and `GET /t/c/{token}`
 * must do, and nothing else. A bare Fastify app (no schemas, no hooks, no logger) on a copy of Formcast's SQLite
 * file, with the pragmas of src/db/connection.ts and its installation key (`secret.key` beside the file), answering the
 * same requests with the same answers:
 *
 * - verify the token: Formcast's own `verifyTrackingToken` (HMAC-SHA256 over the token's bytes, constant-time);
 * - tell a machine's hit from a person's: Formcast's own `classifyOpen` / `classifyClick` (pure functions), so that the
 *   rows are the same;
 * - write, by group commit (a batch of at most 500 hits, 2 ms after its first, one transaction, the request answered
 *   once it committed: what Formcast's writer does), with prepared better-sqlite3 statements: each delivery's counter
 *   in `tracking_hits` (one upsert per delivery), the `email.opened` / `email.clicked` row in `events` (the same
 *   columns, so the same indexes), and the contact's `last_opened_at` / `last_clicked_at` for a person's hit;
 * - answer the 43-byte GIF, or the 302 to the link, with Formcast's headers.
 *
 * No replay memory, per-address limit, per-delivery cap, burst rule, webhook or automation check, request ids or
 * logging. It is not a Formcast that could ship; it shows what recording a hit costs on this machine, so that
 * Formcast's figure can be read against the work itself and not only against a route that writes nothing.
 *
 * Environment: DATABASE_URL (a copy of Formcast's SQLite file, `secret.key` beside it; required), PORT (default 0), HOST (default 127.0.0.1).
 * Prints `listening on http://HOST:PORT` on stdout once ready.
 */
import fs from 'node:fs';
import path from 'node:path';
import Fastify from 'fastify';
import { newId } from '../src/lib/ids.js';
import { classifyClick, classifyOpen, truncateUserAgent } from '../src/sending/tracking/tracking.classify.js';
import { PIXEL_GIF, locationOf } from '../src/sending/tracking/tracking.routes.js';
import { verifyTrackingToken } from '../src/sending/tracking/tracking.token.js';
import { openDatabase, serveUntilSignal } from './bare-server.js';

const db = openDatabase('track-floor-server');
const secret = Buffer.from(
  fs.readFileSync(path.join(path.dirname(path.resolve(process.env.DATABASE_URL!)), 'secret.key'), 'utf8').trim(),
  'base64',
);

const countHit = db.prepare(
  `insert into "tracking_hits" ("delivery_id", "workspace_id", "opens", "clicks") values (?, ?, ?, ?)
   on conflict ("delivery_id") do update set "opens" = "tracking_hits"."opens" + excluded."opens",
     "clicks" = "tracking_hits"."clicks" + excluded."clicks"`,
);
const insertEvent = db.prepare(
  `insert into "events" ("id", "workspace_id", "type", "occurred_at", "contact_id", "broadcast_id", "delivery_id",
     "data", "machine", "url", "routed", "dispatched") values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 1)`,
);
const latest = (column: 'last_opened_at' | 'last_clicked_at') =>
  db.prepare(
    `update "contacts" set "${column}" = ? where "workspace_id" = ? and "id" = ?
     and ("${column}" is null or "${column}" < ?)`,
  );
const noteOpen = latest('last_opened_at');
const noteClick = latest('last_clicked_at');

interface Hit {
  workspaceId: string;
  deliveryId: string;
  broadcastId: string;
  contactId: string | null;
  type: 'email.opened' | 'email.clicked';
  at: string;
  data: string;
  machine: boolean;
  url: string | null;
  done: () => void;
}

const write = db.transaction((batch: Hit[]) => {
  const counts = new Map<string, { workspaceId: string; opens: number; clicks: number }>();
  for (const h of batch) {
    const c = counts.get(h.deliveryId) ?? { workspaceId: h.workspaceId, opens: 0, clicks: 0 };
    if (h.type === 'email.opened') c.opens++;
    else c.clicks++;
    counts.set(h.deliveryId, c);
  }
  for (const id of [...counts.keys()].sort()) {
    const c = counts.get(id)!;
    countHit.run(id, c.workspaceId, c.opens, c.clicks);
  }
  for (const h of batch) {
    insertEvent.run(
      newId('evt'),
      h.workspaceId,
      h.type,
      h.at,
      h.contactId,
      h.broadcastId,
      h.deliveryId,
      h.data,
      h.machine ? 1 : 0,
      h.url,
    );
    if (!h.machine && h.contactId)
      (h.type === 'email.opened' ? noteOpen : noteClick).run(h.at, h.workspaceId, h.contactId, h.at);
  }
});

const queue: Hit[] = [];
let timer: NodeJS.Timeout | null = null;
function flush(): void {
  timer = null;
  while (queue.length) {
    const batch = queue.splice(0, 500);
    write(batch);
    for (const h of batch) h.done();
  }
}
function record(hit: Omit<Hit, 'done'>): Promise<void> {
  return new Promise((resolve) => {
    queue.push({ ...hit, done: resolve });
    if (queue.length >= 500) {
      if (timer) clearTimeout(timer);
      flush();
    } else timer ??= setTimeout(flush, 2);
  });
}

const app = Fastify({ logger: false });
const hitOf = (req: { ip: string; method: string; headers: Record<string, string | string[] | undefined> }) => ({
  ip: req.ip,
  method: req.method,
  userAgent: typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : undefined,
});

app.get<{ Params: { '*': string } }>('/t/o/*', async (req, reply) => {
  const ref = verifyTrackingToken(secret, req.params['*'], 'open');
  if (ref) {
    const hit = hitOf(req);
    const verdict = classifyOpen(hit);
    await record({
      ...ref,
      type: 'email.opened',
      at: new Date().toISOString(),
      data: JSON.stringify({
        userAgent: truncateUserAgent(hit.userAgent),
        machine: verdict.machine,
        ...(verdict.reason ? { reason: verdict.reason } : {}),
      }),
      machine: verdict.machine,
      url: null,
    });
  }
  return reply
    .code(200)
    .header('content-type', 'image/gif')
    .header('cache-control', 'no-store, max-age=0')
    .header('pragma', 'no-cache')
    .header('expires', '0')
    .header('x-content-type-options', 'nosniff')
    .send(PIXEL_GIF);
});

app.get<{ Params: { '*': string } }>('/t/c/*', async (req, reply) => {
  const ref = verifyTrackingToken(secret, req.params['*'], 'click');
  if (!ref) return reply.code(404).send();
  const now = Date.now();
  const verdict = classifyClick(hitOf(req), ref.sentAt, now);
  await record({
    ...ref,
    type: 'email.clicked',
    at: new Date(now).toISOString(),
    data: JSON.stringify({
      url: ref.url,
      machine: verdict.machine,
      ...(verdict.reason ? { reason: verdict.reason } : {}),
    }),
    machine: verdict.machine,
    url: ref.url,
  });
  return reply
    .code(302)
    .header('location', locationOf(ref.url))
    .header('cache-control', 'no-store, max-age=0')
    .header('referrer-policy', 'no-referrer')
    .send();
});

await serveUntilSignal(app, db);
