import type { FastifyInstance, FastifyReply } from 'fastify';
import { escapeHtml } from '../../lib/html.js';
import { DomainError } from '../../errors/errors.js';
import { registerBodyParsers } from '../../http/input.js';
import { LOCALES, TEXTS, fill, type Locale, type Texts } from '../../pages/i18n.js';
import { sendPage } from '../../pages/layout.js';
import {
  COMMENT_MAX,
  NotNow,
  UNSUBSCRIBE_REASONS,
  type UnsubscribeContext,
  type UnsubscribeReason,
  type UnsubscribeService,
} from './unsubscribe.service.js';

const TOKEN = {
  type: 'object',
  properties: { token: { type: 'string', pattern: '^[A-Za-z0-9_-]{16,64}$' } },
  required: ['token'],
} as const;

const LANG = {
  type: 'object',
  properties: { lang: { type: 'string', maxLength: 8, description: "the page's language: en, de, fr or es" } },
} as const;

type Body = Record<string, string | string[]>;

/** A body field's first value ('' when absent). */
const one = (body: Body, name: string): string => {
  const v = body[name];
  return typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : '';
};

/** Input a page of ours never sends (a tampered form): 400, nothing changed. */
class UnreadableChoice extends DomainError {
  constructor() {
    super('validation_failed', 'the form could not be read', { status: 400 });
  }
}

const REASON_LABEL: Record<UnsubscribeReason, keyof Texts> = {
  too_many: 'reasonTooMany',
  not_relevant: 'reasonNotRelevant',
  never_signed_up: 'reasonNeverSignedUp',
  other: 'reasonOther',
};

/** A date for the page's sentences, in its language (UTC: the page knows no reader's zone). */
function when(iso: string, locale: Locale): string {
  return new Intl.DateTimeFormat(locale, {
    dateStyle: 'long',
    timeStyle: 'short',
    timeZone: 'UTC',
    timeZoneName: 'short',
  }).format(new Date(iso));
}

/**
 * The preference centre an unsubscribe link opens (docs/bounces.md, "The unsubscribe page"): who sends (the workspace's name and brand,
 * the message's From name), where the address stands as stored (status, suppression, topic subscriptions), and only
 * the choices that fit it, each doing what its words say. `notice` says what the last action did.
 */
function preferencePage(
  reply: FastifyReply,
  ctx: UnsubscribeContext,
  token: string,
  notice: { text: string; alert?: boolean } | null = null,
  status = 200,
): FastifyReply {
  const t = TEXTS[ctx.locale];
  const e = (s: string) => escapeHtml(s);
  const say = (text: string, values: Record<string, string> = {}) =>
    e(fill(text, { email: ctx.email, name: ctx.workspaceName, ...values }));
  const action = `/unsubscribe/${encodeURIComponent(token)}`;
  const hidden = (value: string) => `<input type="hidden" name="action" value="${value}">`;
  const sender =
    ctx.fromName && ctx.fromName.trim().toLowerCase() !== ctx.workspaceName.trim().toLowerCase()
      ? `${ctx.fromName} (${ctx.workspaceName})`
      : ctx.workspaceName;

  const topicBoxes = (legend: string) =>
    ctx.topics.length
      ? `<fieldset><legend>${e(legend)}</legend><input type="hidden" name="topics" value="1">` +
        ctx.topics
          .map(
            (tp) =>
              `<label class="fc-check"><input type="checkbox" name="topic" value="${e(tp.id)}"${tp.subscribed ? ' checked' : ''}><span>${e(tp.name)}</span></label>`,
          )
          .join('') +
        `</fieldset>`
      : '';

  const parts: string[] = [];
  parts.push(`<h1>${e(t.prefsTitle)}</h1>`);
  parts.push(`<p class="fc-sender">${e(fill(t.emailsFrom, { sender }))}</p>`);
  if (notice) parts.push(`<p class="fc-notice" role="${notice.alert ? 'alert' : 'status'}">${notice.text}</p>`);

  const leaveAll = () =>
    `<h2>${e(t.unsubscribeEverything)}</h2><form method="post" action="${action}">${hidden('all')}` +
    `<fieldset><legend>${e(t.reasonLegend)}</legend>` +
    UNSUBSCRIBE_REASONS.map(
      (r) =>
        `<label class="fc-check"><input type="radio" name="reason" value="${r}"><span>${e(t[REASON_LABEL[r]])}</span></label>`,
    ).join('') +
    `<label for="fc-comment">${e(t.commentLabel)}</label><textarea id="fc-comment" name="comment" rows="3" maxlength="${COMMENT_MAX}"></textarea>` +
    `</fieldset><button type="submit">${e(t.unsubscribeEverything)}</button></form>`;

  switch (ctx.standing) {
    case 'subscribed':
      parts.push(
        `<div class="fc-state ok"><strong>${say(t.stateSubscribed)}</strong>${say(t.stateSubscribedText)}</div>`,
      );
      if (ctx.topic && ctx.topics.find((tp) => tp.id === ctx.topic!.id)?.subscribed)
        parts.push(
          `<form method="post" action="${action}">${hidden('one-click')}<button type="submit" class="secondary">${say(t.unsubscribeFromTopic, { topic: ctx.topic.name })}</button></form>`,
        );
      if (ctx.topics.length)
        parts.push(
          `<form method="post" action="${action}">${hidden('topics')}${topicBoxes(t.topicsLegend)}<button type="submit" class="secondary">${e(t.saveChoices)}</button></form>`,
        );
      parts.push(leaveAll());
      break;
    case 'pending':
    case 'unsubscribed': {
      const pending = ctx.standing === 'pending';
      parts.push(
        pending
          ? `<div class="fc-state off"><strong>${say(t.statePending)}</strong>${say(t.statePendingText)}</div>`
          : `<div class="fc-state off"><strong>${say(t.stateUnsubscribed)}</strong>${say(t.stateUnsubscribedText)}</div>`,
      );
      if (ctx.confirmationSince && !notice)
        parts.push(`<p>${say(t.confirmationOpen, { date: when(ctx.confirmationSince, ctx.locale) })}</p>`);
      parts.push(`<h2>${e(t.resubscribeHeading)}</h2><p>${say(t.resubscribeText)}</p>`);
      parts.push(
        `<form method="post" action="${action}">${hidden('resubscribe')}${topicBoxes(t.topicsAfterLegend)}<button type="submit">${e(ctx.confirmationSince ? t.resendButton : t.resubscribeButton)}</button></form>`,
      );
      if (pending) parts.push(leaveAll());
      break;
    }
    case 'blocked': {
      const why =
        ctx.blockedBy === 'BOUNCED'
          ? t.blockedBounced
          : ctx.blockedBy === 'COMPLAINED'
            ? t.blockedComplained
            : t.blockedManual;
      parts.push(`<div class="fc-state blocked"><strong>${say(t.stateBlocked)}</strong>${say(why)}</div>`);
      parts.push(`<p>${say(t.blockedCannot)}</p>`);
      break;
    }
  }
  return sendPage(reply, status, t.prefsTitle, parts.join('\n'), {
    lang: ctx.locale,
    brand: { name: ctx.workspaceName, color: ctx.brandColor },
  });
}

