import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, validationFailed } from '../../errors/errors.js';
import { escapeHtml } from '../../lib/html.js';
import { registerBodyParsers } from '../../http/input.js';
import { sendProblem } from '../../http/problem.js';
import { sendPage, type PageBrand } from '../../pages/layout.js';
import { passwordProblem, PASSWORD_MAX, PASSWORD_MIN } from './passwords.js';
import { readCookie, SessionsService } from './sessions.service.js';
import type { AccountService } from './account.service.js';
import type { Meta, UsersService } from './users.service.js';

/**
 * The console's sign-in pages (docs/console.md, "People and sign-in"): server-rendered, no script, every value
 * escaped, under the strict CSP of the public pages. Only these exact addresses are served here; the console
 * itself (/app and everything else under it) is the front end's.
 */
type Body = Record<string, unknown>;

const TOKEN = {
  type: 'object',
  properties: { token: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' } },
  required: ['token'],
} as const;

/** A `next` address to go to after signing in: a path of the console on this origin, or /app. Never elsewhere. */
export function safeNext(next: unknown): string {
  if (typeof next !== 'string' || next.length > 2000 || !next.startsWith('/app')) return '/app';
  // No protocol-relative (//host), no backslashes browsers turn into slashes, no control characters.
  if (
    next.includes('\\') ||
    [...next].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f) ||
    next.startsWith('//')
  )
    return '/app';
  let url: URL;
  try {
    url = new URL(next, 'http://formcast.invalid');
  } catch {
    return '/app';
  }
  if (url.origin !== 'http://formcast.invalid' || !/^\/app(\/|$)/.test(url.pathname)) return '/app';
  return `${url.pathname}${url.search}${url.hash}`;
}

const field = (body: Body, name: string): string => {
  const v = body[name];
  return typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : '';
};

