import { NO_SUCH_USER, type BounceClass } from '../../mail/classify.js';

/**
 * What a bounce says when it gives no status code we can trust (docs/bounces.md, "Bounces without a status code"):
 * the wording of the major receivers and mail servers, one row each, first match wins, in the manner of listmonk's
 * keyword rules. A row is only ever tried on a message already known to be a bounce (a DSN, or mail from a mail
 * system), and on its human-readable part only: the returned copy of our own message is cut off first
 * (`notificationText`), so that a newsletter that says "blocked" or "mailbox full" never classifies its own bounce.
 *
 * It is used when a report has no enhanced status code, or only a generic one (5.0.0, 5.5.0), and before the bare
 * reply code: `554 delivery error: dd This user doesn't have a yahoo.com account` is a hard bounce, not "any other
 * 5xx". A specific status (5.1.1, 5.7.1, 4.x.x) always wins over the words around it.
 */
export interface PhraseRow {
  /** Whose wording it is: a receiver (Gmail, Outlook, Yahoo, iCloud), an MTA (Postfix, Exim, qmail, Sendmail) or `any`. */
  receiver: string;
  /** What it recognises, for the report's detail, the docs and the corpus test. */
  label: string;
  pattern: RegExp;
  class: BounceClass;
}

export const PHRASES: readonly PhraseRow[] = [
  // --- Gmail (mailer-daemon@googlemail.com) -------------------------------------------------------------------------
  {
    receiver: 'Gmail',
    label: 'the account is over quota / out of storage',
    pattern: /email account that you tried to reach is over quota|inbox is out of storage space|out of storage space/i,
    class: 'soft',
  },
  {
    receiver: 'Gmail',
    label: 'receiving mail at a rate that prevents additional messages',
    pattern: /receiving mail at a rate that\s+prevents additional messages|receiving mail too quickly/i,
    class: 'soft',
  },
  {
    receiver: 'Gmail',
    label: 'the recipient server did not accept our requests to connect (given up)',
    pattern: /recipient server did not accept our requests to connect/i,
    class: 'soft',
  },
  {
    receiver: 'Gmail',
    label: 'the account does not exist / is disabled',
    pattern:
      /email account that you tried to reach (does not exist|is disabled)|address couldn't be found, or is unable to receive mail|\*\* Address not found \*\*/i,
    class: 'hard',
  },
  {
    receiver: 'Gmail',
    label: 'unsolicited, unauthenticated or low reputation',
    pattern:
      /likely unsolicited mail|low reputation of the sending (domain|IP)|does not have authentication information|fails to pass authentication checks|message is likely suspicious|DMARC policy of the sender|has been blocked\. For more information/i,
    class: 'blocked',
  },
  {
    receiver: 'Gmail',
    label: "exceeded Google's message size limits",
    pattern: /exceeded Google's message size limits|message exceeded .* size limit/i,
    class: 'failed',
  },
  // --- Outlook.com, Microsoft 365 and Exchange NDRs ------------------------------------------------------------------
  {
    receiver: 'Outlook',
    label: "the recipient's mailbox is full",
    pattern:
      /recipient's mailbox is full|mailbox is full and can't accept messages|QuotaExceeded|Mailbox size limit exceeded/i,
    class: 'soft',
  },
  {
    receiver: 'Outlook',
    label: "the address couldn't be found / RecipientNotFound",
    pattern:
      /e-?mail address you entered couldn't be found|wasn't found at [a-z0-9.-]+|RecipientNotFound|Recipient not found by SMTP address lookup|recipient's e-?mail address was not found in the recipient's e-?mail system|mailbox unavailable|does not exist (at|in) the (organization|recipient's)/i,
    class: 'hard',
  },
  {
    receiver: 'Outlook',
    label: 'block list, banned sender or not authorized',
    pattern:
      /on our block list|banned sender|part of their network is on our block list|\(S3\d{3}\)|hasn't been authorized to send|not authorized to send|message was blocked|Access denied, [a-z ]*(sender|spam|reputation)/i,
    class: 'blocked',
  },
  // --- Yahoo and AOL -------------------------------------------------------------------------------------------------
  {
    receiver: 'Yahoo',
    label: "this user doesn't have an account / mailbox disabled (554.30)",
    pattern:
      /This user doesn't have an? [a-z0-9.]+ account|mailbox is disabled \(554\.30\)|This (account|mailbox) (has been disabled|is disabled|does not exist)/i,
    class: 'hard',
  },
  {
    receiver: 'Yahoo',
    label: 'temporarily deferred due to volume or complaints ([TSS0x])',
    pattern: /temporarily deferred due to (unexpected volume|user complaints)|\[TSS0\d\]/i,
    class: 'soft',
  },
  {
    receiver: 'Yahoo',
    label: 'not accepted for policy reasons ([PH01])',
    pattern: /not accepted for policy reasons|\[PH0\d\]|postmaster\.yahooinc\.com\/error-codes/i,
    class: 'blocked',
  },
  // --- iCloud (me.com, mac.com) --------------------------------------------------------------------------------------
  {
    receiver: 'iCloud',
    label: 'user does not exist / unknown or illegal alias',
    pattern: /user (does not|doesn't) exist|unknown or illegal alias/i,
    class: 'hard',
  },
  {
    receiver: 'iCloud',
    label: 'rejected due to local policy ([CS01], [HM08])',
    pattern: /\[(CS0\d|HM0\d|MM0\d)\]|rejected due to local policy/i,
    class: 'blocked',
  },
  // --- Postfix -------------------------------------------------------------------------------------------------------
  {
    receiver: 'Postfix',
    label: 'user unknown in a recipient table / host or domain not found',
    pattern:
      /User unknown in (local recipient|virtual (alias|mailbox)|relay recipient) table|Host or domain name not found|Name service error for name=\S+ type=(MX|A|AAAA): Host not found/i,
    class: 'hard',
  },
  {
    receiver: 'Postfix',
    label: 'client host or sender rejected, blocked using a list',
    pattern: /Client host rejected|Sender address rejected|blocked using [a-z0-9.-]+/i,
    class: 'blocked',
  },
  // --- Exim ----------------------------------------------------------------------------------------------------------
  {
    receiver: 'Exim',
    label: 'retry timeout exceeded (given up after temporary failures)',
    pattern:
      /retry timeout exceeded|retry time not reached for any host after a long failure period|all hosts have been failing for a long time/i,
    class: 'soft',
  },
  {
    receiver: 'Exim',
    label: 'unrouteable address / no such user here',
    pattern:
      /Unrouteable address|No Such User Here|Unknown local part|all relevant MX records point to non-existent hosts/i,
    class: 'hard',
  },
  // --- qmail ---------------------------------------------------------------------------------------------------------
  {
    receiver: 'qmail',
    label: 'in the queue too long (given up after temporary failures)',
    pattern: /I'm not going to try again; this message has been in the queue too long/i,
    class: 'soft',
  },
  {
    receiver: 'qmail',
    label: "no mailbox here by that name / couldn't find any host named",
    pattern: /no mailbox here by that name|couldn't find any host named|This address no longer accepts mail/i,
    class: 'hard',
  },
  // --- Sendmail ------------------------------------------------------------------------------------------------------
  {
    receiver: 'Sendmail',
    label: 'cannot send message for N days (given up after temporary failures)',
    pattern: /Cannot send message for \d+ days?|could not be delivered for \d+ days?/i,
    class: 'soft',
  },
  {
    receiver: 'Sendmail',
    label: '... User unknown / Host unknown',
    pattern: /\.\.\. User unknown|Host unknown \(Name server: [^)]*host not found\)/i,
    class: 'hard',
  },
  // --- Anyone's: the generic wording, after every receiver's own ------------------------------------------------------
  {
    receiver: 'any',
    label: 'mailbox full, over quota',
    pattern:
      /mailbox (is )?full|over ?quota|quota (has been )?exceeded|exceeded (its|the) storage|insufficient (system )?storage|mailbox has exceeded/i,
    class: 'soft',
  },
  { receiver: 'any', label: 'no such user or mailbox', pattern: NO_SUCH_USER, class: 'hard' },
  {
    receiver: 'any',
    label: 'the domain does not exist',
    pattern:
      /domain (name )?(not found|does not exist|doesn't exist)|no such domain|unknown (host|domain)|NXDOMAIN|couldn't find any host/i,
    class: 'hard',
  },
  {
    receiver: 'any',
    label: 'spam, block list, reputation, policy, authentication',
    pattern:
      /\bspam\b|black ?list|block ?list|blocked|listed (on|at|in) |reputation|policy|not authori[sz]ed|access denied|\bSPF\b|\bDKIM\b|\bDMARC\b|unauthenticated|banned|relay(ing)? (access )?denied|sender (address )?(rejected|refused|denied)/i,
    class: 'blocked',
  },
  {
    receiver: 'any',
    label: 'temporary failure, given up later',
    pattern:
      /temporar(il)?y (unavailable|deferred|rejected|failure|problem)|try again later|greylist|too many (connections|messages)|connection (timed out|refused)|timed out|message expired|in the queue too long|delivery failed \d+ attempts/i,
    class: 'soft',
  },
  {
    receiver: 'any',
    label: 'too large, mail loop',
    pattern:
      /message (is )?too (large|big)|size (limit )?exceed|exceeds? (the )?(maximum|size)|mail loop|too many hops|loop detected/i,
    class: 'failed',
  },
];

/** The first row whose words are in `text`, or null. */
export function phraseClass(text: string): PhraseRow | null {
  if (!text) return null;
  return PHRASES.find((row) => row.pattern.test(text)) ?? null;
}

/**
 * Notices that a message is only late (RFC 3464 `Action: delayed` in words): the server is still trying, and says
 * so. A delay is not a bounce (docs/bounces.md): it counts towards nothing.
 */
export const DELAY_NOTICE =
  /warning (message )?only|you do not need to resend|no action is required on your part|delivery (to the following recipients )?has been delayed|delivery (is )?delayed|still being retried|will (continue to|keep) try(ing)?|has not yet been delivered|not been delivered yet|could not (send|deliver) message for past \d+ hours?|delivery attempts will continue|message delayed|delayed mail|\(Delay\)/i;

/** Subjects of delay notices (Gmail's "(Delay)", Postfix's "Delayed Mail", Exim's and Sendmail's "Warning: …"). */
export const DELAY_SUBJECT =
  /^(delivery status notification \(delay\)|delayed mail|delivery delayed|warning: (message .* delayed|could not send message)|message delivery delayed|delivery notification: delivery has been delayed)/i;

/**
 * Where the notification a mail system wrote ends and the copy of the returned message begins (qmail's "Below this
 * line is a copy of the message", Exim's "This is a copy of the message", Sendmail's "Original message follows",
 * Exchange's "Original message headers:", a forwarded header block): everything from there on is ours, not theirs.
 */
const RETURNED_COPY =
  /^(\s*-{2,}\s*(Below this line is a copy of the message|This is a copy of the message|Original message|The original message|Undelivered message|Returned message|Forwarded message|Message headers follow|Headers of the original)|\s*Original message headers:|(Return-Path|Received|DKIM-Signature|ARC-Seal|X-Original-To):\s)/im;

/** The mail system's own words: the text up to the returned copy of the original message. */
export function notificationText(text: string): string {
  const m = RETURNED_COPY.exec(text);
  return (m ? text.slice(0, m.index) : text).slice(0, 20_000);
}
