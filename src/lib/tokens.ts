import crypto from 'node:crypto';

/**
 * Signed tokens that name a row of the service in a public address (a VERP bounce address, the List-
 * Unsubscribe mailto address; tracking links later): `<kind><ULID><mac>`, lower-case, so that mail
 * software that folds the case of local parts keeps them valid. The MAC is HMAC-SHA256 over the purpose,
 * kind and ULID with the server secret (db/secrets.ts), truncated to 12 base32 characters (60 bits): nobody
 * can make a token for another row, and a token made for one purpose is refused for another.
 */
const B32 = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford's alphabet, as ULIDs use
const MAC_LENGTH = 12;

function base32(buf: Buffer, chars: number): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of buf) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < chars) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    if (out.length >= chars) break;
  }
  return out;
}

function mac(secret: Buffer, purpose: string, body: string): string {
  return base32(crypto.createHmac('sha256', secret).update(`${purpose}:${body}`).digest(), MAC_LENGTH);
}

/** A token for the row `id` (`dlv_01J…`: a prefix of lower-case letters and a ULID); `kind` is one letter. */
export function signToken(secret: Buffer, purpose: string, kind: string, id: string): string {
  const ulid = id.slice(id.indexOf('_') + 1).toLowerCase();
  if (!/^[a-z]$/.test(kind) || !/^[0-9a-hjkmnp-tv-z]{26}$/.test(ulid))
    throw new Error(`signToken: cannot sign ${kind}/${id}`);
  const body = `${kind}${ulid}`;
  return `${body}${mac(secret, purpose, body)}`;
}

/** The kind and ULID (upper-case, as ids hold it) a token names, or null when it does not verify. */
export function verifyToken(secret: Buffer, purpose: string, token: string): { kind: string; ulid: string } | null {
  const t = token.toLowerCase();
  if (!/^[a-z][0-9a-hjkmnp-tv-z]{26}[0-9a-hjkmnp-tv-z]{12}$/.test(t)) return null;
  const body = t.slice(0, 27);
  const expected = Buffer.from(mac(secret, purpose, body));
  const given = Buffer.from(t.slice(27));
  if (!crypto.timingSafeEqual(expected, given)) return null;
  return { kind: body[0]!, ulid: body.slice(1).toUpperCase() };
}

const PAIR_MAC_LENGTH = 26; // 130 bits: a pair token opens a page of personal data (a recipient's own message)

/**
 * A token for two rows at once (`<kind><ULID a><ULID b><mac>`, lower-case): a row and the tenant it belongs to, so
 * that whoever reads it looks the row up within its workspace, never by a bare id (the web version's
 * `/w/{token}` names a workspace and one of its deliveries). Its MAC is longer than signToken's: the page it opens shows
 * a person's data, and its address is not typed by mail software into a local part.
 */
export function signPairToken(secret: Buffer, purpose: string, kind: string, a: string, b: string): string {
  const ulid = (id: string) => id.slice(id.indexOf('_') + 1).toLowerCase();
  const [ua, ub] = [ulid(a), ulid(b)];
  if (!/^[a-z]$/.test(kind) || ![ua, ub].every((u) => /^[0-9a-hjkmnp-tv-z]{26}$/.test(u)))
    throw new Error(`signPairToken: cannot sign ${kind}/${a}/${b}`);
  const body = `${kind}${ua}${ub}`;
  return `${body}${base32(crypto.createHmac('sha256', secret).update(`${purpose}:${body}`).digest(), PAIR_MAC_LENGTH)}`;
}

/** The kind and the two ULIDs (upper-case) a pair token names, or null when it does not verify (constant-time check). */
export function verifyPairToken(
  secret: Buffer,
  purpose: string,
  token: string,
): { kind: string; a: string; b: string } | null {
  if (token.length !== 1 + 26 + 26 + PAIR_MAC_LENGTH) return null;
  const t = token.toLowerCase();
  if (!/^[a-z][0-9a-hjkmnp-tv-z]+$/.test(t)) return null;
  const body = t.slice(0, 53);
  const expected = Buffer.from(
    base32(crypto.createHmac('sha256', secret).update(`${purpose}:${body}`).digest(), PAIR_MAC_LENGTH),
  );
  if (!crypto.timingSafeEqual(expected, Buffer.from(t.slice(53)))) return null;
  return { kind: body[0]!, a: body.slice(1, 27).toUpperCase(), b: body.slice(27).toUpperCase() };
}
