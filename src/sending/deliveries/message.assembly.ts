import { asDocument, escapeHtml } from '../../lib/html.js';
import { htmlToText } from '../../mail/compose.js';
import { beforeBodyEnd } from '../tracking/tracking.rewrite.js';
import { TEXTS, fill, type Locale } from '../../pages/i18n.js';
import type { RenderedContent } from './message.content.js';

/**
 * A rendered broadcast made into what its recipient gets (docs/bounces.md, "What is sent"): the HTML as a
 * whole document with the preheader and the footer, the text part, and the list headers. The delivery
 * pipeline, test sends and previews all use this, so a preview shows exactly the text part a send carries.
 */
export interface MessageContext {
  unsubscribeUrl: string;
  /** The sender's workspace: its name, its locale and its postal address are in the footer. */
  workspace: { name: string; settings: FooterSettings };
}

/** What the footer takes from the workspace's settings. */
export interface FooterSettings {
  locale: Locale;
  postalAddress: string | null;
}

export interface AssembledContent {
  subject: string;
  html: string | null;
  text: string;
}

/**
 * The preheader: hidden, and padded with zero-width non-joiners and non-breaking spaces so that the inbox
 * preview shows the preview text and not the start of the body after it. No `font-size:1px` (SpamAssassin's
 * FONT_INVIS_MSGID scores tiny text) and no colour tricks: `display:none` and zero size hide it.
 */
const PREHEADER_STYLE = 'display:none;max-height:0;max-width:0;opacity:0;overflow:hidden;mso-hide:all';
const PREHEADER_PADDING = '&zwnj;&nbsp;'.repeat(40);

export function preheader(previewText: string): string {
  return `<div style="${PREHEADER_STYLE}">${escapeHtml(previewText)}${PREHEADER_PADDING}</div>`;
}

export { asDocument };

function insertAfterBodyOpen(html: string, piece: string): string {
  return /<body[^>]*>/i.test(html) ? html.replace(/<body[^>]*>/i, (m) => `${m}${piece}`) : `${piece}${html}`;
}

/**
 * Before the document's (last) `</body>`, found from the end as the open pixel's place is: a search from the start,
 * case-insensitive, read the whole 40 KB of a large email for it.
 */
function insertBeforeBodyClose(html: string, piece: string): string {
  return beforeBodyEnd(html, piece);
}

/**
 * The footer: the unsubscribe line unless the rendered HTML already links the recipient's own unsubscribe
 * URL (a comment naming `unsubscribe_url` does not count), and the workspace's postal address unless the
 * HTML already shows it.
 */
function htmlFooter(html: string, ctx: MessageContext): string {
  const t = TEXTS[ctx.workspace.settings.locale];
  const lines: string[] = [];
  if (!html.includes(escapeHtml(ctx.unsubscribeUrl)) && !html.includes(ctx.unsubscribeUrl)) {
    lines.push(
      `${escapeHtml(fill(t.footerReason, { name: ctx.workspace.name }))} <a href="${escapeHtml(ctx.unsubscribeUrl)}">${escapeHtml(t.unsubscribe)}</a>`,
    );
  }
  const address = ctx.workspace.settings.postalAddress;
  if (address && !showsAddress(html, address)) lines.push(escapeHtml(address).replace(/\r?\n/g, '<br>'));
  if (!lines.length) return '';
  // As wide as the usual 600 px content column and centred under it, with room on small screens (clients that ignore
  // max-width, Outlook's desktop one, show it full width as before).
  return `<div style="max-width:568px;margin:32px auto 0;padding:16px 16px 0;font-family:Arial,Helvetica,sans-serif;font-size:12px;line-height:18px;color:#555555;border-top:1px solid #e5e5e5">${lines.map((l) => `<p style="margin:0 0 8px">${l}</p>`).join('')}</div>`;
}

/**
 * Whether the HTML already shows the postal address, as text or escaped, whatever breaks its lines (`<br>`, `<br />`
 * from Liquid's newline_to_br, the plain line breaks of a block document's footer printing it).
 */
function showsAddress(html: string, address: string): boolean {
  if (html.includes(address)) return true;
  // Per message: the whole page is flattened only when the address's first line is in it at all.
  const first = address.trim().split(/\r?\n/)[0]!.trim();
  if (!html.includes(first) && !html.includes(escapeHtml(first))) return false;
  const flat = (s: string) => s.replace(/<br\s*\/?>/gi, ' ').replace(/\s+/g, ' ');
  const page = flat(html);
  return page.includes(flat(address).trim()) || page.includes(flat(escapeHtml(address)).trim());
}

/** The text part's footer after the signature separator `-- ` (RFC 3676), with what the text lacks. */
function textFooter(text: string, ctx: MessageContext): string {
  const t = TEXTS[ctx.workspace.settings.locale];
  const lines: string[] = [];
  if (!text.includes(ctx.unsubscribeUrl))
    lines.push(fill(t.footerReason, { name: ctx.workspace.name }), `${t.unsubscribe}: ${ctx.unsubscribeUrl}`);
  const address = ctx.workspace.settings.postalAddress;
  if (address && !text.includes(address)) lines.push(address);
  return lines.length ? `\n\n-- \n${lines.join('\n')}\n` : '\n';
}

export function assembleContent(rendered: RenderedContent, ctx: MessageContext): AssembledContent {
  const subject = (rendered.subject ?? '').replace(/[\r\n]+/g, ' ').trim();
  const lang = ctx.workspace.settings.locale;
  let html: string | null = null;
  if (rendered.html != null) {
    html = asDocument(rendered.html, subject, lang);
    if (rendered.previewText) html = insertAfterBodyOpen(html, preheader(rendered.previewText));
    html = insertBeforeBodyClose(html, htmlFooter(rendered.html, ctx));
  }
  // The text part comes from the content itself (the author's text, or the HTML before the footer is added),
  // and gets the footer once.
  const base = (rendered.text ?? (rendered.html != null ? htmlToText(rendered.html) : '')).trimEnd();
  return { subject, html, text: base + textFooter(base, ctx) };
}

/** The list headers of a broadcast message (RFC 2369, RFC 2919, RFC 8058, Gmail's Feedback-ID). */
export function listHeaders(opts: {
  unsubscribeUrl: string;
  unsubscribeMailto: string | null;
  listName: string;
  listId: string;
  feedbackId: string;
}): Record<string, string> {
  const clean = opts.listName.replace(/["\\\r\n]/g, '').slice(0, 100);
  // A phrase in ASCII is quoted; any other is an RFC 2047 encoded word.
  const name = /^[\x20-\x7e]*$/.test(clean)
    ? `"${clean}"`
    : `=?UTF-8?B?${Buffer.from(clean, 'utf8').toString('base64')}?=`;
  return {
    'List-Unsubscribe': [
      `<${opts.unsubscribeUrl}>`,
      ...(opts.unsubscribeMailto ? [`<mailto:${opts.unsubscribeMailto}?subject=unsubscribe>`] : []),
    ].join(', '),
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    'List-Id': `${name} <${opts.listId}>`,
    'Feedback-ID': opts.feedbackId,
    Precedence: 'bulk',
  };
}
