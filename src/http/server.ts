import crypto from 'node:crypto';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyServerOptions, type FastifyRequest } from 'fastify';
import { errorsPage, openApiErrorResponses, routeErrors } from '../errors/docs.js';
import { notFound } from '../errors/errors.js';
import { sendPage } from '../pages/layout.js';
import { registerProblemHandlers, sendProblem } from './problem.js';
import { ProblemSchema } from './schema-helpers.js';
import type { AuthContext, V1 } from './types.js';
import { validatorCompiler } from './validation.js';

const REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/** Public addresses whose last segment is a token: the segment is replaced in logs. */
const TOKEN_PATH = /^(\/(?:confirm|unsubscribe|t\/[a-z]|app\/(?:invite|reset))\/)[^/?#]+/;

/** A request URL as logged: tokens in the path and in `token=` query values replaced by [redacted]. */
export function redactUrl(url: string): string {
  return url.replace(TOKEN_PATH, '$1[redacted]').replace(/([?&]token=)[^&#]*/gi, '$1[redacted]');
}

export interface ServerOptions {
  logLevel: string;
  publicUrl: string;
  trustProxy?: boolean | number | string | string[];
  /** false silences logs (tests); otherwise pino at logLevel. */
  logger?: boolean;
  /** Where logs go (standard output by default); tests read them. */
  logStream?: { write(line: string): void };
}

/**
 * The HTTP plumbing every feature stands on, with no feature in it: logging with tokens redacted, request ids,
 * problem+json errors, the TypeBox validator, the OpenAPI document and its pages. The composition root
 * (src/app.ts) builds the services and registers the features on it.
 */
export async function createServer({ logLevel, publicUrl, trustProxy, logger = true, logStream }: ServerOptions): Promise<V1> {
  const app = Fastify({
    logger: logger ? {
      level: logLevel,
      ...(logStream ? { stream: logStream } : {}),
      redact: ['req.headers.authorization'],
      // Tokens in public addresses are credentials (whoever has one may confirm or unsubscribe): never logged.
      serializers: {
        req: (req: FastifyRequest) => ({ method: req.method, url: redactUrl(req.url), host: req.host, remoteAddress: req.ip, remotePort: req.socket?.remotePort }),
      },
    } : false,
    bodyLimit: 1024 * 1024,
    // Echo a client's X-Request-Id when it is a sane token; otherwise mint one.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : crypto.randomUUID();
    },
    return503OnClosing: true,
    // Behind a reverse proxy every client has the proxy's address: TRUST_PROXY says which proxies to believe
    // for X-Forwarded-For (the per-IP submission limit and the logs use the client's address then). The cast
    // only picks Fastify's HTTP/1 overload: a hop count or a list of addresses is as valid.
    trustProxy: (trustProxy ?? false) as FastifyServerOptions['trustProxy'] & boolean,
    // Errors the router raises before any route runs (a path that is not valid percent-encoding, a path
    // parameter over 100 characters): the address names nothing, so they are answered as 404s like any
    // unknown id, as problem+json under /v1 and as a page elsewhere, with the request id.
    frameworkErrors: (_err, req, reply) => {
      reply.header('x-request-id', req.id);
      if (req.url.startsWith('/v1/')) return sendProblem(req, reply, notFound('resource'));
      return sendPage(reply, 404, 'Not found', '<h1>Not found</h1><p>This address is not valid.</p>');
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.decorateRequest('auth', null as unknown as AuthContext);
  registerProblemHandlers(app);
  // Callback style, not async: it runs on every request and needs no promise.
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Formcast API',
        version: '1.0.0',
        description: 'Forms, contacts and broadcasts. Errors are application/problem+json with a stable `code`.',
      },
      servers: [{ url: publicUrl }],
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
        schemas: { Problem: { ...ProblemSchema, $id: undefined } as never },
      },
      security: [{ bearer: [] }],
    },
    // Each /v1 route documents the 4xx problems it can answer (errors/docs.ts).
    transform: ({ schema, url, route }) => {
      if (!url.startsWith('/v1/') || !schema || (schema as { hide?: boolean }).hide) return { schema, url };
      const s = schema as Record<string, unknown>;
      const codes = routeErrors({
        method: route.method, url, scope: route.config?.scope, errors: route.config?.errors,
        hasParams: Boolean(s.params), hasBody: Boolean(s.body), hasQuery: Boolean(s.querystring),
      });
      return { schema: { ...s, response: { ...(s.response as object), ...openApiErrorResponses(codes) } } as typeof schema, url };
    },
  });
  await app.register(import('@fastify/swagger-ui'), { routePrefix: '/docs' });
  // The page every problem's `type` links to (/docs/errors#<code>).
  app.get('/docs/errors', { schema: { hide: true } }, (_req, reply) =>
    reply.type('text/html; charset=utf-8').header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'").send(errorsPage()));
  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());
  app.get('/healthz', { schema: { hide: true } }, () => ({ status: 'ok' }));
  return app;
}
