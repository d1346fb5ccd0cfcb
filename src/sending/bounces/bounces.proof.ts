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

/** What a report's original message names (nothing is trusted yet: see conflictWithArrival and provenTarget). */
export function claimsOf(secret: Buffer, report: Report): ReportClaims {
  const tokens: InboundTarget[] = [];
  const badTokens: string[] = [];
  for (const sender of report.originalSenders) {
    if (!/^bounces\+/i.test(sender)) continue;
    const target = parseInboundAddress(secret, sender);
    if (target?.purpose === 'bounce') tokens.push(target);
    else badTokens.push(sender);
  }
  return { tokens, badTokens, messageId: rowOfMessageId(report.originalMessageId) };
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
  if (claims.messageId && !same(claims.messageId, arrival)) {
    return `not applied: the original message's Message-ID names ${claims.messageId.id}, not ${arrival.id} that the address it was sent to names`;
  }
  return null;
}

/**
 * The message a report proves by itself, without the address it arrived at: for addresses that carry no token
 * (`fbl@`, `abuse@` and feedback loops that send there, issue 32). Only a signed VERP token in the original's
 * Return-Path or ARF Original-Mail-From proves a message (the recipient of that message could at most report their
 * own); every token found must agree, and a Message-ID of ours must name the same message. A Message-ID alone is
 * never proof. Returns null when the report proves nothing (it is then kept for review, not applied).
 */
export function provenTarget(claims: ReportClaims): InboundTarget | null {
  const [first, ...rest] = claims.tokens;
  if (!first || claims.badTokens.length || rest.some((t) => !same(t, first))) return null;
  if (claims.messageId && !same(claims.messageId, first)) return null;
  return first;
}
