import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../errors/errors.js';
import { sendCompressed } from '../../lib/compress.js';
import { escapeHtml } from '../../lib/html.js';
import { perVisitor } from '../../http/public-routes.js';
import { sendPage } from '../../pages/layout.js';
import type { Locale } from '../../pages/i18n.js';
import type { ArchiveOwner, ArchiveService, BrowserMessage } from './archive.service.js';

/**
 * The public pages of docs/archive.md: the web version (`/w/{token}`), the archive (`/archive/{slug}`), an archived
 * broadcast (`/archive/{slug}/{broadcastId}`) and the archive's Atom feed (`/archive/{slug}/feed.xml`). No key; every
 * route is rate-limited per visitor; anything that does not name a page that exists (a forged token, an unknown slug, a
 * broadcast of another workspace, a draft) is the same plain 404 page.
 */

/**
 * A message's page: its own inline styles, images over https or from this service (PUBLIC_URL's origin, which serves
 * uploaded images and the social icons, over http on a local installation), nothing that runs. And sandboxed: the
 * page is a workspace's HTML on this service's own origin, so it gets an opaque origin of its own, and a
 * `<meta http-equiv="refresh">` in it does nothing (a sandboxed document's automatic features are off), which no other
 * directive stops: the archive and the web version are no open redirect. Links still open (in the page, or in a new
 * tab that is not sandboxed).
 */
export function messageCsp(publicUrl: string): string {
  return `default-src 'none'; style-src 'unsafe-inline'; img-src https: data: 'self' ${new URL(publicUrl).origin}; font-src https:; form-action 'none'; base-uri 'none'; frame-ancestors 'none'; sandbox allow-popups allow-popups-to-escape-sandbox`;
}

const SLUG = { type: 'string', pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', maxLength: 100 } as const;
const ARCHIVE_PARAMS = { type: 'object', properties: { workspaceSlug: SLUG }, required: ['workspaceSlug'] } as const;
const BROADCAST_PARAMS = {
  type: 'object',
  properties: { workspaceSlug: SLUG, broadcastId: { type: 'string', pattern: '^bc_[0-9A-Z]{26}$' } },
  required: ['workspaceSlug', 'broadcastId'],
} as const;
const TOKEN_PARAMS = {
  type: 'object',
  properties: { token: { type: 'string', pattern: '^[A-Za-z0-9]{16,128}$' } },
  required: ['token'],
} as const;
const PAGE_QUERY = {
  type: 'object',
  properties: { page: { type: 'integer', minimum: 1, maximum: 10000, default: 1 } },
} as const;

/** The few words of these pages, in the workspace's language. */
const WORDS: Record<
  Locale,
  {
    archive: string;
    empty: string;
    newer: string;
    older: string;
    feed: string;
    back: string;
    previewTitle: string;
    previewText: string;
  }
> = {
  en: {
    archive: 'Email archive',
    empty: 'No emails here yet.',
    newer: 'Newer',
    older: 'Older',
    feed: 'Atom feed',
    back: 'All emails',
    previewTitle: 'Web version',
    previewText: 'Each recipient’s link opens their own copy of this email here, in a browser.',
  },
  de: {
    archive: 'E-Mail-Archiv',
    empty: 'Noch keine E-Mails.',
    newer: 'Neuere',
    older: 'Ältere',
    feed: 'Atom-Feed',
    back: 'Alle E-Mails',
    previewTitle: 'Webversion',
    previewText: 'Der Link jedes Empfängers öffnet hier seine eigene Kopie dieser E-Mail im Browser.',
  },
  fr: {
    archive: 'Archives des e-mails',
    empty: 'Aucun e-mail pour l’instant.',
    newer: 'Plus récents',
    older: 'Plus anciens',
    feed: 'Flux Atom',
    back: 'Tous les e-mails',
    previewTitle: 'Version web',
    previewText: 'Le lien de chaque destinataire ouvre ici sa propre copie de cet e-mail, dans un navigateur.',
  },
  es: {
    archive: 'Archivo de correos',
    empty: 'Todavía no hay correos.',
    newer: 'Más recientes',
    older: 'Más antiguos',
    feed: 'Canal Atom',
    back: 'Todos los correos',
    previewTitle: 'Versión web',
    previewText: 'El enlace de cada destinatario abre aquí su propia copia de este correo, en un navegador.',
  },
};

function day(iso: string, locale: Locale): string {
  return new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeZone: 'UTC' }).format(new Date(iso));
}

