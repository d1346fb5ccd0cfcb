import { encode as base64Encode, wrap as base64Wrap } from 'nodemailer/lib/base64';
import { buildHeaderValue, foldLines } from 'nodemailer/lib/mime-funcs';
import MimeNode from 'nodemailer/lib/mime-node';
import { pooledRandomBytes } from '../lib/random.js';
import type { OutgoingMessage } from './compose.js';

/**
 * A media type as attachments may name it (`type/subtype`, RFC 6838's restricted names, no parameters): the pattern of
 * POST /v1/emails' `contentType`, and what SMTP submission keeps of a part's Content-Type (docs/emails.md).
 */
export const MEDIA_TYPE_PATTERN = '^[A-Za-z0-9!#$&^_.+-]{1,127}/[A-Za-z0-9!#$&^_.+-]{1,127}$';
const MEDIA_TYPE = new RegExp(MEDIA_TYPE_PATTERN);

/** Whether `value` is a media type an attachment may carry (MEDIA_TYPE_PATTERN). */
export function isMediaType(value: string): boolean {
  return MEDIA_TYPE.test(value);
}

/**
 * An outgoing message as MIME (RFC 5322, RFC 2045-2047): its header fields and its body, as text with CRLF line ends.
 *
 * Every message Formcast sends has one shape: a text part, and an HTML part beside it when there is one
 * (multipart/alternative). The values are encoded by nodemailer's own encoders (its header encoder for addresses and
 * unstructured values, its folding, its quoted-printable and base64 encoders), and the message is put together here
 * in one pass. nodemailer's MailComposer built the same message as a tree of MIME nodes streamed through a dozen
 * Transform streams, and that cost ~420 µs per message, as much as the RSA signature and the rendering together
 * (bench/README.md, "bench:send", with what it costs here).
 */

export interface MimeHeader {
  name: string;
  /** As written: encoded and folded (continuation lines start with a space), without the final CRLF. */
  line: string;
}

export interface MimeMessage {
  headers: MimeHeader[];
  /** The body after the blank line, CRLF line ends, ending with CRLF. ASCII (every part is encoded to it). */
  body: string;
  /**
   * True when DKIM's relaxed body canonicalization (RFC 6376 §3.4.4) leaves every line of the body as it is: no tab,
   * no run of spaces, no whitespace at a line's end. Found from each part as it is made (one search for two spaces;
   * the line ends are read anyway), so that dkim.ts need not search the whole body again (three searches of a 48 KB
   * body took ~60 µs a message: bench/README.md, "bench:render"). False means "not known": dkim.ts then looks.
   */
  plainWhitespace: boolean;
}

/** Encodes header values exactly as nodemailer's MimeNode does (addresses, encoded words, Message-ID). */
let encoder: MimeNode | undefined;
const encodeValue = (name: string, value: unknown): string =>
  (encoder ??= new MimeNode()).encodeHeaderValue(name, value as string);

const LINE = 76;

/** A header as MimeNode writes it: encoded, folded at 76, empty values left out. */
function header(name: string, value: unknown): MimeHeader | null {
  const encoded = encodeValue(name, value);
  if (!encoded.trim()) return null;
  return { name, line: foldLines(`${name}: ${encoded}`, LINE) };
}

/**
 * A field name as MimeNode writes it (its _normalizeHeaderKey): only printable ASCII other than the colon (anything
 * else would end the name early on the wire, or is not a field name), each word capitalised, MIME, DKIM and the
 * suffixes ID, SPF, FBL and MD5 in capitals (`List-Id` goes out as `List-ID`, as it always did; names are
 * case-insensitive).
 */
export function headerName(key: string): string {
  const clean = key.replace(/[^\x21-\x39\x3b-\x7e]/g, '');
  // Postmark's metadata: the key after the prefix is returned as written (`Metadata.deliveryId`), so its case is kept.
  // nodemailer wrote `X-Pm-Metadata-Deliveryid`, and Postmark's reports came back without the delivery's id.
  const metadata = /^x-pm-metadata-(.+)$/i.exec(clean);
  if (metadata) return `X-PM-Metadata-${metadata[1]}`;
  return clean
    .toLowerCase()
    .replace(/^X-SMTPAPI$|^(MIME|DKIM|ARC|BIMI)\b|^OTP(?=-Token$)|^[a-z]|-(SPF|FBL|ID|MD5)$|-[a-z]/gi, (c) =>
      c.toUpperCase(),
    );
}

