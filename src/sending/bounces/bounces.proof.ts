import { parseInboundAddress, type InboundTarget, type VerpKind } from '../../mail/verp.js';
import type { InboundReport } from './bounces.parse.js';

/**
 * Which message a bounce or complaint report is about, and what it proves (docs/bounces.md, "Whose report is it").
 *
 * Anyone can send mail to a bounce address, and every recipient knows one: the Return-Path of the message they got.
 * So the address a report arrives at is the only thing that decides what it acts on: its token is signed, and a
 * recipient holds the token of their own message only. What the report says inside (the original's Message-ID, its
 * Return-Path) is a claim; it can only confirm the arrival address or make the report suspect, never redirect it
 * to another message. Ids are random (lib/ids.ts), but even a guessed id gives nothing: an id alone proves nothing.
 */

/** What the original message inside a report names. */
export interface ReportClaims {
  /** Rows named by VERP addresses in the original (Return-Path, ARF Original-Mail-From) whose token verifies. */
  tokens: InboundTarget[];
  /** VERP addresses in the original whose token does not verify (forged or damaged). */
  badTokens: string[];
  /** The row the original's Message-ID names (`<dlv_…@domain>`, `<cnf_….n@domain>`, `<tst_…@domain>`), if it is one of ours. */
  messageId: { kind: VerpKind; id: string } | null;
  /**
   * Rows named by the Message-ID that a DKIM signature of ours signs in the original's headers, where the signature
   * verifies with the domain's key and the row is of that domain's workspace (bounces.signature.ts).
   */
  signed: SignedClaim[];
}

/** A row a verifying DKIM signature of ours names (its signed Message-ID), and the domain that signed it. */
export interface SignedClaim {
  kind: VerpKind;
  id: string;
  domain: string;
}

const OUR_MESSAGE_ID = /^<?(dlv|cnf|tst)_([0-9A-HJKMNP-TV-Z]{26})(?:\.\d{1,9})?@[^<>\s@]+>?$/i;
const KIND_OF_PREFIX: Record<string, VerpKind> = { dlv: 'd', cnf: 'c', tst: 't' };

/** The row a Formcast Message-ID names, or null for any other Message-ID (a relay may have replaced ours). */
export function rowOfMessageId(messageId: string | null | undefined): { kind: VerpKind; id: string } | null {
  const m = OUR_MESSAGE_ID.exec((messageId ?? '').trim());
  if (!m) return null;
  const prefix = m[1]!.toLowerCase();
  return { kind: KIND_OF_PREFIX[prefix]!, id: `${prefix}_${m[2]!.toUpperCase()}` };
}

type Report = Extract<InboundReport, { kind: 'bounce' | 'complaint' }>;

/**
 * What a report's original message names (nothing is trusted yet: see conflictWithArrival and provenTarget); `signed`
 * are the rows its verified DKIM signatures name, found by the caller (it needs the domains' keys).
 */
export function claimsOf(secret: Buffer, report: Report, signed: SignedClaim[] = []): ReportClaims {
  const tokens: InboundTarget[] = [];
  const badTokens: string[] = [];
  for (const sender of report.originalSenders) {
    if (!/^bounces\+/i.test(sender)) continue;
    const target = parseInboundAddress(secret, sender);
    if (target?.purpose === 'bounce') tokens.push(target);
    else badTokens.push(sender);
  }
  return { tokens, badTokens, messageId: rowOfMessageId(report.originalMessageId), signed };
}

const same = (a: { kind: VerpKind; id: string }, b: { kind: VerpKind; id: string }) =>
  a.kind === b.kind && a.id === b.id;

/**
 * Why a report that arrived at the VERP address `arrival` must not be applied, or null when nothing in it names
 * another message. A report whose original names a different message (another Message-ID of ours, another or a
 * forged VERP token) is not applied to either: it is kept for review (GET /v1/inbound). A Message-ID that is not one
 * of ours names nothing (relays may replace it) and does not stop the report.
 */
export function conflictWithArrival(arrival: InboundTarget, claims: ReportClaims): string | null {
  if (claims.badTokens.length)
    return `not applied: the original message's Return-Path ${claims.badTokens[0]} carries a token that does not verify`;
  const other = claims.tokens.find((t) => !same(t, arrival));
  if (other)
    return `not applied: the original message's Return-Path names ${other.id}, not ${arrival.id} that the address it was sent to names`;
  const otherSigned = claims.signed.find((t) => !same(t, arrival));
  if (otherSigned)
    return `not applied: the original message's DKIM-signed Message-ID names ${otherSigned.id}, not ${arrival.id} that the address it was sent to names`;
  if (claims.messageId && !same(claims.messageId, arrival)) {
    return `not applied: the original message's Message-ID names ${claims.messageId.id}, not ${arrival.id} that the address it was sent to names`;
  }
  return null;
}

/**
 * The message a report proves by itself, without the address it arrived at: for the addresses that carry no token
 * (`postmaster@`, `abuse@`, `fbl@` the bounce domain, where feedback loops send; issue 32). Two things prove a message,
 * and only a message whose recipient could have sent the report (who can at most report their own):
 * - a signed VERP token in the original's Return-Path or ARF Original-Mail-From (HMAC with the server secret);
 * - a DKIM signature of ours over the original's headers that verifies with the domain's key and signs a Formcast
 *   Message-ID (oversigned, so a second Message-ID breaks it), the row of that Message-ID being of the key's workspace.
 * Every piece of evidence found must name the same message, no token may fail to verify, and a Formcast Message-ID in
 * the original, if any, must name it too. A Message-ID alone (unsigned) is never proof. Returns null when the report
 * proves nothing, or contradicts itself (it is then kept for review, not applied).
 */
export function provenTarget(claims: ReportClaims): InboundTarget | null {
  const evidence: InboundTarget[] = [
    ...claims.tokens,
    ...claims.signed.map((s): InboundTarget => ({ purpose: 'bounce', kind: s.kind, id: s.id, domain: s.domain })),
  ];
  const [first, ...rest] = evidence;
  if (!first || claims.badTokens.length || rest.some((t) => !same(t, first))) return null;
  if (claims.messageId && !same(claims.messageId, first)) return null;
  return first;
}

/** Why a report at an address without a token proves nothing, for the review list (GET /v1/inbound). */
export function unprovenReason(mailbox: string, claims: ReportClaims): string {
  if (claims.badTokens.length)
    return `not applied: arrived at ${mailbox}@ and the original message's Return-Path ${claims.badTokens[0]} carries a token that does not verify`;
  const evidence = [...claims.tokens, ...claims.signed];
  if (evidence.length > 1 && evidence.some((t) => !same(t, evidence[0]!)))
    return `not applied: arrived at ${mailbox}@ and the original message names two messages (${[...new Set(evidence.map((t) => t.id))].join(', ')})`;
  if (evidence.length && claims.messageId && !same(claims.messageId, evidence[0]!))
    return `not applied: arrived at ${mailbox}@ and the original message's Message-ID names ${claims.messageId.id}, not ${evidence[0]!.id}`;
  return `not applied: arrived at ${mailbox}@ (an address without a token) and the original message proves no message of ours: no VERP token that verifies, no DKIM signature of ours over its headers`;
}
