/**
 * What a failed delivery means, from an SMTP reply or a bounce report (docs/bounces.md): one table for the
 * synchronous reply the relay gives at send time and for the status a DSN or a plain bounce carries later.
 *
 * - hard: the address does not exist: the delivery BOUNCED, the contact BOUNCED and the address suppressed.
 * - soft: a temporary or mailbox-side problem: retried at send time; reported later, it counts towards the
 *   soft-bounce limit (SOFT_BOUNCE_LIMIT consecutive broadcasts make the contact BOUNCED).
 * - blocked: refused by policy (spam, reputation, authentication): the delivery FAILED, the contact untouched.
 * - failed: any other permanent failure: the delivery FAILED, the contact untouched.
 */
export type BounceClass = 'hard' | 'soft' | 'blocked' | 'failed';

export interface Reply {
  /** The basic reply code (550, 421, …), if known. */
  code: number | null;
  /** The enhanced status code (RFC 3463, `5.1.1`), if the reply or report carries one. */
  status: string | null;
  /** The reply or diagnostic text. */
  text: string;
}

/** Wording of "this mailbox does not exist", as servers put it when they give no enhanced status code. */
export const NO_SUCH_USER =
  /no such (user|mailbox|recipient|address)|user(name)? (unknown|not found|does not exist)|unknown (user|recipient|mailbox)|mailbox (unavailable|not found|does not exist|is disabled|disabled)|recipient (not found|unknown|does not exist)|address (does not exist|not found|unknown)|invalid (recipient|mailbox|address)|account (does not exist|has been disabled|disabled|is disabled)|does not exist|no mailbox|unrouteable address|not a valid (mailbox|recipient)|recipientnotfound|user doesn't have|bad destination mailbox/i;

export interface ClassRow {
  /** What the row recognises, for documentation and tests. */
  label: string;
  test: (r: Reply) => boolean;
  class: BounceClass;
}

const status = (r: Reply, re: RegExp) => r.status !== null && re.test(r.status);

/** The table, first match wins. */
export const CLASSIFICATION: readonly ClassRow[] = [
  {
    label: '4.x.x status or 4xx reply: temporary',
    test: (r) => status(r, /^4\./) || (r.status === null && r.code !== null && r.code >= 400 && r.code < 500),
    class: 'soft',
  },
  { label: '5.2.2 mailbox full', test: (r) => status(r, /^5\.2\.2$/), class: 'soft' },
  // 5.1.7 and 5.1.8 (the sender's address refused) are 5.1.x too, hard as contract §11 says, although they blame the
  // Return-Path's domain rather than the recipient's mailbox (docs/bounces.md).
  { label: '5.1.x bad mailbox or domain', test: (r) => status(r, /^5\.1\.\d{1,3}$/), class: 'hard' },
  { label: '5.2.1 mailbox disabled', test: (r) => status(r, /^5\.2\.1$/), class: 'hard' },
  {
    label: '5.5.0 (or the generic 5.0.0) with a "no such user" text',
    test: (r) => status(r, /^5\.[05]\.0$/) && NO_SUCH_USER.test(r.text),
    class: 'hard',
  },
  {
    label: '550 without an enhanced code, with a "no such user" text',
    test: (r) => r.status === null && r.code === 550 && NO_SUCH_USER.test(r.text),
    class: 'hard',
  },
  { label: '5.7.x policy, reputation, authentication', test: (r) => status(r, /^5\.7\.\d{1,3}$/), class: 'blocked' },
  {
    label: 'any other 5.x.x or 5xx',
    test: (r) => status(r, /^5\./) || (r.code !== null && r.code >= 500),
    class: 'failed',
  },
];

/** The class of a reply; null when it is neither a 4xx/5xx reply nor a 4.x.x/5.x.x status (not a failure we can read). */
export function classify(r: Reply): BounceClass | null {
  return CLASSIFICATION.find((row) => row.test(r))?.class ?? null;
}

/** The enhanced status code in a text (`550 5.1.1 <a@b>: user unknown` → `5.1.1`), or null. */
export function enhancedStatus(text: string): string | null {
  // Not a piece of an IP address or a version number: no digit or dot on either side.
  return /(?<![\d.])([245]\.\d{1,3}\.\d{1,3})(?![\d.])/.exec(text)?.[1] ?? null;
}

/** The basic reply code at the start of an SMTP reply text (`550-…`, `421 …`), or null. */
export function replyCode(text: string): number | null {
  const m = /^\s*([245]\d\d)[\s-]/.exec(text);
  return m ? Number(m[1]) : null;
}

/** A reply as nodemailer reports a refused message: `responseCode` and `response` (`550 5.1.1 …`). */
export function replyOf(code: number | null, text: string): Reply {
  return { code: code ?? replyCode(text), status: enhancedStatus(text), text };
}