function insertInHead(html: string, piece: string): string {
  const i = html.search(/<\/head>/i);
  return i >= 0 ? `${html.slice(0, i)}${piece}${html.slice(i)}` : `${piece}${html}`;
}

function insertAfterBodyOpen(html: string, piece: string): string {
  return /<body[^>]*>/i.test(html) ? html.replace(/<body[^>]*>/i, (m) => `${m}${piece}`) : `${piece}${html}`;
}

const feedLink = (href: string, title: string) =>
  `<link rel="alternate" type="application/atom+xml" title="${escapeHtml(title)}" href="${escapeHtml(href)}">`;

/** The bar above an archived broadcast: back to the archive, in the workspace's colour, light and dark. */
function archiveBar(owner: ArchiveOwner, archiveUrl: string): string {
  const w = WORDS[owner.locale];
  const accent = owner.brandColor && /^#[0-9a-fA-F]{6}$/.test(owner.brandColor) ? owner.brandColor : '#2f4fd6';
  return (
    `<style>.fc-archive-bar{font:15px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f6f7f9;color:#1b1f26;border-bottom:3px solid ${accent};padding:10px 16px;display:flex;gap:12px;flex-wrap:wrap;justify-content:space-between;align-items:center}` +
    `.fc-archive-bar a{color:#2f4fd6}@media (prefers-color-scheme: dark){.fc-archive-bar{background:#171b23;color:#e7eaf0}.fc-archive-bar a{color:#93acff}}</style>` +
    `<div class="fc-archive-bar"><strong>${escapeHtml(owner.name)}</strong><span><a href="${escapeHtml(archiveUrl)}">← ${escapeHtml(w.back)}</a> · <a href="${escapeHtml(`${archiveUrl}/feed.xml`)}">${escapeHtml(w.feed)}</a></span></div>`
  );
}

function sendMessage(
  req: FastifyRequest,
  reply: FastifyReply,
  html: string,
  opts: { index: boolean; csp: string },
): FastifyReply {
  reply
    .code(200)
    .type('text/html; charset=utf-8')
    .header('content-security-policy', opts.csp)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', opts.index ? 'public, max-age=300' : 'private, no-store');
  if (!opts.index) reply.header('x-robots-tag', 'noindex, nofollow');
  return sendCompressed(req, reply, html);
}

