import { ERROR_CATALOGUE, ERROR_CODES, type ErrorCode } from './catalogue.js';

/** What a route tells about itself that decides which errors it can answer. */
export interface RouteTraits {
  method: string | string[];
  url: string;
  /** The scope it needs; absent on public routes. */
  scope?: string;
  hasParams: boolean;
  hasBody: boolean;
  hasQuery: boolean;
  /** The codes particular to the route (its `config.errors`). */
  errors?: readonly ErrorCode[];
}

/** A code a route answers with another status than the catalogue's (`config.errorsAt`), with a typical `detail`. */
export interface ErrorAt {
  code: ErrorCode;
  status: number;
  detail: string;
}

/** The 4xx codes a /v1 route can answer: those every route of its kind can, and its own. */
export function routeErrors(r: RouteTraits): ErrorCode[] {
  const methods = Array.isArray(r.method) ? r.method : [r.method];
  const codes = new Set<ErrorCode>();
  if (r.scope) codes.add('unauthorized').add('insufficient_scope');
  // The per-key rate limit (http/rate-limit.ts) applies to every /v1 route.
  codes.add('rate_limited');
  if (r.hasParams) codes.add('not_found');
  if (r.hasBody)
    codes.add('invalid_json').add('payload_too_large').add('unsupported_media_type').add('validation_failed');
  if (r.hasQuery) codes.add('validation_failed');
  if (methods.includes('POST'))
    codes.add('idempotency_conflict').add('idempotency_key_reused').add('validation_failed');
  for (const c of r.errors ?? []) codes.add(c);
  return ERROR_CODES.filter((c) => codes.has(c) && ERROR_CATALOGUE[c].status < 500);
}

/** A typical `detail` of each code, for the examples of the reference (what the service says in such a case). */
const EXAMPLE_DETAILS: Partial<Record<ErrorCode, string>> = {
  invalid_json: 'Unexpected end of JSON input',
  unauthorized: 'an API key is required: Authorization: Bearer <key>',
  insufficient_scope: 'this operation needs the write:contacts scope',
  not_found: 'resource not found',
  form_not_editable:
    'published and archived forms are immutable; create a new version (POST /v1/forms/{formId}/versions) and edit that',
  form_already_published: 'this form is already the published version',
  form_not_published: 'only a PUBLISHED form can have a new version; edit this draft directly',
  draft_version_exists: 'this form already has a draft version; edit or delete it',
  slug_taken: 'the slug "newsletter" is already in use; slugs are public addresses (/f/{slug})',
  resource_in_use: 'a form uses this template as its double opt-in email; point the form elsewhere first',
  contact_exists: 'another contact of this workspace has the email ada@example.com',
  domain_exists: 'the domain example.com is already in this workspace',
  broadcast_not_editable: 'only DRAFT and SCHEDULED broadcasts can be edited',
  invalid_state: 'cannot pause a broadcast that is DRAFT',
  idempotency_conflict: 'a request with this Idempotency-Key is still being processed',
  payload_too_large: 'the body is larger than 1048576 bytes',
  unsupported_media_type: 'the request body must be JSON (Content-Type: application/json)',
  sender_domain_not_verified:
    'example.com is not a verified sending domain of this workspace; add and verify it (POST /v1/domains)',
  invalid_reference: 'topicId names no topic of this workspace',
  form_incomplete: 'the form cannot be published: 1 problem',
  broadcast_incomplete: 'the broadcast is not complete: /emailContent/subject is required to send',
  automation_incomplete: 'the automation cannot be activated: 1 problem',
  idempotency_key_reused: 'this Idempotency-Key was used with a different request',
  rate_limited: 'too many requests; retry after 1 second',
};

/** Members particular to a code in the examples. */
const EXAMPLE_EXTRAS: Partial<Record<ErrorCode, Record<string, unknown>>> = {
  validation_failed: {
    detail: 'name must NOT have more than 200 characters',
    errors: [{ path: '/name', message: 'must NOT have more than 200 characters' }],
  },
  draft_version_exists: { draftId: 'form_01JDB3M5Q8X2V7K9T4N6R1P0AZ' },
  contact_exists: { contactId: 'ct_01JDB3N2W4Y6A8C0E2G4J6M8Q0' },
  form_incomplete: { errors: [{ path: '/fieldMapping', message: 'a SIGN_UP form needs a field mapped to email' }] },
  broadcast_incomplete: { errors: [{ path: '/emailContent/subject', message: 'is required to send' }] },
  automation_incomplete: {
    errors: [{ path: '/steps/0/from', message: 'must be on a verified domain of the workspace' }],
  },
};

