import type * as Mailparser from 'mailparser';
import type { Attachment, ParsedMail } from 'mailparser';
import { lazyRequire } from '../../lib/lazy.js';

// The MIME parser and its charset tables load with the first report parsed, not at start (lib/lazy.ts).
const mailparser = lazyRequire<typeof Mailparser>('mailparser');
import { classify, enhancedStatus, replyCode, type BounceClass } from '../../mail/classify.js';

/**
 * Reading what arrives at a bounce address (docs/bounces.md): MIME by mailparser, then one of
 * - a DSN (RFC 3464, `multipart/report; report-type=delivery-status`): one result per recipient, from its
 *   `Action` and `Status` (and `Diagnostic-Code`), classified by the table in mail/classify.ts;
 * - an ARF report (RFC 5965, `report-type=feedback-report`): a complaint, with the original Message-ID;
 * - an auto-reply (RFC 3834 `Auto-Submitted`, vacation and out-of-office notices): ignored;
 * - a bounce that is not a DSN (older servers' plain text): classified from the status codes and wording in
 *   its text;
 * - anything else: unclassified (kept and listed by GET /v1/inbound).
 */
export type InboundReport =
  | {
      kind: 'bounce';
      format: 'dsn' | 'plain';
      results: RecipientResult[];
      originalMessageId: string | null;
      originalSenders: string[];
      subject: string;
    }
  | {
      kind: 'complaint';
      feedbackType: string;
      recipient: string | null;
      originalMessageId: string | null;
      originalSenders: string[];
      subject: string;
    }
  | { kind: 'auto_reply'; subject: string }
  | { kind: 'unclassified'; reason: string; subject: string };

export interface RecipientResult {
  recipient: string | null;
  /** failed, delayed, delivered, relayed, expanded (RFC 3464); plain bounces are `failed`. */
  action: string;
  status: string | null;
  diagnostic: string;
  class: BounceClass | null;
}

/** Header-style fields of a DSN or ARF body part: groups separated by blank lines, `Name: value` with folding. */
export function parseFieldGroups(text: string): Map<string, string>[] {
  const groups: Map<string, string>[] = [];
  let current = new Map<string, string>();
  let last: string | null = null;
  for (const raw of text.replace(/\r\n/g, '\n').split('\n')) {
    if (raw.trim() === '') {
      if (current.size) groups.push(current);
      current = new Map();
      last = null;
      continue;
    }
    if (/^[ \t]/.test(raw) && last) {
      current.set(last, `${current.get(last)} ${raw.trim()}`);
      continue;
    }
    const colon = raw.indexOf(':');
    if (colon <= 0) continue;
    last = raw.slice(0, colon).trim().toLowerCase();
    const value = raw.slice(colon + 1).trim();
    // A field that repeats (several Original-Rcpt-To) keeps the first.
    if (!current.has(last)) current.set(last, value);
  }
  if (current.size) groups.push(current);
  return groups;
}

/** `rfc822; a@b.example` → `a@b.example` (the address type of RFC 3464 fields), lower-cased, without brackets. */
function addressOf(field: string | undefined): string | null {
  if (!field) return null;
  const value = field.includes(';') ? field.slice(field.indexOf(';') + 1) : field;
  const m = /<?([^<>\s]+@[^<>\s]+?)>?\s*$/.exec(value.trim());
  return m ? m[1]!.toLowerCase() : null;
}

const MESSAGE_ID = /^\s*message-id\s*:\s*(<[^>\s]+>)/im;

/** The Message-ID of the original message a report carries (message/rfc822, text/rfc822-headers, or the parsed attachment). */
function originalMessageId(parts: Attachment[], text: string): string | null {
  for (const p of parts) {
    if (/^(message\/rfc822|text\/rfc822-headers|message\/rfc822-headers)/i.test(p.contentType)) {
      const m = MESSAGE_ID.exec(p.content.toString('utf8'));
      if (m) return m[1]!;
    }
  }
  const m = MESSAGE_ID.exec(text);
  return m ? m[1]! : null;
}

