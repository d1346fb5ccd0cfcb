import type * as Mailparser from 'mailparser';
import type { ParsedMail } from 'mailparser';
import { lazyRequire } from '../../lib/lazy.js';
import { classify, enhancedStatus, replyCode, type BounceClass } from '../../mail/classify.js';
import { leafText, mimeLeaves, type MimeLeaf } from './bounces.mime.js';
import { DELAY_NOTICE, DELAY_SUBJECT, notificationText, phraseClass } from './bounces.phrases.js';

// The MIME parser and its charset tables load with the first report parsed, not at start (lib/lazy.ts).
const mailparser = lazyRequire<typeof Mailparser>('mailparser');

/**
 * Reading what arrives at a bounce address (docs/bounces.md): MIME by mailparser, keeping the
 * `message/delivery-status` part as a part of its own (`keepDeliveryStatus`; without it mailparser folds it into the
 * text and no field of it is ever read), then one of
 * - a DSN (RFC 3464 and 6533, a `message/(global-)delivery-status` part): one result per recipient from its
 *   `Final-Recipient`, `Action`, `Status` and `Diagnostic-Code`, classified by the table in mail/classify.ts, or by
 *   the receivers' wording (bounces.phrases.ts) when the status is missing or generic (5.0.0);
 * - a delay (every recipient `Action: delayed`, or a "warning only, you do not need to resend" notice): not a
 *   bounce, it changes nothing;
 * - an ARF report (RFC 5965, a `message/feedback-report` part): a complaint, with the original message's headers (and
 *   Microsoft's older, pre-ARF complaint: "complaint about message from …" with the message attached);
 * - a bounce that is not a DSN (older servers' plain text, Exchange's and Gmail's notices without a report part):
 *   classified from its status codes, else from its words, else kept as unclassified;
 * - an auto-reply (RFC 3834 `Auto-Submitted`, vacation and out-of-office notices, challenge-response systems):
 *   ignored; a mail system's notice is never one, whatever its headers say;
 * - anything else: unclassified (kept and listed by GET /v1/inbound).
 */
export type InboundReport =
  | {
      kind: 'bounce';
      format: 'dsn' | 'plain';
      results: RecipientResult[];
      originalMessageId: string | null;
      originalSenders: string[];
      /** The header block of the original message the report returns (for its DKIM signature), if it has one. */
      originalHeaders: string | null;
      subject: string;
    }
  | {
      kind: 'complaint';
      feedbackType: string;
      recipient: string | null;
      originalMessageId: string | null;
      originalSenders: string[];
      originalHeaders: string | null;
      subject: string;
    }
  | { kind: 'delay'; format: 'dsn' | 'plain'; recipients: string[]; subject: string }
  | { kind: 'auto_reply'; subject: string; why: string }
  | { kind: 'unclassified'; reason: string; subject: string };

