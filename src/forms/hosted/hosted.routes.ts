import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { escapeHtml } from '../forms/forms.html.js';
import type { PublishedForm } from '../forms/forms.repository.js';
import type { Form } from '../forms/forms.schemas.js';
import { DomainError } from '../../errors/errors.js';
import { registerBodyParsers } from '../../http/input.js';
import { normalHttpUrl, safeOrigin } from '../../lib/url.js';
import { DEFAULT_SUCCESS_MESSAGE } from '../forms/forms.service.js';
import { EMPTY_SUCCESS_SCOPE, isPersonalised, renderSuccessMessage } from '../forms/forms.success.js';
import { TEXTS, fill } from '../../pages/i18n.js';
import { PAGE_CSP, sendPage } from '../../pages/layout.js';
import type { ConfirmationView, SubmissionsService } from '../submissions/submissions.service.js';
import { embedScript } from './embed.js';
import {
  appearanceHead,
  pageTitle,
  renderFormMarkup,
  seoHead,
  TIMEZONE_SCRIPT,
  TIMEZONE_SCRIPT_PATH,
  timezoneCsp,
  timezoneHead,
  type FormState,
} from './hosted.render.js';
import { publicHeading } from '@formcast/form-appearance';
import { sendCompressed } from '../../lib/compress.js';
import { sendProblem } from '../../http/problem.js';
import {
  challengeUrl,
  proofOfWorkOn,
  widgetCsp,
  widgetHead,
  widgetUrl,
  withWidget,
} from '../protection/protection.markup.js';
import { POW_FIELD } from '../protection/protection.pow.js';
import { protectionPublicRoutes } from '../protection/protection.routes.js';
import { SLUG_PARAMS, perVisitorAndForm } from '../../http/public-routes.js';
import type { ProtectionService } from '../protection/protection.service.js';
import { widgetCssForShadow } from '../protection/protection.assets.js';

export interface HostedOptions {
  submissions: SubmissionsService;
  /** Bot protection (docs/bot-protection.md): the proof-of-work widget and challenge, the embeds' impression beacon. */
  protection: ProtectionService;
  publicUrl: string;
  /** Submissions per minute from one IP address to one form. */
  submissionsPerMinute: number;
}

const SLUG = SLUG_PARAMS;
const TOKEN = {
  type: 'object',
  properties: { token: { type: 'string', pattern: '^[A-Za-z0-9_-]{16,64}$' } },
  required: ['token'],
} as const;
type SlugRequest = FastifyRequest<{ Params: { slug: string }; Querystring: { fragment?: string; preview?: string } }>;

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST, OPTIONS',
  'access-control-allow-headers': 'content-type, accept',
  'access-control-max-age': '600',
};

function wantsJson(req: FastifyRequest): boolean {
  return (
    (req.headers.accept ?? '').includes('application/json') ||
    (req.headers['content-type'] ?? '').startsWith('application/json')
  );
}

/** A page's CSP; a REDIRECT success action's origin is allowed as a form target (browsers check redirects too). */
function cspFor(form: Pick<Form, 'settings'>): string {
  const action = form.settings.successAction;
  // safeOrigin holds the host to letters, digits, dots and hyphens: nothing can end the source list.
  const origin = action.type === 'REDIRECT' && action.url ? safeOrigin(action.url) : null;
  // The console (same origin) shows the hosted page in an iframe as its live preview; no other site may frame it.
  // With proof of work on, this origin's widget script and its worker run (and nothing else).
  const base = PAGE_CSP.replace("frame-ancestors 'none'", "frame-ancestors 'self'");
  const pow = proofOfWorkOn(form) ? widgetCsp(base) : base;
  // A form that keeps the visitor's time zone runs this origin's one script that fills it (hosted.render.ts).
  const csp = form.settings.captureTimezone ? timezoneCsp(pow) : pow;
  return origin ? csp.replace("form-action 'self'", `form-action 'self' ${origin}`) : csp;
}

type Answer = { type: 'REDIRECT'; url: string } | { type: 'MESSAGE'; message: string };

/**
 * A form's success action as answered. A REDIRECT's URL goes out serialised (normalHttpUrl: punycode host,
 * percent-encoded path), which a Location header can carry; a URL stored before URLs were checked on write that
 * has no such form (a line break, a control character) shows the default message instead: the submission is stored
 * already, and a header Node refuses was a 500.
 */