const RETURN_PATH = /^\s*return-path\s*:\s*<?([^<>\s]*)>?/gim;

/**
 * The envelope senders the original message inside a report had: its Return-Path (in the returned message or
 * headers, or quoted in a plain bounce's text) and, in an ARF report, `Original-Mail-From`. These carry the signed
 * VERP token of the message the report is really about (bounces.proof.ts).
 */
function originalSenders(parts: Attachment[], text: string, arfFields?: Map<string, string>): string[] {
  const found = new Set<string>();
  const scan = (s: string) => {
    for (const m of s.matchAll(RETURN_PATH)) if (m[1]) found.add(m[1].toLowerCase());
  };
  for (const p of parts) {
    if (/^(message\/rfc822|text\/rfc822-headers|message\/rfc822-headers)/i.test(p.contentType))
      scan(p.content.toString('utf8').split(/\r?\n\r?\n/, 1)[0] ?? '');
  }
  scan(text);
  const from = addressOf(arfFields?.get('original-mail-from'));
  if (from) found.add(from);
  return [...found].slice(0, 20);
}

const reportType = (mail: ParsedMail): string | null => {
  const ct = mail.headers.get('content-type') as { value?: string; params?: Record<string, string> } | undefined;
  if (!ct?.value || ct.value.toLowerCase() !== 'multipart/report') return null;
  return (ct.params?.['report-type'] ?? '').toLowerCase() || null;
};

const partOf = (mail: ParsedMail, type: RegExp) => mail.attachments.find((a) => type.test(a.contentType));

/** RFC 3834 Auto-Submitted (anything but "no"), and the headers and subjects of vacation and out-of-office notices. */
function isAutoReply(mail: ParsedMail): boolean {
  const auto = String(mail.headers.get('auto-submitted') ?? '')
    .trim()
    .toLowerCase();
  if (auto && auto !== 'no' && !auto.startsWith('auto-generated; dsn')) {
    // A DSN may say auto-replied / auto-generated too; only a message that is not a bounce is an auto-reply.
    return true;
  }
  if (
    mail.headers.has('x-autoreply') ||
    mail.headers.has('x-autorespond') ||
    /^auto[_-]?reply$/i.test(String(mail.headers.get('precedence') ?? ''))
  )
    return true;
  return /^(auto(matic)?[ -]?reply|out of (the )?office|vacation|abwesenheit|absence|r[ée]ponse automatique|respuesta autom[áa]tica)\b/i.test(
    (mail.subject ?? '').trim(),
  );
}

/** Wording of a bounce that is not a DSN. */
const PLAIN_BOUNCE =
  /(undeliver|delivery (has )?failed|failure notice|returned mail|mail delivery (failed|system)|could not be delivered|delivery status notification|non-?delivery|permanent error|message not delivered|unable to deliver|rejected|user unknown|no such user|mailbox (is )?(full|unavailable))/i;
const DAEMON = /^(mailer-daemon|postmaster|mail delivery (subsystem|system))/i;

function classifyText(text: string): { status: string | null; code: number | null; class: BounceClass | null } {
  const status = enhancedStatus(text);
  // The first reply code of a "550 …" line, or of "said: 550 …" / "host … said: 550".
  const line = text
    .split(/\r?\n/)
    .map((l) => l.replace(/^.*?(said|replied|response|error|returned)\s*:?\s*/i, ''))
    .find((l) => replyCode(l) !== null);
  const code = line
    ? replyCode(line)
    : /\b([45]\d\d)[ -]/.exec(text)
      ? Number(/\b([45]\d\d)[ -]/.exec(text)![1])
      : null;
  return { status, code, class: status || code ? classify({ code, status, text }) : null };
}

