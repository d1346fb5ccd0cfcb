/**
 * Sign-up bursts (docs/bot-protection.md): list bombing signs strangers up by the hundred, from a few
 * networks, with addresses made by a program. Each public submission leaves signals (its network, /24 for IPv4
 * and /64 for IPv6; the shape of its address with the digits blanked; its mailbox without a `+tag`; its domain
 * unless a big public provider's), and a submission whose signal was seen too often in the window is HELD for
 * review instead of signing anyone up. The signals are stored as keyed hashes (never the address or the IP).
 */
import crypto from 'node:crypto';
import { isIP } from 'node:net';

export type SignalKind = 'ip_range' | 'pattern' | 'mailbox' | 'domain';

/** How many submissions with one signal within the window are fine; the next one is held. 0 turns a rule off. */
export interface BurstRules {
  windowSeconds: number;
  ipRange: number;
  pattern: number;
  mailbox: number;
  domain: number;
}

export const DEFAULT_BURST_RULES: BurstRules = { windowSeconds: 600, ipRange: 10, pattern: 5, mailbox: 3, domain: 25 };

/** Domains where many strangers legitimately have their addresses: a burst of them says nothing. */
const PUBLIC_PROVIDERS = new Set([
  'gmail.com',
  'googlemail.com',
  'outlook.com',
  'hotmail.com',
  'live.com',
  'msn.com',
  'yahoo.com',
  'ymail.com',
  'icloud.com',
  'me.com',
  'mac.com',
  'aol.com',
  'proton.me',
  'protonmail.com',
  'gmx.com',
  'gmx.de',
  'gmx.net',
  'web.de',
  't-online.de',
  'mail.ru',
  'yandex.ru',
  'yandex.com',
  'qq.com',
  '163.com',
  '126.com',
  'naver.com',
  'orange.fr',
  'free.fr',
  'laposte.net',
  'libero.it',
  'fastmail.com',
  'zoho.com',
  'hey.com',
]);

/** The network an address is in: its /24 (IPv4, also IPv4-mapped IPv6) or /64 (IPv6); null if it is not an address. */
export function ipRange(ip: string | undefined | null): string | null {
  if (!ip) return null;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  const addr = mapped ? mapped[1]! : ip;
  const family = isIP(addr);
  if (family === 4) return `${addr.split('.').slice(0, 3).join('.')}.0/24`;
  if (family !== 6) return null;
  const [head, tail = ''] = addr.toLowerCase().split('::') as [string, string?];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  if (right.some((p) => p.includes('.')) || left.some((p) => p.includes('.'))) return null; // embedded IPv4 forms: leave them
  const groups = addr.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => (g || '0').replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * Loopback, private and link-local ranges: behind a reverse proxy that TRUST_PROXY does not name, every visitor has the
 * proxy's address, and the network rule would hold every sign-up; such addresses say nothing about the visitor.
 */
export function isInternalRange(range: string): boolean {
  return (
    /^(127\.|10\.|192\.168\.|169\.254\.|172\.(1[6-9]|2\d|3[01])\.|0\.)/.test(range) ||
    /^(0:0:0:0::|f[cd][0-9a-f]{0,2}:|fe[89ab][0-9a-f]?:)/.test(range)
  );
}

/** The signals of a submission (email may be empty: a survey). */
export function signalsOf(ip: string | null | undefined, email: string): { kind: SignalKind; value: string }[] {
  const out: { kind: SignalKind; value: string }[] = [];
  const found = ipRange(ip);
  const range = found && !isInternalRange(found) ? found : null;
  if (range) out.push({ kind: 'ip_range', value: range });
  const at = email.lastIndexOf('@');
  if (at > 0) {
    const local = email.slice(0, at).toLowerCase();
    const domain = email.slice(at + 1).toLowerCase();
    const base = local.split('+')[0]!;
    // user1, user2, … user4711 (and u1x9, …): the shape with each run of digits blanked.
    if (/\d/.test(base)) out.push({ kind: 'pattern', value: `${base.replace(/\d+/g, '#')}@${domain}` });
    // jane+1, jane+2, … (and j.a.n.e at Gmail, which ignores the dots): one mailbox.
    const gmail = domain === 'gmail.com' || domain === 'googlemail.com';
    if (local.includes('+') || (gmail && base.includes('.')))
      out.push({ kind: 'mailbox', value: `${gmail ? base.replace(/\./g, '') : base}@${gmail ? 'gmail.com' : domain}` });
    if (!PUBLIC_PROVIDERS.has(domain)) out.push({ kind: 'domain', value: domain });
  }
  return out;
}

/** A signal as stored: a keyed hash, so the table holds no address and no network. */
export function signalKey(secret: Buffer, kind: SignalKind, value: string): string {
  return crypto.createHmac('sha256', secret).update(`signal:${kind}:${value}`).digest('base64url').slice(0, 32);
}
