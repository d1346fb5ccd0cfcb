import { FormcastError } from './errors.js';
import { PageIterator, type Page } from './pagination.js';
import type { HttpMethod, ListItem, ListPaths, ListQuery, PathsWith, ResponseBody } from './types.js';

export interface FormcastOptions {
  /** An API key of the workspace (`Authorization: Bearer …`). Defaults to the FORMCAST_API_KEY environment variable. */
  apiKey?: string;
  /** Where the service is; defaults to FORMCAST_URL, else http://127.0.0.1:3000 (what `npm start` serves). */
  baseUrl?: string;
  /** Retries of a 429 or 503 answer, each after its `Retry-After` (default 2; 0 turns retrying off). */
  maxRetries?: number;
  /** The longest wait before a retry, in ms (default 30 s): an answer asking for more is thrown at once. */
  maxRetryDelayMs?: number;
  /** The longest one attempt may take, in ms (default 60 s). */
  timeoutMs?: number;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

/** Per-call options, the last argument of every method. */
export interface RequestOptions {
  /**
   * The `Idempotency-Key` of a POST: a replay within 24 h returns the first answer. Every POST gets a random one
   * (the same across its retries) unless one is given here; `null` sends none.
   */
  idempotencyKey?: string | null;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Overrides the client's maxRetries for this call. */
  maxRetries?: number;
}

export interface CallArgs {
  /** Values of the path's `{…}` parameters, in order. */
  path?: readonly string[];
  query?: object;
  body?: unknown;
  /** A body that is not JSON (a CSV import): sent as is with this Content-Type. */
  raw?: { body: string | Uint8Array | Blob; contentType: string };
  /** How to read a success: JSON (default) or text (a CSV export). */
  as?: 'json' | 'text';
}

const env = (name: string): string | undefined =>
  (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name] || undefined;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** `Retry-After` in seconds (delta-seconds or an HTTP date), or undefined. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value == null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

function randomKey(): string {
  return globalThis.crypto.randomUUID();
}

/** The HTTP plumbing every resource method goes through: auth, idempotency keys, retries, problem errors. */
export class Transport {
  readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly maxRetries: number;
  private readonly maxRetryDelayMs: number;
  private readonly timeoutMs: number;
  private readonly headers: Record<string, string>;
  private readonly fetchImpl: typeof fetch;

