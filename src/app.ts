import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { OPERATION_DOCS } from './app.docs.js';
import { ApiKeysService } from './access/api-keys/api-keys.service.js';
import { AutomationEngine, DEFAULT_ENGINE } from './integrations/automations/automations.engine.js';
import { automationsRoutes } from './integrations/automations/automations.routes.js';
import { AutomationsService } from './integrations/automations/automations.service.js';
import { apiKeysRoutes } from './access/api-keys/api-keys.routes.js';
import type { AppConfig } from './config.js';
import type { Db } from './db/connection.js';
import { messageSourcesOf } from './composition/message-sources.js';
import { archiveRoutes } from './sending/archive/archive.routes.js';
import { ArchiveService } from './sending/archive/archive.service.js';
import { hooksRoutes } from './sending/bounces/bounces.hooks.js';
import { bouncesRoutes } from './sending/bounces/bounces.routes.js';
import { BouncesService, reportRules } from './sending/bounces/bounces.service.js';
import { broadcastsRoutes } from './sending/broadcasts/broadcasts.routes.js';
import { BroadcastsService } from './sending/broadcasts/broadcasts.service.js';
import { DocumentsService } from './sending/documents/documents.service.js';
import { documentsRoutes } from './sending/documents/documents.routes.js';
import { consoleRoutes } from './access/console/console.routes.js';
import { getWorkspace } from './access/index.js';
import { contactStatsRoutes } from './audience/contacts/contacts.stats.routes.js';
import { contactsRoutes } from './audience/contacts/contacts.routes.js';
import { ContactsService, contactIdOf } from './audience/contacts/contacts.service.js';
import { applyToAddress } from './audience/contacts/contacts.lifecycle.js';
import { domainsRoutes } from './mail-setup/domains/domains.routes.js';
import { DomainsService } from './mail-setup/domains/domains.service.js';
import { dmarcRoutes } from './mail-setup/dmarc/dmarc.routes.js';
import { DmarcService } from './mail-setup/dmarc/dmarc.service.js';
import { unavailable } from './errors/errors.js';
import { eventsRoutes } from './outbox/events/events.routes.js';
import { EventsService } from './outbox/events/events.service.js';
import { auditRoutes } from './outbox/audit/audit.routes.js';
import { AuditService } from './outbox/audit/audit.service.js';
import { formsRoutes } from './forms/forms/forms.routes.js';
import { FormsService } from './forms/forms/forms.service.js';
import { hostedRoutes } from './forms/hosted/hosted.routes.js';
import { registerRequestRules } from './http/auth.js';
import { registerIdempotency } from './http/idempotency.js';
import { registerBodyParsers } from './http/input.js';
import { registerApiRateLimit } from './http/rate-limit.js';
import { sendProblem } from './http/problem.js';
import { socialIconRoutes } from './pages/social-icons.js';
import { createServer } from './http/server.js';
import type { Mailer, TransportState } from './mail/transport.js';
import { segmentsRoutes } from './audience/segments/segments.routes.js';
import { bulkRoutes } from './audience/bulk/bulk.routes.js';
import { BulkService } from './audience/bulk/bulk.service.js';
import { SegmentsService, contactPagesOf } from './audience/segments/segments.service.js';
import { submissionsRoutes } from './forms/submissions/submissions.routes.js';
import { SubmissionsService } from './forms/submissions/submissions.service.js';
import { ProtectionService } from './forms/protection/protection.service.js';
import { suppressionsRoutes } from './audience/suppressions/suppressions.routes.js';
import { SuppressionsService } from './audience/suppressions/suppressions.service.js';
import { imagePublicRoutes, imagesRoutes } from './mail-setup/images/images.routes.js';
import { ImagesService } from './mail-setup/images/images.service.js';
import { templatesRoutes } from './mail-setup/templates/templates.routes.js';
import { emailsRoutes, DEFAULT_EMAILS_RATE_LIMIT } from './sending/emails/emails.routes.js';
import { EmailsService } from './sending/emails/emails.service.js';
import { TemplatesService } from './mail-setup/templates/templates.service.js';
import { topicsRoutes } from './audience/topics/topics.routes.js';
import { TopicsService } from './audience/topics/topics.service.js';
import { trackingRoutes } from './sending/tracking/tracking.routes.js';
import { TrackingService } from './sending/tracking/tracking.service.js';
import { DEFAULT_WRITER_OPTIONS } from './sending/tracking/tracking.writer.js';
import { unsubscribeRoutes } from './sending/unsubscribe/unsubscribe.routes.js';
import { UnsubscribeService } from './sending/unsubscribe/unsubscribe.service.js';
import { SessionsService } from './access/users/sessions.service.js';
import { usersPages } from './access/users/users.pages.js';
import { usersRoutes } from './access/users/users.routes.js';
import { UsersService } from './access/users/users.service.js';
import { AccountService } from './access/users/account.service.js';
import { accountRoutes } from './access/users/account.routes.js';
import { WebhooksService } from './integrations/webhooks/webhooks.service.js';
import { webhooksRoutes } from './integrations/webhooks/webhooks.routes.js';
import { WorkspacesService } from './access/workspaces/workspaces.service.js';
import { workspacesRoutes } from './access/workspaces/workspaces.routes.js';

