import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/connection.js';
import { nowIso } from '../lib/time.js';
import { DomainError, conflict, validationFailed } from '../errors/errors.js';
import { sendProblem } from './problem.js';
import { addRouteHook } from './route-hooks.js';

/**
 * `Idempotency-Key` on any authenticated POST (docs/api.md §10): the first response is stored and
 * replayed for 24 h; the same key with another request is 422; while the first is in flight, 409.
 * Keys are per workspace. A 5xx is not stored, so the client may retry. An in-flight row older than
 * ten minutes is taken to be abandoned (its process died) and may be claimed again.
 */
const REPLAY_WINDOW_MS = 24 * 60 * 60 * 1000;
const ABANDONED_AFTER_MS = 10 * 60 * 1000; // longer than any request takes (a large import included)
const REPLAYED_HEADERS = ['location', 'content-type'];

declare module 'fastify' {
  interface FastifyRequest {
    idempotencyKey?: string;
  }
  interface FastifyContextConfig {
    /**
     * Top-level fields of the response that hold a secret shown once (an API key). They are stored as null,
     * and a replay says so with `Idempotent-Redacted: <fields>`: no secret is kept in the replay store.
     */
    secretFields?: string[];
  }
}

/** The body to keep for replays: the response with its secret fields nulled (see secretFields). */
function replayable(body: string, secretFields: string[] | undefined): { body: string; redacted: string | null } {
  if (!secretFields?.length) return { body, redacted: null };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { body: '', redacted: secretFields.join(', ') };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { body, redacted: null };
  const copy: Record<string, unknown> = { ...value };
  const removed = secretFields.filter((f) => Object.hasOwn(copy, f));
  for (const f of removed) copy[f] = null;
  return { body: JSON.stringify(copy), redacted: removed.length ? removed.join(', ') : null };
}

function requestHash(req: FastifyRequest): string {
  return crypto
    .createHash('sha256')
    .update(`${req.method} ${req.url}\n${JSON.stringify(req.body ?? null)}`)
    .digest('hex');
}

export function registerIdempotency(app: FastifyInstance, db: Db): void {
  const k = db.kysely;

  async function claim(workspaceId: string, key: string, hash: string): Promise<boolean> {
    const res = await k
      .insertInto('idempotency_keys')
      .values({
        workspace_id: workspaceId,
        key,
        request_hash: hash,
        status_code: null,
        response_body: null,
        response_headers: null,
        created_at: nowIso(),
      })
      .onConflict((oc) => oc.columns(['workspace_id', 'key']).doNothing())
      .executeTakeFirst();
    return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async function preHandler(req: FastifyRequest, reply: FastifyReply) {
    if (!req.auth) return;
    const header = req.headers['idempotency-key'];
    if (header === undefined) return;
    const key = Array.isArray(header) ? header[0]! : header;
    if (key.length < 1 || key.length > 255)
      throw validationFailed([{ path: '/header/idempotency-key', message: 'must be 1 to 255 characters' }]);
    const ws = req.auth.workspaceId;
    const hash = requestHash(req);
    for (let attempt = 0; attempt < 2; attempt++) {
      if (await claim(ws, key, hash)) {
        req.idempotencyKey = key;
        return;
      }
      const row = await k
        .selectFrom('idempotency_keys')
        .select(['request_hash', 'status_code', 'response_body', 'response_headers', 'created_at'])
        .where('workspace_id', '=', ws)
        .where('key', '=', key)
        .executeTakeFirst();
      if (!row) continue; // deleted meanwhile: claim again
      const age = Date.now() - new Date(row.created_at).getTime();
      const stale = age > REPLAY_WINDOW_MS || (row.status_code === null && age > ABANDONED_AFTER_MS);
      if (stale) {
        await k
          .deleteFrom('idempotency_keys')
          .where('workspace_id', '=', ws)
          .where('key', '=', key)
          .where('request_hash', '=', row.request_hash)
          .execute();
        continue;
      }
      if (row.request_hash !== hash) {
        return sendProblem(
          req,
          reply,
          new DomainError('idempotency_key_reused', 'this Idempotency-Key was used with a different request'),
        );
      }
      if (row.status_code === null) {
        return sendProblem(
          req,
          reply,
          conflict('idempotency_conflict', 'a request with this Idempotency-Key is still being processed'),
        );
      }
      const headers = row.response_headers ? (JSON.parse(row.response_headers) as Record<string, string>) : {};
      return reply
        .code(row.status_code)
        .headers(headers)
        .header('idempotent-replayed', 'true')
        .send(row.response_body ?? '');
    }
    throw conflict('idempotency_conflict', 'a request with this Idempotency-Key is still being processed');
  }

  async function onSend(req: FastifyRequest, reply: FastifyReply, payload: unknown) {
    const key = req.idempotencyKey;
    if (!key || !req.auth) return payload;
    req.idempotencyKey = undefined;
    const where = k
      .deleteFrom('idempotency_keys')
      .where('workspace_id', '=', req.auth.workspaceId)
      .where('key', '=', key);
    // A 5xx or a 429 is not the request's answer: a retry after Retry-After must run it, not replay the refusal.
    if (
      reply.statusCode >= 500 ||
      reply.statusCode === 429 ||
      (typeof payload !== 'string' && payload !== null && payload !== undefined)
    ) {
      await where.execute();
      return payload;
    }
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const v = reply.getHeader(name);
      if (typeof v === 'string') headers[name] = v;
    }
    const kept = replayable(
      (payload as string | null) ?? '',
      reply.statusCode < 300 ? req.routeOptions.config.secretFields : undefined,
    );
    if (kept.redacted) headers['idempotent-redacted'] = kept.redacted;
    await k
      .updateTable('idempotency_keys')
      .set({ status_code: reply.statusCode, response_body: kept.body, response_headers: JSON.stringify(headers) })
      .where('workspace_id', '=', req.auth.workspaceId)
      .where('key', '=', key)
      .execute();
    return payload;
  }

  // Only POST routes carry the hooks: the others would pay for them on every request and never use them.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.includes('POST')) return;
    addRouteHook(route, 'preHandler', preHandler);
    addRouteHook(route, 'onSend', onSend);
  });
}

/**
 * Deletes records older than the replay window, a thousand at a time (never one long delete): the job
 * runner calls it hourly. Returns how many were deleted.
 */
export async function purgeIdempotencyKeys(db: Db, now = Date.now()): Promise<number> {
  const cutoff = new Date(now - REPLAY_WINDOW_MS).toISOString();
  let total = 0;
  for (;;) {
    const old = await db.kysely
      .selectFrom('idempotency_keys')
      .select(['workspace_id', 'key'])
      .where('created_at', '<', cutoff)
      .limit(1000)
      .execute();
    if (!old.length) return total;
    for (const ws of new Set(old.map((r) => r.workspace_id))) {
      const res = await db.kysely
        .deleteFrom('idempotency_keys')
        .where('workspace_id', '=', ws)
        .where(
          'key',
          'in',
          old.filter((r) => r.workspace_id === ws).map((r) => r.key),
        )
        .where('created_at', '<', cutoff)
        .executeTakeFirst();
      total += Number(res.numDeletedRows);
    }
  }
}
