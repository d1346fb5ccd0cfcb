import crypto from 'node:crypto';
import { rewritesWhitespace, type MimeHeader } from './mime.js';

/**
 * DKIM signing (RFC 6376, relaxed/relaxed, rsa-sha256) with **oversigning**: every header that changes how a message
 * displays or parses (OVERSIGNED: who it is from and to, its subject, date and thread, its list headers, and its MIME
 * structure) is listed in `h=` once more than the message has them, so that a header added later (a second Subject, a
 * Reply-To or Cc, a second Content-Type that makes a client read the body otherwise) breaks the signature instead of
 * being shown to the reader under a valid one. A relay that rewrites some of them (SES: Message-ID and Date;
 * relay-profiles.ts) has them left out (`unsigned`), as receivers would otherwise see a broken signature.
 *
 * The message is the one mime.ts composed, given as its header lines and its body, so nothing is parsed again: the
 * relaxed canonicalization (RFC 6376 §3.4.2, §3.4.4) is a few regular expressions over text we wrote. mailauth
 * (its parser, its byte-by-byte body canonicalizer and its header formatter) did the same for ~150 µs of a
 * message's ~430 µs of signing, the RSA signature being the rest; it is still what verifies our signatures in the
 * tests (test/unit/dkim.test.ts), as a receiver would.
 */
export const OVERSIGNED = [
  'From',
  'Sender',
  'To',
  'Cc',
  'Reply-To',
  'Subject',
  'Date',
  'Message-ID',
  'In-Reply-To',
  'References',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
  'List-Id',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
];
/** Signed where present: the oversigned ones and those that say how to treat the message. */
export const SIGNED = [...OVERSIGNED, 'Feedback-ID', 'Precedence', 'Auto-Submitted'];

export interface SigningKey {
  domainName: string;
  keySelector: string;
  privateKey: crypto.KeyObject;
  /** Headers the relay rewrites: neither signed nor oversigned (relay-profiles.ts). */
  unsigned?: readonly string[];
}

const lower = (names: readonly string[]) => new Set(names.map((n) => n.toLowerCase()));
const SIGNED_LOWER = lower(SIGNED);

/** RFC 6376 §3.4.2: the name in lower case, the value unfolded, runs of whitespace one space, none at either end. */
export function relaxedHeader(line: string): string {
  const colon = line.indexOf(':');
  return `${line.slice(0, colon).trimEnd().toLowerCase()}:${line
    .slice(colon + 1)
    .replace(/\r\n/g, '')
    .replace(/[ \t]+/g, ' ')
    .trim()}`;
}

/**
 * RFC 6376 §3.4.4: no whitespace at the end of a line, other runs of it one space, no empty lines at the end, and a
 * CRLF after the last line (an empty body stays empty). `body` has CRLF line ends (mime.ts). A body with none of that
 * whitespace (most: quoted-printable encodes the whitespace at line ends, and our HTML has no runs of spaces) is only
 * searched for it; one that has some is rewritten by one regular expression (three of them took ~0.3 ms of CPU for a
 * 40 KB body, more than its SHA-256).
 */
export function relaxedBody(body: string): string {
  const { text, end } = relaxedBodyParts(body);
  return end ? `${end === text.length ? text : text.slice(0, end)}\r\n` : '';
}

/**
 * relaxedBody as a text and the length of it that is kept (its empty lines at the end cut off), the final CRLF left
 * out: what dkimSigningInput hashes, without making a copy of a 48 KB body to append two characters.
 */
function relaxedBodyParts(body: string): { text: string; end: number } {
  const text = rewritesWhitespace(body)
    ? body.replace(RELAXED_WHITESPACE, (_run, atLineEnd: string | undefined) => (atLineEnd ? '' : ' '))
    : body;
  let end = text.length;
  while (end >= 2 && text.charCodeAt(end - 1) === 10 && text.charCodeAt(end - 2) === 13) end -= 2;
  return { text, end };
}
/** A run of whitespace at a line's end (captured: it goes), or one with a tab or of two or more (one space). */
const RELAXED_WHITESPACE = /([ \t]+)(?=\r\n|$)|[ \t]*\t[ \t]*|[ \t]{2,}/g;

/** A body mime.ts composed is ASCII: hashed as latin1, the string's bytes as they are, without encoding UTF-8. */
function asciiOrUtf8(text: string): 'latin1' | 'utf8' {
  return Buffer.byteLength(text, 'utf8') === text.length ? 'latin1' : 'utf8';
}

/** The base64 of the signature, folded in lines that fit with the `b=` in front. */
function foldBase64(b64: string): string {
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += 72) lines.push(b64.slice(i, i + 72));
  return lines.join('\r\n ');
}

