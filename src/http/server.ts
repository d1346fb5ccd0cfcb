import crypto from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyServerOptions, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, type RawReplyDefaultExpression, type RawRequestDefaultExpression, type RawServerDefault } from 'fastify';
import { sql } from 'kysely';
import { ApiKeysService, type AuthContext } from '../api-keys/api-keys.service.js';
import { apiKeysRoutes } from '../api-keys/api-keys.routes.js';
import type { InternalScope, Scope } from '../api-keys/scopes.js';
import type { Config } from '../config.js';
import type { Db } from '../db/connection.js';
import { hooksRoutes } from '../bounces/bounces.hooks.js';
import { bouncesRoutes } from '../bounces/bounces.routes.js';
import { BouncesService, reportRules } from '../bounces/bounces.service.js';
import { broadcastsRoutes } from '../broadcasts/broadcasts.routes.js';
import { BroadcastsService } from '../broadcasts/broadcasts.service.js';
import { consoleRoutes } from '../console/console.routes.js';
import { contactStatsRoutes } from '../contacts/contacts.stats.routes.js';
import { contactsRoutes } from '../contacts/contacts.routes.js';
import { ContactsService } from '../contacts/contacts.service.js';
import { domainsRoutes } from '../domains/domains.routes.js';
import { DomainsService } from '../domains/domains.service.js';
import { eventsRoutes } from '../events/events.routes.js';
import { EventsService } from '../events/events.service.js';
import { formsRoutes } from '../forms/forms.routes.js';
import { FormsService } from '../forms/forms.service.js';
import { segmentsRoutes } from '../segments/segments.routes.js';
import { SegmentsService } from '../segments/segments.service.js';
import { templatesRoutes } from '../templates/templates.routes.js';
import { TemplatesService } from '../templates/templates.service.js';
import { topicsRoutes } from '../topics/topics.routes.js';
import { TopicsService } from '../topics/topics.service.js';
import { hostedRoutes } from '../hosted/hosted.routes.js';
import { submissionsRoutes } from '../submissions/submissions.routes.js';
import { SubmissionsService } from '../submissions/submissions.service.js';
import { suppressionsRoutes } from '../suppressions/suppressions.routes.js';
import { SuppressionsService } from '../suppressions/suppressions.service.js';
import { unsubscribeRoutes } from '../unsubscribe/unsubscribe.routes.js';
import { trackingRoutes } from '../tracking/tracking.routes.js';
import { TrackingService } from '../tracking/tracking.service.js';
import { UnsubscribeService } from '../unsubscribe/unsubscribe.service.js';
import { WebhooksService } from '../webhooks/webhooks.service.js';
import { webhooksRoutes } from '../webhooks/webhooks.routes.js';
import { SESSION_COOKIE, SessionsService } from '../users/sessions.service.js';
import { usersPages } from '../users/users.pages.js';
import { usersRoutes } from '../users/users.routes.js';
import { UsersService } from '../users/users.service.js';
import { WorkspacesService } from '../workspaces/workspaces.service.js';
import { workspacesRoutes } from '../workspaces/workspaces.routes.js';
import { errorsPage, openApiErrorResponses, routeErrors } from '../errors/docs.js';
import { notFound, unavailable, validationFailed, type ErrorCode } from '../errors/errors.js';
import { ProblemSchema } from './schema-helpers.js';
import type { Mailer, TransportState } from '../mail/transport.js';
import { sendPage } from '../pages/layout.js';
import { registerIdempotency } from './idempotency.js';
import { registerBodyParsers } from './input.js';
import { registerProblemHandlers, sendProblem } from './problem.js';
import { addRouteHook } from './route-hooks.js';
import { validatorCompiler } from './validation.js';

export interface Services {
  apiKeys: ApiKeysService;
  workspaces: WorkspacesService;
  forms: FormsService;
  domains: DomainsService;
  contacts: ContactsService;
  topics: TopicsService;
  segments: SegmentsService;
  templates: TemplatesService;
  broadcasts: BroadcastsService;
  unsubscribe: UnsubscribeService;
  submissions: SubmissionsService;
  suppressions: SuppressionsService;
  bounces: BouncesService;
  events: EventsService;
  webhooks: WebhooksService;
  sessions: SessionsService;
  users: UsersService;
}