/**
 * GET never changes anything (mail scanners follow links): it shows the preference centre. POST acts at once, with no
 * cookie and no redirect: the RFC 8058 one-click body `List-Unsubscribe=One-Click` (or any body without `action`), or
 * the page's own forms (`action` = one-click | all | topics | resubscribe). The token in the address is the only
 * credential, so a form elsewhere cannot act without it (no session to ride on); the answer is the page itself, never
 * a redirect.
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
    if (err instanceof NotNow) {
      const t = TEXTS[err.ctx.locale];
      const token = (req.params as { token?: string } | undefined)?.token ?? '';
      const text =
        err.ctx.standing === 'blocked'
          ? `${escapeHtml(t.nothingChanged)} ${escapeHtml(fill(t.blockedCannot, { name: err.ctx.workspaceName }))}`
          : escapeHtml(fill(t.topicsNotSaved, { email: err.ctx.email }));
      return preferencePage(reply, err.ctx, token, { text, alert: true }, 409);
    }
    const status = err instanceof DomainError ? err.status : err.validation ? 404 : (err.statusCode ?? 500);
    if (status === 404)
      return sendPage(
        reply,
        404,
        'Link not found',
        '<h1>This link is not valid</h1><p>It may be mistyped or too old.</p>',
      );
    if (status < 500)
      return sendPage(
        reply,
        status,
        'Bad request',
        '<h1>Bad request</h1><p>The request could not be read. Nothing was changed.</p>',
      );
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
    async (req, reply) => preferencePage(reply, await service.context(req.params.token), req.params.token),
  );

  app.post<{ Params: { token: string }; Body: Body | undefined }>(
    '/unsubscribe/:token',
    { schema: { security: [], params: TOKEN } },
    async (req, reply) => {
      const token = req.params.token;
      const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Body;
      const action = one(body, 'action');
      const topics = () => ([] as string[]).concat(body.topic ?? []).filter((v) => typeof v === 'string');
      const show = (ctx: UnsubscribeContext, text: string, values: Record<string, string> = {}) =>
        preferencePage(reply, ctx, token, { text: escapeHtml(fill(text, { email: ctx.email, ...values })) });
      if (action === 'all') {
        const reason = one(body, 'reason');
        const comment = one(body, 'comment').trim();
        if (reason && !(UNSUBSCRIBE_REASONS as readonly string[]).includes(reason)) throw new UnreadableChoice();
        if (comment.length > COMMENT_MAX) throw new UnreadableChoice();
        const ctx = await service.unsubscribeAll(token, {
          ...(reason ? { reason: reason as UnsubscribeReason } : {}),
          ...(comment ? { comment } : {}),
        });
        return show(ctx, TEXTS[ctx.locale].unsubscribedAll);
      }
      if (action === 'topics') {
        const ctx = await service.chooseTopics(token, topics());
        return show(ctx, TEXTS[ctx.locale].choicesSaved);
      }
      if (action === 'resubscribe') {
        const { ctx, outcome } = await service.resubscribe(token, body.topics !== undefined ? topics() : null);
        const t = TEXTS[ctx.locale];
        return show(
          ctx,
          outcome === 'queued' ? t.resubscribeSent : outcome === 'recent' ? t.resubscribeRecent : t.alreadySubscribed,
        );
      }
      if (action && action !== 'one-click') throw new UnreadableChoice();
      // RFC 8058 one-click (List-Unsubscribe=One-Click, or whatever a mail client posts), and the page's topic button.
      const ctx = await service.oneClick(token);
      return ctx.topic
        ? show(ctx, TEXTS[ctx.locale].unsubscribedTopic, { topic: ctx.topic.name })
        : show(ctx, TEXTS[ctx.locale].unsubscribedAll);
    },
  );
}