export async function archiveRoutes(
  app: FastifyInstance,
  opts: { archive: ArchiveService; publicUrl: string; pagesPerMinute?: number },
): Promise<void> {
  const { archive } = opts;
  const csp = messageCsp(opts.publicUrl);
  const limit = { rateLimit: perVisitor(opts.pagesPerMinute ?? 120) };
  await app.register(rateLimit, { global: false });

  app.setErrorHandler((err: Error & { statusCode?: number; validation?: unknown }, req, reply) => {
    const status = err instanceof DomainError ? err.status : err.validation ? 404 : (err.statusCode ?? 500);
    if (status === 404)
      return sendPage(reply, 404, 'Not found', '<h1>Not found</h1><p>This page does not exist, or no longer does.</p>');
    if (status === 429)
      return sendPage(reply, 429, 'Too many requests', '<h1>Too many requests</h1><p>Please wait a minute.</p>');
    if (status < 500)
      return sendPage(reply, status, 'Bad request', '<h1>Bad request</h1><p>The request could not be read.</p>');
    req.log.error({ err }, 'archive page failed');
    return sendPage(reply, 500, 'Error', '<h1>Something went wrong</h1><p>Please try again in a moment.</p>');
  });

  // What previews and test sends link as `{{ webversion_url }}`: a page that says what the real link does.
  app.get('/w/preview', { schema: { security: [] }, config: limit }, async (_req, reply) => {
    const w = WORDS.en;
    return sendPage(
      reply,
      200,
      w.previewTitle,
      `<h1>${escapeHtml(w.previewTitle)}</h1><p>${escapeHtml(w.previewText)}</p>`,
    );
  });

  app.get<{ Params: { token: string } }>(
    '/w/:token',
    { schema: { security: [], params: TOKEN_PARAMS }, config: limit },
    async (req, reply) => {
      const message: BrowserMessage = await archive.webversion(req.params.token);
      return sendMessage(req, reply, insertInHead(message.html, '<meta name="robots" content="noindex">'), {
        index: false,
        csp,
      });
    },
  );

  app.get<{ Params: { workspaceSlug: string }; Querystring: { page: number } }>(
    '/archive/:workspaceSlug',
    { schema: { security: [], params: ARCHIVE_PARAMS, querystring: PAGE_QUERY }, config: limit },
    async (req, reply) => {
      const page = req.query.page ?? 1;
      const { owner, items, hasNext } = await archive.list(req.params.workspaceSlug, page);
      if (page > 1 && items.length === 0) throw new DomainError('not_found', 'no such page');
      const w = WORDS[owner.locale];
      const url = archive.archiveUrl(owner.slug);
      const e = escapeHtml;
      const list = items.length
        ? `<ul class="fc-archive">${items
            .map(
              (i) =>
                `<li><a href="${e(`${url}/${i.id}`)}">${e(i.subject?.trim() || '(no subject)')}</a><time datetime="${e(i.sentAt)}">${e(day(i.sentAt, owner.locale))}</time></li>`,
            )
            .join('')}</ul>`
        : `<p class="fc-muted">${e(w.empty)}</p>`;
      const pager =
        page > 1 || hasNext
          ? `<nav class="fc-pager">${page > 1 ? `<a rel="prev" href="${e(page === 2 ? url : `${url}?page=${page - 1}`)}">← ${e(w.newer)}</a>` : '<span></span>'}${hasNext ? `<a rel="next" href="${e(`${url}?page=${page + 1}`)}">${e(w.older)} →</a>` : ''}</nav>`
          : '';
      const body = `<h1>${e(w.archive)}</h1>${list}${pager}<p class="fc-foot-link"><a href="${e(`${url}/feed.xml`)}">${e(w.feed)}</a></p>`;
      const css =
        '<style>.fc-archive{list-style:none;margin:0;padding:0}.fc-archive li{display:flex;justify-content:space-between;gap:1rem;padding:.7rem 0;border-bottom:1px solid var(--border)}.fc-archive li:last-child{border-bottom:0}.fc-archive a{font-weight:600;text-decoration:none}.fc-archive a:hover{text-decoration:underline}.fc-archive time{color:var(--muted);white-space:nowrap;font-size:.95rem}.fc-pager{display:flex;justify-content:space-between;margin-top:1rem}.fc-foot-link{margin-top:1.25rem;font-size:.9rem}@media (max-width:480px){.fc-archive li{flex-direction:column;gap:.15rem}}</style>';
      return sendPage(reply, 200, `${w.archive} · ${owner.name}`, body, {
        lang: owner.locale,
        brand: { name: owner.name, color: owner.brandColor },
        head: feedLink(`${url}/feed.xml`, owner.name) + css,
      });
    },
  );

  app.get<{ Params: { workspaceSlug: string } }>(
    '/archive/:workspaceSlug/feed.xml',
    { schema: { security: [], params: ARCHIVE_PARAMS }, config: limit },
    async (req, reply) => {
      const xml = await archive.feed(req.params.workspaceSlug);
      reply
        .type('application/atom+xml; charset=utf-8')
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'public, max-age=300');
      return sendCompressed(req, reply, xml);
    },
  );

  app.get<{ Params: { workspaceSlug: string; broadcastId: string } }>(
    '/archive/:workspaceSlug/:broadcastId',
    { schema: { security: [], params: BROADCAST_PARAMS }, config: limit },
    async (req, reply) => {
      const message = await archive.archived(req.params.workspaceSlug, req.params.broadcastId);
      const url = archive.archiveUrl(message.owner.slug);
      let html = insertInHead(message.html, feedLink(`${url}/feed.xml`, message.owner.name));
      html = insertAfterBodyOpen(html, archiveBar(message.owner, url));
      return sendMessage(req, reply, html, { index: true, csp });
    },
  );
}