  constructor(opts: FormcastOptions = {}) {
    const apiKey = opts.apiKey ?? env('FORMCAST_API_KEY');
    if (!apiKey) throw new TypeError('Formcast: an apiKey is needed (or set FORMCAST_API_KEY)');
    this.apiKey = apiKey;
    this.baseUrl = (opts.baseUrl ?? env('FORMCAST_URL') ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
    this.maxRetries = opts.maxRetries ?? 2;
    this.maxRetryDelayMs = opts.maxRetryDelayMs ?? 30_000;
    this.timeoutMs = opts.timeoutMs ?? 60_000;
    this.headers = opts.headers ?? {};
    this.fetchImpl = opts.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** `method path` with its arguments; typed by the API document. */
  call<M extends HttpMethod, P extends PathsWith<M>>(
    method: M,
    path: P,
    args: CallArgs = {},
    opts: RequestOptions = {},
  ): Promise<ResponseBody<P, M>> {
    return this.send(method, path, args, opts) as Promise<ResponseBody<P, M>>;
  }

  /** A cursor-paginated list as an async iterator. */
  list<P extends ListPaths & PathsWith<'get'>>(
    path: P,
    pathArgs: readonly string[],
    query: ListQuery<P> | undefined,
    opts: RequestOptions = {},
  ): PageIterator<ListItem<P>> {
    const { cursor, ...filters } = (query ?? {}) as { cursor?: string };
    return new PageIterator<ListItem<P>>(
      (next) =>
        this.send('get', path, { path: pathArgs, query: { ...filters, cursor: next } }, opts) as Promise<
          Page<ListItem<P>>
        >,
      cursor,
    );
  }

  private url(path: string, args: CallArgs): string {
    let i = 0;
    const filled = path.replace(/\{[^}]+\}/g, () => {
      const v = args.path?.[i++];
      if (v === undefined || v === '') throw new TypeError(`Formcast: ${path} needs ${i} path parameter(s)`);
      // `.` and `..` survive encodeURIComponent and URL normalisation would make them another endpoint.
      if (v === '.' || v === '..') throw new TypeError(`Formcast: "${v}" is not an id`);
      return encodeURIComponent(v);
    });
    const search = new URLSearchParams();
    for (const [k, v] of Object.entries(args.query ?? {})) {
      if (v === undefined || v === null) continue;
      for (const item of Array.isArray(v) ? v : [v]) search.append(k, String(item));
    }
    const qs = search.toString();
    return `${this.baseUrl}${filled}${qs ? `?${qs}` : ''}`;
  }

  private async send(method: HttpMethod, path: string, args: CallArgs, opts: RequestOptions): Promise<unknown> {
    const url = this.url(path, args);
    const headers: Record<string, string> = {
      accept: 'application/json, application/problem+json',
      ...this.headers,
      ...opts.headers,
      authorization: `Bearer ${this.apiKey}`,
    };
    let body: string | Uint8Array | Blob | undefined;
    if (args.raw) {
      body = args.raw.body;
      headers['content-type'] = args.raw.contentType;
    } else if (args.body !== undefined) {
      body = JSON.stringify(args.body);
      headers['content-type'] = 'application/json';
    }
    if (
      method === 'post' &&
      opts.idempotencyKey !== null &&
      !Object.keys(headers).some((h) => h.toLowerCase() === 'idempotency-key')
    ) {
      headers['idempotency-key'] = opts.idempotencyKey ?? randomKey();
    }
    const maxRetries = opts.maxRetries ?? this.maxRetries;
    for (let attempt = 0; ; attempt++) {
      const res = await this.attempt(url, method, headers, body, opts.signal);
      if (res.ok) {
        if (res.status === 204) return undefined;
        if (args.as === 'text') return res.text();
        const text = await res.text();
        return text === '' ? undefined : JSON.parse(text);
      }
      const retryAfter = parseRetryAfter(res.headers.get('retry-after'));
      // A 429 was refused before anything was done. A 503 may come after a write was made: a POST is sent again
      // only with an Idempotency-Key (the server answers a replay with the first answer), never without one.
      const safe =
        res.status === 429 ||
        method !== 'post' ||
        headers['idempotency-key'] !== undefined ||
        Object.keys(headers).some((h) => h.toLowerCase() === 'idempotency-key');
      if ((res.status === 429 || res.status === 503) && safe && attempt < maxRetries) {
        // Retry-After when given, else 0.5 s, 1 s, 2 s, …; never longer than maxRetryDelayMs.
        const delay = retryAfter !== undefined ? retryAfter * 1000 : 500 * 2 ** attempt;
        if (delay <= this.maxRetryDelayMs) {
          await res.body?.cancel().catch(() => undefined);
          await sleep(delay, opts.signal);
          continue;
        }
      }
      let problem: unknown;
      const text = await res.text().catch(() => '');
      try {
        problem = text ? JSON.parse(text) : undefined;
      } catch {
        problem = undefined;
      }
      throw FormcastError.fromResponse(res, problem, retryAfter);
    }
  }

  private async attempt(
    url: string,
    method: HttpMethod,
    headers: Record<string, string>,
    body: string | Uint8Array | Blob | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Response> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    try {
      return await this.fetchImpl(url, {
        method: method.toUpperCase(),
        headers,
        body: body as BodyInit | undefined,
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      const timedOut = timeout.aborted;
      throw new FormcastError({
        status: 0,
        code: timedOut ? 'timeout' : 'connection_failed',
        title: timedOut ? 'Request timed out' : 'Could not reach the Formcast service',
        detail: timedOut
          ? `no answer from ${method.toUpperCase()} ${url} within ${this.timeoutMs} ms`
          : `${method.toUpperCase()} ${url}: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}`,
        cause: err,
      });
    }
  }
}
