import { classify, replyOf, type BounceClass } from '../bounces/bounces.classify.js';

/**
 * What an SMTP answer at send time means for a delivery, by the bounce classification table
 * (bounces/bounces.classify.ts): a 4xx reply, a 5.2.2 (mailbox full) or a broken connection is temporary
 * (retried with backoff); a hard bounce, a block or another 5xx is final.
 */
export type SendResult =
  | { kind: 'sent' }
  /** `reply`: the server answered about this message (a soft bounce when attempts run out), not a broken connection. */
  | { kind: 'temporary'; reason: string; reply: boolean }
  | { kind: Exclude<BounceClass, 'soft'>; reason: string };

const CONNECTION_CODES = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EPROTOCOL', 'ETLS', 'EAUTH', 'ENOTFOUND', 'EAI_AGAIN']);

export function classifySendError(err: unknown): Exclude<SendResult, { kind: 'sent' }> {
  const e = err as { responseCode?: unknown; response?: unknown; code?: unknown; message?: unknown };
  const reason = (typeof e.response === 'string' && e.response) || (typeof e.message === 'string' && e.message) || String(err);
  if (typeof e.responseCode === 'number' && e.responseCode >= 400) {
    const cls = classify(replyOf(e.responseCode, reason));
    if (cls === null || cls === 'soft') return { kind: 'temporary', reason, reply: true };
    return { kind: cls, reason };
  }
  if (typeof e.code === 'string' && CONNECTION_CODES.has(e.code)) return { kind: 'temporary', reason, reply: false };
  // Anything else (a bug, an unexpected transport state) is retried: the attempt limit bounds it.
  return { kind: 'temporary', reason, reply: false };
}
