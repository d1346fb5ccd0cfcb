import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sendCompressedOnce } from '../../lib/compress.js';
import { SLUG_PARAMS, perVisitorAndForm } from '../../http/public-routes.js';
import type { PublishedForm } from '../forms/forms.repository.js';
import { widgetAsset } from './protection.assets.js';
import { WidgetAssetParams } from './protection.schemas.js';
import type { ProtectionService } from './protection.service.js';

/** What these routes need of the published forms (submissions.service.ts SubmissionsService, which sits above protection). */
export interface PublicForms {
  /** The PUBLISHED form at a public slug, or 404. */
  publishedBySlug(slug: string): Promise<PublishedForm>;
  /** Adds one to the form's views. */
  recordView(workspaceId: string, formId: string, visitor?: string): Promise<void>;
}

export interface ProtectionRoutesOptions {
  protection: ProtectionService;
  submissions: PublicForms;
}

const SLUG = SLUG_PARAMS;
/** Impressions counted per visitor (IP address) and form a minute. */
export const IMPRESSIONS_PER_MINUTE = 10;
const CORS = { 'access-control-allow-origin': '*' };

const perIpAndSlug = (max: number) => perVisitorAndForm(max, { perRoute: true });

/**
 * The public side of sign-up protection (docs/bot-protection.md), registered inside the hosted routes (their
 * error pages, CORS and rate limiter): the widget's files, a form's proof-of-work challenge, and the beacon with which
 * an embed reports its impression. No key: a hostile caller is assumed (rate limits; the proof-of-work challenge is signed and its solution single-use).
 */
export function protectionPublicRoutes(
  app: FastifyInstance,
  { protection, submissions }: ProtectionRoutesOptions,
): void {
  app.get(
    '/assets/altcha/:name',
    { schema: { security: [], params: WidgetAssetParams } },
    async (req: FastifyRequest<{ Params: WidgetAssetParams }>, reply) => {
      const asset = widgetAsset(req.params.name);
      // The addresses carry the widget's version (?v=): cached for long.
      reply
        .headers(CORS)
        .type(asset.type)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('x-content-type-options', 'nosniff');
      return sendCompressedOnce(req, reply, asset, req.params.name, () => asset.body);
    },
  );

  app.get(
    '/f/:slug/challenge',
    {
      schema: { security: [], params: SLUG },
      config: { rateLimit: perIpAndSlug(30) },
    },
    async (req: FastifyRequest<{ Params: { slug: string } }>, reply) => {
      const form = await submissions.publishedBySlug(req.params.slug);
      reply.headers(CORS).header('cache-control', 'no-store');
      return protection.challenge(form);
    },
  );

  app.options('/f/:slug/impression', { schema: { hide: true, params: SLUG } }, async (_req, reply) =>
    reply
      .code(204)
      .headers({ ...CORS, 'access-control-allow-methods': 'POST' })
      .send(),
  );

  app.post(
    '/f/:slug/impression',
    {
      schema: { security: [], params: SLUG },
      // A page view reports one impression: more than a few a minute from one visitor to one form is not a person.
      config: { rateLimit: perIpAndSlug(IMPRESSIONS_PER_MINUTE) },
    },
    async (req: FastifyRequest<{ Params: { slug: string } }>, reply) => {
      reply.headers(CORS).header('cache-control', 'no-store');
      const form = await submissions.publishedBySlug(req.params.slug);
      await submissions.recordView(form.workspaceId, form.id, req.ip);
      return reply.code(204).send();
    },
  );
}