/** Our own prepared headers (ASCII already, an encoded word where a name needs one): only folded. */
function prepared(key: string, value: string): MimeHeader | null {
  if (!value.trim()) return null;
  const name = headerName(key);
  // A prepared value never carries a line break: it would end the header and begin another.
  return { name, line: foldLines(`${name}: ${value.replace(/[\r\n]+/g, ' ')}`, LINE) };
}

/** MimeNode's choice: more latin letters than other bytes → quoted-printable, else base64. */
function prefersQuotedPrintable(value: string): boolean {
  let other = 0;
  let latin = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c <= 0x08 || c === 0x0b || c === 0x0c || (c >= 0x0e && c <= 0x1f) || c >= 0x80) other++;
    else if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) latin++;
  }
  return other < latin;
}

/**
 * The longest line a part may carry as it is (RFC 5322 §2.1.1: 998 octets, CRLF aside; RFC 2045 §2.7, 7bit data).
 * MailComposer sent 7bit only up to 76 characters a line, so every HTML part with longer lines (most HTML, a block
 * document's too) went in quoted-printable: the encoding cost as much CPU as the rest of the message (bench/README.md,
 * "bench:render").
 */
const MAX_LINE = 998;

/**
 * Whether text (CRLF line ends) can go as 7bit: ASCII, no NUL, no line longer than MAX_LINE; and, when it can, whether
 * no line ends with a space or a tab (`plainEnds`: read while the lines are found, for MimeMessage.plainWhitespace).
 */
function sevenBit(text: string): { ok: boolean; plainEnds: boolean } {
  if (Buffer.byteLength(text, 'utf8') !== text.length || text.includes('\0')) return { ok: false, plainEnds: false };
  // (Every LF here ends a CRLF: the lines are found by their LF, a one-character search.)
  let at = 0;
  let plainEnds = true;
  for (let lf = text.indexOf('\n'); lf >= 0; lf = text.indexOf('\n', at)) {
    if (lf - 1 - at > MAX_LINE) return { ok: false, plainEnds: false };
    const last = lf >= 2 ? text.charCodeAt(lf - 2) : 0;
    if (last === 0x20 || last === 0x09) plainEnds = false;
    at = lf + 1;
  }
  // (The text ends with CRLF: there is no last line without one.)
  return { ok: text.length - at <= MAX_LINE, plainEnds };
}

/** One text part: its two content headers and its body, encoded as MimeNode would choose. */
function textPart(
  type: 'text/plain' | 'text/html',
  content: string,
): { contentType: string; encoding: string; body: string; plainWhitespace: boolean } {
  // Line ends as CRLF, and a final one (nodemailer's LastNewline). Without a CR (most HTML), each LF gets one: a third
  // of the regular expression's CPU for a 40 KB HTML part. (The final one before the CRLFs are made: appended after,
  // it left a two-piece string every later search had to flatten.)
  const ended = content.endsWith('\n') ? content : `${content}\n`;
  const text = ended.includes('\r') ? ended.replace(/\r\n?|\n/g, '\r\n') : ended.replaceAll('\n', '\r\n');
  const seven = sevenBit(text);
  if (seven.ok)
    return {
      contentType: `${type}; charset=utf-8`,
      encoding: '7bit',
      body: text,
      plainWhitespace: seven.plainEnds && !text.includes('\t') && !text.includes('  '),
    };
  if (prefersQuotedPrintable(text)) {
    // Quoted-printable encodes whitespace at a line's end (and its soft breaks end with `=`): only tabs and runs of
    // spaces within a line are left to look for.
    const body = quotedPrintable(text);
    return {
      contentType: `${type}; charset=utf-8`,
      encoding: 'quoted-printable',
      body,
      plainWhitespace: !body.includes('\t') && !body.includes('  '),
    };
  }
  return {
    contentType: `${type}; charset=utf-8`,
    encoding: 'base64',
    body: `${base64Wrap(base64Encode(Buffer.from(text, 'utf8')), LINE).replace(/\r?\n/g, '\r\n')}\r\n`,
    plainWhitespace: true,
  };
}

const HEX = Buffer.from('0123456789ABCDEF', 'latin1');
const [CR, LF, SPACE, TAB, EQUALS] = [0x0d, 0x0a, 0x20, 0x09, 0x3d];