/**
 * The composition root: the one place that knows every feature. It builds the services (createServices) and
 * registers each feature's routes on the HTTP plumbing of src/http/ (buildApp). Features never import it: they
 * are handed their services as plugin options, so imports run from here to the features and from the features
 * down to plumbing (http/, db/, mail/, lib/, errors/).
 */
export interface Services {
  apiKeys: ApiKeysService;
  workspaces: WorkspacesService;
  forms: FormsService;
  domains: DomainsService;
  dmarc: DmarcService;
  contacts: ContactsService;
  topics: TopicsService;
  segments: SegmentsService;
  bulk: BulkService;
  templates: TemplatesService;
  images: ImagesService;
  broadcasts: BroadcastsService;
  /** Transactional email (docs/emails.md); the SMTP submission server calls its sendEmail too. */
  emails: EmailsService;
  archive: ArchiveService;
  documents: DocumentsService;
  unsubscribe: UnsubscribeService;
  submissions: SubmissionsService;
  suppressions: SuppressionsService;
  bounces: BouncesService;
  events: EventsService;
  audit: AuditService;
  webhooks: WebhooksService;
  sessions: SessionsService;
  users: UsersService;
  account: AccountService;
  automations: AutomationsService;
  protection: ProtectionService;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The services the app was built with (tests and the CLI reach them here; routes get theirs as options). */
    services: Services;
  }
}

