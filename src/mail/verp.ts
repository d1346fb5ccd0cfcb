import { signToken, verifyToken } from '../lib/tokens.js';

/**
 * Addresses at a sending domain's bounce domain (docs/bounces.md): `bounces.<domain>`, whose MX points at the
 * inbound listener. Every message goes out with the envelope sender (VERP, Return-Path)
 * `bounces+<token>@bounces.<domain>`, the token naming what was sent, signed; the List-Unsubscribe header
 * also offers `unsubscribe+<token>@bounces.<domain>`. The bounce domain shares the From domain's
 * organizational domain, so SPF aligns for DMARC.
 */
export const BOUNCE_SUBDOMAIN = 'bounces';

/** What a token names: a delivery of a broadcast, a confirmation email, a test send. */
export const VERP_KINDS = { d: 'dlv', c: 'cnf', t: 'tst' } as const;
export type VerpKind = keyof typeof VERP_KINDS;

export function bounceDomain(sendingDomain: string): string {
  return `${BOUNCE_SUBDOMAIN}.${sendingDomain}`;
}

export function returnPath(secret: Buffer, kind: VerpKind, id: string, sendingDomain: string): string {
  return `bounces+${signToken(secret, 'verp', kind, id)}@${bounceDomain(sendingDomain)}`;
}

export function unsubscribeAddress(secret: Buffer, deliveryId: string, sendingDomain: string): string {
  return `unsubscribe+${signToken(secret, 'unsubscribe', 'd', deliveryId)}@${bounceDomain(sendingDomain)}`;
}

export interface InboundTarget {
  purpose: 'bounce' | 'unsubscribe';
  kind: VerpKind;
  /** The id of the row the token names (`dlv_…`, `cnf_…`). */
  id: string;
  /** The sending domain the address was at. */
  domain: string;
}

/** What an address the inbound listener is given names, or null (an unknown address, a forged or damaged token). */
export function parseInboundAddress(secret: Buffer, address: string): InboundTarget | null {
  const m = /^(bounces|unsubscribe)\+([a-z0-9]+)@bounces\.([a-z0-9.-]+)$/i.exec(address.trim());
  if (!m) return null;
  const purpose = m[1]!.toLowerCase() === 'bounces' ? 'bounce' : 'unsubscribe';
  const token = verifyToken(secret, purpose === 'bounce' ? 'verp' : 'unsubscribe', m[2]!);
  if (!token || !(token.kind in VERP_KINDS)) return null;
  const kind = token.kind as VerpKind;
  return { purpose, kind, id: `${VERP_KINDS[kind]}_${token.ulid}`, domain: m[3]!.toLowerCase() };
}

/**
 * The fixed mailboxes of every bounce domain (docs/bounces.md, "Addresses without a token"): `postmaster@` (RFC 5321
 * requires it), `abuse@` and `fbl@` (the fixed address Yahoo's and Microsoft's complaint loops send to), and `dmarc@`
 * (the `rua` of DMARC aggregate reports). They carry no token: what arrives there acts only on what it proves itself.
 */
export const FIXED_MAILBOXES = ['postmaster', 'abuse', 'fbl', 'dmarc'] as const;
export type FixedMailbox = (typeof FIXED_MAILBOXES)[number];

/** `fbl@bounces.example.com` → `{ mailbox: 'fbl', domain: 'example.com' }`; null for any other address. */
export function parseFixedAddress(address: string): { mailbox: FixedMailbox; domain: string } | null {
  const m = /^(postmaster|abuse|fbl|dmarc)@bounces\.([a-z0-9.-]+)$/i.exec(address.trim());
  if (!m) return null;
  return { mailbox: m[1]!.toLowerCase() as FixedMailbox, domain: m[2]!.toLowerCase() };
}
