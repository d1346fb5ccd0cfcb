import type { FastifyReply, FastifyRequest } from 'fastify';
import { insufficientScope, validationFailed } from '../errors/errors.js';
import { addRouteHook } from './route-hooks.js';
import { grants, isInternalScope } from './scopes.js';
import type { AuthContext, V1 } from './types.js';

export interface Authenticators {
  /** The name of the console's session cookie: a request carrying it and no Authorization header is a session's. */
  sessionCookie: string;
  /** An API key from the Authorization header (401 when missing, malformed, unknown or revoked). */
  apiKey(header: string | undefined): Promise<AuthContext>;
  /** The same, when it is known at once (a key verified lately); undefined sends the request to apiKey. */
  apiKeyNow?(header: string | undefined): AuthContext | undefined;
  /** The console's session cookie (401 when dead, 403 csrf_failed for a write without X-CSRF-Token). */
  session(req: FastifyRequest, reply: FastifyReply): Promise<AuthContext>;
}

/** 403 unless the caller's scopes grant `scope` (an internal scope is reported as `admin` to API keys). */
export function authorize(auth: AuthContext, scope: Parameters<typeof grants>[1]): void {
  if (!grants(auth.scopes, scope)) throw insufficientScope(auth.sessionId || !isInternalScope(scope) ? scope : 'admin');
}

/**
 * The /v1 request rules that apply to every route (docs/api.md §1–§2), registered before the routes:
 * - every route that declares a scope authenticates first; the scope is read once, when the route is
 *   registered. An Authorization header means an API key; without one, the console's session cookie. Both
 *   end in the same scope check: a session's scopes are its role's. A write by session may answer csrf_failed.
 * - requests are strict: an operation that takes no body refuses one, except an empty object, which many
 *   clients send by habit.
 */
export function registerRequestRules(v1: V1, auth: Authenticators): void {
  v1.addHook('onRoute', (route) => {
    const scope = route.config?.scope;
    if (!scope) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.some((m) => m !== 'GET' && m !== 'HEAD' && m !== 'OPTIONS')) {
      route.config = { ...route.config, errors: [...(route.config?.errors ?? []), 'csrf_failed'] };
    }
    // Callback style: a key verified lately is known at once (apiKeyNow), and then the request goes on without a
    // promise; otherwise the same, once the key or the session is resolved.
    const authorized = (req: FastifyRequest, ctx: AuthContext, done: (err?: Error) => void) => {
      req.auth = ctx;
      try {
        if (scope !== 'any') authorize(ctx, scope);
      } catch (err) {
        return done(err as Error);
      }
      done();
    };
    addRouteHook(route, 'onRequest', (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
      const header = req.headers.authorization;
      const bySession = header === undefined && req.headers.cookie?.includes(`${auth.sessionCookie}=`);
      const known = bySession ? undefined : auth.apiKeyNow?.(header);
      if (known) return authorized(req, known, done);
      (bySession ? auth.session(req, reply) : auth.apiKey(header)).then((ctx) => authorized(req, ctx, done), done);
    });
  });
  v1.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (route.schema?.body || !methods.some((m) => m === 'POST' || m === 'PUT' || m === 'DELETE' || m === 'PATCH'))
      return;
    addRouteHook(route, 'preValidation', (req: FastifyRequest, _reply: unknown, done: (err?: Error) => void) => {
      const body = req.body;
      const empty =
        body === undefined ||
        body === null ||
        (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0);
      done(empty ? undefined : validationFailed([{ path: '/', message: 'this operation takes no request body' }]));
    });
  });
}
