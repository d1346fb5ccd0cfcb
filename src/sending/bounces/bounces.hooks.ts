import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../../db/connection.js';
import { workspaceOfDelivery } from '../deliveries/deliveries.repository.js';
import { parseJsonBody, registerBodyParsers } from '../../http/input.js';
import {
  postmarkEvent,
  sesEvent,
  snsUrlAllowed,
  verifySns,
  type ProviderEvent,
  type SnsMessage,
} from './bounces.providers.js';
import { applyDeliveryReport, type ReportRules } from './bounces.service.js';

export interface HooksOptions {
  db: Db;
  rules: ReportRules;
  /** Hosts SNS certificates and confirmation URLs may be on (SNS_CERT_HOST_PATTERN). */
  snsCertHost: RegExp;
  /** The SNS topics whose messages are accepted (SES_TOPIC_ARNS); empty: every SNS message is refused. */
  snsTopicArns: readonly string[];
  /** Postmark's basic auth (POSTMARK_WEBHOOK_USER / _PASSWORD); unset: the Postmark hook answers 404. */
  postmark: { user: string; password: string } | null;
}

const FETCH_TIMEOUT_MS = 10_000;

/**
 * Provider webhooks (docs/bounces.md): `POST /hooks/ses` takes SNS notifications (a subscription
 * confirmation is confirmed, Bounce and Complaint notifications are applied; every message's signature is
 * verified against its certificate first), `POST /hooks/postmark` takes Bounce and SpamComplaint webhooks
 * behind basic auth. Answers are plain JSON, 200 once applied (or ignored), 403 for a topic that is not configured
 * (SES_TOPIC_ARNS), a bad signature or a certificate that cannot be fetched.
 *
 * Anyone with an AWS account can create a topic and have SNS sign messages for it: a valid signature says only that
 * SNS sent it, not that the topic is ours. So the topic is checked first, before any certificate is fetched or any
 * subscription confirmed, and only a configured topic's messages are verified and applied.
 */
export async function hooksRoutes(app: FastifyInstance, opts: HooksOptions): Promise<void> {
  registerBodyParsers(app);
  // SNS posts JSON as text/plain.
  app.addContentTypeParser('text/plain', { parseAs: 'string', bodyLimit: 256 * 1024 }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  app.setErrorHandler((err: Error & { statusCode?: number }, req, reply) => {
    const status =
      err.statusCode && err.statusCode < 500 ? err.statusCode : ((err as { status?: number }).status ?? 500);
    if (status >= 500) req.log.error({ err }, 'provider hook failed');
    return reply.code(status).send({ ok: false, error: status >= 500 ? 'internal error' : err.message });
  });

  const topics = new Set(opts.snsTopicArns);
  const certs = new Map<string, string>();
  const fetchCert = async (url: URL): Promise<string> => {
    const cached = certs.get(url.href);
    if (cached) return cached;
    let pem: string;
    try {
      const res = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      pem = await res.text();
    } catch (err) {
      // Refused, unresolvable, timed out, not found: the request is not authenticated (403); a 500 would say the fault is ours.
      throw Object.assign(new Error(`the signing certificate could not be fetched (${(err as Error).message})`), {
        statusCode: 403,
      });
    }
    if (certs.size > 20) certs.clear();
    certs.set(url.href, pem);
    return pem;
  };

  const apply = async (event: ProviderEvent, log?: FastifyRequest['log']) => {
    if (event.kind === 'ignored') {
      if (event.warn) log?.warn({ reason: event.why }, 'a provider report could not be matched to a delivery');
      return { ok: true, applied: 0, ignored: event.why };
    }
    const workspaceId = await workspaceOfDelivery(opts.db.kysely, event.deliveryId);
    if (!workspaceId) return { ok: true, applied: 0, ignored: 'the delivery no longer exists' };
    const applied = await applyDeliveryReport(
      opts.db,
      opts.rules,
      workspaceId,
      event.deliveryId,
      event.kind === 'complaint'
        ? { kind: 'complaint', detail: event.detail }
        : {
            kind: 'bounce',
            results: event.results.map((r) => ({ recipient: r.email || null, class: r.class, detail: r.detail })),
          },
    );
    return { ok: true, applied };
  };

  app.post('/hooks/ses', { schema: { security: [] } }, async (req: FastifyRequest, reply: FastifyReply) => {
    const m = req.body as SnsMessage;
    if (!m || typeof m !== 'object' || typeof m.Type !== 'string')
      return reply.code(400).send({ ok: false, error: 'not an SNS message' });
    if (typeof m.TopicArn !== 'string' || !topics.has(m.TopicArn)) {
      const topic = typeof m.TopicArn === 'string' ? m.TopicArn.slice(0, 300) : null;
      if (!topics.size)
        req.log.warn(
          { topic, type: m.Type },
          'SNS message refused: SES_TOPIC_ARNS is not set, so /hooks/ses accepts no topic',
        );
      else req.log.warn({ topic, type: m.Type }, 'SNS message refused: its topic is not in SES_TOPIC_ARNS');
      return reply.code(403).send({ ok: false, error: 'the SNS topic is not accepted here (SES_TOPIC_ARNS)' });
    }
    if (!(await verifySns(m, opts.snsCertHost, fetchCert)))
      return reply.code(403).send({ ok: false, error: 'the SNS signature does not verify' });
    if (m.Type === 'SubscriptionConfirmation') {
      const url = m.SubscribeURL ? snsUrlAllowed(m.SubscribeURL, opts.snsCertHost) : null;
      if (!url) return reply.code(400).send({ ok: false, error: 'the SubscribeURL is not an SNS address' });
      const res = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) }).catch(
        (err: Error) => err,
      );
      if (res instanceof Error) {
        req.log.warn({ topic: m.TopicArn, err: res.message }, 'SNS subscription could not be confirmed');
        return reply.code(502).send({ ok: false, confirmed: false, error: 'the SubscribeURL could not be fetched' });
      }
      req.log.info({ topic: m.TopicArn, status: res.status }, 'SNS subscription confirmed');
      return { ok: res.ok, confirmed: res.ok };
    }
    if (m.Type !== 'Notification') return { ok: true, applied: 0, ignored: `an SNS ${m.Type}` };
    return apply(sesEvent(m.Message), req.log);
  });

  app.post(
    '/hooks/postmark',
    {
      schema: { security: [] },
      // Before the body is read: a caller without the credentials gets 401 whatever it sent (a body that is not JSON
      // included), and its body is never parsed.
      onRequest: async (req: FastifyRequest, reply: FastifyReply) => {
        if (!opts.postmark)
          return reply.code(404).send({
            ok: false,
            error: 'the Postmark hook is not configured (POSTMARK_WEBHOOK_USER, POSTMARK_WEBHOOK_PASSWORD)',
          });
        if (!basicAuthMatches(req.headers.authorization, opts.postmark))
          return reply
            .code(401)
            .header('www-authenticate', 'Basic realm="formcast"')
            .send({ ok: false, error: 'unauthorized' });
      },
    },
    async (req: FastifyRequest) => apply(postmarkEvent(req.body)),
  );
}

function basicAuthMatches(header: string | undefined, expected: { user: string; password: string }): boolean {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header ?? '');
  if (!m) return false;
  const given = crypto.createHash('sha256').update(Buffer.from(m[1]!, 'base64')).digest();
  const want = crypto.createHash('sha256').update(`${expected.user}:${expected.password}`).digest();
  return crypto.timingSafeEqual(given, want);
}
