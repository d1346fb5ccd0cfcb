import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { EventType } from './types.js';

/** What Formcast POSTs to a webhook endpoint (`webhook.test` for POST /v1/webhooks/{id}/test). */
export interface WebhookEvent<T = Record<string, unknown>> {
  type: EventType | 'webhook.test';
  /** RFC 3339, when it happened. */
  timestamp: string;
  data: T;
}

/** Request headers as fetch (`Headers`), Node's http (`IncomingHttpHeaders`) or a plain object has them. */
export type HeadersLike = Headers | Record<string, string | string[] | undefined>;

/** A webhook request whose signature, timestamp or body does not check out: answer it with a 4xx and drop it. */
export class WebhookVerificationFailed extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WebhookVerificationFailed';
  }
}

function header(headers: HeadersLike, name: string): string {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? '';
  for (const [k, v] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? v.join(' ') : (v ?? '');
  }
  return '';
}

/**
 * Verifies a webhook request as the Standard Webhooks specification says (the `webhook-id`, `webhook-timestamp`
 * and `webhook-signature` headers, HMAC-SHA256 with the endpoint's `whsec_…` secret, a timestamp within 5
 * minutes) and returns the parsed event. `payload` must be the raw body, byte for byte: verify before parsing.
 * During a secret rotation pass both secrets (the new one first). Throws WebhookVerificationFailed.
 */
export function verifyWebhook<T = Record<string, unknown>>(
  payload: string | Uint8Array,
  headers: HeadersLike,
  secret: string | readonly string[],
): WebhookEvent<T> {
  const body = typeof payload === 'string' ? payload : new TextDecoder().decode(payload);
  const h = {
    'webhook-id': header(headers, 'webhook-id'),
    'webhook-timestamp': header(headers, 'webhook-timestamp'),
    'webhook-signature': header(headers, 'webhook-signature'),
  };
  const secrets = typeof secret === 'string' ? [secret] : secret;
  if (!secrets.length) throw new TypeError('verifyWebhook: a secret is needed');
  let last: unknown;
  for (const s of secrets) {
    try {
      return new Webhook(s).verify(body, h) as WebhookEvent<T>;
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      last = err;
    }
  }
  throw new WebhookVerificationFailed((last as Error).message, { cause: last });
}