/**
 * Quoted-printable (RFC 2045 §6.7) of text with CRLF line ends, in one pass over its UTF-8 bytes: printable ASCII but
 * `=` as it is, other bytes as `=XX`, a space or tab before a line end (or the end) as `=20` / `=09`, and soft line
 * breaks (`=` CRLF) keeping every line within 76 characters, never inside an `=XX` nor inside a character's bytes.
 * nodemailer's encoder and wrap (regular expressions over the encoded text) took ~0.7 ms for 40 KB of HTML; this
 * about a tenth of it (bench/README.md, "bench:render").
 */
export function quotedPrintable(text: string): string {
  const src = Buffer.from(text, 'utf8');
  const n = src.length;
  // At worst every byte as =XX, and a soft break (3 bytes) for each 25 of them.
  const out = Buffer.allocUnsafe(n * 3 + Math.ceil(n / 25) * 3 + 3);
  let o = 0;
  let col = 0;
  for (let i = 0; i < n; i++) {
    const b = src[i]!;
    if (b === CR && src[i + 1] === LF) {
      out[o++] = CR;
      out[o++] = LF;
      i++;
      col = 0;
      continue;
    }
    let encode: boolean;
    if (b === SPACE || b === TAB) encode = i + 1 === n || (src[i + 1] === CR && src[i + 2] === LF);
    else encode = b < 0x21 || b > 0x7e || b === EQUALS;
    // The columns this byte (or, for the first byte of a character, the whole character) takes.
    const width = !encode ? 1 : b >= 0xf0 ? 12 : b >= 0xe0 ? 9 : b >= 0xc0 ? 6 : b >= 0x80 ? 0 : 3;
    if (col + width > 75) {
      out[o++] = EQUALS;
      out[o++] = CR;
      out[o++] = LF;
      col = 0;
    }
    if (encode) {
      out[o++] = EQUALS;
      out[o++] = HEX[b >> 4]!;
      out[o++] = HEX[b & 15]!;
      // (A continuation byte's columns were counted with its first byte.)
      col += b >= 0x80 && b < 0xc0 ? 0 : 3;
      if (b >= 0xc0) col += width - 3;
    } else {
      out[o++] = b;
      col++;
    }
  }
  return out.toString('latin1', 0, o);
}

/** The size in bytes of an HTML part as it goes on the wire (encoded: quoted-printable or base64 as composeMime chooses). */
export function encodedHtmlBytes(html: string): number {
  return Buffer.byteLength(textPart('text/html', html).body, 'utf8');
}

/**
 * Whether relaxed body canonicalization would change the text (CRLF line ends): a tab, a run of spaces, a space at a
 * line's end. dkim.ts asks it of a body; this file of its own short pieces (MimeMessage.plainWhitespace).
 */
export function rewritesWhitespace(text: string): boolean {
  return text.includes('\t') || text.includes('  ') || text.includes(' \r\n') || text.endsWith(' ');
}

/** A random boundary: a part would have to hold its 24 random hex digits to end early. */
function boundary(): string {
  return `--_FcP-${pooledRandomBytes(12).toString('hex')}-Part_1`;
}

/**
 * The message's header fields (in the order MailComposer wrote them: ours first, then the addresses, Subject,
 * Message-ID, Date, MIME-Version and Content-Type last) and its body.
 */
export function composeMime(m: OutgoingMessage, date: Date): MimeMessage {
  const headers: (MimeHeader | null)[] = Object.entries(m.headers).map(([name, value]) => prepared(name, value));
  // A caller's headers (a transactional email, docs/emails.md): encoded as any value; their names were checked.
  for (const [name, value] of Object.entries(m.customHeaders ?? {})) headers.push(header(name, value));
  headers.push(
    header('From', { name: m.from.name ?? '', address: m.from.address }),
    header(
      'To',
      m.toHeader ? m.toHeader.map((a) => ({ name: a.name ?? '', address: a.address })) : { name: '', address: m.to },
    ),
    m.cc?.length
      ? header(
          'Cc',
          m.cc.map((a) => ({ name: a.name ?? '', address: a.address })),
        )
      : null,
    m.replyTo ? header('Reply-To', { name: m.replyTo.name ?? '', address: m.replyTo.address }) : null,
    header('Subject', m.subject),
    header('Message-ID', m.messageId),
    { name: 'Date', line: `Date: ${date.toUTCString().replace(/GMT/, '+0000')}` },
    { name: 'MIME-Version', line: 'MIME-Version: 1.0' },
  );
  const content = contentPart(m);
  if (!m.attachments?.length) {
    headers.push(...content.headers);
    return {
      headers: headers.filter((h): h is MimeHeader => h !== null),
      body: content.body,
      plainWhitespace: content.plainWhitespace,
    };
  }
  // With attachments: multipart/mixed, the content first, then each file in base64 (docs/emails.md).
  const b = boundary().replace('Part_1', 'Mixed');
  headers.push({ name: 'Content-Type', line: `Content-Type: multipart/mixed;\r\n boundary="${b}"` });
  const contentHead = content.headers.map((h) => h.line).join('\r\n');
  const parts = [`${contentHead}\r\n\r\n${content.body}`];
  let plain = content.plainWhitespace && !rewritesWhitespace(contentHead);
  for (const a of m.attachments) {
    const part = attachmentPart(a);
    parts.push(part.text);
    plain &&= !rewritesWhitespace(part.head);
  }
  const body = `${parts.map((p) => `--${b}\r\n${p}`).join('\r\n')}\r\n--${b}--\r\n`;
  return { headers: headers.filter((h): h is MimeHeader => h !== null), body, plainWhitespace: plain };
}