function answerOf(action: Form['settings']['successAction']): Answer {
  if (action.type === 'MESSAGE') return { type: 'MESSAGE', message: action.message ?? DEFAULT_SUCCESS_MESSAGE };
  const url = action.url === undefined ? null : normalHttpUrl(action.url);
  return url ? { type: 'REDIRECT', url } : { type: 'MESSAGE', message: DEFAULT_SUCCESS_MESSAGE };
}

const THANKS_COOKIE = 'fc_thanks';
/** How long the thanks page shows a visitor's own rendered message (reloads included). */
const THANKS_COOKIE_SECONDS = 600;

/**
 * The cookie that carries a rendered success message to `/f/{slug}/thanks` (its path only), or null when the message is
 * too long for one. HttpOnly, SameSite=Lax; the page shows its value as escaped text.
 */
function thanksCookie(slug: string, message: string, secure: boolean): string | null {
  const value = encodeURIComponent(message);
  if (value.length > 3800) return null;
  return `${THANKS_COOKIE}=${value}; Path=/f/${slug}/thanks; Max-Age=${THANKS_COOKIE_SECONDS}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

function readThanksCookie(header: string | undefined): string | null {
  const pair = header
    ?.split(';')
    .map((p) => p.trim())
    .find((p) => p.startsWith(`${THANKS_COOKIE}=`));
  if (!pair) return null;
  try {
    return decodeURIComponent(pair.slice(THANKS_COOKIE.length + 1)).slice(0, 4000) || null;
  } catch {
    return null;
  }
}

/**
 * The public side of forms (docs/api.md §9): the hosted page, its embed script, submissions from the
 * page or from an embed on another site (CORS), and the double opt-in confirmation link. No API key: the
 * slug or token is the address. Every page is server-rendered with every user value escaped, no script
 * (except, on a form with a proof-of-work check, the widget served from this origin: docs/bot-protection.md), and a
 * strict Content-Security-Policy. A hosted submission is answered with a redirect (303), to `/f/{slug}/thanks` or the
 * REDIRECT success action's URL: reloading the page it leads to sends nothing again.
 */
export async function hostedRoutes(app: FastifyInstance, opts: HostedOptions): Promise<void> {
  const { submissions, publicUrl, protection } = opts;
  registerBodyParsers(app, { form: { bodyLimit: 64 * 1024 } });
  await app.register(rateLimit, { global: false });
  protectionPublicRoutes(app, { protection, submissions });

  app.setErrorHandler((err: Error & { statusCode?: number; validation?: unknown }, req, reply) => {
    const status = err instanceof DomainError ? err.status : err.validation ? 404 : (err.statusCode ?? 500);
    if (status >= 500) req.log.error({ err }, 'public page failed');
    const [title, text] =
      status === 404
        ? ['Not found', 'This form does not exist or is not published.']
        : status === 429
          ? ['Too many submissions', 'Please wait a minute and try again.']
          : status === 413
            ? ['Too large', 'What you sent is too large.']
            : status < 500
              ? ['Bad request', 'The request could not be read.']
              : ['Something went wrong', 'Please try again in a moment.'];
    reply.headers(CORS);
    if (wantsJson(req)) return reply.code(status).send({ ok: false, errors: [{ field: null, message: text }] });
    return sendPage(reply, status, title, `<h1>${title}</h1><p>${text}</p>`);
  });

  // The markup for another site's page (an embed, the fragment): with proof of work on, the widget starting at the first focus.
  const embedded = (form: PublishedForm, slug: string, markup: string) =>
    proofOfWorkOn(form) ? withWidget(markup, { challenge: challengeUrl(publicUrl, slug), auto: 'onfocus' }) : markup;

  // A page without values or errors is the same for every visitor of the cached form: made and compressed once.
  const show = (reply: FastifyReply, form: PublishedForm, slug: string, state: FormState, status = 200) => {
    const fresh = state.values === undefined && state.errors === undefined;
    const pow = proofOfWorkOn(form);
    const markup = () => {
      const html = renderFormMarkup(form, form.html, `/f/${slug}`, state);
      if (!pow) return html;
      return withWidget(html, {
        challenge: challengeUrl(publicUrl, slug),
        auto: 'onload',
        error: state.errors?.find((e) => e.field === POW_FIELD)?.message,
      });
    };
    return sendPage(reply, status, pageTitle(form), markup, {
      head: () =>
        seoHead(form, `${publicUrl}/f/${slug}`) +
        appearanceHead(form) +
        (pow ? widgetHead() : '') +
        (form.settings.captureTimezone ? timezoneHead() : ''),
      csp: cspFor(form),
      form: true,
      ...(fresh ? { once: { key: form, name: `page:${slug}` } } : {}),
    });
  };

  app.get('/f/:slug', { schema: { security: [], params: SLUG } }, async (req: SlugRequest, reply) => {
    const form = await submissions.publishedBySlug(req.params.slug);
    if (req.query.fragment !== undefined) {
      return reply
        .headers(CORS)
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-cache')
        .header('content-security-policy', cspFor(form))
        .header('x-content-type-options', 'nosniff')
        .send(embedded(form, req.params.slug, renderFormMarkup(form, form.html, `${publicUrl}/f/${req.params.slug}`)));
    }
    // ?preview=1 is the console's live preview: not a visitor, so not a view.
    if (req.query.preview === undefined) await submissions.recordView(form.workspaceId, form.id, req.ip);
    return show(reply, form, req.params.slug, {});
  });

  const timezoneScript = { body: TIMEZONE_SCRIPT, type: 'text/javascript; charset=utf-8' };
  app.get(TIMEZONE_SCRIPT_PATH, { schema: { security: [] } }, async (req, reply) => {
    // The address carries a version (?v=): cached for long.
    reply
      .headers(CORS)
      .type(timezoneScript.type)
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff');
    return sendCompressed(req, reply, timezoneScript.body);
  });

  app.get('/f/:slug/embed.js', { schema: { security: [], params: SLUG } }, async (req: SlugRequest, reply) => {
    const form = await submissions.publishedBySlug(req.params.slug);
    const action = `${publicUrl}/f/${req.params.slug}`;
    const script = await embedScript({
      slug: req.params.slug,
      action,
      display: form.display ?? 'INLINE_EMBED',
      title: publicHeading(form),
      appearance: form.settings.appearance,
      formHtml: embedded(form, req.params.slug, renderFormMarkup(form, form.html, action)),
      ...(proofOfWorkOn(form) ? { widget: { script: widgetUrl(publicUrl), css: widgetCssForShadow() } } : {}),
      // Where it reports its impression, once per page view (docs/embedding.md). The same for every copy, so the script is
      // cached like any other asset; the beacon is rate-limited per visitor and form.
      impression: `${action}/impression`,
    });
    reply
      .headers(CORS)
      .type('text/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=300')
      .header('x-content-type-options', 'nosniff');
    return sendCompressed(req, reply, script);
  });

  app.options('/f/:slug', { schema: { security: [], params: SLUG } }, async (_req, reply) =>
    reply.code(204).headers(CORS).send(),
  );

  app.post(
    '/f/:slug',
    {
      schema: { security: [], params: SLUG },
      config: {
        rateLimit: perVisitorAndForm(opts.submissionsPerMinute),
      },
    },
    async (req: FastifyRequest<{ Params: { slug: string }; Body: unknown }>, reply) => {
      reply.headers(CORS);
      const form = await submissions.publishedBySlug(req.params.slug);
      const json = wantsJson(req);
      const raw =
        req.body && typeof req.body === 'object' && !Array.isArray(req.body)
          ? (req.body as Record<string, unknown>)
          : {};
      const outcome = await submissions.submit(form.workspaceId, form, raw, json ? 'EMBED' : 'HOSTED', {
        ip: req.ip,
        userAgent: req.headers['user-agent'] ?? null,
      });
      if (!outcome.ok) {
        // A missing or refused proof of work: a problem document for scripts (docs/api.md §3), the page again with a fresh check for people.
        if (json && outcome.proofOfWork) {
          return sendProblem(
            req,
            reply,
            new DomainError('proof_of_work_failed', outcome.errors[0]!.message, {
              extra: { reason: outcome.proofOfWork },
            }),
          );
        }
        if (json) return reply.code(422).send({ ok: false, errors: outcome.errors });
        return show(reply, form, req.params.slug, { values: raw, errors: outcome.errors }, 422);
      }
      const action = answerOf(outcome.successAction);
      if (json)
        return reply.send(
          action.type === 'REDIRECT' ? { ok: true, redirect: action.url } : { ok: true, message: action.message },
        );
      if (action.type === 'REDIRECT') return reply.code(303).header('location', action.url).send();
      // The message page, 200 (contract §9), with `Refresh: 0` to the thanks page: browsers follow it at once in place of
      // the POST's history entry, so reloading shows the message instead of sending the form again. No script needed.
      // A message rendered with the answers (Liquid) rides to the thanks page in a short-lived cookie of its own path.
      const personal = isPersonalised(form.settings.successAction.message);
      if (personal) {
        const cookie = thanksCookie(req.params.slug, action.message, publicUrl.startsWith('https:'));
        if (cookie) reply.header('set-cookie', cookie);
      }
      return successPage(
        reply.header('cache-control', 'no-store').header('refresh', `0; url=/f/${req.params.slug}/thanks`),
        form,
        req.params.slug,
        action.message,
        !personal,
      );
    },
  );

  app.get('/f/:slug/thanks', { schema: { security: [], params: SLUG } }, async (req: SlugRequest, reply) => {
    const form = await submissions.publishedBySlug(req.params.slug);
    const action = answerOf(form.settings.successAction);
    // A REDIRECT form's visitors never come here; one who does is sent on.
    if (action.type === 'REDIRECT') return reply.code(303).header('location', action.url).send();
    if (!isPersonalised(form.settings.successAction.message))
      return successPage(reply, form, req.params.slug, action.message, true);
    // The message as this visitor's submission rendered it (its cookie), else rendered without answers.
    const message =
      readThanksCookie(req.headers.cookie) ??
      renderSuccessMessage(action.message, EMPTY_SUCCESS_SCOPE, DEFAULT_SUCCESS_MESSAGE);
    return successPage(reply, form, req.params.slug, message, false);
  });

  /** The success MESSAGE as a page: the answer to a hosted submission, and the thanks page (made once when `shared`). */
  function successPage(reply: FastifyReply, form: Form, slug: string, message: string, shared: boolean): FastifyReply {
    return sendPage(
      reply,
      200,
      pageTitle(form),
      () => `<div data-formcast-success role="status"><p>${escapeHtml(message)}</p></div>`,
      {
        head: () => seoHead(form, `${publicUrl}/f/${slug}`) + appearanceHead(form),
        form: true,
        ...(shared ? { once: { key: form, name: `success:${slug}` } } : {}),
      },
    );
  }

  // A confirmation link: GET (and HEAD) only shows the page with one button, because link scanners and
  // previews fetch every link in a message; the button's POST confirms (docs/security.md).
  app.get(
    '/confirm/:token',
    { schema: { security: [], params: TOKEN } },
    async (req: FastifyRequest<{ Params: { token: string } }>, reply) => {
      const view = await submissions.inspectConfirmation(req.params.token);
      if (view.result === 'pending') {
        const t = TEXTS[view.locale];
        return sendPage(
          reply,
          200,
          t.confirmTitle,
          `<h1>${escapeHtml(t.confirmTitle)}</h1><p>${escapeHtml(fill(t.confirmText, { name: view.name }))}</p>` +
            `<form method="post" action="/confirm/${encodeURIComponent(req.params.token)}"><button type="submit">${escapeHtml(t.confirmButton)}</button></form>`,
          { lang: view.locale, brand: { name: view.name, color: view.brandColor } },
        );
      }
      return confirmationPage(reply, view);
    },
  );

  app.post(
    '/confirm/:token',
    { schema: { security: [], params: TOKEN } },
    async (req: FastifyRequest<{ Params: { token: string } }>, reply) => {
      return confirmationPage(reply, await submissions.confirm(req.params.token));
    },
  );
}

function confirmationPage(reply: FastifyReply, view: ConfirmationView): FastifyReply {
  const t = TEXTS[view.locale];
  const page = (status: number, title: string, text: string) =>
    sendPage(
      reply,
      status,
      title,
      `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(fill(text, { name: view.name }))}</p>`,
      { lang: view.locale, brand: view.name ? { name: view.name, color: view.brandColor } : null },
    );
  switch (view.result) {
    case 'confirmed':
      return page(200, t.confirmedTitle, t.confirmedText);
    case 'already':
      return page(200, t.alreadyTitle, t.alreadyText);
    case 'expired':
      return page(410, t.expiredTitle, t.expiredText);
    default:
      return page(404, t.confirmTitle, t.linkInvalid);
  }
}
