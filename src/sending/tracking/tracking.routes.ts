import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PAGE_CSP, page } from '../../pages/layout.js';
import type { TrackingService } from './tracking.service.js';

/**
 * The two public tracking endpoints (docs/tracking.md), the hottest paths of the service: after a large send every
 * open and click lands here. No key, no template, no database read: verify the token, classify, queue the event
 * for the group-commit writer, answer once it is committed. Their request log lines are off (warn level): one
 * line per open would be the largest cost of the request.
 *
 * The routes are wildcards because tokens (a click token carries its URL) are longer than the router's limit
 * for a path parameter; a token never contains `/`, so anything with one does not verify.
 */

/** A 1×1 transparent GIF, 43 bytes. */
export const PIXEL_GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');

const NOT_FOUND = page(
  'Link not found',
  '<h1>This link is not valid</h1><p>It may be mistyped, or cut short by your mail program. Try to open the link from the message again.</p>',
);
const UNAVAILABLE = page(
  'Try again',
  '<h1>Please try again</h1><p>This link cannot be followed right now. Try again in a moment.</p>',
);

const TOKEN_PARAMS = {
  type: 'object',
  properties: { '*': { type: 'string', description: 'the signed token from the message' } },
} as const;

function htmlPage(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', PAGE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store')
    .send(html);
}

/**
 * The URL as a Location header can carry it. The rewriter signs WHATWG-normalised URLs (ASCII only), so this is a
 * test and nothing more on the hot path; a token signed with anything else (an older rewriter, a hand-made link)
 * is normalised here rather than failing the header with a 500 (issue 29's sweep: `https://例え.jp/ありがとう`).
 */
export function locationOf(url: string): string {
  return /^[\x21-\x7e]*$/.test(url) ? url : new URL(url).href;
}

function hitOf(req: FastifyRequest) {
  const ua = req.headers['user-agent'];
  return { userAgent: typeof ua === 'string' ? ua : undefined, ip: req.ip, method: req.method };
}

export async function trackingRoutes(app: FastifyInstance, opts: { service: TrackingService }): Promise<void> {
  const service = opts.service;
  app.addHook('onClose', async () => service.close());

  app.get<{ Params: { '*': string } }>(
    '/t/o/*',
    {
      logLevel: 'warn',
      schema: {
        security: [],
        params: TOKEN_PARAMS,
      },
    },
    async (req, reply) => {
      const ref = service.verifyOpen(req.params['*']);
      if (ref) {
        try {
          await service.open(ref, hitOf(req));
        } catch (err) {
          // Answered with the pixel only once recorded (contract §12: no event lost once answered). A reader sees no
          // difference; the mail client may fetch it again.
          req.log.error({ err }, 'an open could not be recorded');
          return reply.code(503).header('retry-after', '5').header('cache-control', 'no-store, max-age=0').send();
        }
      }
      return reply
        .code(200)
        .header('content-type', 'image/gif')
        .header('cache-control', 'no-store, max-age=0')
        .header('pragma', 'no-cache')
        .header('expires', '0')
        .header('x-content-type-options', 'nosniff')
        .send(PIXEL_GIF);
    },
  );

  app.get<{ Params: { '*': string } }>(
    '/t/c/*',
    {
      logLevel: 'warn',
      schema: {
        security: [],
        params: TOKEN_PARAMS,
      },
    },
    async (req, reply) => {
      const ref = service.verifyClick(req.params['*']);
      if (!ref) return htmlPage(reply, 404, NOT_FOUND);
      try {
        await service.click(ref, hitOf(req));
      } catch (err) {
        // Answered only once recorded: a click that could not be written is not followed (the reader may retry).
        req.log.error({ err }, 'a click could not be recorded');
        return htmlPage(reply.header('retry-after', '5'), 503, UNAVAILABLE);
      }
      return reply
        .code(302)
        .header('location', locationOf(ref.url))
        .header('cache-control', 'no-store, max-age=0')
        .header('referrer-policy', 'no-referrer')
        .send();
    },
  );
}
