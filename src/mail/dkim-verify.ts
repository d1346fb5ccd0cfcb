import crypto from 'node:crypto';
import { relaxedHeader } from './dkim.js';

/**
 * Checking a DKIM signature over a header block alone (RFC 6376 §3.7, the header hash), for the original message a
 * complaint or bounce report returns (docs/bounces.md, "Addresses without a token"). Feedback loops often return only
 * the original's headers (`text/rfc822-headers`), or a body they have altered, so the body hash (`bh=`) is not
 * compared: what is proved is that these header fields, with the `bh=` in the signature, are the ones the key's owner
 * signed. For a signature of Formcast's own (`relaxed` header canonicalization, rsa-sha256) with a key it holds: it is
 * not a receiver's DKIM verifier, and answers false for anything else.
 */
export interface DkimHeaderSignature {
  /** `d=`, lower case. */
  domain: string;
  /** `s=`, lower case. */
  selector: string;
  /** `h=`, lower case, in order. */
  signedHeaders: string[];
  /** The DKIM-Signature field as it appears (folded, CRLF ends), for the canonical form. */
  field: string;
  algorithm: string;
  headerCanonicalization: string;
  signature: Buffer;
}

/** The fields of a header block (CRLF line ends), each with its continuation lines, in order. */
export function headerFields(block: string): string[] {
  const fields: string[] = [];
  for (const line of block.replace(/\r?\n/g, '\r\n').split('\r\n')) {
    if (line === '') break;
    if (/^[ \t]/.test(line) && fields.length) fields[fields.length - 1] += `\r\n${line}`;
    else if (line.includes(':')) fields.push(line);
  }
  return fields;
}

const nameOf = (field: string) => field.slice(0, field.indexOf(':')).trim().toLowerCase();

function tags(value: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of value.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    out.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).replace(/\s+/g, ''));
  }
  return out;
}

/** Every DKIM-Signature of the block that names a domain, a selector, signed headers and a signature. */
export function dkimSignaturesOf(block: string): DkimHeaderSignature[] {
  const out: DkimHeaderSignature[] = [];
  for (const field of headerFields(block)) {
    if (nameOf(field) !== 'dkim-signature') continue;
    const t = tags(field.slice(field.indexOf(':') + 1));
    const d = t.get('d');
    const s = t.get('s');
    const h = t.get('h');
    const b = t.get('b');
    if (!d || !s || !h || !b) continue;
    out.push({
      domain: d.toLowerCase(),
      selector: s.toLowerCase(),
      signedHeaders: h.split(':').map((n) => n.trim().toLowerCase()),
      field,
      algorithm: (t.get('a') ?? '').toLowerCase(),
      headerCanonicalization: (t.get('c') ?? 'simple/simple').toLowerCase().split('/')[0]!,
      signature: Buffer.from(b, 'base64'),
    });
  }
  return out;
}

/**
 * The header fields a signature covers, in `h=` order, as a verifier picks them (RFC 6376 §5.4.2): for each name, the
 * last instance not taken yet, bottom up; a name with no instance left (oversigning) contributes nothing.
 */
export function signedFields(block: string, sig: DkimHeaderSignature): { name: string; field: string }[] {
  const fields = headerFields(block).filter((f) => f !== sig.field);
  const taken = new Set<number>();
  const out: { name: string; field: string }[] = [];
  for (const name of sig.signedHeaders) {
    for (let i = fields.length - 1; i >= 0; i--) {
      if (taken.has(i) || nameOf(fields[i]!) !== name) continue;
      taken.add(i);
      out.push({ name, field: fields[i]! });
      break;
    }
  }
  return out;
}

/** The signature field with the value of its `b=` tag deleted (RFC 6376 §3.7), as it was hashed. */
function withoutSignature(field: string): string {
  const colon = field.indexOf(':');
  const segments = field.slice(colon + 1).split(';');
  const i = segments.findIndex((seg) => seg.slice(0, seg.indexOf('=')).trim().toLowerCase() === 'b');
  if (i === -1) return field;
  segments[i] = segments[i]!.slice(0, segments[i]!.indexOf('=') + 1);
  return `${field.slice(0, colon + 1)}${segments.join(';')}`;
}

/** Whether `sig` verifies over the block's header fields with `publicKey` (the body hash is not checked: see above). */
export function verifyHeaderSignature(block: string, sig: DkimHeaderSignature, publicKey: crypto.KeyObject): boolean {
  if (sig.algorithm !== 'rsa-sha256' || sig.headerCanonicalization !== 'relaxed') return false;
  // The covered fields, then the signature field itself (b= emptied), last and without a line end.
  const data =
    signedFields(block, sig)
      .map((f) => `${relaxedHeader(f.field)}\r\n`)
      .join('') + relaxedHeader(withoutSignature(sig.field));
  try {
    return crypto.verify('rsa-sha256', Buffer.from(data, 'utf8'), publicKey, sig.signature);
  } catch {
    return false;
  }
}
