import type { FastifyRequest } from 'fastify';
import type { AuditActor } from './audit.types.js';

/**
 * The actor of an authenticated /v1 request: a console session's person (id, email) or the API key (id, name), with
 * the caller's address and, trimmed, its user agent. Routes hand it to the service that makes the change.
 */
export function actorOf(req: FastifyRequest): AuditActor {
  const auth = req.auth;
  const ua = req.headers['user-agent'];
  const from = { ip: req.ip ?? null, userAgent: typeof ua === 'string' ? ua.slice(0, 300) : null };
  if (auth.sessionId && auth.userId) return { type: 'user', id: auth.userId, label: auth.label ?? null, ...from };
  return { type: 'apiKey', id: auth.keyId ?? null, label: auth.label ?? null, ...from };
}
