import { parse, Tokenizer, TokenizerMode, type DefaultTreeAdapterTypes } from 'parse5';
import { MAX_TRACKED_URL } from './tracking.token.js';

/**
 * Link rewriting and the open pixel (docs/tracking.md, "What is rewritten"). The HTML is read by parse5's tokenizer
 * (the HTML standard's, so `<a href>` is found exactly where a mail client finds it, not inside comments, `<style>`,
 * `<script>`, `<textarea>` or attribute values) with source locations, and only the `href` attributes to track are
 * replaced in the original text: everything else, Outlook's conditional comments included, stays byte for byte as
 * the template rendered it.
 *
 * The tokenizer alone, not the whole parser: building the document tree (with locations) for every recipient cost
 * ~0.4 ms of a message's CPU (bench/README.md, "bench:send"), and the links need only the start tags. What the
 * tree builder would add is the switch of the tokenizer's state after the elements whose content is text (`<style>`,
 * `<script>`, `<textarea>`, …), done here as it does it; HTML with SVG or MathML in it, whose rules are many, goes
 * through the whole parser. test/unit/tracking.test.ts checks the two ways agree.
 */

type Node = DefaultTreeAdapterTypes.Node;
type Element = DefaultTreeAdapterTypes.Element;

export interface TrackableLink {
  /** The absolute http(s) URL, normalised (WHATWG URL `href`: safe for a Location header). */
  url: string;
  /** Where the whole `href=…` attribute is in the source. */
  start: number;
  end: number;
}

export interface LinkRules {
  /** Links that must keep working without us and are never rewritten: the recipient's unsubscribe URL, … */
  keep: (url: string) => boolean;
}

/** Elements whose content the tokenizer reads as text, and how (the tree builder's switches, scripting on). */
export const TEXT_CONTENT: Record<string, (typeof TokenizerMode)[keyof typeof TokenizerMode]> = {
  title: TokenizerMode.RCDATA,
  textarea: TokenizerMode.RCDATA,
  style: TokenizerMode.RAWTEXT,
  xmp: TokenizerMode.RAWTEXT,
  iframe: TokenizerMode.RAWTEXT,
  noembed: TokenizerMode.RAWTEXT,
  noframes: TokenizerMode.RAWTEXT,
  noscript: TokenizerMode.RAWTEXT,
  script: TokenizerMode.SCRIPT_DATA,
  plaintext: TokenizerMode.PLAINTEXT,
};

/**
 * The links of `html` to track, in document order: `<a href>` with an absolute http(s) URL, not kept by
 * `rules.keep`, without a `data-no-track` attribute, at most MAX_TRACKED_URL characters. mailto:, tel:,
 * `#fragment` and relative links are left alone.
 */
export function trackableLinks(html: string, rules: LinkRules): TrackableLink[] {
  if (!/<a[\s>]/i.test(html)) return [];
  const links: TrackableLink[] = [];
  const found = (
    attrs: { name: string; value: string }[],
    loc: { startOffset: number; endOffset: number } | undefined,
  ) => {
    const href = attrs.find((a) => a.name === 'href');
    if (!href || !loc || attrs.some((a) => a.name === 'data-no-track')) return;
    const url = absoluteHttpUrl(href.value);
    if (url && url.length <= MAX_TRACKED_URL && !rules.keep(url))
      links.push({ url, start: loc.startOffset, end: loc.endOffset });
  };
  if (/<(svg|math)[\s/>]/i.test(html)) {
    // SVG and MathML have rules of their own (where HTML resumes inside them, which tags leave them): the whole parser.
    const stack: Node[] = [parse(html, { sourceCodeLocationInfo: true })];
    while (stack.length) {
      const node = stack.pop()!;
      if (node.nodeName === 'a')
        found(
          (node as Element).attrs.filter((a) => !a.prefix),
          (node as Element).sourceCodeLocation?.attrs?.href,
        );
      // (A <template> inside <svg> or <math> is a foreign element, without content.)
      const content = (node as Partial<DefaultTreeAdapterTypes.Template>).content;
      if (node.nodeName === 'template' && content) stack.push(content);
      const children = (node as { childNodes?: Node[] }).childNodes;
      if (children) for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
    }
  } else {
    const ignore = () => {};
    const tokenizer: Tokenizer = new Tokenizer(
      { sourceCodeLocationInfo: true },
      {
        onStartTag(token) {
          if (token.tagName === 'a') found(token.attrs, token.location?.attrs?.href);
          const mode = TEXT_CONTENT[token.tagName];
          if (mode !== undefined) tokenizer.state = mode;
        },
        onEndTag: ignore,
        onComment: ignore,
        onDoctype: ignore,
        onEof: ignore,
        onCharacter: ignore,
        onNullCharacter: ignore,
        onWhitespaceCharacter: ignore,
      },
    );
    tokenizer.write(html, true);
  }
  // In document order for splicing, each once: the tree builder clones an <a> it reopens (`<p><a href=…><div>`), with
  // the same source location.
  return links.sort((a, b) => a.start - b.start).filter((l, i, all) => i === 0 || l.start !== all[i - 1]!.start);
}

