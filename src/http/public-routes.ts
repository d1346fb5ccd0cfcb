import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import { ipKey } from '../lib/ip-key.js';

/**
 * What the public (no key) routes of a form's address share: `/f/:slug` and what hangs under it (hosted pages,
 * embeds, the proof-of-work challenge, impressions).
 */

/** The `:slug` path parameter (a form's public address, contract §4). */
export const SLUG_PARAMS = Type.Object({ slug: Type.String({ pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', maxLength: 100 }) });

/** A rate limit per minute keyed by `key` (a visitor is an IP address, an IPv6 one by its /64: ipKey): a 429 error, which each public plugin's error handler answers (a page or a problem). */
function perMinute(max: number, key: (req: FastifyRequest) => string) {
  return {
    max,
    timeWindow: 60_000,
    keyGenerator: key,
    errorResponseBuilder: (_req: FastifyRequest, ctx: { after: string }) =>
      Object.assign(new Error(`rate limited; retry after ${ctx.after}`), { statusCode: 429 }),
  };
}

/**
 * A rate limit per visitor (IP address) and form, per minute; `perRoute` counts each route on its own (a page
 * view's challenge and beacon do not eat into the same budget). Answered 429 with a problem document.
 */
export function perVisitorAndForm(max: number, { perRoute = false } = {}) {
  return perMinute(
    max,
    (req) => `${ipKey(req.ip)}|${(req.params as { slug: string }).slug}${perRoute ? `|${req.routeOptions.url}` : ''}`,
  );
}

/** A rate limit per visitor (IP address) and route, per minute (the archive's pages, the web version). */
export function perVisitor(max: number) {
  return perMinute(max, (req) => `${ipKey(req.ip)}|${req.routeOptions.url}`);
}
