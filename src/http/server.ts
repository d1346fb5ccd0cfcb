import crypto from 'node:crypto';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyServerOptions, type FastifyRequest } from 'fastify';
import { errorsPage } from '../errors/docs.js';
import { notFound } from '../errors/errors.js';
import { page, sendPage } from '../pages/layout.js';
import { registerProblemHandlers, sendProblem } from './problem.js';
import { registerOpenApi } from './openapi.js';
import type { AuthContext, V1 } from './types.js';
import { forRuntime } from './schema-helpers.js';
import { validatorCompiler } from './validation.js';

/**
 * Fastify's own response serializers (fast-json-stringify), each compiled on its route's first answer instead of at
 * start: compiling them all cost ~110 ms of CPU per start (measured with --cpu-prof). Same serializers, same output.
 */
const selectSerializer = SerializerSelector();
const buildSerializer: NonNullable<
  NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']
>['buildSerializer'] = (externalSchemas, options) => {
  const compile = selectSerializer(externalSchemas as never, options as never);
  return (route) => {
    let serialize: ((data: unknown) => string) | undefined;
    // Parts the service checks itself (checkedByService) are serialized as they are, like any JSON value.
    return (data: unknown) =>
      (serialize ??= compile({ ...route, schema: forRuntime(route.schema) } as never) as (data: unknown) => string)(
        data,
      );
  };
};

const REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/** Public addresses whose last segment is a token: the segment is replaced in logs. */
const TOKEN_PATH = /^(\/(?:confirm|unsubscribe|w|t\/[a-z]|app\/(?:invite|reset))\/)[^/?#]+/;

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
export async function createServer({
  logLevel,
  publicUrl,
  trustProxy,
  logger = true,
  logStream,
}: ServerOptions): Promise<V1> {
  const app = Fastify({
    logger: logger
      ? {
          level: logLevel,
          ...(logStream ? { stream: logStream } : {}),
          redact: ['req.headers.authorization'],
          // Tokens in public addresses are credentials (whoever has one may confirm or unsubscribe): never logged.
          serializers: {
            req: (req: FastifyRequest) => ({
              method: req.method,
              url: redactUrl(req.url),
              host: req.host,
              remoteAddress: req.ip,
              remotePort: req.socket?.remotePort,
            }),
          },
        }
      : false,
    bodyLimit: 1024 * 1024,
    schemaController: { compilersFactory: { buildSerializer } },
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

  registerOpenApi(app, publicUrl);
  // The page every problem's `type` links to (/docs/errors#<code>).
  app.get('/docs/errors', { schema: { hide: true } }, (_req, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
      .send(errorsPageHtml()),
  );
  app.get('/healthz', { schema: { hide: true } }, () => ({ status: 'ok' }));
  return app;
}

/** /docs/errors in the public pages' look (light and dark), made once. */
let errorsHtml: string | undefined;
function errorsPageHtml(): string {
  if (errorsHtml === undefined) {
    const p = errorsPage();
    errorsHtml = page(p.title, p.body, p.head, 'en', { wide: true });
  }
  return errorsHtml;
}
