import { parse, type DefaultTreeAdapterTypes } from 'parse5';
import { MAX_TRACKED_URL } from './tracking.token.js';

/**
 * Link rewriting and the open pixel (docs/tracking.md, "What is rewritten"). The HTML is parsed with parse5
 * (the HTML standard's parser, so `<a href>` is found exactly where a mail client finds it, not inside comments,
 * `<style>`, `<script>`, `<textarea>` or attribute values) with source locations, and only the `href`
 * attributes to track are replaced in the original text: everything else, Outlook's conditional comments
 * included, stays byte for byte as the template rendered it.
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

function hasChildren(node: Node): node is Node & { childNodes: Node[] } {
  return Array.isArray((node as { childNodes?: unknown }).childNodes);
}

/**
 * The links of `html` to track, in document order: `<a href>` with an absolute http(s) URL, not kept by
 * `rules.keep`, without a `data-no-track` attribute, at most MAX_TRACKED_URL characters. mailto:, tel:,
 * `#fragment` and relative links are left alone.
 */
export function trackableLinks(html: string, rules: LinkRules): TrackableLink[] {
  if (!/<a[\s>]/i.test(html)) return [];
  const doc = parse(html, { sourceCodeLocationInfo: true });
  const links: TrackableLink[] = [];
  const stack: Node[] = [doc];
  while (stack.length) {
    const node = stack.pop()!;
    if (node.nodeName === 'a') {
      const el = node as Element;
      const href = el.attrs.find((a) => a.name === 'href' && !a.prefix);
      const loc = el.sourceCodeLocation?.attrs?.href;
      if (href && loc && !el.attrs.some((a) => a.name === 'data-no-track')) {
        const url = absoluteHttpUrl(href.value);
        if (url && url.length <= MAX_TRACKED_URL && !rules.keep(url)) links.push({ url, start: loc.startOffset, end: loc.endOffset });
      }
    }
    if (node.nodeName === 'template') stack.push((node as DefaultTreeAdapterTypes.Template).content);
    if (hasChildren(node)) for (let i = node.childNodes.length - 1; i >= 0; i--) stack.push(node.childNodes[i]!);
  }
  // Locations come from the source, so they are in document order already, but make sure before splicing.
  return links.sort((a, b) => a.start - b.start);
}

function absoluteHttpUrl(value: string): string | null {
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
export function rewriteLinks(html: string, links: readonly TrackableLink[], trackedUrl: (link: TrackableLink, index: number) => string): string {
  if (!links.length) return html;
  const parts: string[] = [];
  let at = 0;
  links.forEach((link, i) => {
    parts.push(html.slice(at, link.start), `href="${escapeAttribute(trackedUrl(link, i))}"`);
    at = link.end;
  });
  parts.push(html.slice(at));
  return parts.join('');
}

function escapeAttribute(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
}

/** The open pixel: a 1×1 transparent GIF, hidden from layout, with empty alt text (screen readers skip it). */
export function openPixel(src: string): string {
  return `<img src="${escapeAttribute(src)}" width="1" height="1" alt="" style="display:block;border:0;width:1px;height:1px">`;
}

/** `html` with `piece` just before its last `</body>` (at the end when there is none). */
export function beforeBodyEnd(html: string, piece: string): string {
  const i = html.toLowerCase().lastIndexOf('</body');
  return i >= 0 ? `${html.slice(0, i)}${piece}${html.slice(i)}` : `${html}${piece}`;
}
