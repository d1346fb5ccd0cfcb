import type { OperationDocs } from '../../http/operation-docs.js';

const user = {
  id: 'usr_01JDB40M6P8R0T2V4X6Z8B0D2F',
  email: 'sam@example.com',
  name: 'Sam Rivera',
  role: 'editor',
  createdAt: '2026-11-21T10:00:00.000Z',
  updatedAt: '2026-11-21T10:00:00.000Z',
  lastLoginAt: '2026-11-24T08:12:40.503Z',
};
const invitation = {
  id: 'inv_01JDB41Q0T2V4X6Z8B0D2F4H6K',
  email: 'lee@example.com',
  role: 'viewer',
  status: 'PENDING',
  invitedBy: 'usr_01JDB3ZZ8B0D2F4H6K8M0P2R4T',
  createdAt: '2026-11-21T10:00:00.000Z',
  expiresAt: '2026-11-28T10:00:00.000Z',
  acceptedAt: null,
  revokedAt: null,
};
const html = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><main><h1>${title}</h1>${body}</main></body></html>`;
const PAGE = "A page of the console (no API key); form posts carry the page's CSRF field.";
const expired = {
  description: 'The link is not valid, was used already or expired: a page that says so.',
  example: html('Link not valid', '<p>This link is not valid any more. Ask for a new one.</p>'),
};

export const usersDocs: OperationDocs = {
  'GET /v1/session': {
    tags: ['session'],
    summary: 'Who is calling',
    description:
      "With the console's session cookie: the user, their role, the scopes the role grants, the CSRF token every write must send as X-CSRF-Token, when the session expires (30 days after its last use), and `twoFactor`: whether the person has two-factor sign-in and whether the workspace requires it (required and not enabled: every other operation answers 403 two_factor_required until it is set up), and `managers`: up to five owners and admins, owners first, whom the console names when the role does not allow something. With an API key: `user`, `role`, `csrfToken`, `expiresAt` and `twoFactor` are null and `scopes` are the key's. `grants` lists every scope those scopes grant.",
    response: {
      user: {
        id: user.id,
        email: user.email,
        name: user.name,
        role: user.role,
        createdAt: user.createdAt,
        lastLoginAt: user.lastLoginAt,
      },
      workspace: { id: 'ws_01JDB2Z8K4M6P8R0T2V4X6Z8B0', name: 'Acme' },
      role: 'editor',
      scopes: [
        'read:forms',
        'write:forms',
        'read:contacts',
        'write:contacts',
        'read:broadcasts',
        'write:broadcasts',
        'read:domains',
        'read:webhooks',
      ],
      grants: [
        'read:forms',
        'write:forms',
        'read:broadcasts',
        'write:broadcasts',
        'read:contacts',
        'write:contacts',
        'read:domains',
        'read:webhooks',
      ],
      managers: [{ name: 'Mia Marketer', email: 'mia@acme.test', role: 'owner' }],
      csrfToken: 'q3Xv8b0pR2mZl6Ykz1sT9wHn4cJ7eA5u',
      expiresAt: '2026-12-24T08:12:40.503Z',
      twoFactor: { enabled: true, required: false },
    },
  },
  'GET /v1/session/sessions': {
    tags: ['session'],
    summary: 'Your signed-in sessions',
    description:
      'Newest first, at most 200; revoked and expired sessions are left out. An API key has no sessions: the list is empty.',
    response: {
      data: [
        {
          id: 'ses_01JDB42T4X6Z8B0D2F4H6K8M0P',
          createdAt: '2026-11-24T08:12:40.503Z',
          lastSeenAt: '2026-11-24T09:40:02.117Z',
          expiresAt: '2026-12-24T09:40:02.117Z',
          ip: '203.0.113.7',
          userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 Safari/605.1.15',
          current: true,
        },
      ],
      nextCursor: null,
    },
  },
  'DELETE /v1/session/sessions/{sessionId}': {
    tags: ['session'],
    summary: 'Sign a session out',
    description:
      "The session's cookie is refused from the next request on (revoking the current session signs this browser out). Another user's session, or a revoked one, is 404.",
  },
  'GET /v1/users': {
    tags: ['people'],
    summary: 'List the people of the workspace',
    description: 'Newest first, with their role and last sign-in.',
    response: { data: [user], nextCursor: null },
  },
  'GET /v1/users/{userId}': {
    tags: ['people'],
    summary: 'Get a person',
    description:
      'One user of the workspace: email, name, role and last sign-in. Needs `admin` (with a key) or the admin role.',
    response: user,
  },
  'PUT /v1/users/{userId}': {
    tags: ['people'],
    summary: "Change a person's name or role",
    description:
      'A role change is effective on their next request. Only an owner gives or takes the owner role or changes an owner (403 insufficient_scope otherwise); the last owner cannot be demoted (409 invalid_state).',
    request: { role: 'admin' },
    response: { ...user, role: 'admin', updatedAt: '2026-11-22T14:30:00.000Z' },
  },
  'DELETE /v1/users/{userId}': {
    tags: ['people'],
    summary: 'Remove a person',
    description: 'Only an owner removes an owner; the last owner cannot be removed (409 invalid_state).',
  },
  'POST /v1/invitations': {
    tags: ['people'],
    summary: 'Invite a person',
    description:
      "Emails a single-use link, `PUBLIC_URL/app/invite/{token}`, valid 7 days, where they choose their name and password. A new invitation replaces the address's pending ones. Inviting an owner needs an owner. `emailSent` is false when no email could be sent (no mail transport, or no verified sending domain): the invitation exists all the same. 409 user_exists when the address is already a user of the workspace.",
    request: { email: 'lee@example.com', role: 'viewer' },
    response: { ...invitation, emailSent: true },
  },
  'GET /v1/invitations': {
    tags: ['people'],
    summary: 'List invitations',
    description:
      "The workspace's invitations, newest first, with their status (PENDING, ACCEPTED, REVOKED, EXPIRED), cursor pagination. Needs `admin` (with a key) or the admin role.",
    response: { data: [invitation], nextCursor: null },
  },
  'DELETE /v1/invitations/{invitationId}': {
    tags: ['people'],
    summary: 'Revoke an invitation',
    description: '409 invalid_state when it was accepted already; revoking a revoked or expired invitation is a no-op.',
  },
  'GET /app/login': {
    tags: ['console'],
    summary: 'The sign-in page',
    description: `${PAGE} Inputs \`email\` and \`password\`; a signed-in browser is sent on to /app (303).`,
    response: html(
      'Sign in',
      '<form method="post" action="/app/login"><input name="email" type="email"><input name="password" type="password"><button>Sign in</button></form>',
    ),
  },
  'POST /app/login': {
    tags: ['console'],
    summary: 'Sign in',
    description:
      "Form-encoded or JSON `{ email, password, workspace?, next? }`. 401 on a wrong address or password (the same answer for both); 429 with Retry-After after 5 failures per address and client, 20 per client IP address in 15 minutes, or while the address's backoff holds (10 failures in 24 hours from anywhere; not for a known device or a known IP address: docs/console.md). Sets the session cookie and the known-device cookie.",
    request: 'email=sam%40example.com&password=correct-horse-battery-staple',
    requestType: 'application/x-www-form-urlencoded',
    responses: {
      303: {
        description:
          'Signed in: the session cookie `__Host-fc_session` (`HttpOnly; Secure; SameSite=Lax`; `fc_session` without Secure on http loopback), the known-device cookie, and a redirect to /app. A person with two-factor sign-in gets no session yet: the pending sign-in cookie `__Host-fc_2fa` (10 minutes) and a redirect to /app/login/two-factor, which asks for the code.',
      },
      401: {
        description: 'A wrong address or password (the same answer for both): the page again.',
        example: html('Sign in', '<p role="alert">The email or the password is wrong.</p>'),
      },
      422: {
        description: 'No email or no password.',
        example: html('Sign in', '<p role="alert">Enter your email and password.</p>'),
      },
      429: {
        description: 'Too many failed sign-ins for the address or the IP address (`Retry-After`).',
        example: html('Sign in', '<p role="alert">Too many failed attempts. Try again in 15 minutes.</p>'),
      },
    },
  },
  'POST /app/logout': {
    tags: ['console'],
    summary: 'Sign out',
    description:
      "Needs the session's CSRF token, in the form field `_csrf` or the X-CSRF-Token header (403 otherwise).",
    request: '_csrf=q3Xv8b0pR2mZl6Ykz1sT9wHn4cJ7eA5u',
    requestType: 'application/x-www-form-urlencoded',
    responses: {
      303: { description: 'Signed out: the cookie cleared, a redirect to /app/login.' },
      403: {
        description: "Without the session's CSRF token.",
        example: html(
          'Sign-out refused',
          "<p>The request did not come from the console. Sign out from the console's menu.</p>",
        ),
      },
    },
  },
  'GET /app/invite/{token}': {
    tags: ['console'],
    summary: 'The page of an invitation link',
    description: `${PAGE} Shows the workspace and the role, and asks for a name and a password.`,
    response: html(
      'Join Acme',
      '<p>You are invited as viewer, with the address lee@example.com.</p><form method="post"><input name="name"><input name="password" type="password"><button>Join</button></form>',
    ),
    responses: { 404: expired },
  },
  'POST /app/invite/{token}': {
    tags: ['console'],
    summary: 'Accept an invitation',
    description: `${PAGE} Creates the user with the invitation's role (once), signs them in and redirects to /app (303). A password that is too short or too common is 422 with the page again.`,
    request: 'name=Lee+Park&password=correct-horse-battery-staple',
    requestType: 'application/x-www-form-urlencoded',
    responses: {
      303: { description: 'Joined and signed in: a redirect to /app.' },
      404: expired,
      409: {
        description: 'The address is a user of the workspace already.',
        example: html(
          'You are already a member',
          '<p>This address already has an account in the workspace: sign in instead.</p>',
        ),
      },
      422: {
        description: 'The password is not acceptable: the page again, saying why.',
        example: html('Join Acme', '<p role="alert">The password must be at least 12 characters.</p>'),
      },
    },
  },
  'GET /app/reset': {
    tags: ['console'],
    summary: 'The password reset request page',
    description: `${PAGE} Asks for the address to send a reset link to.`,
    response: html(
      'Reset your password',
      '<p>Enter the address you sign in with: we will email you a link to choose a new password.</p><form method="post"><input name="email" type="email"><button>Send the link</button></form>',
    ),
  },
  'POST /app/reset': {
    tags: ['console'],
    summary: 'Ask for a password reset link',
    description: `${PAGE} Emails a link valid for an hour when the address has an account; the answer is the same whether it has one or not, so it tells nothing about who has an account. Rate-limited per address and IP.`,
    request: 'email=sam%40example.com',
    requestType: 'application/x-www-form-urlencoded',
    response: html(
      'Check your inbox',
      '<p>If sam@example.com has an account, a link to choose a new password is on its way.</p>',
    ),
    responses: {
      422: {
        description: 'No address given.',
        example: html('Reset your password', '<p role="alert">Enter your email address.</p>'),
      },
      429: {
        description: 'Too many requests for the address or from the IP address.',
        example: html('Too many requests', '<p>Please wait a few minutes before asking again.</p>'),
      },
    },
  },
  'GET /app/reset/{token}': {
    tags: ['console'],
    summary: 'The page of a password reset link',
    description: `${PAGE} Asks for the new password.`,
    response: html(
      'Choose a new password',
      '<p>For sam@example.com. Every other session of the account will be signed out.</p><form method="post"><input name="password" type="password"><button>Save</button></form>',
    ),
    responses: { 404: expired },
  },
  'POST /app/reset/{token}': {
    tags: ['console'],
    summary: 'Set a new password',
    description: `${PAGE} Sets the password (the link works once, within an hour of being sent), signs out every session of the account, signs this browser in and redirects to /app (303).`,
    request: 'password=correct-horse-battery-staple',
    requestType: 'application/x-www-form-urlencoded',
    responses: {
      303: { description: 'Password set and signed in: a redirect to /app.' },
      404: expired,
      422: {
        description: 'The password is not acceptable: the page again, saying why.',
        example: html('Choose a new password', '<p role="alert">The password must be at least 12 characters.</p>'),
      },
    },
  },
};