/** The message's content: a text part, or text and HTML as multipart/alternative; its content headers and body. */
function contentPart(m: OutgoingMessage): { headers: MimeHeader[]; body: string; plainWhitespace: boolean } {
  const text = textPart('text/plain', m.text);
  if (m.html === null)
    return {
      headers: [
        { name: 'Content-Type', line: `Content-Type: ${text.contentType}` },
        { name: 'Content-Transfer-Encoding', line: `Content-Transfer-Encoding: ${text.encoding}` },
      ],
      body: text.body,
      plainWhitespace: text.plainWhitespace,
    };
  const html = textPart('text/html', m.html);
  const b = boundary();
  return {
    headers: [{ name: 'Content-Type', line: `Content-Type: multipart/alternative;\r\n boundary="${b}"` }],
    body:
      [text, html]
        .map(
          (p) =>
            `--${b}\r\nContent-Type: ${p.contentType}\r\nContent-Transfer-Encoding: ${p.encoding}\r\n\r\n${p.body}`,
        )
        .join('\r\n') + `\r\n--${b}--\r\n`,
    // (The part headers and boundaries between them are ours: single spaces, none at a line's end.)
    plainWhitespace: text.plainWhitespace && html.plainWhitespace,
  };
}

/** One attached file: its name in Content-Type and Content-Disposition (RFC 2231 by nodemailer's encoder), base64. */
function attachmentPart(a: { filename: string; contentType: string; content: Uint8Array }): {
  /** Its header lines (the file's name is in them). */
  head: string;
  text: string;
} {
  const type = foldLines(
    `Content-Type: ${buildHeaderValue({ value: a.contentType, params: { name: a.filename } })}`,
    LINE,
  );
  const disposition = foldLines(
    `Content-Disposition: ${buildHeaderValue({ value: 'attachment', params: { filename: a.filename } })}`,
    LINE,
  );
  const data = base64Wrap(
    base64Encode(Buffer.from(a.content.buffer, a.content.byteOffset, a.content.byteLength)),
    LINE,
  );
  const head = `${type}\r\n${disposition}\r\nContent-Transfer-Encoding: base64`;
  return { head, text: `${head}\r\n\r\n${data.replace(/\r?\n/g, '\r\n')}\r\n` };
}

/**
 * The message as bytes: header lines, the blank line, the body. Composed here it is ASCII (encoded headers, a 7bit,
 * quoted-printable or base64 body), and copying ASCII as latin1 is ~10 times faster than encoding UTF-8.
 */
export function mimeBytes(headerLines: readonly string[], body: string | Buffer): Buffer {
  const head = `${headerLines.join('\r\n')}\r\n\r\n`;
  // Written into one buffer piece by piece (joined first, the 48 KB body of a large email was copied once more).
  const headBytes = Buffer.byteLength(head, 'utf8');
  const bodyBytes = typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.byteLength;
  const out = Buffer.allocUnsafe(headBytes + bodyBytes);
  out.write(head, 0, headBytes, headBytes === head.length ? 'latin1' : 'utf8');
  if (typeof body !== 'string') body.copy(out, headBytes);
  else out.write(body, headBytes, bodyBytes, bodyBytes === body.length ? 'latin1' : 'utf8');
  return out;
}