export interface RecipientResult {
  recipient: string | null;
  /** failed, delayed, delivered, relayed, expanded (RFC 3464); plain bounces are `failed`. */
  action: string;
  status: string | null;
  diagnostic: string;
  class: BounceClass | null;
  /** What decided the class: `status 5.1.1`, `reply 550`, or a row of bounces.phrases.ts (`Gmail: …`). */
  rule: string | null;
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

const ORIGINAL_PART = /^(message\/(rfc822|global)|text\/rfc822-headers|message\/(rfc822|global)-headers)$/;
const MESSAGE_ID = /^\s*message-id\s*:\s*(<[^>\s]+>)/im;

/** The header block of the original message a report returns (message/rfc822 or text/rfc822-headers), CRLF ends. */
function originalHeaderBlock(leaves: MimeLeaf[]): string | null {
  for (const p of leaves) {
    if (!ORIGINAL_PART.test(p.type)) continue;
    const text = p.body
      .toString('utf8')
      .replace(/\r?\n/g, '\r\n')
      .replace(/^(\r\n)+/, '');
    const end = text.indexOf('\r\n\r\n');
    const block = (end === -1 ? text : text.slice(0, end + 2)).slice(0, 64 * 1024);
    if (/^[!-9;-~]+:/.test(block)) return block;
  }
  return null;
}

/** The Message-ID of the original message a report carries (its headers, or quoted in the text). */
function originalMessageId(headers: string | null, text: string, extra?: string): string | null {
  const m = (headers && MESSAGE_ID.exec(headers)) || MESSAGE_ID.exec(text);
  if (m) return m[1]!;
  const x = extra ? /<[^>\s]+>/.exec(extra) : null;
  return x ? x[0] : null;
}

const RETURN_PATH = /^\s*return-path\s*:\s*<?([^<>\s]*)>?/gim;

/**
 * The envelope senders the original message inside a report had: its Return-Path (in the returned message or
 * headers, or quoted in a plain bounce's text) and, in an ARF report, `Original-Mail-From`. These carry the signed
 * VERP token of the message the report is really about (bounces.proof.ts).
 */
function originalSenders(headers: string | null, text: string, arfFields?: Map<string, string>): string[] {
  const found = new Set<string>();
  const scan = (s: string) => {
    for (const m of s.matchAll(RETURN_PATH)) if (m[1]) found.add(m[1].toLowerCase());
  };
  if (headers) scan(headers);
  scan(text);
  const from = addressOf(arfFields?.get('original-mail-from'));
  if (from) found.add(from);
  return [...found].slice(0, 20);
}

/** The `report-type` of a `multipart/report` message, or null. */
const reportType = (mail: ParsedMail): string | null => {
  const ct = mail.headers.get('content-type') as { value?: string; params?: Record<string, string> } | undefined;
  if (!ct?.value || ct.value.toLowerCase() !== 'multipart/report') return null;
  return (ct.params?.['report-type'] ?? '').toLowerCase() || null;
};

const partOf = (leaves: MimeLeaf[], type: RegExp) => leaves.find((l) => type.test(l.type));

/**
 * The words of the report's sender: its first text part (a DSN's and an ARF's "human-readable" part, RFC 3462), or the
 * first HTML part without its tags; never the returned message, which is a part of its own (bounces.mime.ts).
 */
function noticeOf(leaves: MimeLeaf[], fallback: string): string {
  const text = leaves.find((l) => l.type === 'text/plain');
  if (text) return leafText(text);
  const html = leaves.find((l) => l.type === 'text/html');
  if (html)
    return leafText(html)
      .replace(/<(style|script)[^]*?<\/\1>/gi, ' ')
      .replace(/<br\s*\/?>|<\/(p|div|tr|li|h\d)>/gi, '\n')
      .replace(/<[^>]*>/g, ' ')
      .replace(/&nbsp;/g, ' ')
      .replace(/&amp;/g, '&')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&#39;|&apos;/g, "'")
      .replace(/&quot;/g, '"');
  return fallback;
}

const header = (mail: ParsedMail, name: string) =>
  String(mail.headers.get(name) ?? '')
    .trim()
    .toLowerCase();

/**
 * Challenge-response systems (SpamArrest, Boxbe, Mailinblack, TMDA, …) that hold a message until its sender proves
 * to be a person: a notice to the sender, never a bounce, and never to be answered.
 */
const CHALLENGE =
  /sender verification|verify (that )?you are (a )?(human|real|person)|confirm(ation)? (is )?required|please confirm (that )?(you|your)|challenge[- ]response|spam ?arrest|boxbe|mailinblack|awaiting (your )?(verification|confirmation)|pending (your )?(approval|verification)|requires? (your )?(verification|confirmation)|message en attente|approved senders? list|guest list/i;

/** Vacation and out-of-office subjects, in the languages a list is likely to meet. */
const AUTO_SUBJECT =
  /^(auto(matic)?[ -]?(reply|response|answer)|autosvar|automatische antwort|automatisch antwoord|risposta automatica|resposta autom[áa]tica|r[ée]ponse automatique|respuesta autom[áa]tica|out of (the )?office|ooo\b|vacation|abwesenheit|absence|away from|on leave|i am out|i'm out)/i;

/** Why a message is an auto-reply (RFC 3834 and the usual vacation and challenge notices), or null. */
function autoReplyOf(mail: ParsedMail): string | null {
  const auto = header(mail, 'auto-submitted');
  const subject = (mail.subject ?? '').trim().replace(/^(re|aw|fw|fwd|sv|antw):\s*/i, '');
  if (
    CHALLENGE.test(subject) ||
    mail.headers.has('x-boxbe-pending') ||
    mail.headers.has('x-spamarrest-challenge') ||
    mail.headers.has('x-tmda-confirm') ||
    /challenge/.test(header(mail, 'x-autoreply-type'))
  )
    return 'a challenge-response request (never answered)';
  if (auto && auto !== 'no') return `an auto-reply (Auto-Submitted: ${auto})`;
  if (
    mail.headers.has('x-autoreply') ||
    mail.headers.has('x-autorespond') ||
    mail.headers.has('x-auto-response-suppress')
  )
    return 'an auto-reply (X-Autoreply)';
  if (/^auto[_-]?reply$/i.test(header(mail, 'precedence'))) return 'an auto-reply (Precedence: auto_reply)';
  if (AUTO_SUBJECT.test(subject)) return 'an auto-reply (its subject)';
  return null;
}

/** Wording of a bounce's subject that is not a DSN. */
const BOUNCE_SUBJECT =
  /(undeliver|delivery (has )?failed|failure notice|returned mail|mail delivery (failed|system)|could not be delivered|delivery status notification|non-?delivery|permanent error|message not delivered|unable to deliver|rejected|user unknown|no such user|mailbox (is )?(full|unavailable)|delivery failure|address not found|nicht zustellbar|non remis|no se puede entregar)/i;
const DAEMON =
  /^(mailer-daemon|postmaster|mail delivery (subsystem|system|service)|microsoftexchange[0-9a-f]*|microsoft outlook|mail administrator|internet mail delivery)/i;

/** Whether a message that is not a DSN was written by a mail system about a message it could not deliver. */
function fromMailSystem(mail: ParsedMail): boolean {
  const from = mail.from?.value[0];
  return (
    DAEMON.test(from?.address ?? '') ||
    DAEMON.test(from?.name ?? '') ||
    mail.headers.has('x-ms-exchange-message-is-ndr') ||
    mail.headers.has('x-failed-recipients')
  );
}

/**
 * A status is generic when it says only "permanent failure" (5.0.0), "other" (5.5.0) or "other address status" (5.1.0,
 * which some receivers give for a blocked sender): the words say more.
 */
const GENERIC_STATUS = /^[45]\.[015]\.0$/;

/**
 * The class of a failure: a specific enhanced status decides (5.1.1, 5.7.1, any 4.x.x); otherwise the receiver's
 * words (bounces.phrases.ts) in `texts`, most specific first; otherwise the status or reply code alone.
 */
function classOf(
  status: string | null,
  code: number | null,
  texts: string[],
): { class: BounceClass | null; rule: string | null } {
  const joined = texts.join('\n');
  if (status && (status.startsWith('4.') || !GENERIC_STATUS.test(status)))
    return { class: classify({ code, status, text: joined }), rule: `status ${status}` };
  for (const t of texts) {
    const row = phraseClass(t);
    if (row) return { class: row.class, rule: `${row.receiver === 'any' ? 'words' : row.receiver}: ${row.label}` };
  }
  const cls = status || code ? classify({ code, status, text: joined }) : null;
  return { class: cls, rule: cls ? (status ? `status ${status}` : `reply ${code}`) : null };
}

/** The status and reply code a plain bounce's text carries: `550 5.1.1 …`, `said: 550 …`, `(#5.1.1)`. */
function codesOf(text: string): { status: string | null; code: number | null } {
  const status = enhancedStatus(text);
  const line = text
    .split(/\r?\n/)
    .map((l) => l.replace(/^.*?(said|replied|response|error|returned|reason)\s*:?\s*'?/i, ''))
    .find((l) => replyCode(l) !== null);
  const loose = /(?<![\d.])([45]\d\d)[ -](?![\d.])/.exec(text);
  return { status, code: line ? replyCode(line) : loose ? Number(loose[1]) : null };
}

/** The address a plain bounce is about: the first one in the notice that is neither ours nor the mail system's. */
function recipientOf(notice: string, mail: ParsedMail): string | null {
  const skip = new Set(
    [
      ...(mail.from?.value ?? []),
      ...(Array.isArray(mail.to) ? mail.to : mail.to ? [mail.to] : []).flatMap((t) => t.value),
    ]
      .map((a) => a.address?.toLowerCase())
      .filter(Boolean),
  );
  for (const m of notice.matchAll(/(?:^|[\s<:;(['"])([a-z0-9._%+'-]+@[a-z0-9.-]+\.[a-z]{2,})/gi)) {
    const a = m[1]!.toLowerCase();
    if (skip.has(a) || /^(bounces|unsubscribe)\+/.test(a) || DAEMON.test(a)) continue;
    return a;
  }
  return null;
}

export async function parseInbound(raw: Buffer): Promise<InboundReport> {
  let mail: ParsedMail;
  try {
    mail = await mailparser().simpleParser(raw, {
      skipHtmlToText: true,
      skipTextToHtml: true,
      skipTextLinks: true,
      skipImageLinks: true,
      keepDeliveryStatus: true,
    });
  } catch (err) {
    return { kind: 'unclassified', reason: `not a readable message: ${(err as Error).message}`, subject: '' };
  }
  const subject = mail.subject ?? '';
  const leaves = mimeLeaves(raw);
  // The report's own words: never the returned message (mailparser would mix an inline one into its text).
  const text = noticeOf(leaves, mail.text ?? '');
  const originalHeaders = originalHeaderBlock(leaves);

  const feedback = partOf(leaves, /^message\/feedback-report$/);
  if (feedback) {
    const fields = parseFieldGroups(leafText(feedback))[0] ?? new Map<string, string>();
    const feedbackType = (fields.get('feedback-type') ?? 'abuse').toLowerCase();
    // RFC 5965/6591: an authentication-failure report (DMARC's ruf) or a "not spam" report is no complaint.
    if (feedbackType === 'auth-failure' || feedbackType === 'not-spam')
      return {
        kind: 'unclassified',
        reason: `a feedback report of type ${feedbackType}, which is not a complaint: kept for review`,
        subject,
      };
    return {
      kind: 'complaint',
      feedbackType,
      recipient: addressOf(fields.get('original-rcpt-to')),
      originalMessageId: originalMessageId(originalHeaders, text),
      originalSenders: originalSenders(originalHeaders, text, fields),
      originalHeaders,
      subject,
    };
  }

  // Microsoft's older complaint loop (Hotmail's JMRP before ARF): "complaint about message from <IP>", from
  // staff@hotmail.com, the complained-about message attached as message/rfc822 and no feedback-report part.
  const reporter = mail.from?.value[0]?.address?.toLowerCase() ?? '';
  if (
    /^\s*complaint about message from /i.test(subject) &&
    /@(hotmail|outlook|live|msn)\.com$/.test(reporter) &&
    originalHeaders
  )
    return {
      kind: 'complaint',
      feedbackType: 'abuse',
      recipient: addressOf(/^x-hmxmroriginalrecipient\s*:\s*(.+)$/im.exec(originalHeaders)?.[1]),
      originalMessageId: originalMessageId(originalHeaders, text),
      originalSenders: originalSenders(originalHeaders, text),
      originalHeaders,
      subject,
    };

  const notice = notificationText(text);
  const dsn = partOf(leaves, /^message\/(global-)?delivery-status$/);
  if (dsn) {
    const [perMessage, ...groups] = parseFieldGroups(leafText(dsn));
    const recipients = groups.filter((g) => g.has('action') || g.has('status') || g.has('final-recipient'));
    const results: RecipientResult[] = recipients.map((g) => {
      const reported = /^[245]\.\d{1,3}\.\d{1,3}/.exec(g.get('status') ?? '')?.[0] ?? null;
      // RFC 3464 makes Action required; a DSN without one is read by its status.
      const action = (g.get('action') ?? (reported?.startsWith('5.') ? 'failed' : 'unknown')).toLowerCase();
      const diagnostic = g.get('diagnostic-code')?.replace(/^(smtp|x-[a-z-]+)\s*;\s*/i, '') ?? '';
      // The remote server's own reply outranks the reporting MTA's summary of it when the two disagree
      // (`Status: 5.1.1` over `550 5.7.1 IP address blacklisted`): its status is the one read.
      const replied = enhancedStatus(diagnostic);
      const status =
        replied && reported && replied !== reported && replied[0] === reported[0] && !GENERIC_STATUS.test(replied)
          ? replied
          : reported;
      const recipient = addressOf(g.get('final-recipient') ?? g.get('original-recipient'));
      if (action !== 'failed') return { recipient, action, status, diagnostic, class: null, rule: null };
      const found = classOf(status, replyCode(diagnostic), [diagnostic, notice]);
      return { recipient, action, status, diagnostic, class: found.class ?? 'failed', rule: found.rule ?? 'failed' };
    });
    const failed = results.filter((r) => r.action === 'failed');
    const headers = originalHeaders;
    if (failed.length)
      return {
        kind: 'bounce',
        format: 'dsn',
        results: failed,
        originalMessageId: originalMessageId(headers, text, perMessage?.get('x-original-message-id')),
        originalSenders: originalSenders(headers, text),
        originalHeaders: headers,
        subject,
      };
    if (results.some((r) => r.action === 'delayed'))
      return {
        kind: 'delay',
        format: 'dsn',
        recipients: results.map((r) => r.recipient).filter((r): r is string => r !== null),
        subject,
      };
    if (results.length)
      return {
        kind: 'auto_reply',
        subject,
        why: `a delivery notice (Action: ${[...new Set(results.map((r) => r.action))].join(', ')}), not a failure`,
      };
    // A report part without a recipient: read as a plain bounce below.
  }

  // A mail system's notice is a bounce (or a delay) even when it says Auto-Submitted (Exim's and Gmail's do); a
  // person's, or a challenge-response system's, is an auto-reply.
  const auto = autoReplyOf(mail);
  const challenge = auto?.startsWith('a challenge') ?? false;
  const bounceLike =
    !challenge &&
    (Boolean(dsn) ||
      reportType(mail) === 'delivery-status' ||
      fromMailSystem(mail) ||
      (!auto && BOUNCE_SUBJECT.test(subject)));
  if (bounceLike) {
    const recipient = recipientOf(notice, mail);
    if (DELAY_SUBJECT.test(subject.trim()) || DELAY_NOTICE.test(notice))
      return { kind: 'delay', format: 'plain', recipients: recipient ? [recipient] : [], subject };
    const { status, code } = codesOf(notice);
    const found = classOf(status, code, [notice]);
    if (found.class)
      return {
        kind: 'bounce',
        format: 'plain',
        subject,
        originalMessageId: originalMessageId(originalHeaders, text),
        originalSenders: originalSenders(originalHeaders, text),
        originalHeaders,
        results: [
          {
            recipient,
            action: 'failed',
            status,
            diagnostic: notice.trim().replace(/\s+/g, ' ').slice(0, 500),
            class: found.class,
            rule: found.rule,
          },
        ],
      };
    return {
      kind: 'unclassified',
      reason: 'a bounce whose status, reply code and wording could not be read: kept for review',
      subject,
    };
  }
  if (auto) return { kind: 'auto_reply', subject, why: auto };
  return {
    kind: 'unclassified',
    reason: 'neither a delivery status notification, a feedback report, a bounce nor an auto-reply',
    subject,
  };
}

/** A message's subject and attachments, for the DMARC reports mailed to `dmarc@` (mail-setup/dmarc reads them). */
export async function attachmentsOf(raw: Buffer): Promise<{
  subject: string;
  attachments: { filename: string | null; contentType: string; content: Buffer }[];
} | null> {
  try {
    const mail = await mailparser().simpleParser(raw, {
      skipHtmlToText: true,
      skipTextToHtml: true,
      skipTextLinks: true,
      skipImageLinks: true,
    });
    return {
      subject: mail.subject ?? '',
      attachments: mail.attachments.slice(0, 20).map((a) => ({
        filename: a.filename ?? null,
        contentType: a.contentType,
        content: a.content,
      })),
    };
  } catch {
    return null;
  }
}