/** Tag values joined by ": ", folded where a line would pass 76 characters (before a space, which begins the next). */
function foldList(first: string, items: readonly string[]): string {
  let out = first;
  let width = first.length;
  items.forEach((item, i) => {
    const piece = i === items.length - 1 ? item : `${item}:`;
    if (i > 0 && width + 1 + piece.length > 76) {
      out += `\r\n ${piece}`;
      width = 1 + piece.length;
    } else {
      out += i > 0 ? ` ${piece}` : piece;
      width += (i > 0 ? 1 : 0) + piece.length;
    }
  });
  return out;
}

/**
 * What a DKIM signature signs, for a message of these header lines and this body: the DKIM-Signature header up to its
 * empty `b=` (`unsigned`), and the canonical headers followed by it (`data`, the bytes the RSA signature is over). The
 * signing time is read once (Date.now: the clock a test moves), so the `t=` signed is the `t=` written. `body` is the
 * text or, when mime.ts composed it, its (ASCII) bytes; `plainWhitespace` is mime.ts's word that relaxed canonicalization
 * would not change its lines (MimeMessage.plainWhitespace), and is otherwise looked for.
 */
export function dkimSigningInput(
  headers: readonly MimeHeader[],
  body: string | Buffer,
  key: Omit<SigningKey, 'privateKey'>,
  plainWhitespace = false,
): { unsigned: string; data: Buffer } {
  const hash = crypto.createHash('sha256');
  if (plainWhitespace) {
    // The body is canonical already but for its empty lines at the end (mime.ts, MimeMessage.plainWhitespace): hashed
    // as it is, up to them, with no search for whitespace.
    let end = body.length;
    const at = typeof body === 'string' ? (i: number) => body.charCodeAt(i) : (i: number) => body[i]!;
    while (end >= 2 && at(end - 1) === 10 && at(end - 2) === 13) end -= 2;
    if (end) {
      if (typeof body === 'string') hash.update(end === body.length ? body : body.slice(0, end), asciiOrUtf8(body));
      else hash.update(body.subarray(0, end));
      hash.update('\r\n');
    }
  } else {
    // Bytes are read as latin1 and hashed back as latin1: each byte itself (UTF-8 has no byte 0x20 or 0x09 inside a
    // character, so the rewriting cannot cut one). Hashed as UTF-8, a body with non-ASCII bytes was hashed wrongly.
    const bytes = typeof body !== 'string';
    const { text, end } = relaxedBodyParts(bytes ? body.toString('latin1') : body);
    const kept = end === text.length ? text : text.slice(0, end);
    if (end) hash.update(kept, bytes ? 'latin1' : asciiOrUtf8(kept)).update('\r\n');
  }
  const bodyHash = hash.digest('base64');
  // The present instances bottom-up (the order a verifier takes them in), then one more of each oversigned name: a
  // verifier finds no instance left for those and hashes the null string, unless somebody added one.
  const skip = key.unsigned?.length ? lower(key.unsigned) : null;
  const present = headers
    .filter((h) => SIGNED_LOWER.has(h.name.toLowerCase()) && !skip?.has(h.name.toLowerCase()))
    .reverse();
  const names = [
    ...present.map((h) => h.name),
    ...(skip ? OVERSIGNED.filter((n) => !skip.has(n.toLowerCase())) : OVERSIGNED),
  ];
  const t = Math.floor(Date.now() / 1000);
  const unsigned = `DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=${key.domainName};\r\n ${foldList('h=', names)};\r\n q=dns/txt; s=${key.keySelector}; t=${t};\r\n bh=${bodyHash};\r\n b=`;
  const signed = `${present.map((h) => `${relaxedHeader(h.line)}\r\n`).join('')}${relaxedHeader(unsigned)}`;
  return { unsigned, data: Buffer.from(signed, 'utf8') };
}

/** The DKIM-Signature header line (folded, without the final CRLF): `unsigned` with the signature of its data. */
export function dkimHeader(unsigned: string, signature: Buffer): string {
  return unsigned + foldBase64(signature.toString('base64'));
}

/** The DKIM-Signature header line (folded, without the final CRLF) for a message of these header lines and this body. */
export function dkimSignature(
  headers: readonly MimeHeader[],
  body: string | Buffer,
  key: SigningKey,
  plainWhitespace = false,
): string {
  const { unsigned, data } = dkimSigningInput(headers, body, key, plainWhitespace);
  return dkimHeader(unsigned, crypto.sign('rsa-sha256', data, key.privateKey));
}

/**
 * The same, the RSA signature computed in libuv's thread pool (crypto.sign with a callback) while the calling thread
 * goes on: what lets one send thread make messages while their signatures use the other core (deliveries/CONTEXT.md,
 * "Send threads").
 */
export function dkimSignatureAsync(
  headers: readonly MimeHeader[],
  body: string | Buffer,
  key: SigningKey,
  plainWhitespace = false,
): Promise<string> {
  const { unsigned, data } = dkimSigningInput(headers, body, key, plainWhitespace);
  return new Promise((resolve, reject) => {
    crypto.sign('rsa-sha256', data, key.privateKey, (err, signature) =>
      err ? reject(err) : resolve(dkimHeader(unsigned, signature)),
    );
  });
}
