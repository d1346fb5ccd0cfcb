import crypto from 'node:crypto';
import type * as Mailparser from 'mailparser';
import type { AddressObject, HeaderLines } from 'mailparser';
import { lazyRequire } from '../../lib/lazy.js';
import { isMediaType } from '../mime.js';

/** Loaded on the first submitted message (lib/lazy.ts): every command would load the parser and its encodings. */
const mailparser = lazyRequire<typeof Mailparser>('mailparser');

/** A mailbox of a header: the address, and the display name ('' when none). */
export interface Mailbox {
  address: string;
  name: string;
}

/**
 * A submitted message as the SMTP listener read it (docs/smtp-submission.md): the fields of a transactional email
 * (contract §20), before the composition root makes them the sending service's input (composition/submission.ts,
 * toEmailInput). Addresses are kept with their display names; the mapping decides what the service takes.
 */
export interface SubmittedEmail {
  /** The From header's one mailbox (the envelope's MAIL FROM is ignored). */
  from: Mailbox;
  /** The To and Cc headers' mailboxes that are envelope recipients (the others are not mailed). */
  to: Mailbox[];
  cc: Mailbox[];
  /** Envelope recipients named in neither To nor Cc. */
  bcc: string[];
  replyTo?: string;
  subject?: string;
  html?: string;
  text?: string;
  /** The headers kept (KEPT_HEADERS), raw values unfolded, by their name as written. */
  headers: Record<string, string>;
  /** X-Formcast-Tags, split at commas. */
  tags: string[];
  attachments: { filename: string; content: string; contentType?: string }[];
  /** X-Idempotency-Key, else derived from Message-ID and the envelope's recipients; undefined: neither. */
  idempotencyKey?: string;
}

/** Why a message is refused (550 5.6.0 and this text). */
export class SubmissionRejected extends Error {}

/** The header carrying the email's tags, comma separated (docs/smtp-submission.md). */
export const TAGS_HEADER = 'x-formcast-tags';
/** The header carrying an idempotency key (1 to 255 characters), as the API's Idempotency-Key. */
export const IDEMPOTENCY_HEADER = 'x-idempotency-key';

const NAMED_HEADERS = new Set(['list-unsubscribe', 'list-unsubscribe-post', 'references', 'in-reply-to']);

/**
 * Whether a header of the message goes on to the email: X-* (but the two this listener reads), List-Unsubscribe,
 * List-Unsubscribe-Post, References and In-Reply-To. Everything else is the sending service's (From, Sender, To, Cc,
 * Subject, Date, Message-ID, MIME-Version, Content-*) or must never come from a client (DKIM-Signature,
 * Return-Path, Received, Authentication-Results, ARC-*).
 */
export function keptHeader(name: string): boolean {
  const key = name.toLowerCase();
  if (key === TAGS_HEADER || key === IDEMPOTENCY_HEADER) return false;
  return NAMED_HEADERS.has(key) || /^x-[a-z0-9-]+$/.test(key);
}

/** A header name as RFC 5322 allows it (printable ASCII but the colon). */
const HEADER_NAME = /^[!-9;-~]+$/;
/** Control characters but the tab: never in a header value kept (an unfolded value holds no line break either). */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/;

function keptHeaders(lines: HeaderLines): Record<string, string> {
  const headers: Record<string, string> = {};
  const seen = new Set<string>();
  for (const { line } of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    if (!HEADER_NAME.test(name) || !keptHeader(name)) continue;
    // The raw value (encoded words stay encoded), unfolded: a decoded value could hold a line break.
    const value = line
      .slice(colon + 1)
      .replace(/\r?\n(?=[ \t])/g, '')
      .trim();
    const key = name.toLowerCase();
    if (seen.has(key) || value === '' || CONTROL.test(value)) continue;
    seen.add(key);
    headers[name] = value;
  }
  return headers;
}

function rawHeader(lines: HeaderLines, key: string): string | undefined {
  const found = lines.find((l) => l.key === key);
  if (!found) return undefined;
  return found.line
    .slice(found.line.indexOf(':') + 1)
    .replace(/\r?\n(?=[ \t])/g, '')
    .trim();
}