/** What the services need to know of the configuration. */
export type AppConfig = Pick<Config, 'logLevel' | 'publicUrl'> & Partial<Pick<Config, 'dnsServers' | 'dnsTimeoutMs' | 'submissionsPerMinute' | 'bounceMxHost' | 'sendingSpf' | 'trustProxy' | 'hooks' | 'bounces' | 'webhooks'>> & {
  /** Signs tokens in public addresses (db/secrets.ts). */
  secret: Buffer;
};

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
  }
  interface FastifyRequest {
    /** Set on every route that declares a scope; absent on public routes. */
    auth: AuthContext;
  }
  interface FastifyContextConfig {
    /** The scope a route needs (docs/api.md §2); `any` means any valid key or session. Internal scopes: console roles (src/users/roles.ts). */
    scope?: Scope | InternalScope | 'any';
    /** The error codes particular to the route, documented in /openapi.json with the common ones (errors/docs.ts). */
    errors?: ErrorCode[];
  }
}

/** The Fastify instance the `/v1` routes are registered on, typed by their TypeBox schemas. */
export type V1 = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

export function createServices(db: Db, config: AppConfig, mailer?: Mailer): Services {
  const apiKeys = new ApiKeysService(db);
  const domains = new DomainsService(db, {
    dnsServers: config.dnsServers ?? [], dnsTimeoutMs: config.dnsTimeoutMs,
    bounce: { mxHost: config.bounceMxHost ?? new URL(config.publicUrl).hostname, spf: config.sendingSpf ?? `a:${config.bounceMxHost ?? new URL(config.publicUrl).hostname}` },
  });
  const sessions = new SessionsService(db, config.publicUrl);
  return {
    apiKeys,
    workspaces: new WorkspacesService(db, apiKeys),
    forms: new FormsService(db),
    domains,
    contacts: new ContactsService(db),
    topics: new TopicsService(db),
    segments: new SegmentsService(db),
    templates: new TemplatesService(db),
    broadcasts: new BroadcastsService(db, config, domains, mailer ? { mailer, secret: config.secret } : undefined),
    unsubscribe: new UnsubscribeService(db),
    submissions: new SubmissionsService(db),
    suppressions: new SuppressionsService(db),
    bounces: new BouncesService(db),
    events: new EventsService(db),
    webhooks: new WebhooksService(db, { secret: config.secret, allowHttp: config.webhooks?.allowHttp ?? false, allowPrivate: config.webhooks?.allowPrivate ?? false }),
    sessions,
    users: new UsersService(db, sessions, { publicUrl: config.publicUrl, secret: config.secret, mailer }),
  };
}

const REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/** Public addresses whose last segment is a token: the segment is replaced in logs. */
const TOKEN_PATH = /^(\/(?:confirm|unsubscribe|t\/[a-z]|app\/(?:invite|reset))\/)[^/?#]+/;

/** A request URL as logged: tokens in the path and in `token=` query values replaced by [redacted]. */
export function redactUrl(url: string): string {
  return url.replace(TOKEN_PATH, '$1[redacted]').replace(/([?&]token=)[^&#]*/gi, '$1[redacted]');
}

export interface BuildOptions {
  db: Db;
  config: AppConfig;
  /** false silences logs (tests); otherwise pino at config.logLevel. */
  logger?: boolean;
  /** Where logs go (standard output by default); tests read them. */
  logStream?: { write(line: string): void };
  /** The mail transport of this process (test sends); without one, test sends answer 503. */
  mailer?: Mailer;
  /** What /readyz reports beside the database: the mail transport's state and the configuration's warnings. */
  status?: () => { transport?: TransportState; warnings: string[] };
}

export async function buildApp({ db, config, logger = true, logStream, status, mailer }: BuildOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: logger ? {
      level: config.logLevel,
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
    trustProxy: (config.trustProxy ?? false) as FastifyServerOptions['trustProxy'] & boolean,
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
  app.decorate('services', createServices(db, config, mailer));
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
      servers: [{ url: config.publicUrl }],
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
  await app.register(swaggerUi, { routePrefix: '/docs' });
  // The page every problem's `type` links to (/docs/errors#<code>).
  app.get('/docs/errors', { schema: { hide: true } }, (_req, reply) =>
    reply.type('text/html; charset=utf-8').header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'").send(errorsPage()));
  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());

  app.get('/healthz', { schema: { hide: true } }, () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (req, reply) => {
    try {
      await sql`select 1`.execute(db.kysely);
      return { status: 'ready', ...(status?.() ?? { warnings: [] }) };
    } catch (err) {
      req.log.warn({ err }, 'readiness check failed');
      return sendProblem(req, reply, unavailable('the database cannot be reached'));
    }
  });

  await app.register(unsubscribeRoutes, { service: app.services.unsubscribe });
  // The console's sign-in pages: exact addresses under /app (the console's own files take the rest).
  await app.register(usersPages, { users: app.services.users, sessions: app.services.sessions });
  // Opens and clicks (docs/tracking.md): public, the hottest paths; events are group-committed by the service's writer.
  await app.register(trackingRoutes, { service: new TrackingService(db, config.secret, app.log) });
  await app.register(hooksRoutes, {
    db, rules: reportRules(config.bounces),
    snsCertHost: config.hooks?.snsCertHost ?? /^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/,
    postmark: config.hooks?.postmarkUser && config.hooks.postmarkPassword ? { user: config.hooks.postmarkUser, password: config.hooks.postmarkPassword } : null,
  });
  await app.register(hostedRoutes, { submissions: app.services.submissions, publicUrl: config.publicUrl, submissionsPerMinute: config.submissionsPerMinute ?? 10 });
  // The web console's built files under /app (contract §14; console/ and src/console/console.routes.ts).
  await app.register(consoleRoutes, {});

  await app.register(async (v1) => {
    // /v1 accepts JSON bodies only (415 otherwise), under the input layer's rules (http/input.ts). An empty
    // body is "no body", so body-less POSTs such as publish work whatever Content-Type a client sends.
    v1.removeAllContentTypeParsers();
    registerBodyParsers(v1);

    // Every route that declares a scope authenticates first (docs/api.md §2); the scope is read once,
    // when the route is registered. An Authorization header means an API key; without one, the console's
    // session cookie (users/sessions.service.ts: 401 when dead, 403 csrf_failed for a write without
    // X-CSRF-Token). Both end in the same scope check: a session's scopes are its role's.
    v1.addHook('onRoute', (route) => {
      const scope = route.config?.scope;
      if (!scope) return;
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (methods.some((m) => m !== 'GET' && m !== 'HEAD' && m !== 'OPTIONS')) {
        route.config = { ...route.config, errors: [...(route.config?.errors ?? []), 'csrf_failed'] };
      }
      addRouteHook(route, 'onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
        req.auth = req.headers.authorization === undefined && req.headers.cookie?.includes(`${SESSION_COOKIE}=`)
          ? await app.services.sessions.authenticate(req, reply)
          : await app.services.apiKeys.authenticate(req.headers.authorization);
        if (scope !== 'any') ApiKeysService.authorize(req.auth, scope);
      });
    });
    // Requests are strict (docs/api.md §1): an operation that takes no body refuses one, except an empty
    // object, which many clients send by habit.
    v1.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (route.schema?.body || !methods.some((m) => m === 'POST' || m === 'PUT' || m === 'DELETE' || m === 'PATCH')) return;
      addRouteHook(route, 'preValidation', (req: FastifyRequest, _reply: unknown, done: (err?: Error) => void) => {
        const body = req.body;
        const empty = body === undefined || body === null || (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0);
        done(empty ? undefined : validationFailed([{ path: '/', message: 'this operation takes no request body' }]));
      });
    });
    registerIdempotency(v1, db);

    await v1.register(workspacesRoutes);
    await v1.register(apiKeysRoutes);
    await v1.register(formsRoutes);
    await v1.register(domainsRoutes);
    await v1.register(contactsRoutes);
    await v1.register(topicsRoutes);
    await v1.register(segmentsRoutes);
    await v1.register(templatesRoutes);
    await v1.register(broadcastsRoutes);
    await v1.register(submissionsRoutes);
    await v1.register(suppressionsRoutes);
    await v1.register(bouncesRoutes);
    await v1.register(eventsRoutes);
    await v1.register(webhooksRoutes);
    await v1.register(usersRoutes);
    await v1.register(contactStatsRoutes);
  }, { prefix: '/v1' });

  return app;
}