/** An example problem document of the code, as the service answers it (at another status: `at`). */
export function exampleProblem(code: ErrorCode, at?: ErrorAt): Record<string, unknown> {
  const spec = ERROR_CATALOGUE[code];
  return {
    type: `/docs/errors#${code}`,
    title: spec.title,
    status: at?.status ?? spec.status,
    code,
    detail: at?.detail ?? EXAMPLE_DETAILS[code] ?? spec.description,
    ...EXAMPLE_EXTRAS[code],
    requestId: '5f0c2a8e-7d1b-4c3e-9a6f-2b8d4e1c7a90',
  };
}

/**
 * OpenAPI responses for those codes (and those a route answers at another status, `at`): one per status, its
 * description naming each code, an example of each.
 */
export function openApiErrorResponses(
  codes: readonly ErrorCode[],
  at: readonly ErrorAt[] = [],
): Record<string, unknown> {
  const byStatus = new Map<number, { code: ErrorCode; at?: ErrorAt }[]>();
  const add = (status: number, entry: { code: ErrorCode; at?: ErrorAt }) =>
    byStatus.set(status, [...(byStatus.get(status) ?? []), entry]);
  for (const code of codes) add(ERROR_CATALOGUE[code].status, { code });
  for (const a of at) add(a.status, { code: a.code, at: a });
  const out: Record<string, unknown> = {};
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    out[String(status)] = {
      description: list.map(({ code }) => `\`${code}\`: ${ERROR_CATALOGUE[code].title}`).join('; '),
      content: {
        'application/problem+json': {
          schema: { $ref: '#/components/schemas/Problem' },
          examples: Object.fromEntries(
            list.map(({ code, at }) => [
              code,
              { summary: ERROR_CATALOGUE[code].title, value: exampleProblem(code, at) },
            ]),
          ),
        },
      },
    };
  }
  return out;
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const inline = (s: string) => escape(s).replace(/`([^`]+)`/g, '<code>$1</code>');

/**
 * The /docs/errors page: every code with its status and meaning, each an anchor the problem `type` links to. Its
 * parts: the HTTP plumbing puts them in the public pages' layout (pages/layout.ts), which errors may not import.
 */
export function errorsPage(): { title: string; head: string; body: string } {
  const rows = ERROR_CODES.map((c) => {
    const e = ERROR_CATALOGUE[c];
    return `<tr id="${c}"><td data-label="code"><a href="#${c}"><code>${c}</code></a></td><td data-label="status">${e.status}</td><td data-label="title">${escape(e.title)}</td><td data-label="when">${inline(e.description)}</td></tr>`;
  }).join('\n');
  // The public pages' look (pages/layout.ts: light and dark, the console's colours); on a phone each row is a block.
  const head = `<style>
table { border-collapse: collapse; width: 100%; }
td, th { border-bottom: 1px solid var(--border); padding: .5rem; text-align: left; vertical-align: top; }
tr:target { background: var(--warning-soft); }
@media (max-width: 40rem) {
  thead { display: none; }
  table, tbody, tr, td { display: block; }
  tr { border-bottom: 1px solid var(--border); padding: .5rem 0; }
  td { border: 0; padding: .1rem 0; }
  td[data-label="status"]::before { content: "status "; color: var(--muted); }
}
</style>
`;
  return {
    title: 'Formcast API errors',
    head,
    body: `<h1>Errors</h1>
<p>Every error is an <code>application/problem+json</code> document (RFC 9457) with a stable <code>code</code>; validation errors list each
violation in <code>errors</code>, with a JSON Pointer <code>path</code>. The problem's <code>type</code> links to the code's row below.</p>
<table><thead><tr><th>code</th><th>status</th><th>title</th><th>when</th></tr></thead><tbody>
${rows}
</tbody></table>`,
  };
}
