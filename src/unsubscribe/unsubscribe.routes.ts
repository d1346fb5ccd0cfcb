import type { FastifyInstance, FastifyReply } from 'fastify';
import { escapeHtml } from '../forms/forms.html.js';
import { DomainError } from '../errors/errors.js';
import { registerBodyParsers } from '../http/input.js';
import { sendPage } from '../pages/layout.js';
import type { UnsubscribeContext, UnsubscribeService } from './unsubscribe.service.js';

const TOKEN = { type: 'object', properties: { token: { type: 'string', pattern: '^[A-Za-z0-9_-]{16,64}$' } }, required: ['token'] } as const;

function done(reply: FastifyReply, ctx: UnsubscribeContext, what: string): FastifyReply {
  return sendPage(reply, 200, 'Unsubscribed', `<h1>Done</h1><p>${escapeHtml(ctx.email)} ${escapeHtml(what)}.</p>`);
}

function choicePage(reply: FastifyReply, ctx: UnsubscribeContext, token: string): FastifyReply {
  const action = `/unsubscribe/${encodeURIComponent(token)}`;
  const what = ctx.topic ? `emails about <strong>${escapeHtml(ctx.topic.name)}</strong>` : 'all our emails';
  const topics = ctx.topics.length
    ? `<form method="post" action="${action}"><input type="hidden" name="action" value="topics"><fieldset><legend>Or choose what you receive</legend>` +
      ctx.topics.map((t) => `<label><input type="checkbox" name="topic" value="${escapeHtml(t.id)}"${t.subscribed ? ' checked' : ''}> ${escapeHtml(t.name)}</label>`).join('') +
      `</fieldset><button type="submit" class="secondary">Save my choices</button></form>`
    : '';
  const status = ctx.status === 'SUBSCRIBED' ? '' : `<p>This address is currently ${escapeHtml(ctx.status.toLowerCase())}.</p>`;
  return sendPage(reply, 200, 'Unsubscribe', `<h1>Unsubscribe</h1>${status}<p>Stop sending ${what} to ${escapeHtml(ctx.email)}?</p>` +
    `<form method="post" action="${action}"><input type="hidden" name="action" value="${ctx.topic ? 'one-click' : 'all'}"><button type="submit">Unsubscribe</button></form>${topics}`);
}

/**
 * GET never unsubscribes (mail scanners follow links): it shows the confirmation and the topic choices.
 * POST unsubscribes at once, with no cookie and no redirect: the RFC 8058 one-click body
 * `List-Unsubscribe=One-Click`, or the page's own forms.
 */
export async function unsubscribeRoutes(app: FastifyInstance, opts: { service: UnsubscribeService }): Promise<void> {
  registerBodyParsers(app, { form: { bodyLimit: 64 * 1024 } });
  // One-click must work whatever a mail client posts (some send multipart or nothing): other bodies are ignored.
  app.addContentTypeParser('*', { bodyLimit: 64 * 1024 }, (_req, payload, done) => {
    payload.resume();
    payload.on('end', () => done(null, undefined));
    payload.on('error', (err) => done(err, undefined));
  });
  const service = opts.service;
  app.setErrorHandler((err, req, reply) => {
    if (err instanceof DomainError && err.status === 404) return sendPage(reply, 404, 'Link not found', '<h1>This link is not valid</h1><p>It may be mistyped or too old.</p>');
    if ((err as { validation?: unknown }).validation) return sendPage(reply, 404, 'Link not found', '<h1>This link is not valid</h1>');
    req.log.error({ err }, 'unsubscribe failed');
    return sendPage(reply, 500, 'Error', '<h1>Something went wrong</h1><p>Please try again in a moment.</p>');
  });

  app.get<{ Params: { token: string } }>('/unsubscribe/:token', { schema: { tags: ['public'], summary: 'The unsubscribe page (never unsubscribes by itself)', security: [], params: TOKEN } }, async (req, reply) => {
    return choicePage(reply, await service.context(req.params.token), req.params.token);
  });

  app.post<{ Params: { token: string }; Body: Record<string, string | string[]> | undefined }>('/unsubscribe/:token', { schema: { tags: ['public'], summary: 'Unsubscribe at once (RFC 8058 one-click, or the page\'s choices)', security: [], params: TOKEN } }, async (req, reply) => {
    const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, string | string[]>;
    const action = body.action;
    if (action === 'all') return done(reply, await service.unsubscribeAll(req.params.token), 'will not receive our emails any more');
    if (action === 'topics') {
      const keep = ([] as string[]).concat(body.topic ?? []);
      return done(reply, await service.chooseTopics(req.params.token, keep), 'has been updated with your choices');
    }
    // RFC 8058 one-click (List-Unsubscribe=One-Click), and the page's main button.
    const ctx = await service.oneClick(req.params.token);
    return done(reply, ctx, ctx.topic ? `will not receive emails about ${ctx.topic.name} any more` : 'will not receive our emails any more');
  });
}
