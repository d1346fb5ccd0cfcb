import { ERROR_CATALOGUE, type ErrorCode } from './catalogue.js';

export { ERROR_CATALOGUE, ERROR_CODES, type ErrorCode } from './catalogue.js';

/**
 * Domain errors carry a code of the catalogue (catalogue.ts); its status and title come from there.
 * Services throw them; the one error handler (http/problem.ts) turns them into application/problem+json.
 */
export interface FieldError {
  path: string;
  message: string;
  /**
   * What was violated, for clients that word their own sentence (the console): the JSON Schema keyword
   * (`minLength`, `maxLength`, `format`, `pattern`, `required`, `enum`, …) or a rule of the service (`future`,
   * `reference`, `verified_domain`). Optional and additive to the contract's `{ path, message }`.
   */
  keyword?: string;
  /** The keyword's figures: `{ limit }`, `{ format }`, `{ pattern }`, `{ allowedValues }`, `{ type }`. */
  params?: Record<string, unknown>;
}

export interface DomainErrorOptions {
  /** One entry per violation (validation errors). */
  errors?: FieldError[];
  /** More members of the problem document (`draftId`, `contactId`, …). */
  extra?: Record<string, unknown>;
  /** Response headers (`Retry-After`, `WWW-Authenticate`). */
  headers?: Record<string, string>;
  /** Overrides the catalogue's status: only for a client error a library reported with its own status. */
  status?: number;
}

export class DomainError extends Error {
  readonly status: number;
  readonly title: string;
  readonly errors?: FieldError[];
  readonly extra?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    detail: string,
    opts: DomainErrorOptions = {},
  ) {
    super(detail);
    const spec = ERROR_CATALOGUE[code];
    this.status = opts.status ?? spec.status;
    this.title = spec.title;
    this.errors = opts.errors;
    this.extra = opts.extra;
    this.headers = opts.headers;
  }
}

export const notFound = (what = 'resource') => new DomainError('not_found', `${what} not found`);

export const validationFailed = (errors: FieldError[]) =>
  new DomainError('validation_failed', summarize(errors), { errors });

export const conflict = (code: ErrorCode, detail: string, extra?: Record<string, unknown>) =>
  new DomainError(code, detail, { extra });

export const unprocessable = (code: ErrorCode, detail: string, errors?: FieldError[]) =>
  new DomainError(code, detail, { errors });

export const unauthorized = (detail: string) =>
  new DomainError('unauthorized', detail, { headers: { 'www-authenticate': 'Bearer' } });

export const insufficientScope = (scope: string) =>
  new DomainError('insufficient_scope', `this operation needs the ${scope} scope`, {
    headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
  });

/** 409 for deleting something other resources still point at (a topic, segment or template in use). */
export const resourceInUse = (detail: string) => conflict('resource_in_use', detail);

export const payloadTooLarge = (detail: string, extra?: Record<string, unknown>) =>
  new DomainError('payload_too_large', detail, { extra });

export const unavailable = (detail = 'the database cannot be reached; try again shortly') =>
  new DomainError('unavailable', detail, { headers: { 'retry-after': '5' } });

/** A human summary of field errors: `name must NOT have more than 200 characters (and 2 more)`. */
export function summarize(errors: FieldError[]): string {
  const [first] = errors;
  if (!first) return 'the request is invalid';
  const where = first.path.replace(/^\//, '').replace(/\//g, '.');
  const head = where ? `${where} ${first.message}` : first.message;
  return errors.length > 1 ? `${head} (and ${errors.length - 1} more)` : head;
}
