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

/** The 4xx codes a /v1 route can answer: those every route of its kind can, and its own. */
export function routeErrors(r: RouteTraits): ErrorCode[] {
  const methods = Array.isArray(r.method) ? r.method : [r.method];
  const codes = new Set<ErrorCode>();
  if (r.scope) codes.add('unauthorized').add('insufficient_scope');
  if (r.hasParams) codes.add('not_found');
  if (r.hasBody) codes.add('invalid_json').add('payload_too_large').add('unsupported_media_type').add('validation_failed');
  if (r.hasQuery) codes.add('validation_failed');
  if (methods.includes('POST')) codes.add('idempotency_conflict').add('idempotency_key_reused').add('validation_failed');
  for (const c of r.errors ?? []) codes.add(c);
  return ERROR_CODES.filter((c) => codes.has(c) && ERROR_CATALOGUE[c].status < 500);
}

/** OpenAPI responses for those codes: one per status, its description naming each code. */
export function openApiErrorResponses(codes: readonly ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of codes) {
    const s = ERROR_CATALOGUE[c].status;
    byStatus.set(s, [...(byStatus.get(s) ?? []), c]);
  }
  const out: Record<string, unknown> = {};
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    out[String(status)] = {
      description: list.map((c) => `\`${c}\`: ${ERROR_CATALOGUE[c].title}`).join('; '),
      content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
    };
  }
  return out;
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const inline = (s: string) => escape(s).replace(/`([^`]+)`/g, '<code>$1</code>');

/** The /docs/errors page: every code with its status and meaning, each an anchor the problem `type` links to. */
export function errorsPage(): string {
  const rows = ERROR_CODES.map((c) => {
    const e = ERROR_CATALOGUE[c];
    return `<tr id="${c}"><td><a href="#${c}"><code>${c}</code></a></td><td>${e.status}</td><td>${escape(e.title)}</td><td>${inline(e.description)}</td></tr>`;
  }).join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Formcast API errors</title>
<style>body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1f2328;line-height:1.5}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #d0d7de;padding:.5rem;text-align:left;vertical-align:top}
tr:target{background:#fff8c5}code{font-size:.9em}</style></head>
<body><h1>Errors</h1>
<p>Every error is an <code>application/problem+json</code> document (RFC 9457) with a stable <code>code</code>; validation errors list each
violation in <code>errors</code>, with a JSON Pointer <code>path</code>. The problem's <code>type</code> links to the code's row below.</p>
<table><thead><tr><th>code</th><th>status</th><th>title</th><th>when</th></tr></thead><tbody>
${rows}
</tbody></table></body></html>
`;
}
