import type { Problem } from './types.js';

/**
 * An error answer of the API (an RFC 9457 problem), or a request that got no answer. `code` is stable and
 * machine-readable (the list: GET /docs/errors); the problem's other members (`errors`, `draftId`, `contactId`, …)
 * are on the error too, and all of it is in `problem`.
 */
export class FormcastError extends Error {
  /** The HTTP status; 0 when no answer came (`code` is then `connection_failed` or `timeout`). */
  readonly status: number;
  readonly code: string;
  readonly title: string;
  readonly detail: string | undefined;
  readonly type: string | undefined;
  /** The `X-Request-Id` of the request, to quote when asking for help. */
  readonly requestId: string | undefined;
  /** One entry per violation, on `validation_failed` and the `*_incomplete` codes. */
  readonly errors: { path: string; message: string }[] | undefined;
  /** Seconds to wait before trying again (`Retry-After`), on 429 and 503. */
  readonly retryAfter: number | undefined;
  /** The whole problem document as the service sent it. */
  readonly problem: Problem | undefined;
  /** Members particular to a code, such as `draftId` (draft_version_exists) or `contactId` (contact_exists). */
  [member: string]: unknown;

  constructor(init: {
    status: number;
    code: string;
    title: string;
    detail?: string;
    problem?: Problem;
    requestId?: string;
    retryAfter?: number;
    cause?: unknown;
  }) {
    super(
      init.detail ? `${init.title}: ${init.detail}` : init.title,
      init.cause === undefined ? undefined : { cause: init.cause },
    );
    const problem = init.problem as (Problem & Record<string, unknown>) | undefined;
    // The problem's own members first: the declared fields below take precedence over same-named extras.
    if (problem) {
      for (const [k, v] of Object.entries(problem)) if (!(k in this)) (this as Record<string, unknown>)[k] = v;
    }
    this.name = 'FormcastError';
    this.status = init.status;
    this.code = init.code;
    this.title = init.title;
    this.detail = init.detail;
    this.type = typeof problem?.type === 'string' ? problem.type : undefined;
    this.requestId = init.requestId ?? (typeof problem?.requestId === 'string' ? problem.requestId : undefined);
    this.errors = Array.isArray(problem?.errors) ? (problem.errors as { path: string; message: string }[]) : undefined;
    this.retryAfter = init.retryAfter;
    this.problem = problem;
  }

  /** The error for an HTTP answer that is not a success: its problem+json body, or what can be said without one. */
  static fromResponse(res: Response, body: unknown, retryAfter: number | undefined): FormcastError {
    const requestId = res.headers.get('x-request-id') ?? undefined;
    if (body && typeof body === 'object' && typeof (body as { code?: unknown }).code === 'string') {
      const p = body as Problem & { code: string; title?: string; detail?: string };
      return new FormcastError({
        status: res.status,
        code: p.code,
        title: p.title ?? res.statusText,
        detail: p.detail,
        problem: p,
        requestId,
        retryAfter,
      });
    }
    return new FormcastError({
      status: res.status,
      code: `http_${res.status}`,
      title: res.statusText || `HTTP ${res.status}`,
      requestId,
      retryAfter,
    });
  }
}