export function createServices(db: Db, config: AppConfig, mailer?: Mailer): Services {
  const apiKeys = new ApiKeysService(db);
  const bounceHost = config.bounceMxHost ?? new URL(config.publicUrl).hostname;
  const domains = new DomainsService(db, {
    dnsServers: config.dnsServers ?? [],
    dnsTimeoutMs: config.dnsTimeoutMs,
    bounce: { mxHost: bounceHost, spf: config.sendingSpf ?? `a:${bounceHost}` },
    relay: { profile: config.relayProfile ?? 'smtp', sesRegion: config.sesRegion ?? null },
    trackingTarget: new URL(config.publicUrl).hostname,
    secret: config.secret,
  });
  const sessions = new SessionsService(db, config.publicUrl);
  const consoleOpts = { publicUrl: config.publicUrl, secret: config.secret, mailer };
  const account = new AccountService(db, sessions, consoleOpts);
  const webhooks = new WebhooksService(db, {
    secret: config.secret,
    allowHttp: config.webhooks?.allowHttp ?? false,
    allowPrivate: config.webhooks?.allowPrivate ?? false,
  });
  // The API starts runs only for the api trigger, through the engine's entry rule; the jobs walk them (jobs.ts).
  const engine = new AutomationEngine(db, webhooks, {
    ...DEFAULT_ENGINE,
    ...config.automations,
    workerId: 'api',
    clock: Date.now,
  });
  const protection = new ProtectionService(db, {
    secret: config.secret,
    bursts: config.signupBursts,
    pow: config.proofOfWork,
  });
  return {
    apiKeys,
    workspaces: new WorkspacesService(db, apiKeys),
    forms: new FormsService(db),
    domains,
    dmarc: new DmarcService(db),
    contacts: new ContactsService(db, { contactPages: contactPagesOf(db), messageSources: messageSourcesOf(db) }),
    topics: new TopicsService(db),
    segments: new SegmentsService(db),
    bulk: new BulkService(db),
    templates: new TemplatesService(db, {
      publicUrl: config.publicUrl,
      localeOf: async (workspaceId) => (await getWorkspace(db.kysely, workspaceId))?.settings.locale,
    }),
    images: new ImagesService(db, { publicUrl: config.publicUrl }),
    broadcasts: new BroadcastsService(db, config, domains, mailer ? { mailer, secret: config.secret } : undefined),
    emails: new EmailsService(db),
    archive: new ArchiveService(db, { publicUrl: config.publicUrl, secret: config.secret }),
    documents: new DocumentsService(db, { publicUrl: config.publicUrl }),
    unsubscribe: new UnsubscribeService(db),
    submissions: new SubmissionsService(db, { protection, intake: config.submissionIntake }),
    suppressions: new SuppressionsService(db, applyToAddress, messageSourcesOf(db)),
    bounces: new BouncesService(db),
    events: new EventsService(
      db,
      { contactIdOf: (workspaceId, ref) => contactIdOf(db.kysely, workspaceId, ref) },
      config.trackQuota,
    ),
    audit: new AuditService(db),
    webhooks,
    sessions,
    users: new UsersService(db, sessions, consoleOpts, account),
    account,
    automations: new AutomationsService(db, webhooks, engine, { publicUrl: config.publicUrl }),
    protection,
  };
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

/** The addresses of the machine itself, as Fastify gives a caller's (`req.ip`). */
const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

export async function buildApp({
  db,
  config,
  logger = true,
  logStream,
  status,
  mailer,
}: BuildOptions): Promise<FastifyInstance> {
  const app = await createServer({
    logLevel: config.logLevel,
    publicUrl: config.publicUrl,
    trustProxy: config.trustProxy,
    logger,
    logStream,
  });
  const services = createServices(db, config, mailer);
  app.decorate('services', services);
  // The API reference's prose and examples (each feature's *.docs.ts), added to /openapi.json.
  app.documentOperations(...OPERATION_DOCS);

  app.get('/readyz', { schema: { hide: true } }, async (req, reply) => {
    try {
      await sql`select 1`.execute(db.kysely);
      // The transport's state and the configuration's warnings (paths, relays and their errors) for the machine itself
      // only: a caller on loopback, not through a proxy (docs/api.md). Anyone else learns that the server is ready.
      const local =
        LOOPBACK.has(req.ip) && req.headers['x-forwarded-for'] === undefined && req.headers.forwarded === undefined;
      return local ? { status: 'ready', ...(status?.() ?? { warnings: [] }) } : { status: 'ready' };
    } catch (err) {
      req.log.warn({ err }, 'readiness check failed');
      return sendProblem(req, reply, unavailable('the database cannot be reached'));
    }
  });

  await app.register(unsubscribeRoutes, { service: services.unsubscribe });
  // The console's sign-in pages: exact addresses under /app (the console's own files take the rest).
  await app.register(usersPages, { users: services.users, sessions: services.sessions, account: services.account });
  // Opens and clicks (docs/tracking.md): public, the hottest paths; events are group-committed by the service's writer.
  await app.register(trackingRoutes, {
    service: new TrackingService(db, config.secret, app.log, DEFAULT_WRITER_OPTIONS, config.tracking),
  });
  await app.register(hooksRoutes, {
    db,
    rules: reportRules(config.bounces),
    snsCertHost: config.hooks?.snsCertHost ?? /^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/,
    snsTopicArns: config.hooks?.snsTopicArns ?? [],
    postmark:
      config.hooks?.postmarkUser && config.hooks.postmarkPassword
        ? { user: config.hooks.postmarkUser, password: config.hooks.postmarkPassword }
        : null,
  });
  await app.register(hostedRoutes, {
    submissions: services.submissions,
    protection: services.protection,
    publicUrl: config.publicUrl,
    submissionsPerMinute: config.submissionsPerMinute ?? 10,
  });
  // The web version of a message and the public archive with its feed (docs/archive.md).
  await app.register(archiveRoutes, { archive: services.archive, publicUrl: config.publicUrl });
  // Uploaded images (docs/images.md): public, what emails show.
  await app.register(imagePublicRoutes, { images: services.images });
  // The web console's built files under /app (contract §14; console/ and src/access/console/console.routes.ts).
  await app.register(consoleRoutes, {});
  // The icons of social links in emails (src/mail/blocks), public under /assets/social/.
  await app.register(socialIconRoutes, {});

  await app.register(
    async (v1) => {
      // /v1 accepts JSON bodies only (415 otherwise), under the input layer's rules (http/input.ts). An empty
      // body is "no body", so body-less POSTs such as publish work whatever Content-Type a client sends.
      v1.removeAllContentTypeParsers();
      registerBodyParsers(v1);
      registerRequestRules(v1, {
        sessionCookie: services.sessions.cookieName,
        apiKey: (header) => services.apiKeys.authenticate(header),
        apiKeyNow: (header) => services.apiKeys.authenticateNow(header),
        session: (req, reply) => services.sessions.authenticate(req, reply),
      });
      // Per API key or console session (docs/api.md §1); off unless configured (loadConfig's default: RATE_LIMIT_PER_KEY).
      await registerApiRateLimit(v1, { perMinute: config.apiRateLimit ?? 0 });
      registerIdempotency(v1, db);

      await v1.register(workspacesRoutes, {
        workspaces: services.workspaces,
        twoFactorEnabled: (workspaceId, userId) => services.account.twoFactorEnabled(workspaceId, userId),
      });
      await v1.register(apiKeysRoutes, { apiKeys: services.apiKeys });
      await v1.register(formsRoutes, { forms: services.forms });
      await v1.register(domainsRoutes, { domains: services.domains });
      await v1.register(dmarcRoutes, { dmarc: services.dmarc });
      await v1.register(contactsRoutes, { contacts: services.contacts });
      await v1.register(topicsRoutes, { topics: services.topics });
      await v1.register(segmentsRoutes, { segments: services.segments });
      await v1.register(bulkRoutes, { bulk: services.bulk });
      await v1.register(templatesRoutes, { templates: services.templates });
      await v1.register(imagesRoutes, { images: services.images });
      await v1.register(broadcastsRoutes, { broadcasts: services.broadcasts });
      await v1.register(emailsRoutes, {
        emails: services.emails,
        rateLimitPerMinute: config.emailsRateLimit ?? DEFAULT_EMAILS_RATE_LIMIT,
      });
      await v1.register(documentsRoutes, { documents: services.documents });
      await v1.register(submissionsRoutes, { submissions: services.submissions });
      await v1.register(suppressionsRoutes, { suppressions: services.suppressions });
      await v1.register(bouncesRoutes, { bounces: services.bounces });
      await v1.register(eventsRoutes, { events: services.events });
      await v1.register(auditRoutes, { audit: services.audit });
      await v1.register(webhooksRoutes, { webhooks: services.webhooks });
      await v1.register(usersRoutes, {
        users: services.users,
        sessions: services.sessions,
        workspaces: services.workspaces,
        account: services.account,
      });
      await v1.register(accountRoutes, { account: services.account });
      await v1.register(contactStatsRoutes, { contacts: services.contacts });
      await v1.register(automationsRoutes, { automations: services.automations });
    },
    { prefix: '/v1' },
  );

  return app;
}