const isJson = (req: FastifyRequest) =>
  (req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json');

function meta(req: FastifyRequest): Meta {
  const ua = req.headers['user-agent'];
  return { ip: req.ip ?? null, userAgent: typeof ua === 'string' ? ua : null };
}

function notice(
  reply: FastifyReply,
  status: number,
  title: string,
  text: string,
  link?: { href: string; label: string },
): FastifyReply {
  return sendPage(
    reply,
    status,
    title,
    `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>${link ? `<p><a href="${escapeHtml(link.href)}">${escapeHtml(link.label)}</a></p>` : ''}`,
  );
}

const errorLine = (error?: string) => (error ? `<p class="fc-error" role="alert">${escapeHtml(error)}</p>` : '');

function passwordInput(label: string, autocomplete: 'current-password' | 'new-password'): string {
  const rules = autocomplete === 'new-password' ? ` minlength="${PASSWORD_MIN}" maxlength="${PASSWORD_MAX}"` : '';
  return `<div class="fc-field"><label for="password">${escapeHtml(label)}</label><input id="password" name="password" type="password" required autocomplete="${autocomplete}"${rules}></div>`;
}

function loginPage(
  reply: FastifyReply,
  status: number,
  opts: { email?: string; next: string; error?: string; workspaces?: { id: string; name: string }[] },
): FastifyReply {
  const choose = opts.workspaces?.length
    ? `<div class="fc-field"><label for="workspace">Workspace</label><select id="workspace" name="workspace" required>${opts.workspaces.map((w) => `<option value="${escapeHtml(w.id)}">${escapeHtml(w.name)}</option>`).join('')}</select></div>`
    : '';
  const body = `<h1>Sign in to Formcast</h1>${errorLine(opts.error)}
<form method="post" action="/app/login">
<input type="hidden" name="next" value="${escapeHtml(opts.next)}">
<div class="fc-field"><label for="email">Email</label><input id="email" name="email" type="email" required autocomplete="username" value="${escapeHtml(opts.email ?? '')}"></div>
${passwordInput('Password', 'current-password')}
${choose}<button type="submit">Sign in</button>
</form>
<p><a href="/app/reset">Forgot your password?</a></p>`;
  return sendPage(reply, status, 'Sign in', body);
}

/** The sign-in's second step (docs/console.md, "Two-factor sign-in"): a code of the app, or a recovery code. */
function codePage(reply: FastifyReply, status: number, opts: { next: string; error?: string }): FastifyReply {
  const body = `<h1>Enter your sign-in code</h1>
<p>Open your authenticator app and enter the 6-digit code it shows for Formcast. Lost your phone? Enter one of your recovery codes instead.</p>${errorLine(opts.error)}
<form method="post" action="/app/login/two-factor">
<input type="hidden" name="next" value="${escapeHtml(opts.next)}">
<div class="fc-field"><label for="code">Code</label><input id="code" name="code" type="text" required autocomplete="one-time-code" autocapitalize="none" spellcheck="false" maxlength="40" autofocus></div>
<button type="submit">Verify and sign in</button>
</form>
<p><a href="/app/login">Start again</a></p>`;
  return sendPage(reply, status, 'Enter your sign-in code', body);
}

function newPasswordPage(
  reply: FastifyReply,
  status: number,
  opts: {
    title: string;
    intro: string;
    action: string;
    withName: boolean;
    error?: string;
    name?: string;
    /** An invitation: the workspace's name and colour. */
    brand?: PageBrand;
  },
): FastifyReply {
  const name = opts.withName
    ? `<div class="fc-field"><label for="name">Your name</label><input id="name" name="name" type="text" maxlength="200" autocomplete="name" value="${escapeHtml(opts.name ?? '')}"></div>`
    : '';
  const body = `<h1>${escapeHtml(opts.title)}</h1><p>${escapeHtml(opts.intro)}</p>${errorLine(opts.error)}
<form method="post" action="${escapeHtml(opts.action)}">
${name}${passwordInput(`Password (at least ${PASSWORD_MIN} characters)`, 'new-password')}
<button type="submit">Save and sign in</button>
</form>`;
  return sendPage(reply, status, opts.title, body, { brand: opts.brand ?? null });
}

function linkGone(
  reply: FastifyReply,
  state: 'used' | 'expired' | 'unknown',
  kind: 'invitation' | 'reset',
): FastifyReply {
  if (state === 'unknown')
    return notice(reply, 404, 'This link is not valid', 'It may be mistyped, or it was replaced by a newer one.', {
      href: '/app/login',
      label: 'Sign in',
    });
  const what = kind === 'invitation' ? 'invitation' : 'password reset link';
  const again = kind === 'invitation' ? 'Ask for a new invitation.' : 'Ask for a new link.';
  const title = state === 'expired' ? `This ${what} has expired` : `This ${what} was used already`;
  return notice(
    reply,
    410,
    title,
    state === 'expired' ? again : `Each link works once. ${again}`,
    kind === 'invitation'
      ? { href: '/app/login', label: 'Sign in' }
      : { href: '/app/reset', label: 'Reset your password' },
  );
}

export async function usersPages(
  app: FastifyInstance,
  opts: { users: UsersService; sessions: SessionsService; account: AccountService },
): Promise<void> {
  const { users, sessions, account } = opts;
  registerBodyParsers(app, { form: { bodyLimit: 64 * 1024 } });
  app.setErrorHandler((err: Error & { statusCode?: number; validation?: unknown }, req, reply) => {
    const status = err instanceof DomainError ? err.status : err.validation ? 404 : (err.statusCode ?? 500);
    if (isJson(req) && err instanceof DomainError) return sendProblem(req, reply, err);
    if (status === 404) return notice(reply, 404, 'This link is not valid', 'It may be mistyped or too old.');
    if (status < 500) return notice(reply, status, 'Bad request', 'The request could not be read.');
    req.log.error({ err }, 'console page failed');
    return notice(reply, 500, 'Something went wrong', 'Please try again in a moment.');
  });

  // Login CSRF: SameSite=Lax does not stop a cross-site top-level POST, which could sign a victim into an attacker's
  // workspace. The sign-in, invitation and reset forms are only accepted from their own pages: a browser's
  // Sec-Fetch-Site saying cross-site or same-site (another origin of the same site: a sibling subdomain, which may be
  // anyone's), or an Origin whose host is not this one, is refused (clients that send neither are not browsers).
  app.addHook('onRequest', async (req, reply) => {
    if (req.method !== 'POST') return;
    // Browsers that send Sec-Fetch-Site are believed (a page with Referrer-Policy: no-referrer, as these pages have,
    // posts with `Origin: null` even to itself); otherwise a real Origin must name this host.
    const origin = req.headers.origin;
    const site = req.headers['sec-fetch-site'];
    let foreign = site === 'cross-site' || site === 'same-site';
    if (site === undefined && typeof origin === 'string' && origin !== 'null') {
      try {
        foreign = new URL(origin).hostname !== req.hostname;
      } catch {
        foreign = true;
      }
    }
    if (foreign)
      return notice(
        reply,
        403,
        'Not from this site',
        'This form can only be sent from the Formcast page it belongs to.',
      );
  });

  // The session, and the known-device cookie that lets this browser sign in while the account is held (docs/console.md).
  const signedIn = (reply: FastifyReply, token: string, next = '/app', device?: string) => {
    reply.header('set-cookie', sessions.cookie(token));
    if (device) reply.header('set-cookie', sessions.deviceCookie(device));
    return reply.redirect(next, 303);
  };
  const page = { security: [] };

  app.get<{ Querystring: { next?: string } }>('/app/login', { schema: { ...page } }, async (req, reply) => {
    const next = safeNext(req.query?.next);
    if ((await sessions.fromCookies(req.headers.cookie)).found) return reply.redirect(next, 303);
    return loginPage(reply, 200, { next });
  });

  app.post<{ Body: Body | undefined }>(
    '/app/login',
    {
      schema: { ...page },
    },
    async (req, reply) => {
      const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Body;
      const email = field(body, 'email');
      const password = field(body, 'password');
      const workspace = field(body, 'workspace') || undefined;
      const next = safeNext(field(body, 'next'));
      const json = isJson(req);
      if (!email || !password) {
        if (json)
          throw validationFailed([
            ...(!email ? [{ path: '/email', message: 'is required' }] : []),
            ...(!password ? [{ path: '/password', message: 'is required' }] : []),
          ]);
        return loginPage(reply, 422, { email, next, error: 'Enter your email and password.' });
      }
      const result = await users.login(
        { email, password, workspace },
        { ...meta(req), devices: sessions.deviceCookies(req.headers.cookie) },
      );
      switch (result.kind) {
        case 'ok':
          return signedIn(reply, result.token, next, result.device);
        case 'two-factor':
          // The password was right; the code is asked for on a page of its own (no session until then).
          reply.header('set-cookie', sessions.pendingCookie(result.pending));
          reply.header('set-cookie', sessions.deviceCookie(result.device));
          return reply.redirect(
            `/app/login/two-factor${next === '/app' ? '' : `?next=${encodeURIComponent(next)}`}`,
            303,
          );
        case 'limited': {
          reply.header('retry-after', String(result.retryAfter));
          if (json)
            return sendProblem(
              req,
              reply,
              new DomainError('rate_limited', `too many failed sign-ins; try again in ${result.retryAfter} seconds`),
            );
          return loginPage(reply, 429, {
            email,
            next,
            error: `Too many failed attempts. Try again in ${Math.ceil(result.retryAfter / 60)} minutes.`,
          });
        }
        case 'choose':
          if (json)
            return sendProblem(
              req,
              reply,
              new DomainError(
                'validation_failed',
                'the address belongs to several workspaces: name one in `workspace`',
                {
                  errors: [{ path: '/workspace', message: 'choose one of `workspaces`' }],
                  extra: { workspaces: result.workspaces },
                },
              ),
            );
          return loginPage(reply, 200, {
            email,
            next,
            workspaces: result.workspaces,
            error: 'Your address belongs to several workspaces: choose one and enter your password again.',
          });
        case 'failed':
          if (json)
            return sendProblem(req, reply, new DomainError('unauthorized', 'the email or the password is wrong'));
          return loginPage(reply, 401, { email, next, error: 'The email or the password is wrong.' });
      }
    },
  );

  const pendingOf = (req: FastifyRequest) => readCookie(req.headers.cookie, sessions.pendingCookieName);

  app.get<{ Querystring: { next?: string } }>('/app/login/two-factor', { schema: { ...page } }, async (req, reply) => {
    const next = safeNext(req.query?.next);
    if (!(await account.readPending(pendingOf(req))))
      return reply.redirect(`/app/login${next === '/app' ? '' : `?next=${encodeURIComponent(next)}`}`, 303);
    return codePage(reply, 200, { next });
  });

  app.post<{ Body: Body | undefined }>('/app/login/two-factor', { schema: { ...page } }, async (req, reply) => {
    const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Body;
    const code = field(body, 'code').trim().slice(0, 100);
    const next = safeNext(field(body, 'next'));
    const json = isJson(req);
    if (!code) {
      if (json) throw validationFailed([{ path: '/code', message: 'is required' }]);
      return codePage(reply, 422, { next, error: 'Enter the code your app shows, or a recovery code.' });
    }
    const result = await account.completeSignIn(pendingOf(req), code, meta(req));
    switch (result.kind) {
      case 'ok':
        reply.header('set-cookie', sessions.pendingCookie(null));
        return signedIn(reply, result.token, next);
      case 'expired':
        reply.header('set-cookie', sessions.pendingCookie(null));
        if (json)
          return sendProblem(
            req,
            reply,
            new DomainError(
              'unauthorized',
              'no sign-in waits for a code (or it is over 10 minutes old): sign in again',
            ),
          );
        return loginPage(reply, 401, {
          next,
          error: 'Your sign-in took too long. Enter your email and password again.',
        });
      case 'limited':
        reply.header('retry-after', String(result.retryAfter));
        if (json)
          return sendProblem(
            req,
            reply,
            new DomainError('rate_limited', `too many wrong codes; try again in ${result.retryAfter} seconds`),
          );
        return codePage(reply, 429, {
          next,
          error: `Too many wrong codes. Try again in ${Math.ceil(result.retryAfter / 60)} minutes.`,
        });
      case 'failed': {
        const error = result.replayed
          ? 'That code was used already. Wait for the next code your app shows.'
          : 'That code is not right. Check the time on your phone, or use a recovery code.';
        if (json) return sendProblem(req, reply, new DomainError('unauthorized', error));
        return codePage(reply, 401, { next, error });
      }
    }
  });

  app.post<{ Body: Body | undefined }>(
    '/app/logout',
    {
      schema: { ...page },
    },
    async (req, reply) => {
      const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Body;
      const given = req.headers['x-csrf-token'] ?? field(body, '_csrf');
      // Of several session cookies (see SessionsService.fromCookies), the one whose CSRF token was sent signs out.
      const { found, live } = await sessions.fromCookies(req.headers.cookie, (auth) =>
        SessionsService.csrfMatches(given, auth.csrfToken),
      );
      if (live && !found) {
        if (isJson(req))
          return sendProblem(
            req,
            reply,
            new DomainError('csrf_failed', "signing out needs the session's CSRF token (`_csrf` or X-CSRF-Token)"),
          );
        return notice(
          reply,
          403,
          'Sign-out refused',
          "The request did not come from the console. Sign out from the console's menu.",
          { href: '/app', label: 'Back to the console' },
        );
      }
      if (found) await sessions.revokeByToken(found.token);
      return reply.header('set-cookie', sessions.cookie(null)).redirect('/app/login', 303);
    },
  );

  app.get<{ Params: { token: string } }>(
    '/app/invite/:token',
    { schema: { ...page, params: TOKEN } },
    async (req, reply) => {
      const state = await users.invitation(req.params.token);
      if (state.state !== 'valid') return linkGone(reply, state.state, 'invitation');
      const v = state.value;
      return newPasswordPage(reply, 200, {
        title: `Join ${v.workspaceName}`,
        intro: `You are invited as ${/^[aeiou]/.test(v.role) ? 'an' : 'a'} ${v.role}, with the address ${v.email}.`,
        action: `/app/invite/${req.params.token}`,
        withName: true,
        brand: { name: v.workspaceName, color: v.brandColor },
      });
    },
  );

  app.post<{ Params: { token: string }; Body: Body | undefined }>(
    '/app/invite/:token',
    { schema: { ...page, params: TOKEN } },
    async (req, reply) => {
      const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Body;
      const state = await users.invitation(req.params.token);
      if (state.state !== 'valid') return linkGone(reply, state.state, 'invitation');
      const problem = passwordProblem(field(body, 'password'));
      const v = state.value;
      if (problem)
        return newPasswordPage(reply, 422, {
          title: `Join ${v.workspaceName}`,
          intro: `You are invited as ${/^[aeiou]/.test(v.role) ? 'an' : 'a'} ${v.role}, with the address ${v.email}.`,
          action: `/app/invite/${req.params.token}`,
          withName: true,
          brand: { name: v.workspaceName, color: v.brandColor },
          error: `The password ${problem}.`,
          name: field(body, 'name'),
        });
      try {
        const done = await users.acceptInvitation(
          req.params.token,
          { name: field(body, 'name'), password: field(body, 'password') },
          meta(req),
        );
        if (done.state !== 'valid') return linkGone(reply, done.state, 'invitation');
        return signedIn(reply, done.value.token);
      } catch (err) {
        if (err instanceof DomainError && err.code === 'user_exists')
          return notice(
            reply,
            409,
            'You are already a member',
            'This address already has an account in the workspace: sign in instead.',
            { href: '/app/login', label: 'Sign in' },
          );
        throw err;
      }
    },
  );

  app.get('/app/reset', { schema: { ...page } }, (_req, reply) => resetRequestPage(reply, 200));

  app.post<{ Body: Body | undefined }>('/app/reset', { schema: { ...page } }, async (req, reply) => {
    const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Body;
    const email = field(body, 'email');
    if (!email) return resetRequestPage(reply, 422, 'Enter your email address.');
    if (!(await users.requestReset(email, meta(req)))) {
      reply.header('retry-after', String(15 * 60));
      return notice(reply, 429, 'Too many requests', 'Please wait a few minutes before asking again.');
    }
    return notice(
      reply,
      200,
      'Check your email',
      'If the address has an account, a link to choose a new password was sent to it. The link works once, for one hour.',
      { href: '/app/login', label: 'Back to sign-in' },
    );
  });

  app.get<{ Params: { token: string } }>(
    '/app/reset/:token',
    { schema: { ...page, params: TOKEN } },
    async (req, reply) => {
      const state = await users.reset(req.params.token);
      if (state.state !== 'valid') return linkGone(reply, state.state, 'reset');
      return newPasswordPage(reply, 200, {
        title: 'Choose a new password',
        intro: `For ${state.value.email}. Every other session of the account will be signed out.`,
        action: `/app/reset/${req.params.token}`,
        withName: false,
      });
    },
  );

  app.post<{ Params: { token: string }; Body: Body | undefined }>(
    '/app/reset/:token',
    { schema: { ...page, params: TOKEN } },
    async (req, reply) => {
      const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Body;
      const state = await users.reset(req.params.token);
      if (state.state !== 'valid') return linkGone(reply, state.state, 'reset');
      const problem = passwordProblem(field(body, 'password'));
      if (problem)
        return newPasswordPage(reply, 422, {
          title: 'Choose a new password',
          intro: `For ${state.value.email}.`,
          action: `/app/reset/${req.params.token}`,
          withName: false,
          error: `The password ${problem}.`,
        });
      const done = await users.completeReset(req.params.token, field(body, 'password'), meta(req));
      if (done.state !== 'valid') return linkGone(reply, done.state, 'reset');
      if ('pending' in done.value) {
        // Two-factor sign-in: the new password is set, and the code is asked for as after a sign-in's password.
        reply.header('set-cookie', sessions.pendingCookie(done.value.pending));
        return reply.redirect('/app/login/two-factor', 303);
      }
      return signedIn(reply, done.value.token);
    },
  );
}

function resetRequestPage(reply: FastifyReply, status: number, error?: string): FastifyReply {
  return sendPage(
    reply,
    status,
    'Reset your password',
    `<h1>Reset your password</h1><p>Enter the address you sign in with: we will email you a link to choose a new password.</p>${errorLine(error)}
<form method="post" action="/app/reset">
<div class="fc-field"><label for="email">Email</label><input id="email" name="email" type="email" required autocomplete="username"></div>
<button type="submit">Send the link</button>
</form>
<p><a href="/app/login">Back to sign-in</a></p>`,
  );
}
