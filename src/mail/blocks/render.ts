import { escapeHtml } from '../../lib/html.js';
import { lazyRequire } from '../../lib/lazy.js';
import { FONT_FAMILIES, type Block, type BlockDocument, type DocumentSettings, type LeafBlock } from './grammar.js';
import {
  END_IF,
  END_IF_WEBVERSION,
  FOOTER_ADDRESS,
  FOOTER_UNSUBSCRIBE_URL,
  FOOTER_WEBVERSION_URL,
  IF_UNSUBSCRIBE,
  IF_WEBVERSION,
  NETWORK_LABELS,
  unsubscribeLabel,
  webVersionLabel,
} from './labels.js';
import { LiquidGuard } from './liquid-guard.js';
import { renderHtml, renderInline } from './markup.js';
import { documentText } from './text.js';
import { documentWarnings, hasFooter, type DocumentWarning } from './warnings.js';

export { documentWarnings, type DocumentWarning } from './warnings.js';
export { documentText } from './text.js';

export interface RenderedDocument {
  /** The whole HTML document; Liquid in it (text blocks, the footer's `{{ unsubscribe_url }}`) is left for the send. */
  html: string;
  /** The readable text equivalent, Liquid left in it likewise. */
  text: string;
  warnings: DocumentWarning[];
}

export interface RenderOptions {
  /** The document's language (`<html lang>`), the workspace's locale. Without it the document names none. */
  lang?: string;
  /** The `<title>`: the subject (Liquid in it is kept). */
  title?: string;
  /**
   * The service's public base URL (PUBLIC_URL): social links show Formcast's own icons from
   * `{publicUrl}/assets/social/{network}.png`. Without it they are text links.
   */
  publicUrl?: string;
}

type Mjml2Html = (
  mjml: string,
  options: Record<string, unknown>,
) => Promise<{ html: string; errors: { formattedMessage: string }[] }>;
// MJML (with its CSS inliner and parsers) loads with the first document rendered, not at start (lib/lazy.ts).
const mjml = lazyRequire<Mjml2Html>('mjml');

/** The colours and sizes a document is drawn with: its settings, or Formcast's defaults. */
export interface Theme {
  width: number;
  background: string;
  card: string;
  text: string;
  /** Small print on the card, and on the page's background (a top-level footer sits there). */
  muted: string;
  mutedOnBackground: string;
  brand: string;
  link: string;
  font: string;
  /** Whether the content is light: then a dark-mode style turns it dark in clients that ask for it. */
  darkable: boolean;
}

export function themeOf(settings: DocumentSettings | undefined): Theme {
  const s = settings ?? {};
  const card = s.contentBackgroundColor ?? '#ffffff';
  const brand = s.brandColor ?? '#1f6feb';
  const background = s.backgroundColor ?? '#f4f4f5';
  const muted = (on: string) => (luminance(on) > 0.5 ? '#5f6670' : '#a3a9b1');
  return {
    width: s.width ?? 600,
    background,
    card,
    text: s.textColor ?? '#1f2328',
    muted: muted(card),
    mutedOnBackground: muted(background),
    brand,
    link: s.linkColor ?? brand,
    // Double quotes in a font name would end the style attribute: the stacks quote with single ones.
    font: FONT_FAMILIES[s.fontFamily ?? 'sans'].replace(/"/g, "'"),
    darkable: luminance(card) > 0.5,
  };
}

/** Relative luminance of #rrggbb (WCAG), 0 (black) to 1 (white). */
export function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

/** `hex` mixed with white by `amount` (0..1): a link colour that reads on a dark background. */
function lighten(hex: string, amount: number): string {
  const mix = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16);
    return Math.round(c + (255 - c) * amount)
      .toString(16)
      .padStart(2, '0');
  });
  return `#${mix.join('')}`;
}

const attr = (value: string | number) => escapeHtml(String(value));

/** Horizontal padding of a block: the card's edge, or a column's. */
const PAD = { full: 32, column: 12 } as const;

interface Context {
  guard: LiquidGuard;
  theme: Theme;
  options: RenderOptions;
  /** Blocks in a column: less side padding. */
  inColumn: boolean;
}

/**
 * Renders a valid document (validateDocument gave no error) to email-client-safe HTML and its text equivalent.
 *
 * The blocks become MJML (mjml.io; docs/email-editor.md says why MJML), which writes the table layout: at most
 * `settings.width` px wide, columns that stack under 480 px, inline styles, bulletproof (table) buttons, Outlook's
 * conditional tables. Around it: `color-scheme` meta tags and a `prefers-color-scheme: dark` style (dark-mode hints),
 * no script, no external stylesheet or font. Liquid in any text or URL is swapped for tokens before MJML sees it and
 * put back byte for byte after (liquid-guard.ts), so the send's Liquid pass personalises the stored output. The footer
 * prints `{{ workspace.postal_address }}` and links `{{ unsubscribe_url }}`; a document without one gets one at its end.
 */