export function absoluteHttpUrl(value: string): string | null {
  const v = value.trim();
  if (!/^https?:\/\//i.test(v)) return null;
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

/** `html` with each link's href attribute replaced by `href="<trackedUrl(link, index)>"`. */
export function rewriteLinks(
  html: string,
  links: readonly TrackableLink[],
  trackedUrl: (link: TrackableLink, index: number) => string,
): string {
  if (!links.length) return html;
  const parts: string[] = [];
  let at = 0;
  links.forEach((link, i) => {
    const space = spaceBefore(html, link.start, at);
    parts.push(html.slice(at, link.start - space), trackedHref(trackedUrl(link, i), space));
    at = link.end;
  });
  parts.push(html.slice(at));
  return parts.join('');
}

/**
 * 1 when the character before a tracked `href` attribute (at `start`, not before `from`) is a space or a tab, else 0.
 * That space becomes a line break (trackedHref): the same whitespace between a tag's attributes to HTML, and each
 * tracked link then starts a line. A tracked URL is ~250 characters; a row of four or five social icons on one line
 * passed RFC 5322's 998 and sent the whole HTML part as quoted-printable, ~450 µs more a message of 40 KB
 * (src/mail/mime.ts; bench:render).
 */
export function spaceBefore(html: string, start: number, from: number): 0 | 1 {
  if (start <= from) return 0;
  const c = html.charCodeAt(start - 1);
  return c === 32 || c === 9 ? 1 : 0;
}

/** A tracked `href` attribute, on a line of its own start when a space before it was taken (spaceBefore). */
export function trackedHref(url: string, space: 0 | 1): string {
  return `${space ? '\n' : ''}href="${escapeAttribute(url)}"`;
}

export function escapeAttribute(s: string): string {
  // (Most have neither: a tracked URL never has; two replacements per link cost ~0.1 µs each.)
  return s.includes('&') || s.includes('"') ? s.replace(/&/g, '&amp;').replace(/"/g, '&quot;') : s;
}

/**
 * Up to this many characters of HTML, an HTML part with an image in it is "mostly image" to SpamAssassin
 * (HTML_IMAGE_ONLY_04 … _32: an `<img>` and at most 3,200 characters of HTML source, scoring up to 2.8 points), however
 * small the image. The open pixel is an image: it is left out of an HTML part this short that has no image of its own
 * (docs/tracking.md, "Opens"). Longer parts, or parts that have an image anyway, get it: then it changes no rule (its
 * 1×1 area leaves the image-to-text ratio rules alone).
 */
export const IMAGE_ONLY_HTML_CHARS = 3200;

/** Whether the open pixel may go into this HTML without making it score as "images with little text" (above). */
export function pixelFits(html: string): boolean {
  // More UTF-16 units than twice the limit: more characters than the limit, whatever the images (per message, a 40 KB
  // document was searched for <img> outside comments first, each comment cut out: ~6% of its CPU).
  if (html.length > 2 * IMAGE_ONLY_HTML_CHARS) return true;
  if (/<img[\s/>]/i.test(html.replace(/<!--[\s\S]*?-->/g, ''))) return true;
  // Characters, not bytes: a filter that counts either then finds more than the limit.
  let chars = 0;
  for (const _ of html) if (++chars > IMAGE_ONLY_HTML_CHARS) return true;
  return false;
}

/** The open pixel: a 1×1 transparent GIF, hidden from layout, with empty alt text (screen readers skip it). */
export function openPixel(src: string): string {
  return `<img src="${escapeAttribute(src)}" width="1" height="1" alt="" style="display:block;border:0;width:1px;height:1px">`;
}

/**
 * `html` with `piece` just before its last `</body>` (in any case; at the end when there is none). Searched from the
 * end, tag by tag: it is in the last few (lower-casing the whole HTML per message cost more than the search).
 */
export function beforeBodyEnd(html: string, piece: string): string {
  for (let i = html.lastIndexOf('<'); i >= 0; i = i > 0 ? html.lastIndexOf('<', i - 1) : -1)
    if (html.charCodeAt(i + 1) === 0x2f && html.slice(i + 2, i + 6).toLowerCase() === 'body')
      return `${html.slice(0, i)}${piece}${html.slice(i)}`;
  return `${html}${piece}`;
}
