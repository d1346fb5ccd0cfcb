import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/connection.js';
import { workspaceOfDelivery } from '../deliveries/deliveries.repository.js';
import { parseJsonBody, registerBodyParsers } from '../http/input.js';
import { postmarkEvent, sesEvent, snsUrlAllowed, verifySns, type ProviderEvent, type SnsMessage } from './bounces.providers.js';
import { applyDeliveryReport, type ReportRules } from './bounces.service.js';

export interface HooksOptions {
  db: Db;
  rules: ReportRules;
  /** Hosts SNS certificates and confirmation URLs may be on (SNS_CERT_HOST_PATTERN). */
  snsCertHost: RegExp;
  /** Postmark's basic auth (POSTMARK_WEBHOOK_USER / _PASSWORD); unset: the Postmark hook answers 404. */
  postmark: { user: string; password: string } | null;
}

const FETCH_TIMEOUT_MS = 10_000;

/**
 * Provider webhooks (docs/bounces.md): `POST /hooks/ses` takes SNS notifications (a subscription
 * confirmation is confirmed, Bounce and Complaint notifications are applied; every message's signature is
 * verified against its certificate first), `POST /hooks/postmark` takes Bounce and SpamComplaint webhooks
 * behind basic auth. Answers are plain JSON, 200 once applied (or ignored), 403 for a bad signature.
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
    const status = err.statusCode && err.statusCode < 500 ? err.statusCode : (err as { status?: number }).status ?? 500;
    if (status >= 500) req.log.error({ err }, 'provider hook failed');
    return reply.code(status).send({ ok: false, error: status >= 500 ? 'internal error' : err.message });
  });

  const certs = new Map<string, string>();
  const fetchCert = async (url: URL): Promise<string> => {
    const cached = certs.get(url.href);
    if (cached) return cached;
    const res = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    if (!res.ok) throw Object.assign(new Error(`the signing certificate could not be fetched (${res.status})`), { statusCode: 403 });
    const pem = await res.text();
    if (certs.size > 20) certs.clear();
    certs.set(url.href, pem);
    return pem;
  };

  const apply = async (event: ProviderEvent) => {
    if (event.kind === 'ignored') return { ok: true, applied: 0, ignored: event.why };
    const workspaceId = await workspaceOfDelivery(opts.db.kysely, event.deliveryId);
    if (!workspaceId) return { ok: true, applied: 0, ignored: 'the delivery no longer exists' };
    const applied = await applyDeliveryReport(opts.db, opts.rules, workspaceId, event.deliveryId, event.kind === 'complaint'
      ? { kind: 'complaint', detail: event.detail }
      : { kind: 'bounce', results: event.results.map((r) => ({ recipient: r.email || null, class: r.class, detail: r.detail })) });
    return { ok: true, applied };
  };

  app.post('/hooks/ses', { schema: { tags: ['public'], summary: 'Amazon SES bounce and complaint notifications through SNS (signature verified)', security: [] } }, async (req: FastifyRequest, reply: FastifyReply) => {
    const m = req.body as SnsMessage;
    if (!m || typeof m !== 'object' || typeof m.Type !== 'string') return reply.code(400).send({ ok: false, error: 'not an SNS message' });
    if (!(await verifySns(m, opts.snsCertHost, fetchCert))) return reply.code(403).send({ ok: false, error: 'the SNS signature does not verify' });
    if (m.Type === 'SubscriptionConfirmation') {
      const url = m.SubscribeURL ? snsUrlAllowed(m.SubscribeURL, opts.snsCertHost) : null;
      if (!url) return reply.code(400).send({ ok: false, error: 'the SubscribeURL is not an SNS address' });
      const res = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
      req.log.info({ topic: m.TopicArn, status: res.status }, 'SNS subscription confirmed');
      return { ok: res.ok, confirmed: res.ok };
    }
    if (m.Type !== 'Notification') return { ok: true, applied: 0, ignored: `an SNS ${m.Type}` };
    return apply(sesEvent(m.Message));
  });

  app.post('/hooks/postmark', { schema: { tags: ['public'], summary: 'Postmark Bounce and SpamComplaint webhooks (basic auth)', security: [] } }, async (req: FastifyRequest, reply: FastifyReply) => {
    if (!opts.postmark) return reply.code(404).send({ ok: false, error: 'the Postmark hook is not configured (POSTMARK_WEBHOOK_USER, POSTMARK_WEBHOOK_PASSWORD)' });
    if (!basicAuthMatches(req.headers.authorization, opts.postmark)) {
      return reply.code(401).header('www-authenticate', 'Basic realm="formcast"').send({ ok: false, error: 'unauthorized' });
    }
    return apply(postmarkEvent(req.body));
  });
}

function basicAuthMatches(header: string | undefined, expected: { user: string; password: string }): boolean {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header ?? '');
  if (!m) return false;
  const given = crypto.createHash('sha256').update(Buffer.from(m[1]!, 'base64')).digest();
  const want = crypto.createHash('sha256').update(`${expected.user}:${expected.password}`).digest();
  return crypto.timingSafeEqual(given, want);
}
