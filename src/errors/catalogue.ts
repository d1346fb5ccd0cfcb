/**
 * Every error code the service answers with, in one place: its HTTP status, title, and what it means. The
 * problem `type` of an error links to its entry on the page rendered from this table (`/docs/errors#<code>`),
 * and each route's documented 4xx responses in `/openapi.json` list the codes it can answer (docs/api.md §3).
 */
export interface ErrorSpec {
  status: number;
  title: string;
  /** When a client gets it, and what to do. */
  description: string;
}

export const ERROR_CATALOGUE = {
  invalid_json: {
    status: 400,
    title: 'Invalid JSON',
    description:
      'The request body is not parseable JSON (or sets `__proto__` / `constructor.prototype`). Fix the body; do not retry as is.',
  },
  bad_request: {
    status: 400,
    title: 'Bad request',
    description:
      'Another malformed request: a Content-Length that does not match the body, a header the server cannot read.',
  },
  unauthorized: {
    status: 401,
    title: 'Unauthorized',
    description:
      'No API key, a malformed, unknown or revoked key, or no valid console session. Comes with `WWW-Authenticate: Bearer`.',
  },
  insufficient_scope: {
    status: 403,
    title: 'Insufficient scope',
    description:
      'The key is valid but lacks the scope the operation needs; `detail` names it. `write:X` grants `read:X`; `admin` grants everything.',
  },
  forbidden: {
    status: 403,
    title: 'Forbidden',
    description:
      'The request is refused for a reason other than a scope: a console write without its CSRF token, a webhook signature that does not verify.',
  },
  csrf_failed: {
    status: 403,
    title: 'CSRF check failed',
    description:
      "A console session (the `__Host-fc_session` cookie, `fc_session` on http loopback) made a POST, PUT, PATCH or DELETE without the header `X-CSRF-Token` equal to its session's token, which `GET /v1/session` returns as `csrfToken`. Nothing was changed. API keys are not concerned.",
  },
  two_factor_required: {
    status: 403,
    title: 'Two-factor sign-in required',
    description:
      'The workspace requires two-factor sign-in and the signed-in person has not set it up: only `GET /v1/session` and `/v1/me/two-factor` answer until they do (the console shows the set-up). API keys are not concerned.',
  },
  not_found: {
    status: 404,
    title: 'Not found',
    description:
      'No such resource, a resource of another workspace (answered exactly like a missing one), an id that is not well-formed, or an unknown route.',
  },
  form_not_editable: {
    status: 409,
    title: 'Form not editable',
    description:
      'PUT (or DELETE, or HTML deploy) on a PUBLISHED or ARCHIVED form. Published forms are immutable: create a new version (POST /v1/forms/{id}/versions) and edit that.',
  },
  form_already_published: {
    status: 409,
    title: 'Form already published',
    description: 'Publish on a form that is already the PUBLISHED version of its group.',
  },
  form_not_published: {
    status: 409,
    title: 'Form not published',
    description:
      'Creating a version of a form that is not PUBLISHED, or submitting to a form group without a PUBLISHED version.',
  },
  draft_version_exists: {
    status: 409,
    title: 'Draft version exists',
    description:
      'Creating a version while the form group already has a DRAFT; the body carries its `draftId`: edit that one.',
  },
  alias_taken: {
    status: 409,
    title: 'Alias taken',
    description:
      'Another template of the workspace has this `alias` (what `POST /v1/emails` may name instead of the template id: docs/emails.md). Nothing was changed.',
  },
  slug_taken: {
    status: 409,
    title: 'Slug taken',
    description:
      'A slug is a public address: another form group (of any workspace: `/f/{slug}` names no workspace) uses the slug, or, for `PUT /v1/workspace`, another workspace has it as its public archive address (`/archive/{slug}`). Nothing was changed.',
  },
  resource_in_use: {
    status: 409,
    title: 'Resource in use',
    description:
      'Deleting something that other resources still point at (a topic, segment or template a broadcast or form uses).',
  },
  contact_exists: {
    status: 409,
    title: 'Contact exists',
    description:
      "Changing a contact's email to one another contact of the workspace has; the body carries that `contactId`.",
  },
  domain_exists: {
    status: 409,
    title: 'Domain exists',
    description: 'Adding a sending domain the workspace already has.',
  },
  user_exists: {
    status: 409,
    title: 'User exists',
    description:
      'Creating or inviting a person whose email is already a user of the workspace (addresses compare case-insensitively).',
  },
  last_admin_key: {
    status: 409,
    title: 'Last admin key',
    description:
      'Revoking the only active API key of the workspace that holds `admin`: the workspace would have no key left that can manage keys. Create another key with `admin` first (POST /v1/api-keys, or `formcast key create --scopes admin`), then revoke this one.',
  },
  broadcast_not_editable: {
    status: 409,
    title: 'Broadcast not editable',
    description: 'PUT on a broadcast that is not DRAFT or SCHEDULED.',
  },
  invalid_state: {
    status: 409,
    title: 'Invalid state',
    description:
      "Any other transition the resource's current status does not allow (send a SENT broadcast, pause a DRAFT, …); `detail` says why.",
  },
  ab_winner_chosen: {
    status: 409,
    title: 'A/B winner already chosen',
    description:
      'POST /v1/broadcasts/{id}/ab/winner on an A/B broadcast whose winning variant was already chosen (by hand or when the wait ended); `winner` names it. The choice is final.',
  },
  ab_test_missing: {
    status: 409,
    title: 'No A/B test',
    description:
      'POST /v1/broadcasts/{id}/ab/winner on a broadcast that has no A/B test (`abTest` is null). Nothing changed.',
  },
  idempotency_conflict: {
    status: 409,
    title: 'Idempotency conflict',
    description: 'A request with the same Idempotency-Key is still being processed. Retry later with the same key.',
  },
  payload_too_large: {
    status: 413,
    title: 'Payload too large',
    description:
      'The body is larger than the endpoint accepts (1 MiB on /v1 unless the endpoint says more; 1 GiB for imports; 5 MiB for an image).',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    description:
      'A /v1 body that is not JSON (Content-Type: application/json), an import that is neither CSV nor NDJSON in UTF-8, or an image upload that is not multipart/form-data. With status 422: an uploaded image whose bytes are not PNG, JPEG, GIF or WebP (an SVG, a PDF, a corrupt file), whatever its name or declared type says.',
  },
  validation_failed: {
    status: 422,
    title: 'Validation failed',
    description:
      'A schema or constraint violation. `errors` lists each one with a JSON Pointer into the body (or `/query/<name>`).',
  },
  sender_domain_not_verified: {
    status: 422,
    title: 'Sender domain not verified',
    description:
      '`from` is not on a VERIFIED sending domain of the workspace. Add the domain and verify it (POST /v1/domains, …/verify).',
  },
  invalid_reference: {
    status: 422,
    title: 'Invalid reference',
    description:
      'An id in the body (topicId, segmentId, doubleOptInEmailId, contactId, …) names nothing in the workspace.',
  },
  form_incomplete: {
    status: 422,
    title: 'Form incomplete',
    description:
      'Publishing a form that lacks what it needs (a SIGN_UP form without an email mapping, an invalid htmlValidation, a double opt-in form without a verified domain); `errors` lists each.',
  },
  broadcast_incomplete: {
    status: 422,
    title: 'Broadcast incomplete',
    description:
      'Scheduling or sending a broadcast that lacks what it needs, or fails a preflight check; `errors` lists each.',
  },
  automation_incomplete: {
    status: 422,
    title: 'Automation incomplete',
    description:
      'Activating an automation (or changing an active one) whose steps lack what they need, such as a `send` without a verified `from`; `errors` has one entry per step path.',
  },
  proof_of_work_failed: {
    status: 422,
    title: 'Proof of work failed',
    description:
      'A public submission to a form whose `settings.protection.proofOfWork` is on came without a solution of its challenge that verifies (`GET /f/{slug}/challenge`); `reason` says why: `missing`, `malformed`, `invalid`, `wrong_form`, `expired` or `replayed` (each solution is good for one submission). Solve a new challenge and send again; the hosted page and the embeds do it by themselves.',
  },
  idempotency_key_reused: {
    status: 422,
    title: 'Idempotency key reused',
    description: 'The Idempotency-Key was used with a different request (method, path or body) within 24 hours.',
  },
  rate_limited: {
    status: 429,
    title: 'Rate limited',
    description: 'Too many requests; wait for the number of seconds in `Retry-After`.',
  },
  internal_error: {
    status: 500,
    title: 'Internal error',
    description: 'An unexpected error. It is logged with the request id; the body never carries a stack trace or SQL.',
  },
  unavailable: {
    status: 503,
    title: 'Service unavailable',
    description: 'The database cannot be reached, or the server is shutting down. Retry after `Retry-After` seconds.',
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export const ERROR_CODES = Object.keys(ERROR_CATALOGUE) as ErrorCode[];
