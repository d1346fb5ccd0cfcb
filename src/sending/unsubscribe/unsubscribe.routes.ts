import type { FastifyInstance, FastifyReply } from 'fastify';
import { escapeHtml } from '../../lib/html.js';
import { DomainError } from '../../errors/errors.js';
import { registerBodyParsers } from '../../http/input.js';
import { LOCALES, TEXTS, fill, type Locale } from '../../pages/i18n.js';
import { sendPage } from '../../pages/layout.js';
import type { UnsubscribeContext, UnsubscribeService } from './unsubscribe.service.js';

const TOKEN = {
  type: 'object',
  properties: { token: { type: 'string', pattern: '^[A-Za-z0-9_-]{16,64}$' } },
  required: ['token'],
} as const;

const LANG = {
  type: 'object',
  properties: { lang: { type: 'string', maxLength: 8, description: "the page's language: en, de, fr or es" } },
} as const;

function done(reply: FastifyReply, ctx: UnsubscribeContext, text: string): FastifyReply {
  const t = TEXTS[ctx.locale];
  return sendPage(reply, 200, t.unsubscribeTitle, `<h1>${escapeHtml(t.unsubscribeTitle)}</h1><p>${text}</p>`, {
    lang: ctx.locale,
  });
}

/** The page of an unsubscribe link: leave the broadcast's topic, leave everything, or choose topic by topic. */
function choicePage(reply: FastifyReply, ctx: UnsubscribeContext, token: string): FastifyReply {
  const t = TEXTS[ctx.locale];
  const action = `/unsubscribe/${encodeURIComponent(token)}`;
  const button = (value: string, label: string, cls = '') =>
    `<form method="post" action="${action}"><input type="hidden" name="action" value="${value}"><button type="submit"${cls ? ` class="${cls}"` : ''}>${escapeHtml(label)}</button></form>`;
  const topic = ctx.topic
    ? button('one-click', fill(t.unsubscribeFromTopic, { topic: ctx.topic.name }), 'secondary')
    : '';
  const topics = ctx.topics.length
    ? `<form method="post" action="${action}"><input type="hidden" name="action" value="topics"><fieldset><legend>${escapeHtml(t.chooseTopics)}</legend>` +
      ctx.topics
        .map(
          (tp) =>
            `<label><input type="checkbox" name="topic" value="${escapeHtml(tp.id)}"${tp.subscribed ? ' checked' : ''}> ${escapeHtml(tp.name)}</label>`,
        )
        .join('') +
      `</fieldset><button type="submit" class="secondary">${escapeHtml(t.saveChoices)}</button></form>`
    : '';
  return sendPage(
    reply,
    200,
    t.unsubscribeTitle,
    `<h1>${escapeHtml(t.unsubscribeTitle)}</h1><p>${escapeHtml(fill(t.unsubscribeQuestion, { email: ctx.email }))}</p>` +
      `${button('all', t.unsubscribeEverything)}${topic}${topics}`,
    { lang: ctx.locale },
  );
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
  app.setErrorHandler((err: Error & { statusCode?: number; validation?: unknown }, req, reply) => {
    const status = err instanceof DomainError ? err.status : err.validation ? 404 : (err.statusCode ?? 500);
    if (status === 404)
      return sendPage(
        reply,
        404,
        'Link not found',
        '<h1>This link is not valid</h1><p>It may be mistyped or too old.</p>',
      );
    if (status < 500)
      return sendPage(reply, status, 'Bad request', '<h1>Bad request</h1><p>The request could not be read.</p>');
    req.log.error({ err }, 'unsubscribe failed');
    return sendPage(reply, 500, 'Error', '<h1>Something went wrong</h1><p>Please try again in a moment.</p>');
  });

  // The unsubscribe link of a test send (`/unsubscribe/test`) and of a preview (`/unsubscribe/preview`): a page that says
  // so, for a GET and for a one-click POST alike, and changes nothing. `?lang=` is the workspace's locale.
  const testPage = (req: { query: unknown }, reply: FastifyReply) => {
    const lang = (req.query as { lang?: unknown } | undefined)?.lang;
    const locale: Locale = (LOCALES as readonly unknown[]).includes(lang) ? (lang as Locale) : 'en';
    const t = TEXTS[locale];
    return sendPage(
      reply,
      200,
      t.unsubscribeTestTitle,
      `<h1>${escapeHtml(t.unsubscribeTestTitle)}</h1><p>${escapeHtml(t.unsubscribeTestText)}</p>`,
      { lang: locale },
    );
  };
  for (const path of ['/unsubscribe/test', '/unsubscribe/preview']) {
    app.get(path, { schema: { security: [], querystring: LANG } }, async (req, reply) => testPage(req, reply));
    app.post(path, { schema: { security: [], querystring: LANG } }, async (req, reply) => testPage(req, reply));
  }

  app.get<{ Params: { token: string } }>(
    '/unsubscribe/:token',
    { schema: { security: [], params: TOKEN } },
    async (req, reply) => {
      return choicePage(reply, await service.context(req.params.token), req.params.token);
    },
  );

  app.post<{ Params: { token: string }; Body: Record<string, string | string[]> | undefined }>(
    '/unsubscribe/:token',
    { schema: { security: [], params: TOKEN } },
    async (req, reply) => {
      const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, string | string[]>;
      const action = body.action;
      const say = (ctx: UnsubscribeContext, text: string, values: Record<string, string> = {}) =>
        done(reply, ctx, escapeHtml(fill(text, { email: ctx.email, ...values })));
      if (action === 'all') {
        const ctx = await service.unsubscribeAll(req.params.token);
        return say(ctx, TEXTS[ctx.locale].unsubscribedAll);
      }
      if (action === 'topics') {
        const keep = ([] as string[]).concat(body.topic ?? []);
        const ctx = await service.chooseTopics(req.params.token, keep);
        return say(ctx, TEXTS[ctx.locale].choicesSaved);
      }
      // RFC 8058 one-click (List-Unsubscribe=One-Click), and the page's topic button.
      const ctx = await service.oneClick(req.params.token);
      return ctx.topic
        ? say(ctx, TEXTS[ctx.locale].unsubscribedTopic, { topic: ctx.topic.name })
        : say(ctx, TEXTS[ctx.locale].unsubscribedAll);
    },
  );
}
