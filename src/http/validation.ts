import { Ajv, type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { notFound, validationFailed, type FieldError } from '../errors/errors.js';
import { normalizeDateTime } from '../lib/time.js';
import { isHttpUrl } from '../lib/url.js';
import { findBadString } from './input.js';
import { forRuntime } from './schema-helpers.js';

/**
 * Two validators: bodies are strict JSON (no coercion, no removal of unknown fields, every error listed);
 * path and query parameters arrive as strings and are coerced to the schema's types.
 */
function makeAjv(coerce: boolean) {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes: coerce,
    useDefaults: false,
    removeAdditional: false,
    strict: false,
  });
  addFormats.default(ajv);
  // A date-time must be a real instant the service can store: no leap second (23:59:60), no 24:00, years
  // 0000 to 9999 (ajv-formats accepts the first two, and `new Date` cannot represent them).
  ajv.addFormat('date-time', { type: 'string', validate: (s: string) => normalizeDateTime(s) !== undefined });
  // An absolute http(s) URL with a plain host and no credentials (lib/url.ts).
  ajv.addFormat('http-url', { type: 'string', validate: isHttpUrl });
  return ajv;
}

const bodyAjv = makeAjv(false);
const paramAjv = makeAjv(true);

/**
 * Bodies are checked by their schema only (their strings were checked when the body was parsed, see
 * input.ts). Path parameters and query strings are checked for bad strings first: a path parameter that is
 * not a well-formed value names nothing, so any failure there is 404 (docs/api.md §3: an unknown id);
 * a bad query string is 422 at `/query/<name>`.
 */
export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  // Compiled on a route's first request, not at start: Ajv compiling ~200 schemas cost ~420 ms of CPU at every
  // start (measured with --cpu-prof), for routes most processes never serve. The cost moves to first use only.
  let validate: (((data: unknown) => boolean) & { errors?: ErrorObject[] | null }) | undefined;
  const compiled = () =>
    (validate ??= (httpPart === 'body' ? bodyAjv : paramAjv).compile(forRuntime(schema) as object));
  if (httpPart === 'body') {
    const check = (data: unknown) => compiled()(data);
    // Fastify reads the errors of a `false` answer from the function itself.
    Object.defineProperty(check, 'errors', { get: () => validate?.errors });
    return check as ReturnType<FastifySchemaCompiler<object>>;
  }
  if (httpPart === 'params') {
    return ((data: unknown) =>
      findBadString(data) || !compiled()(data) ? { error: notFound('resource') } : true) as ReturnType<
      FastifySchemaCompiler<object>
    >;
  }
  const check = (data: unknown) => {
    const bad = findBadString(data, httpPart === 'querystring' ? '/query' : `/${httpPart ?? ''}`);
    if (bad) return { error: validationFailed([bad]) };
    return compiled()(data);
  };
  Object.defineProperty(check, 'errors', { get: () => validate?.errors });
  return check as ReturnType<FastifySchemaCompiler<object>>;
};

/** Fields that exist on a resource but are set by the service; naming them in a body gets a clearer message. */
const READ_ONLY = new Set([
  'status',
  'version',
  'formGroupId',
  'previousVersionId',
  'htmlValidation',
  'createdAt',
  'updatedAt',
  'publishedAt',
  'archivedAt',
  'sentAt',
  'stats',
  'records',
  'key',
  'lastUsedAt',
  'workspaceId',
  'pausedReason',
  'suppressed',
]);

/**
 * Turns Ajv errors into the documented `errors` entries (docs/api.md §3): a JSON Pointer per violation, prefixed with
 * `/query` or `/path` outside the body. Union noise (one error per branch plus "must match a schema in
 * anyOf") is reduced to the single anyOf message at that path.
 */
export function toFieldErrors(errors: ErrorObject[], part: string | undefined): FieldError[] {
  const prefix = part === 'querystring' ? '/query' : part === 'params' ? '/path' : '';
  const unionPaths = new Set(
    errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf').map((e) => e.instancePath),
  );
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    if (
      e.keyword !== 'anyOf' &&
      e.keyword !== 'oneOf' &&
      [...unionPaths].some((p) => e.instancePath === p && e.schemaPath.includes('anyOf'))
    )
      continue;
    let path = e.instancePath;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      path = `${path}/${escapePointer(String(e.params.missingProperty))}`;
      message = 'is required';
    } else if (e.keyword === 'additionalProperties') {
      const name = String(e.params.additionalProperty);
      path = `${path}/${escapePointer(name)}`;
      message = path.split('/').length === 2 && READ_ONLY.has(name) ? 'is read-only' : 'is not allowed';
    } else if (e.keyword === 'anyOf' || e.keyword === 'oneOf') {
      message = 'does not match any allowed form';
    } else if (e.keyword === 'enum') {
      message = `must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    } else if (e.keyword === 'propertyNames') {
      continue; // reported with the pattern error on the offending key just below
    } else if (e.keyword === 'pattern' && e.propertyName !== undefined) {
      message = `key "${e.propertyName}" must match pattern ${String(e.params.pattern)}`;
    }
    const full = `${prefix}${path}` || '/';
    const dedupe = `${full}\u0000${message}`;
    if (seen.has(dedupe)) continue;
    seen.add(dedupe);
    const params = paramsOf(e);
    out.push({ path: full, message, keyword: e.keyword, ...(params ? { params } : {}) });
  }
  return out;
}

/** The figures a client needs to word the violation itself (the limit, the format, the allowed values). */
function paramsOf(e: ErrorObject): Record<string, unknown> | undefined {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'minLength':
    case 'maxLength':
    case 'minItems':
    case 'maxItems':
    case 'minProperties':
    case 'maxProperties':
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return { limit: p.limit };
    case 'format':
      return { format: p.format };
    case 'pattern':
      return { pattern: p.pattern };
    case 'enum':
      return { allowedValues: p.allowedValues };
    case 'type':
      return { type: p.type };
    case 'additionalProperties':
      return e.instancePath === '' && READ_ONLY.has(String(p.additionalProperty)) ? { readOnly: true } : undefined;
    default:
      return undefined;
  }
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}