export async function parseInbound(raw: Buffer): Promise<InboundReport> {
  let mail: ParsedMail;
  try {
    mail = await mailparser().simpleParser(raw, {
      skipHtmlToText: true,
      skipTextToHtml: true,
      skipTextLinks: true,
      skipImageLinks: true,
    });
  } catch (err) {
    return { kind: 'unclassified', reason: `not a readable message: ${(err as Error).message}`, subject: '' };
  }
  const subject = mail.subject ?? '';
  const type = reportType(mail);
  const text = mail.text ?? '';

  if (type === 'feedback-report') {
    const part = partOf(mail, /^message\/feedback-report/i);
    const fields = part
      ? (parseFieldGroups(part.content.toString('utf8'))[0] ?? new Map<string, string>())
      : new Map<string, string>();
    return {
      kind: 'complaint',
      feedbackType: (fields.get('feedback-type') ?? 'abuse').toLowerCase(),
      recipient: addressOf(fields.get('original-rcpt-to')),
      originalMessageId: originalMessageId(mail.attachments, text),
      originalSenders: originalSenders(mail.attachments, text, fields),
      subject,
    };
  }

  if (type === 'delivery-status') {
    const part = partOf(mail, /^message\/(global-)?delivery-status/i);
    if (part) {
      const groups = parseFieldGroups(part.content.toString('utf8'));
      const results: RecipientResult[] = groups
        .slice(1)
        .filter((g) => g.has('action') || g.has('status'))
        .map((g) => {
          const action = (g.get('action') ?? 'failed').toLowerCase();
          const status = /^[245]\.\d{1,3}\.\d{1,3}/.exec(g.get('status') ?? '')?.[0] ?? null;
          const diagnostic = g.get('diagnostic-code')?.replace(/^smtp;\s*/i, '') ?? '';
          const code = replyCode(diagnostic);
          // delayed (or a 4.x.x) is a soft bounce; a failed recipient is classified by its status and reply.
          const cls: BounceClass | null =
            action === 'delayed'
              ? 'soft'
              : action === 'failed'
                ? (classify({ code, status, text: diagnostic }) ?? 'failed')
                : null;
          return {
            recipient: addressOf(g.get('final-recipient') ?? g.get('original-recipient')),
            action,
            status,
            diagnostic,
            class: cls,
          };
        });
      if (results.length)
        return {
          kind: 'bounce',
          format: 'dsn',
          results,
          originalMessageId: originalMessageId(mail.attachments, text),
          originalSenders: originalSenders(mail.attachments, text),
          subject,
        };
    }
  }

  // A mail system's notice is a bounce even when it says Auto-Submitted (Exim's does); a person's is an auto-reply.
  const from = mail.from?.value[0];
  const fromDaemon = DAEMON.test(from?.address ?? '') || DAEMON.test(from?.name ?? '');
  const autoReply = isAutoReply(mail);
  if (type === 'delivery-status' || fromDaemon || (!autoReply && PLAIN_BOUNCE.test(subject))) {
    const found = classifyText(text);
    if (found.class) {
      const recipient =
        /(?:^|[\s<:])([a-z0-9._%+'-]+@[a-z0-9.-]+\.[a-z]{2,})/i
          .exec(text.replace(/\b(bounces|unsubscribe)\+[^\s@]+@\S+/gi, ''))?.[1]
          ?.toLowerCase() ?? null;
      return {
        kind: 'bounce',
        format: 'plain',
        subject,
        originalMessageId: originalMessageId(mail.attachments, text),
        originalSenders: originalSenders(mail.attachments, text),
        results: [
          {
            recipient,
            action: 'failed',
            status: found.status,
            diagnostic: text.trim().slice(0, 500),
            class: found.class,
          },
        ],
      };
    }
    if (!autoReply)
      return { kind: 'unclassified', reason: 'a bounce without a status or reply code that could be read', subject };
  }
  if (autoReply) return { kind: 'auto_reply', subject };
  return {
    kind: 'unclassified',
    reason: 'neither a delivery status notification, a feedback report, a bounce nor an auto-reply',
    subject,
  };
}
