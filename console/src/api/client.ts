/**
 * The typed API client. Every request goes to the same origin with the session cookie; unsafe methods
 * carry the session's CSRF token. A 401 means the session ended: the browser goes to the sign-in page.
 * Errors are application/problem+json and become ApiError.
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './generated/schema';

export interface ProblemFieldError {
  path: string;
  message: string;
  /** What was violated (a JSON Schema keyword or a rule of the service), and its figures: lib/problems.ts words them. */
  keyword?: string;
  params?: Record<string, unknown>;
}

export interface Problem {
  code?: string;
  title?: string;
  detail?: string;
  status?: number;
  errors?: ProblemFieldError[];
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly problem: Problem;
  constructor(status: number, problem: Problem) {
    super(problem.detail || problem.title || `The request failed (${status}).`);
    this.status = status;
    this.code = problem.code ?? 'error';
    this.problem = problem;
  }
  /** The field errors keyed by JSON pointer (`/settings/successAction/url`). */
  fieldErrors(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const e of this.problem.errors ?? []) out[e.path] ??= e.message;
    return out;
  }
}

let csrfToken: string | null = null;
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export function loginUrl(): string {
  const next = location.pathname + location.search;
  return `/app/login?next=${encodeURIComponent(next.startsWith('/app') ? next : '/app')}`;
}

let redirecting = false;
export function goToLogin(): void {
  if (redirecting) return;
  redirecting = true;
  location.assign(loginUrl());
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Headers every console request carries (the import's upload, by XMLHttpRequest for its progress, too). */
export function requestHeaders(method: string, headers: Headers): void {
  if (!SAFE.has(method.toUpperCase()) && csrfToken) headers.set('X-CSRF-Token', csrfToken);
}

const session: Middleware = {
  onRequest({ request }) {
    requestHeaders(request.method, request.headers);
    return request;
  },
  onResponse({ response }) {
    if (response.status === 401) goToLogin();
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: '', credentials: 'same-origin' });
api.use(session);

/** A result of openapi-fetch, as data or a thrown ApiError. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.response.ok) return result.data as T;
  const err = result.error;
  const problem: Problem =
    err && typeof err === 'object' ? (err as Problem) : { detail: typeof err === 'string' ? err : undefined };
  throw new ApiError(result.response.status, problem);
}

/** An upload in flight: its answer, and a way to stop it. */
export interface Upload<T> {
  promise: Promise<T>;
  abort: () => void;
}

/**
 * POST `body` to `path` by XMLHttpRequest, whose upload events give a progress bar (fetch has none): the session's
 * headers as every request gets them (requestHeaders), the answer's JSON, or an ApiError with its problem (a 401 goes
 * to the sign-in page). For files: images (multipart), contact imports (the file as it is).
 */
export function uploadWithProgress<T>(
  path: string,
  body: XMLHttpRequestBodyInit,
  opts: { contentType?: string; onProgress?: (loaded: number, total: number | null) => void; onSent?: () => void } = {},
): Upload<T> {
  const xhr = new XMLHttpRequest();
  const promise = new Promise<T>((resolve, reject) => {
    xhr.open('POST', path);
    xhr.withCredentials = true;
    const headers = new Headers({ Accept: 'application/json' });
    requestHeaders('POST', headers);
    headers.forEach((v, k) => xhr.setRequestHeader(k, v));
    if (opts.contentType) xhr.setRequestHeader('Content-Type', opts.contentType);
    xhr.upload.onprogress = (e) => opts.onProgress?.(e.loaded, e.lengthComputable ? e.total : null);
    xhr.upload.onload = () => opts.onSent?.();
    xhr.onerror = () => reject(new Error('The upload failed: the connection to the server was lost.'));
    xhr.onabort = () => reject(new Error('The upload was stopped.'));
    xhr.onload = () => {
      let answer: unknown;
      try {
        answer = xhr.responseText ? JSON.parse(xhr.responseText) : undefined;
      } catch {
        answer = { detail: xhr.responseText.slice(0, 200) };
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(answer as T);
      else {
        if (xhr.status === 401) goToLogin();
        reject(new ApiError(xhr.status, (answer as Problem) ?? {}));
      }
    };
    xhr.send(body);
  });
  return { promise, abort: () => xhr.abort() };
}
