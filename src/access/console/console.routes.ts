/**
 * The web console (contract §14) as built by `npm run build:console` into dist/console:
 * - `GET /app/assets/<file>`: the hashed, immutable assets, cached for a year. Only plain file names of that
 *   one folder are served (no sub-folders, no dot segments), so no request can read outside it.
 *   When the build left `<file>.br` / `<file>.gz` beside an asset (console/vite.config.ts), the one the
 *   request's Accept-Encoding prefers is sent instead, with `Content-Encoding` and `Vary: Accept-Encoding`.
 * - `GET /app` and `GET /app/*`: index.html, never cached, under a strict Content-Security-Policy; the
 *   single-page app routes on the client. Every answer carries a fresh nonce: in the CSP's style-src and in
 *   index.html's `<meta property="csp-nonce" nonce="…">` (the `__CSP_NONCE__` placeholder), which the app
 *   hands to CodeMirror for the one <style> element it makes. Scripts stay `'self'` only. Exact routes of the sign-in pages (/app/login, /app/logout,
 *   /app/invite/…, /app/reset…) are registered elsewhere and win over the wildcard.
 * - `GET /`: a redirect (302) to /app.
 * Without a build, /app answers 503 with a page that says how to build it.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { negotiateEncoding, sendCompressed } from '../../lib/compress.js';
import { PACKAGE_ROOT } from '../../lib/paths.js';
import { sendPage } from '../../pages/layout.js';

export const CONSOLE_DIR = path.join(PACKAGE_ROOT, 'dist/console');

/** The console's Content-Security-Policy for one answer of index.html, whose <meta property="csp-nonce"> carries `nonce`. */
export function consoleCsp(nonce: string): string {
  return `default-src 'self'; img-src 'self' data: https:; style-src 'self' 'nonce-${nonce}'; script-src 'self'; connect-src 'self'; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'`;
}

/** The placeholder of the nonce in the built index.html. */
export const NONCE_PLACEHOLDER = '__CSP_NONCE__';

/** Types worth compressing (the build pre-compresses these). */
const COMPRESSIBLE = new Set(['.js', '.mjs', '.css', '.svg', '.json', '.map', '.txt', '.html', '.wasm']);

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
};

/** A file name as the build writes them: letters, digits, `.`, `_`, `-`; never a dot file or a dot segment. */
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,200}$/;

export interface ConsoleOptions {
  /** The built console (default: dist/console at the repository's root). */
  dir?: string;
}

export async function consoleRoutes(app: FastifyInstance, opts: ConsoleOptions): Promise<void> {
  const dir = path.resolve(opts.dir ?? CONSOLE_DIR);
  const assets = path.join(dir, 'assets');

  const notFound = (reply: FastifyReply) =>
    reply
      .code(404)
      .type('text/plain; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .send('Not found');

  app.get('/app/assets/*', { schema: { hide: true } }, async (req, reply) => {
    const name = (req.params as { '*': string })['*'];
    if (!ASSET_NAME.test(name) || name.includes('..')) return notFound(reply);
    const file = path.join(assets, name);
    // Belt and braces: the resolved path must still be directly inside the assets folder.
    if (path.dirname(file) !== assets) return notFound(reply);
    let stat: fs.Stats;
    try {
      stat = await fs.promises.stat(file);
    } catch {
      return notFound(reply);
    }
    if (!stat.isFile()) return notFound(reply);
    reply
      .type(TYPES[path.extname(name).toLowerCase()] ?? 'application/octet-stream')
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff');
    if (COMPRESSIBLE.has(path.extname(name).toLowerCase())) {
      reply.header('vary', 'Accept-Encoding');
      const encoding = negotiateEncoding(req.headers['accept-encoding']);
      if (encoding) {
        const packed = `${file}.${encoding === 'br' ? 'br' : 'gz'}`;
        const packedStat = await fs.promises.stat(packed).catch(() => null);
        if (packedStat?.isFile()) {
          return reply
            .header('content-encoding', encoding)
            .header('content-length', packedStat.size)
            .send(fs.createReadStream(packed));
        }
      }
    }
    return reply.header('content-length', stat.size).send(fs.createReadStream(file));
  });

  const index = async (req: FastifyRequest, reply: FastifyReply) => {
    let html: string;
    try {
      html = await fs.promises.readFile(path.join(dir, 'index.html'), 'utf8');
    } catch {
      return sendPage(
        reply,
        503,
        'Console not built',
        '<h1>The console is not built</h1><p>This server has no built web console. Run <code>npm run build:console</code> ' +
          '(or <code>npm install</code>, which builds it) in the Formcast directory, then reload this page.</p>' +
          '<p>The API works without it: see <a href="/docs">/docs</a>.</p>',
      );
    }
    const nonce = randomBytes(18).toString('base64');
    reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header('content-security-policy', consoleCsp(nonce))
      .header('x-content-type-options', 'nosniff')
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'same-origin');
    return sendCompressed(req, reply, html.replaceAll(NONCE_PLACEHOLDER, nonce));
  };
  app.get('/app', { schema: { hide: true } }, index);
  app.get('/app/*', { schema: { hide: true } }, index);
  // The root of the service is the console's address for people who type the host name (the API is under /v1).
  app.get('/', { schema: { hide: true } }, (_req, reply) =>
    reply.code(302).header('location', '/app').header('cache-control', 'no-cache').send(),
  );
}
