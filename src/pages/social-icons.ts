import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { notFound } from '../errors/errors.js';
import { PACKAGE_ROOT } from '../lib/paths.js';

/**
 * The social network icons of block documents (src/mail/blocks: a social links block shows
 * `{PUBLIC_URL}/assets/social/{network}.png`): small PNGs committed beside this file, served by Formcast itself so
 * that an email never loads an icon from a third party's server. Public (an email client fetches them), cached for a
 * week; only the plain names of this folder's PNGs are served, so no request reads outside it.
 */
export const SOCIAL_ICONS_DIR = path.join(PACKAGE_ROOT, 'src/pages/social');

const NAME = /^([a-z]{1,32})\.png$/;

export async function socialIconRoutes(app: FastifyInstance, opts: { dir?: string } = {}): Promise<void> {
  const dir = opts.dir ?? SOCIAL_ICONS_DIR;
  let icons: Map<string, Buffer> | undefined;
  // Read on the first request, not at start: most processes never serve one.
  const load = () =>
    (icons ??= new Map(
      fs
        .readdirSync(dir)
        .filter((f) => NAME.test(f))
        .map((f) => [f, fs.readFileSync(path.join(dir, f))]),
    ));

  app.get(
    '/assets/social/:file',
    { schema: { hide: true, params: Type.Object({ file: Type.String({ maxLength: 64 }) }) } },
    async (req, reply) => {
      const { file } = req.params as { file: string };
      const png = NAME.test(file) ? load().get(file) : undefined;
      if (!png) throw notFound('icon');
      return reply
        .header('content-type', 'image/png')
        .header('cache-control', 'public, max-age=604800')
        .header('x-content-type-options', 'nosniff')
        .send(png);
    },
  );
}
