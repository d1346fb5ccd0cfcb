import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ResolvedAddress } from './webhooks.guard.js';

/**
 * Signing and sending one webhook request, as the Standard Webhooks specification says
 * (https://www.standardwebhooks.com): `webhook-id`, `webhook-timestamp` (unix seconds) and `webhook-signature`,
 * `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` keyed by the base64-decoded part of the `whsec_` secret; several
 * signatures (one per secret during a rotation) are separated by spaces.
 */
export const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` and the base64 of 24 random bytes. */
export function newSecret(): string {
  return SECRET_PREFIX + crypto.randomBytes(24).toString('base64');
}

export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return `v1,${crypto.createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The `webhook-signature` header: one `v1,<sig>` per secret, space-separated. */
export function signatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets.map((s) => signature(s, id, timestamp, body)).join(' ');
}

export const USER_AGENT = 'Formcast-Webhooks/1';

export interface AttemptResult {
  /** The HTTP status of the answer; null when none came (connection refused, timeout, TLS error). */
  statusCode: number | null;
  durationMs: number;
  /** Why the attempt failed; null on a 2xx. */
  error: string | null;
  ok: boolean;
}

export interface SendRequest {
  url: URL;
  /** The address the guard checked: the connection goes there and nowhere else. */
  address: ResolvedAddress;
  headers: Record<string, string>;
  body: string;
}

/** The most of an answer's body read (and thrown away); a longer one is cut off. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * Sends webhook requests over keep-alive connections, to the address it is given (the host name still goes in
 * the Host header and TLS's SNI, and the certificate is checked against it). Follows no redirect: a 3xx is a
 * failure. No answer within `timeoutMs` (the whole exchange) is a failure.
 */
export class WebhookSender {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(private readonly opts: { timeoutMs: number; maxSocketsPerHost: number }) {
    const agentOptions = {
      keepAlive: true,
      maxSockets: opts.maxSocketsPerHost,
      maxFreeSockets: opts.maxSocketsPerHost,
      scheduling: 'lifo' as const,
    };
    this.httpAgent = new http.Agent(agentOptions);
    this.httpsAgent = new https.Agent(agentOptions);
  }

  send(req: SendRequest): Promise<AttemptResult> {
    const started = performance.now();
    const pinned: LookupFunction = (_hostname, options, callback) => {
      if ((options as { all?: boolean }).all)
        (callback as unknown as (err: null, addresses: { address: string; family: number }[]) => void)(null, [
          req.address,
        ]);
      else callback(null, req.address.address, req.address.family);
    };
    const isHttps = req.url.protocol === 'https:';
    const body = Buffer.from(req.body, 'utf8');
    return new Promise<AttemptResult>((resolve) => {
      let settled = false;
      const finish = (statusCode: number | null, error: string | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ statusCode, durationMs: Math.round(performance.now() - started), error, ok: error === null });
      };
      const request = (isHttps ? https : http).request(
        {
          protocol: req.url.protocol,
          hostname: req.url.hostname.replace(/^\[|\]$/g, ''),
          port: req.url.port || (isHttps ? 443 : 80),
          path: `${req.url.pathname}${req.url.search}`,
          method: 'POST',
          agent: isHttps ? this.httpsAgent : this.httpAgent,
          lookup: pinned,
          headers: {
            ...req.headers,
            'content-type': 'application/json',
            'user-agent': USER_AGENT,
            'content-length': String(body.length),
          },
          ...(req.url.username
            ? { auth: `${decodeURIComponent(req.url.username)}:${decodeURIComponent(req.url.password)}` }
            : {}),
        },
        (res) => {
          const status = res.statusCode ?? 0;
          let read = 0;
          res.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > MAX_RESPONSE_BYTES) res.destroy();
          });
          const done = () => {
            if (status >= 200 && status < 300) finish(status, null);
            else if (status >= 300 && status < 400)
              finish(
                status,
                `HTTP ${status}: redirects are not followed${res.headers.location ? ` (to ${String(res.headers.location).slice(0, 200)})` : ''}`,
              );
            else finish(status, `HTTP ${status}`);
          };
          res.on('end', done);
          res.on('close', done);
          res.on('error', done);
        },
      );
      const timer = setTimeout(() => {
        finish(
          null,
          `no answer within ${this.opts.timeoutMs % 1000 === 0 ? `${this.opts.timeoutMs / 1000} s` : `${this.opts.timeoutMs} ms`}`,
        );
        request.destroy();
      }, this.opts.timeoutMs);
      request.on('error', (err: NodeJS.ErrnoException) =>
        finish(null, err.code ? `${err.code}: ${err.message}` : err.message),
      );
      request.end(body);
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}
