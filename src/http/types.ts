import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { ErrorAt } from '../errors/docs.js';
import type { ErrorCode } from '../errors/errors.js';
import type { InternalScope, Scope } from './scopes.js';

/**
 * Who is calling: an API key or a console session (docs/api.md §2). Set by the authentication hook
 * (http/auth.ts) on every route that declares a scope.
 */
export interface AuthContext {
  workspaceId: string;
  keyId?: string | null;
  scopes: string[];
  sessionId?: string;
  userId?: string;
  role?: 'owner' | 'admin' | 'editor' | 'viewer';
  /** Who, in words, for the audit log (docs/audit-log.md): the person's email, or the key's name. */
  label?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on every route that declares a scope; absent on public routes. */
    auth: AuthContext;
  }
  interface FastifyContextConfig {
    /** The scope a route needs (docs/api.md §2); `any` means any valid key or session. Internal scopes: console roles (src/access/users/roles.ts). */
    scope?: Scope | InternalScope | 'any';
    /** The error codes particular to the route, documented in /openapi.json with the common ones (errors/docs.ts). */
    errors?: ErrorCode[];
    /**
     * The route answers a console session whose workspace requires two-factor sign-in that the person has not set up
     * yet (GET /v1/session, /v1/me/two-factor): every other route answers it 403 two_factor_required.
     */
    twoFactorSetup?: boolean;
    /**
     * Codes the route answers with another status than the catalogue's, beside it (contract §16: an upload whose bytes
     * are no image is 422 unsupported_media_type), each with a typical `detail`: documented in /openapi.json too.
     */
    errorsAt?: ErrorAt[];
  }
}

/** The Fastify instance the `/v1` routes are registered on, typed by their TypeBox schemas. */
export type V1 = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;
