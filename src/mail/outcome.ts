/**
 * What an SMTP answer means for a delivery. A 4xx reply or a broken connection is temporary (retry with
 * backoff); a 5xx reply is final; a 5.1.x status (bad mailbox or domain) is a bounce, and the contact
 * stops receiving mail.
 */
export type SendResult =
  | { kind: 'sent' }
  | { kind: 'temporary'; reason: string }
  | { kind: 'permanent'; reason: string }
  | { kind: 'bounce'; reason: string };

const CONNECTION_CODES = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EPROTOCOL', 'ETLS', 'EAUTH', 'ENOTFOUND', 'EAI_AGAIN']);

export function classifySendError(err: unknown): Exclude<SendResult, { kind: 'sent' }> {
  const e = err as { responseCode?: unknown; response?: unknown; code?: unknown; message?: unknown };
  const reason = (typeof e.response === 'string' && e.response) || (typeof e.message === 'string' && e.message) || String(err);
  if (typeof e.responseCode === 'number') {
    if (e.responseCode >= 500) return /\b5\.1\.\d{1,3}\b/.test(reason) ? { kind: 'bounce', reason } : { kind: 'permanent', reason };
    if (e.responseCode >= 400) return { kind: 'temporary', reason };
  }
  if (typeof e.code === 'string' && CONNECTION_CODES.has(e.code)) return { kind: 'temporary', reason };
  // Anything else (a bug, an unexpected transport state) is retried: the attempt limit bounds it.
  return { kind: 'temporary', reason };
}
