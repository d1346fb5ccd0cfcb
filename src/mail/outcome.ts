import { classify, replyOf, type BounceClass } from './classify.js';

/**
 * What an SMTP answer at send time means for a delivery, by the bounce classification table
 * (classify.ts): a 4xx reply, a 5.2.2 (mailbox full) or a broken connection is temporary
 * (retried with backoff); a hard bounce, a block or another 5xx is final.
 */
export type SendResult =
  | { kind: 'sent' }
  /**
   * `reply`: the server answered about this message (a soft bounce when attempts run out), not a broken connection
   * or a relay that would not talk. `throttle`: that answer was "try later" / a rate limit for the destination
   * (`isThrottleReply`): it slows the destination down and says nothing about the recipient (docs/sending.md).
   */
  | { kind: 'temporary'; reason: string; reply: boolean; throttle: boolean }
  | { kind: Exclude<BounceClass, 'soft'>; reason: string };

const CONNECTION_CODES = new Set([
  'ECONNECTION',
  'ETIMEDOUT',
  'ESOCKET',
  'EDNS',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'EPROTOCOL',
  'ETLS',
  'EAUTH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

interface SmtpError {
  responseCode?: unknown;
  response?: unknown;
  code?: unknown;
  message?: unknown;
}

/**
 * A failure of the relay itself rather than an answer about the message (docs/sending.md, "Several relays"): it
 * could not be reached, broke the connection without a reply, or refused the session (a `421` or `554` greeting is
 * nodemailer's EPROTOCOL; EHLO, STARTTLS and AUTH failures are EPROTOCOL, ETLS, EAUTH). Another relay may take the
 * message. A reply to MAIL FROM, RCPT TO or DATA after which the server closed the connection (how a `421` ends a
 * session: nodemailer's ECONNECTION with the reply kept) is about the message and its destination, not the relay.
 */
export function isRelayFailure(err: unknown): boolean {
  const e = (err ?? {}) as SmtpError;
  if (typeof e.code !== 'string' || !CONNECTION_CODES.has(e.code)) return false;
  return typeof e.responseCode !== 'number' || e.code !== 'ECONNECTION';
}

/** Wording of "slow down, try later" in the 4.7.x replies of the big mailbox providers. */
const TRY_LATER =
  /try (again )?later|rate|limit|throttl|too many|temporarily deferred|deferred|unexpected volume|busy|slow down|greylist/i;

/**
 * A destination's "you send too fast, try later" (docs/sending.md): any `421` (service not available, closing: how
 * Gmail, Yahoo and Microsoft throttle), or a 4xx with a 4.7.x status whose text speaks of a rate, a limit or trying
 * later (Microsoft's `451 4.7.500 Server busy`, greylisting). Not a per-mailbox `450 4.2.1`.
 */
export function isThrottleReply(code: number, text: string): boolean {
  if (code === 421) return true;
  if (code < 400 || code >= 500) return false;
  const reply = replyOf(code, text);
  return reply.status !== null && /^4\.7\./.test(reply.status) && TRY_LATER.test(text);
}

export function classifySendError(err: unknown): Exclude<SendResult, { kind: 'sent' }> {
  const e = (err ?? {}) as SmtpError;
  const reason =
    (typeof e.response === 'string' && e.response) || (typeof e.message === 'string' && e.message) || String(err);
  if (isRelayFailure(err)) return { kind: 'temporary', reason, reply: false, throttle: false };
  if (typeof e.responseCode === 'number' && e.responseCode >= 400) {
    const cls = classify(replyOf(e.responseCode, reason));
    if (cls === null || cls === 'soft')
      return { kind: 'temporary', reason, reply: true, throttle: isThrottleReply(e.responseCode, reason) };
    return { kind: cls, reason };
  }
  // Anything else (a bug, an unexpected transport state) is retried: the attempt limit bounds it.
  return { kind: 'temporary', reason, reply: false, throttle: false };
}
