import { DomainError } from '../../errors/errors.js';
import { paginate } from '../../http/pagination.js';
import { ListOf } from '../../http/schema-helpers.js';
import type { V1 } from '../../http/types.js';
import type { EmailsService } from './emails.service.js';
import { WindowCounter } from '../../lib/window-counter.js';
import {
  EmailDetailSchema,
  EmailEventsSchema,
  EmailListQuery,
  EmailParams,
  EmailSchema,
  SendEmailBody,
  SendEmailResponse,
} from './emails.schemas.js';

/** Attachments of 10 MiB in base64 (×4/3), with html and text of 2 MiB each, JSON-escaped. */
const bodyLimit = 20 * 1024 * 1024;

/** POST /v1/emails per API key (or console session) and minute by default (EMAILS_RATE_LIMIT, docs/emails.md). */
export const DEFAULT_EMAILS_RATE_LIMIT = 600;

/**
 * A fixed window of a minute per caller, in this process's memory (as the /v1 limit: with several processes each
 * counts its own). Counted after authentication, before the body is checked: refused requests count too.
 */
function emailsRateLimit(perMinute: number) {
  const windows = new WindowCounter(perMinute, 60_000, 10_000);
  return (caller: string, now = Date.now()) => {
    if (perMinute <= 0) return;
    const waitMs = windows.hit(caller, now);
    if (waitMs > 0) {
      const after = Math.max(1, Math.ceil(waitMs / 1000));
      throw new DomainError(
        'rate_limited',
        `at most ${perMinute} emails a minute per API key; retry after ${after} s (EMAILS_RATE_LIMIT)`,
        { headers: { 'retry-after': String(after) } },
      );
    }
  };
}

/** Transactional email (contract §20, docs/emails.md): `send:emails` sends, and reads what was sent. */
export async function emailsRoutes(
  app: V1,
  { emails, rateLimitPerMinute }: { emails: EmailsService; rateLimitPerMinute: number },
): Promise<void> {
  const limit = emailsRateLimit(rateLimitPerMinute);

  app.post(
    '/emails',
    {
      schema: { body: SendEmailBody, response: { 202: SendEmailResponse } },
      config: { scope: 'send:emails', errors: ['sender_domain_not_verified', 'invalid_reference', 'rate_limited'] },
      bodyLimit,
      preValidation: (req, _reply, done) => {
        try {
          limit(req.auth.keyId ? `key:${req.auth.keyId}` : `session:${req.auth.sessionId ?? ''}`);
        } catch (err) {
          return done(err as Error);
        }
        done();
      },
    },
    async (req, reply) => {
      const sent = await emails.sendEmail(req.auth.workspaceId, req.auth.keyId ?? null, req.body);
      return reply.code(202).header('location', `/v1/emails/${sent.id}`).send(sent);
    },
  );

  app.get(
    '/emails',
    {
      schema: { querystring: EmailListQuery, response: { 200: ListOf(EmailSchema) } },
      config: { scope: 'send:emails' },
    },
    (req) => {
      const { limit: _l, cursor: _c, ...filter } = req.query;
      return paginate(req.query, (w) => emails.list(req.auth.workspaceId, filter, w.limit, w.beforeId));
    },
  );

  app.get(
    '/emails/:emailId',
    {
      schema: { params: EmailParams, response: { 200: EmailDetailSchema } },
      config: { scope: 'send:emails' },
    },
    (req) => emails.get(req.auth.workspaceId, req.params.emailId),
  );

  app.get(
    '/emails/:emailId/events',
    {
      schema: { params: EmailParams, response: { 200: EmailEventsSchema } },
      config: { scope: 'send:emails' },
    },
    async (req) => ({ data: await emails.events(req.auth.workspaceId, req.params.emailId) }),
  );
}
