import rateLimit from '@fastify/rate-limit';
import type { FastifyRequest } from 'fastify';
import { DomainError } from '../errors/errors.js';
import { ipKey } from '../lib/ip-key.js';
import type { V1 } from './types.js';

/** /v1 requests a minute per API key or console session by default (RATE_LIMIT_PER_KEY). */
export const DEFAULT_API_RATE_LIMIT = 1200;

/** Whom a /v1 request is counted against: its key, its console session, or (a route without a scope) its address. */
function callerOf(req: FastifyRequest): string {
  const auth = req.auth;
  if (auth?.keyId) return `key:${auth.keyId}`;
  if (auth?.sessionId) return `session:${auth.sessionId}`;
  return `ip:${ipKey(req.ip)}`;
}

/**
 * The /v1 rate limit (docs/api.md §1): `perMinute` requests per API key or console session in fixed windows of a
 * minute, in the memory of the process (with several processes, each counts its own). Counted after authentication
 * (a preValidation hook: the caller is known) and before the body is validated, so refused and invalid requests
 * count too. Every answer carries the IETF RateLimit headers (RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset);
 * over the limit: 429 `rate_limited` with Retry-After. Registered on the /v1 scope before its routes; 0: no limit.
 */
export async function registerApiRateLimit(v1: V1, { perMinute }: { perMinute: number }): Promise<void> {
  if (perMinute <= 0) return;
  await v1.register(rateLimit, {
    global: true,
    max: perMinute,
    timeWindow: 60_000,
    hook: 'preValidation',
    enableDraftSpec: true,
    cache: 10_000,
    keyGenerator: callerOf,
    errorResponseBuilder: (_req, ctx) =>
      new DomainError(
        'rate_limited',
        `at most ${ctx.max} requests a minute per API key or session; retry after ${ctx.after}`,
      ),
  });
}