function mailboxes(field: AddressObject | AddressObject[] | undefined): Mailbox[] {
  const list: Mailbox[] = [];
  const visit = (entries: AddressObject['value']) => {
    for (const e of entries) {
      if (e.group) visit(e.group);
      else if (e.address) list.push({ address: e.address, name: oneLine(e.name ?? '') });
    }
  };
  for (const o of field === undefined ? [] : Array.isArray(field) ? field : [field]) visit(o.value);
  return list;
}

/** A decoded text put on one line: an encoded word may decode to a line break, which must not reach a header. */
function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').trim();
}

/**
 * Reads a message once (mailparser) into the fields of a transactional email. `rcptTo` is the envelope's recipients
 * (accepted at RCPT), the only ones mailed: those the To and Cc headers name are the email's to and cc, the others its
 * bcc. Throws
 * SubmissionRejected for a message that cannot become an email.
 */
export async function parseSubmission(raw: Buffer, rcptTo: string[]): Promise<SubmittedEmail> {
  const parsed = await mailparser().simpleParser(raw, {
    keepCidLinks: true,
    skipHtmlToText: true,
    skipTextToHtml: true,
    skipImageLinks: true,
    skipTextLinks: true,
  });
  const from = mailboxes(parsed.from);
  if (from.length !== 1) throw new SubmissionRejected('the message needs a From header with exactly one address');
  // Only the envelope's recipients are mailed: a To or Cc address that is not one of them is left out (a client
  // that was answered 452 beyond 50 recipients sends the rest in another transaction, with the same headers).
  const envelope = new Map(rcptTo.map((a) => [a.toLowerCase(), a]));
  const named = new Set<string>();
  const inEnvelope = (list: Mailbox[]) =>
    list.filter((m) => {
      const key = m.address.toLowerCase();
      if (!envelope.has(key) || named.has(key)) return false;
      named.add(key);
      return true;
    });
  const to = inEnvelope(mailboxes(parsed.to));
  const cc = inEnvelope(mailboxes(parsed.cc));
  if (to.length === 0)
    throw new SubmissionRejected('the To header must name at least one of the recipients (RCPT TO) of the message');
  const bcc = [...envelope].filter(([key]) => !named.has(key)).map(([, address]) => address);
  const replyTo = mailboxes(parsed.replyTo)[0]?.address;
  const tags = (rawHeader(parsed.headerLines, TAGS_HEADER) ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  return {
    from: from[0]!,
    to,
    cc,
    bcc,
    ...(replyTo ? { replyTo } : {}),
    ...(parsed.subject !== undefined ? { subject: oneLine(parsed.subject) } : {}),
    ...(parsed.html !== false && parsed.html !== undefined ? { html: parsed.html } : {}),
    ...(parsed.text !== undefined && parsed.text !== '' ? { text: parsed.text } : {}),
    headers: keptHeaders(parsed.headerLines),
    tags,
    attachments: parsed.attachments.map((a, i) => ({
      filename: (a.filename && oneLine(a.filename)) || `attachment-${i + 1}`,
      content: a.content.toString('base64'),
      // A Content-Type the API would refuse (bytes beyond ASCII, no subtype) is sent as what it is to us: bytes.
      ...(a.contentType
        ? { contentType: isMediaType(a.contentType) ? a.contentType : 'application/octet-stream' }
        : {}),
    })),
    ...idempotency(parsed.headerLines, parsed.messageId, rcptTo),
  };
}

/**
 * X-Idempotency-Key as given (1 to 255 characters); else, with a Message-ID, `smtp-` and a hash of it and the
 * envelope's recipients: a client that sends the same message again (its connection dropped before the 250) is
 * answered with the first email's id, while a message split over several transactions (more than 50 recipients)
 * makes one email per transaction.
 */
function idempotency(lines: HeaderLines, messageId: string | undefined, rcptTo: string[]): { idempotencyKey?: string } {
  const given = rawHeader(lines, IDEMPOTENCY_HEADER);
  if (given !== undefined) {
    if (given.length < 1 || given.length > 255 || CONTROL.test(given))
      throw new SubmissionRejected('X-Idempotency-Key must be 1 to 255 characters');
    return { idempotencyKey: given };
  }
  if (!messageId) return {};
  const recipients = rcptTo.map((a) => a.toLowerCase()).sort();
  const hash = crypto.hash('sha256', `${messageId}\n${recipients.join('\n')}`, 'hex');
  return { idempotencyKey: `smtp-${hash}` };
}
