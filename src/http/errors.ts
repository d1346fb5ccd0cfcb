/**
 * Domain errors carry the contract's stable `code` (contract section 3). Services throw them; the one
 * error handler (problem.ts) turns them into application/problem+json.
 */
export interface FieldError {
  path: string;
  message: string;
}

export class DomainError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    detail: string,
    readonly errors?: FieldError[],
    readonly extra?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(detail);
  }
}

export const notFound = (what = 'resource') =>
  new DomainError(404, 'not_found', 'Not found', `${what} not found`);

export const validationFailed = (errors: FieldError[]) =>
  new DomainError(422, 'validation_failed', 'Validation failed', summarize(errors), errors);

export const conflict = (code: string, detail: string, extra?: Record<string, unknown>) =>
  new DomainError(409, code, titleFor(code), detail, undefined, extra);

export const unprocessable = (code: string, detail: string, errors?: FieldError[]) =>
  new DomainError(422, code, titleFor(code), detail, errors);

export const unauthorized = (detail: string) =>
  new DomainError(401, 'unauthorized', 'Unauthorized', detail, undefined, undefined, { 'www-authenticate': 'Bearer' });

export const insufficientScope = (scope: string) =>
  new DomainError(403, 'insufficient_scope', 'Insufficient scope', `this operation needs the ${scope} scope`, undefined, undefined, {
    'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}"`,
  });

/** 409 for deleting something other resources still point at (a topic, segment or template in use). */
export const resourceInUse = (detail: string) => conflict('resource_in_use', detail);

export const payloadTooLarge = (detail: string) => new DomainError(413, 'payload_too_large', 'Payload too large', detail);

/** A human summary of field errors: `name must NOT have more than 200 characters (and 2 more)`. */
export function summarize(errors: FieldError[]): string {
  const [first] = errors;
  if (!first) return 'the request is invalid';
  const where = first.path.replace(/^\//, '').replace(/\//g, '.');
  const head = where ? `${where} ${first.message}` : first.message;
  return errors.length > 1 ? `${head} (and ${errors.length - 1} more)` : head;
}

export function titleFor(code: string): string {
  const text = code.replace(/_/g, ' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}
