import type { compile } from 'html-to-text';
import { lazyRequire } from '../lib/lazy.js';

const htmlToTextModule = lazyRequire<{ compile: typeof compile }>('html-to-text');

export interface DkimKey {
  domainName: string;
  keySelector: string;
  privateKey: string;
  /** Headers left out of the signature because the relay rewrites them (relay-profiles.ts). */
  unsigned?: readonly string[];
}

/** A mailbox handed to the transport as a structure, never as text it would parse again. */
export interface Address {
  name: string | null;
  /** A canonical address (lib/email.ts): a dot-atom local part, an ASCII domain. */
  address: string;
}

/** One message, ready for the transport. */
export interface OutgoingMessage {
  from: Address;
  /** The one recipient: a canonical address, the RCPT TO of the envelope and the To header. */
  to: string;
  replyTo: Address | null;
  /** The envelope sender (MAIL FROM), where bounces go. */
  returnPath: string;
  subject: string;
  html: string | null;
  text: string;
  messageId: string;
  headers: Record<string, string>;
  dkim: DkimKey | null;
  /** A transactional email (docs/emails.md): the To header's addresses (else `to`), the Cc header's. */
  toHeader?: readonly Address[];
  cc?: readonly Address[];
  /** A caller's headers, encoded as any value (RFC 2047 where needed); checked before they get here. */
  customHeaders?: Record<string, string>;
  /** Attached files: the message becomes multipart/mixed, filenames encoded per RFC 2231 by nodemailer's encoder. */
  attachments?: readonly { filename: string; contentType: string; content: Uint8Array }[];
}

/**
 * The converter, compiled once: html-to-text's `convert` compiles its options (selectors into a decision
 * tree) on every call, which cost more than the conversion itself (and ~10% of the CPU of a send).
 */
let convertHtml: ((html: string) => string) | undefined;
const converter = () =>
  (convertHtml ??= htmlToTextModule().compile({
    wordwrap: 78,
    // An image says what its alt text says (nothing without one); a link shows its address unless its text is it.
    formatters: {
      altText: (elem, _walk, builder) => {
        const alt = (elem.attribs as Record<string, string | undefined>).alt?.trim();
        if (alt) builder.addInline(alt);
      },
    },
    selectors: [
      { selector: 'img', format: 'altText' },
      { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
      { selector: 'div[style*="display:none"]', format: 'skip' },
    ],
  }));

/** A plain-text part from the HTML, for a broadcast that has no text of its own. */
export function htmlToText(html: string): string {
  return converter()(html);
}