export async function renderDocument(doc: BlockDocument, options: RenderOptions = {}): Promise<RenderedDocument> {
  const guard = new LiquidGuard(JSON.stringify(doc) + (options.title ?? ''));
  const theme = themeOf(doc.settings);
  const ctx: Context = { guard, theme, options, inColumn: false };

  const blocks: Block[] = hasFooter(doc) ? doc.blocks : [...doc.blocks, { type: 'footer' }];
  const source = `<mjml${options.lang ? ` lang="${attr(options.lang)}"` : ''}>${head(ctx)}<mj-body width="${theme.width}px" background-color="${theme.background}" css-class="fc-bg"><mj-wrapper padding="24px 0">${sections(blocks, ctx)}</mj-wrapper></mj-body></mjml>`;

  const out = await mjml()(source, {
    validationLevel: 'skip',
    fonts: {}, // never a remote font
    keepComments: false,
    minify: false,
    beautify: false,
  });
  // Where MJML broke a line between two tags, a line may be broken (BREAK stands for the place until shortLines).
  const breakable = !out.html.includes(BREAK);
  let html = out.html
    // MJML's indentation (no content has a line break here: the author's text is tokens, <br> or an entity by now)
    .replace(/>\s*\n\s*</g, breakable ? `>${BREAK}<` : '><')
    .replace(/\s*\n\s*(?=\/?>)/g, '')
    .replace(/\s*\n\s*(?=[\w:-]+=")/g, ' ')
    .replace(/\s*\n\s*/g, '\n')
    // MJML leaves two spaces where it dropped an attribute (`<td  style=…`)
    .replace(/(<[a-zA-Z][\w:-]*) {2,}/g, '$1 ')
    .trim();
  if (breakable) html = shortLines(html);
  if (!options.lang) html = html.replace(/ lang="und"/g, '');
  if (!options.title) html = html.replace(/ aria-label=""/g, '');
  html = wellFormed(guard.restore(html));
  return { html, text: wellFormed(documentText(doc, options)), warnings: documentWarnings(doc) };
}

/**
 * A control character, not a private-use one (it was U+E0FF): V8 stores a string holding any character above U+00FF at
 * two bytes a character, and every string made from it after (the HTML, each message's Liquid output) stays so even
 * when all of it is ASCII; each per-message scan, copy and hash of the 40 KB document then cost 2 to 8 times more
 * (bench/README.md, "bench:render").
 */
const BREAK = '\u0001';
/**
 * Lines of the HTML at most about this long: a send may then carry the HTML part as it is (7bit: ASCII, lines of at
 * most 998 octets, RFC 5322 §2.1.1), where longer lines need quoted-printable, which cost ~0.7 ms of CPU per message
 * for a 40 KB document (bench/README.md, "bench:render"). Room is left for what Liquid prints into a line and for tracked links (a click token carries its URL: ~150 characters more each).
 */
const LINE = 200;

/** The HTML with a line break at each BREAK where the line would pass LINE characters, and the other BREAKs gone. */
function shortLines(html: string): string {
  let out = '';
  let line = 0;
  for (const piece of html.split(BREAK)) {
    const firstBreak = piece.indexOf('\n');
    if (out && line + (firstBreak < 0 ? piece.length : firstBreak) > LINE) {
      out += '\n';
      line = 0;
    }
    out += piece;
    line = firstBreak < 0 ? line + piece.length : piece.length - piece.lastIndexOf('\n') - 1;
  }
  return out;
}

/** A lone UTF-16 surrogate (JSON allows `"\ud83d"`) as U+FFFD, which is what it becomes in UTF-8 anyway. */
function wellFormed(text: string): string {
  return text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

function head({ guard, theme, options }: Context): string {
  const dark = theme.darkable
    ? `@media (prefers-color-scheme: dark) {
  body.fc-bg, .fc-bg > div { background-color: #111315 !important; }
  .fc-card, .fc-card > table { background: #1c1f24 !important; background-color: #1c1f24 !important; }
  .fc-text div, .fc-text h1, .fc-text h2, .fc-text h3, .fc-text p, .fc-html > div { color: #e6e8eb !important; }
  .fc-text a, .fc-social a { color: ${lighten(theme.link, 0.45)} !important; }
  .fc-foot div, .fc-foot p, .fc-foot a { color: #9aa0a6 !important; }
  .fc-hr p { border-top-color: #3a3f45 !important; }
}`
    : '';
  return `<mj-head><mj-title>${escapeHtml(guard.protect(options.title ?? ''))}</mj-title><mj-attributes><mj-all font-family="${attr(theme.font)}" /><mj-text color="${theme.text}" font-size="16px" line-height="1.6" /></mj-attributes><mj-raw><meta name="color-scheme" content="light dark"><meta name="supported-color-schemes" content="light dark"></mj-raw><mj-style>:root { color-scheme: light dark; supported-color-schemes: light dark; }
@media only screen and (max-width: 479px) {
  .fc-card .fc-pad { padding-left: 20px !important; padding-right: 20px !important; }
  .fc-cols > table > tbody > tr > td { padding-left: 8px !important; padding-right: 8px !important; }
}
${dark}</mj-style></mj-head>`;
}

/**
 * The body: runs of blocks in one card section each, a columns block a card section of its own, a top-level footer
 * on the page's background under the card. The first and last card sections round the card's corners.
 */
function sections(blocks: Block[], ctx: Context): string {
  type Run =
    | { kind: 'card'; blocks: LeafBlock[] }
    | { kind: 'columns'; block: Block & { type: 'columns' } }
    | { kind: 'footer'; block: LeafBlock };
  const runs: Run[] = [];
  for (const b of blocks) {
    if (b.type === 'columns') runs.push({ kind: 'columns', block: b });
    else if (b.type === 'footer') runs.push({ kind: 'footer', block: b });
    else {
      const last = runs.at(-1);
      if (last?.kind === 'card') last.blocks.push(b);
      else runs.push({ kind: 'card', blocks: [b] });
    }
  }
  const { theme } = ctx;
  return runs
    .map((run, i) => {
      if (run.kind === 'footer')
        return `<mj-section padding="16px 0 0"><mj-column>${leaf(run.block, { ...ctx, inColumn: false })}</mj-column></mj-section>`;
      const first = i === 0 || runs[i - 1]!.kind === 'footer';
      const last = i === runs.length - 1 || runs[i + 1]!.kind === 'footer';
      const radius = `${first ? '8px 8px' : '0 0'} ${last ? '8px 8px' : '0 0'}`;
      const padding = `${first ? 24 : 0}px ${run.kind === 'columns' ? PAD.full - PAD.column : 0}px ${last ? 24 : 0}px`;
      const open = `<mj-section background-color="${theme.card}" css-class="fc-card${run.kind === 'columns' ? ' fc-cols' : ''}" padding="${padding}"${radius === '0 0 0 0' ? '' : ` border-radius="${radius}"`}>`;
      if (run.kind === 'card')
        return `${open}<mj-column>${run.blocks.map((b) => leaf(b, { ...ctx, inColumn: false })).join('')}</mj-column></mj-section>`;
      const { columns, widths } = run.block;
      return `${open}${columns
        .map(
          (column, c) =>
            `<mj-column width="${widths?.[c] ?? Math.floor(10000 / columns.length) / 100}%">${column.map((b) => leaf(b, { ...ctx, inColumn: true })).join('')}</mj-column>`,
        )
        .join('')}</mj-section>`;
    })
    .join('');
}

const HEADING_SIZES = { 1: 30, 2: 24, 3: 19 } as const;

/** One block (any but columns) as MJML. */
function leaf(b: LeafBlock, ctx: Context): string {
  const { guard, theme } = ctx;
  const side = ctx.inColumn ? PAD.column : PAD.full;
  const pad = (top: number, bottom = top) => `padding="${top}px ${side}px ${bottom}px"`;
  const padClass = ctx.inColumn ? '' : ' fc-pad';
  const align = (a: string | undefined, fallback = 'left') => `align="${a ?? fallback}"`;
  switch (b.type) {
    case 'heading': {
      const level = b.level ?? 1;
      const size = HEADING_SIZES[level];
      const text = escapeHtml(guard.protect(b.text)).replace(/\r?\n/g, '<br>');
      return `<mj-text css-class="fc-text${padClass}" ${align(b.align)} ${pad(level === 1 ? 12 : 16, 4)} font-size="${size}px" line-height="1.25"><h${level} style="margin:0;font-size:${size}px;line-height:1.25;font-weight:700">${text}</h${level}></mj-text>`;
    }
    case 'text':
      return `<mj-text css-class="fc-text${padClass}" ${align(b.align)} ${pad(8)}>${renderInline(b.text, guard, { link: theme.link, paragraphGap: 16 })}</mj-text>`;
    case 'image': {
      const width = b.width ? ` width="${b.width}px"` : '';
      const href = b.href ? ` href="${attr(guard.protect(b.href))}"` : '';
      const fluid = ctx.inColumn ? ' fluid-on-mobile="true"' : '';
      return `<mj-image css-class="fc-img${padClass}"${fluid} src="${attr(guard.protect(b.url))}" alt="${attr(guard.protect(b.alt))}"${width}${href} ${align(b.align, 'center')} ${pad(8)} />`;
    }
    case 'button': {
      const href = b.url ? ` href="${attr(guard.protect(b.url))}"` : '';
      return `<mj-button css-class="fc-btn${padClass}"${href} background-color="${b.color ?? theme.brand}" color="${b.textColor ?? (luminance(b.color ?? theme.brand) > 0.55 ? '#111111' : '#ffffff')}" font-size="16px" font-weight="600" line-height="1.25" inner-padding="12px 24px" border-radius="6px" ${align(b.align)} ${pad(12)}>${escapeHtml(guard.protect(b.text))}</mj-button>`;
    }
    case 'divider':
      return `<mj-divider css-class="fc-hr${padClass}" border-color="${b.color ?? '#e5e7eb'}" border-width="1px" ${pad(16)} />`;
    case 'spacer':
      return `<mj-spacer height="${b.height}px" />`;
    case 'social':
      return social(b, ctx, side, padClass);
    case 'html':
      // Kept whole as a token: MJML never sees the author's markup, and white space in it (a <pre>) stays.
      return `<mj-text css-class="fc-html${padClass}" ${pad(8)}>${guard.keep(renderHtml(b.html, guard))}</mj-text>`;
    case 'footer':
      return footer(b, ctx, side);
  }
}

function social(
  b: LeafBlock & { type: 'social' },
  { guard, theme, options }: Context,
  side: number,
  padClass: string,
): string {
  const links = b.links;
  if (!links.length) return '';
  const base = options.publicUrl?.replace(/\/+$/, '');
  if (base) {
    const elements = links
      .map(
        (l) =>
          `<mj-social-element src="${attr(`${base}/assets/social/${l.network}.png`)}" href="${attr(guard.protect(l.url))}" alt="${attr(NETWORK_LABELS[l.network])}" background-color="transparent" icon-size="28px" padding="4px" border-radius="0" />`,
      )
      .join('');
    return `<mj-social css-class="fc-social${padClass}" mode="horizontal" ${`align="${b.align ?? 'center'}"`} padding="12px ${side}px" icon-size="28px">${elements}</mj-social>`;
  }
  const text = links
    .map(
      (l) =>
        `<a href="${attr(guard.protect(l.url))}" style="color:${theme.link};text-decoration:underline" target="_blank">${escapeHtml(NETWORK_LABELS[l.network])}</a>`,
    )
    .join(' &middot; ');
  return `<mj-text css-class="fc-text fc-social${padClass}" align="${b.align ?? 'center'}" padding="12px ${side}px">${text}</mj-text>`;
}

function footer(b: LeafBlock & { type: 'footer' }, { guard, theme, options, inColumn }: Context, side: number): string {
  const color = inColumn ? theme.muted : theme.mutedOnBackground;
  const lines: string[] = [];
  if (b.text?.trim()) lines.push(escapeHtml(guard.protect(b.text)).replace(/\r?\n/g, '<br>'));
  // The address as the workspace wrote it: its line breaks shown (pre-line), as it was typed in settings.
  lines.push(`<span style="white-space:pre-line">${guard.protect(FOOTER_ADDRESS)}</span>`);
  if (b.webVersion)
    lines.push(
      `${guard.protect(IF_WEBVERSION)}<a href="${guard.protect(FOOTER_WEBVERSION_URL)}" style="color:${color};text-decoration:underline" target="_blank">${escapeHtml(webVersionLabel(options.lang))}</a>${guard.protect(END_IF_WEBVERSION)}`,
    );
  // Only where the message has an unsubscribe URL: a double opt-in confirmation built from blocks has none.
  lines.push(
    `${guard.protect(IF_UNSUBSCRIBE)}<a href="${guard.protect(FOOTER_UNSUBSCRIBE_URL)}" style="color:${color};text-decoration:underline" target="_blank">${escapeHtml(unsubscribeLabel(options.lang))}</a>${guard.protect(END_IF)}`,
  );
  return `<mj-text css-class="fc-foot" align="${b.align ?? 'center'}" padding="8px ${side}px" font-size="12px" line-height="1.5" color="${color}">${lines.map((l, i) => `<p style="margin:0 0 ${i === lines.length - 1 ? 0 : 8}px">${l}</p>`).join('')}</mj-text>`;
}
