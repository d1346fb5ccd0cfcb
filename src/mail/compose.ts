import { compile } from 'html-to-text';
import { escapeHtml } from '../forms/forms.html.js';

export interface DkimKey {
  domainName: string;
  keySelector: string;
  privateKey: string;
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
}

/** The headers DKIM signs: at least those Gmail and RFC 8058 care about. */
export const DKIM_SIGNED_HEADERS = 'From:To:Subject:Date:Message-ID:Reply-To:List-Unsubscribe:List-Unsubscribe-Post:MIME-Version:Content-Type';

const PREHEADER_STYLE = 'display:none;font-size:1px;line-height:1px;max-height:0;max-width:0;opacity:0;overflow:hidden;mso-hide:all';

/** The preview text as the hidden preheader at the start of the body. */
export function withPreheader(html: string, previewText: string | null): string {
  if (!previewText) return html;
  const div = `<div style="${PREHEADER_STYLE}">${escapeHtml(previewText)}</div>`;
  return /<body[^>]*>/i.test(html) ? html.replace(/<body[^>]*>/i, (m) => `${m}${div}`) : `${div}${html}`;
}

/** An unsubscribe footer, unless the template placed `unsubscribe_url` itself. */
export function withUnsubscribeFooter(html: string, templateSource: string, url: string): string {
  if (templateSource.includes('unsubscribe_url')) return html;
  const footer = `<p style="font-size:12px;color:#666666;margin-top:24px">You receive this email because you subscribed. <a href="${escapeHtml(url)}">Unsubscribe</a></p>`;
  return /<\/body>/i.test(html) ? html.replace(/<\/body>/i, `${footer}</body>`) : `${html}${footer}`;
}

export function textWithUnsubscribe(text: string, templateSource: string | null, url: string): string {
  if (templateSource?.includes('unsubscribe_url')) return text;
  return `${text.trimEnd()}\n\n--\nUnsubscribe: ${url}\n`;
}

/**
 * The converter, compiled once: html-to-text's `convert` compiles its options (selectors into a decision
 * tree) on every call, which cost more than the conversion itself (and ~10% of the CPU of a send).
 */
const convertHtml = compile({ wordwrap: 78, selectors: [{ selector: 'img', format: 'skip' }, { selector: 'a', options: { hideLinkHrefIfSameAsText: true } }] });

/** A plain-text part from the HTML, for a broadcast that has no text of its own. */
export function htmlToText(html: string): string {
  return convertHtml(html);
}
