import type { OperationDocs } from '../../http/operation-docs.js';

const html = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><main><h1>${title}</h1>${body}</main></body></html>`;
const SELF =
  "For a console session: the signed-in person's own account (an API key is no person: 403 forbidden). Wrong current passwords are limited to 5 per person and 20 per IP address in 15 minutes (429 with Retry-After).";
const CODES =
  'Wrong codes are limited to 5 per person and 20 per IP address in 15 minutes (429 with Retry-After); a code is accepted once (the same code again, or an earlier one, is refused).';
const recoveryCodes = [
  'k7mq-2xrt-9vbn',
  'p3ha-wq8z-c6je',
  'u4ds-7fky-tn2m',
  'r9gx-b5cw-hq3a',
  'e8vn-m2pz-j6tk',
  'y5qa-d7hr-w4xc',
  'f2tm-k9ue-s8bn',
  'z6jc-x3wa-q7pd',
  'g4rk-n8ys-v2me',
  'b7wt-h5qz-a9cu',
];

export const accountDocs: OperationDocs = {
  'PUT /v1/me': {
    tags: ['session'],
    summary: 'Change your name or email',
    description: `${SELF} Partial: \`name\` (null clears it) and \`email\`. A new email needs \`currentPassword\`, must not be another person's of the workspace (409 user_exists), and changes at once (no confirmation mail); the old address gets a notice when the workspace can send mail.`,
    request: { name: 'Sam Rivera', email: 'sam.rivera@example.com', currentPassword: 'correct-horse-battery-staple' },
    response: {
      id: 'usr_01JDB40M6P8R0T2V4X6Z8B0D2F',
      email: 'sam.rivera@example.com',
      name: 'Sam Rivera',
      role: 'editor',
      createdAt: '2026-11-21T10:00:00.000Z',
      updatedAt: '2026-11-29T09:30:00.000Z',
      lastLoginAt: '2026-11-29T09:12:40.503Z',
      emailChanged: true,
    },
  },
  'POST /v1/me/password': {
    tags: ['session'],
    summary: 'Change your password',
    description: `${SELF} The current password and a new one (10 to 1000 characters). Every other session of the person is signed out (this one stays), and their unused reset links stop working.`,
    request: { currentPassword: 'correct-horse-battery-staple', newPassword: 'a new and longer passphrase' },
    response: { sessionsEnded: 2 },
  },
  'GET /v1/me/two-factor': {
    tags: ['session'],
    summary: 'Your two-factor sign-in',
    description:
      'Whether the signed-in person has two-factor sign-in (TOTP), since when, how many unused recovery codes are left, and whether the workspace requires it. Answers while a required set-up is missing.',
    response: { enabled: true, enrolledAt: '2026-11-29T09:40:00.000Z', recoveryCodesLeft: 9, required: false },
  },
  'POST /v1/me/two-factor/setup': {
    tags: ['session'],
    summary: 'Start setting up two-factor sign-in',
    description: `${SELF} A new TOTP secret (SHA-1, 6 digits, 30 seconds: what authenticator apps use), its otpauth:// address and a QR code of it as an SVG data URL. Nothing changes at sign-in until POST /v1/me/two-factor/confirm; calling again replaces the secret. 409 invalid_state when it is on already. The secret is stored sealed with the installation's key.`,
    request: { currentPassword: 'correct-horse-battery-staple' },
    response: {
      secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
      uri: 'otpauth://totp/Formcast%20Acme:sam%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Formcast%20Acme',
      qrCode: 'data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4=',
    },
  },
  'POST /v1/me/two-factor/confirm': {
    tags: ['session'],
    summary: 'Turn on two-factor sign-in',
    description: `A code of the app for the secret of the set-up: two-factor sign-in is on, and 10 single-use recovery codes are returned, this once (only their hashes are kept). ${CODES}`,
    request: { code: '492039' },
    response: { recoveryCodes },
  },
  'POST /v1/me/two-factor/disable': {
    tags: ['session'],
    summary: 'Turn off two-factor sign-in',
    description: `${SELF} The current password and a code of the app or an unused recovery code. The secret and the recovery codes are deleted. ${CODES}`,
    request: { currentPassword: 'correct-horse-battery-staple', code: '492039' },
  },
  'POST /v1/me/two-factor/recovery-codes': {
    tags: ['session'],
    summary: 'New recovery codes',
    description: `${SELF} The current password and a code of the app: 10 new recovery codes, shown this once; the old ones stop working. ${CODES}`,
    request: { currentPassword: 'correct-horse-battery-staple', code: '492039' },
    response: { recoveryCodes },
  },
  'GET /app/login/two-factor': {
    tags: ['console'],
    summary: 'The sign-in code page',
    description:
      'A page of the console (no API key): after a right password of a person with two-factor sign-in, the pending sign-in cookie `__Host-fc_2fa` (10 minutes) brings the browser here; it asks for a code of the app or a recovery code (input `code`). Without a valid pending sign-in: 303 to /app/login.',
    response: html(
      'Enter your sign-in code',
      '<form method="post" action="/app/login/two-factor"><input name="code" autocomplete="one-time-code"><button>Verify and sign in</button></form>',
    ),
  },
  'POST /app/login/two-factor': {
    tags: ['console'],
    summary: 'Sign in: the code',
    description: `Form-encoded or JSON \`{ code, next? }\` with the pending sign-in cookie: a code of the app or an unused recovery code (spent). Right: the session cookie and a redirect to \`next\` (303). ${CODES}`,
    request: 'code=492039&next=%2Fapp',
    requestType: 'application/x-www-form-urlencoded',
    responses: {
      303: { description: 'Signed in: the session cookie, and a redirect to /app (or `next`).' },
      401: {
        description: 'A wrong or used code (the page again), or no valid pending sign-in (the sign-in page).',
        example: html('Enter your sign-in code', '<p role="alert">That code is not right.</p>'),
      },
      429: {
        description: 'Too many wrong codes (`Retry-After`).',
        example: html('Enter your sign-in code', '<p role="alert">Too many wrong codes. Try again in 15 minutes.</p>'),
      },
    },
  },
};
