import { parseFragment, serialize, type DefaultTreeAdapterMap } from 'parse5';
import { escapeHtml } from '../../lib/html.js';
import { isHttpUrl } from '../../lib/url.js';
import { LIQUID, SILENT_TAG, isOnlyLiquid, type LiquidGuard } from './liquid-guard.js';

/**
 * The markup inside a block document: a text block's inline HTML and an html block's HTML. Both are parsed by parse5
 * (after their Liquid is swapped for tokens, so that `{% if a < b %}` is not taken for a tag): the validator lists
 * what breaks the rules, and the renderer writes the parsed tree back out, with inline styles on a text block's
 * elements. Every walk over a tree is a loop over an explicit stack, never recursion: an author's HTML may nest
 * thousands of levels deep.
 */

type Node = DefaultTreeAdapterMap['node'];
type Element = DefaultTreeAdapterMap['element'];
type ParentNode = DefaultTreeAdapterMap['parentNode'];
type ChildNode = DefaultTreeAdapterMap['childNode'];

const isElement = (node: Node): node is Element => 'tagName' in node;
const children = (node: Node): Node[] => ('childNodes' in node ? (node as ParentNode).childNodes : []);

/** How deep elements may nest: a text block's formatting, an html block's tables (what a client or a CSS inliner walks). */
export const MAX_DEPTH = { text: 32, html: 100 } as const;

/** The text of a node and its descendants. */
function nodeText(root: Node): string {
  const out: string[] = [];
  const stack: Node[] = [root];
  while (stack.length) {
    const node = stack.pop()!;
    if (node.nodeName === '#text') out.push((node as DefaultTreeAdapterMap['textNode']).value);
    const kids = children(node);
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!);
  }
  return out.join('');
}

/** What a URL in a document is for: where it may point differs. */
export type UrlUse = 'link' | 'image' | 'social';

const URL_RULE: Record<UrlUse, string> = {
  link: 'a web address starting with https:// or http://, a mailto: address, or Liquid such as {{ contact.properties.link }}',
  image: 'an absolute web address starting with https:// or http://, or Liquid that gives one',
  social: 'a web address starting with https:// or http://, or Liquid that gives one',
};

/**
 * Why `value` is not a URL a document may hold for `use` (a clause: "is not …"), or null when it is one: an absolute
 * http(s) URL (mailto: too for links), or a value with Liquid in it (`{{ contact.properties.link }}` whole, or
 * `https://example.com/?id={{ contact.id }}`, which must be such a URL with its Liquid filled in).
 */
export function urlProblem(value: string, use: UrlUse): string | null {
  if (value.length > 2048) return 'is longer than 2,048 characters';
  if (isOnlyLiquid(value)) return null;
  const probe = value.replace(LIQUID, 'x');
  if (use === 'link' && /^mailto:/i.test(probe) && /^mailto:[^\s<>"'\\]+$/i.test(probe)) return null;
  if (/^https?:\/\//i.test(probe) && isHttpUrl(probe)) return null;
  return `is not ${URL_RULE[use]}`;
}

/** `value` quoted for a message, cut short when long. */
export const quoted = (value: string) => `"${value.length > 80 ? `${value.slice(0, 77)}…` : value}"`;

// ---------------------------------------------------------------------------------------------------------------
// A text block's inline HTML

/** The elements a text block keeps: bold, italic, underline, links, line breaks and paragraphs. */
const TEXT_ELEMENTS = new Set(['b', 'strong', 'i', 'em', 'u', 'a', 'br', 'p']);
/**
 * The attributes a text block keeps: a link's `href`. `target` and `rel`, which rich-text editors put on links, are
 * accepted and left out of the email (an email client opens every link in a browser anyway).
 */
const LINK_ATTRIBUTES = new Set(['href', 'target', 'rel']);

/** What breaks a text block's rules, one sentence per kind of problem (an element or attribute named once). */
export function textProblems(text: string, guard: LiquidGuard): string[] {
  const problems = new Map<string, string>();
  const stack: [Node, number][] = [[parseFragment(guard.protect(text)) as unknown as Node, 0]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (depth > MAX_DEPTH.text) {
      problems.set('depth', `The text nests its formatting more than ${MAX_DEPTH.text} levels deep.`);
      continue;
    }
    if (isElement(node)) {
      const tag = node.tagName;
      if (!TEXT_ELEMENTS.has(tag)) {
        problems.set(
          `<${tag}>`,
          `The text contains a <${tag}> element: a text block keeps bold, italic, underline, links, line breaks and paragraphs only (b, strong, i, em, u, a, br, p).`,
        );
      }
      for (const attr of node.attrs) {
        if (tag === 'a' && LINK_ATTRIBUTES.has(attr.name)) continue;
        problems.set(
          `<${tag} ${attr.name}>`,
          tag === 'a'
            ? `A link in the text has a "${attr.name}" attribute: links in a text block keep only their address (href).`
            : `The text's <${tag}> element has a "${attr.name}" attribute: formatting in a text block carries no attributes.`,
        );
      }
      if (tag === 'a') {
        const href = node.attrs.find((a) => a.name === 'href');
        const url = href ? guard.restore(href.value) : '';
        const problem = href ? urlProblem(url, 'link') : null;
        if (problem) problems.set(`href ${url}`, `A link in the text points to ${quoted(url)}, which ${problem}.`);
      }
    }
    const kids = children(node);
    for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i]!, depth + 1]);
  }
  return [...problems.values()];
}

/** Plain text of an inline fragment: its text nodes, collapsed white space (what an "is it empty?" check needs). */
export function textContent(html: string): string {
  const out: string[] = [];
  const stack: Node[] = [parseFragment(html) as unknown as Node];
  while (stack.length) {
    const node = stack.pop()!;
    if (node.nodeName === '#text') out.push((node as DefaultTreeAdapterMap['textNode']).value);
    else if (isElement(node) && (node.tagName === 'img' || node.tagName === 'hr')) out.push(`[${node.tagName}]`);
    const kids = children(node);
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!);
  }
  return out.join('').replace(/\s+/g, ' ').trim();
}

export interface InlineStyle {
  /** The colour of links. */
  link: string;
  /** The space under each paragraph but the last, in px. */
  paragraphGap: number;
}

/** HTML's white space (not U+00A0, which `\s` would take too). */
const SPACE = /[ \t\r\n\f]+/g;

/**
 * A text block as parsed: its top-level nodes, and whether it is plain text (no element at all). Plain text keeps its
 * line breaks (what an API client that sends `"Line 1\nLine 2"` means; a blank line starts a paragraph); in HTML, a
 * line break is white space, as in any HTML (so pretty-printed markup gets no stray breaks).
 */
function parseText(text: string, guard: LiquidGuard): { top: Node[]; plain: boolean } {
  const top = children(parseFragment(guard.protect(text)) as unknown as Node);
  return { top, plain: top.every((n) => !isElement(n)) };
}

const textOf = (nodes: Node[]) => nodes.map(nodeText).join('');

/**
 * A text block's inline HTML as the email carries it: the elements of TEXT_ELEMENTS only, links with their colour and
 * `target="_blank"`, paragraphs with a margin (none under the last), every text escaped. Liquid stays tokens of
 * `guard` (restored with the whole document).
 */
export function renderInline(text: string, guard: LiquidGuard, style: InlineStyle): string {
  const { top, plain } = parseText(text, guard);
  if (plain) {
    const paragraphs = textOf(top)
      .trim()
      .split(/[ \t]*\r?\n[ \t]*\r?\n\s*/)
      .map((p) => escapeHtml(p).replace(/[ \t]*\r?\n[ \t]*/g, '<br>'));
    return paragraphs.length === 1
      ? paragraphs[0]!
      : paragraphs
          .map((p, i) => `<p style="margin:0 0 ${i === paragraphs.length - 1 ? 0 : style.paragraphGap}px">${p}</p>`)
          .join('');
  }
  let lastParagraph = -1;
  top.forEach((n, i) => {
    if (isElement(n) && n.tagName === 'p') lastParagraph = i;
  });
  const out: string[] = [];
  // The stack holds nodes to open and, as strings, closing tags to write.
  const stack: (Node | string)[] = [...top].reverse();
  while (stack.length) {
    const item = stack.pop()!;
    if (typeof item === 'string') {
      out.push(item);
      continue;
    }
    if (item.nodeName === '#text') {
      out.push(escapeHtml((item as DefaultTreeAdapterMap['textNode']).value.replace(SPACE, ' ')));
      continue;
    }
    if (!isElement(item)) continue; // comments
    const tag = item.tagName;
    let close = '';
    if (tag === 'br') out.push('<br>');
    else if (tag === 'p') {
      const last = top.indexOf(item) === lastParagraph;
      out.push(`<p style="margin:0 0 ${last ? 0 : style.paragraphGap}px">`);
      close = '</p>';
    } else if (tag === 'a') {
      const href = item.attrs.find((a) => a.name === 'href')?.value ?? '';
      out.push(
        href
          ? `<a href="${escapeHtml(href)}" style="color:${style.link};text-decoration:underline" target="_blank">`
          : '<a>',
      );
      close = '</a>';
    } else if (TEXT_ELEMENTS.has(tag)) {
      out.push(`<${tag}>`);
      close = `</${tag}>`;
    }
    if (close) stack.push(close);
    const kids = children(item);
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!);
  }
  return out.join('');
}

/**
 * A text block as plain text: paragraphs apart by a blank line, `<br>` a line break, a link as `text (url)` (the URL
 * alone when the text is the URL); plain text as written. Liquid stays tokens of `guard`.
 */
export function inlineToText(text: string, guard: LiquidGuard): string {
  const { top, plain } = parseText(text, guard);
  if (plain)
    return textOf(top)
      .replace(/[ \t]*\r?\n[ \t]*/g, '\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim();
  const out: string[] = [];
  const stack: (Node | string)[] = [...top].reverse();
  while (stack.length) {
    const item = stack.pop()!;
    if (typeof item === 'string') {
      out.push(item);
      continue;
    }
    if (item.nodeName === '#text') {
      out.push((item as DefaultTreeAdapterMap['textNode']).value.replace(SPACE, ' '));
      continue;
    }
    if (!isElement(item)) continue;
    if (item.tagName === 'br') out.push('\n');
    else if (item.tagName === 'p') stack.push('\n\n');
    else if (item.tagName === 'a') {
      const href = item.attrs.find((a) => a.name === 'href')?.value ?? '';
      const label = nodeText(item).replace(SPACE, ' ').trim();
      if (href && label !== href) stack.push(` (${href})`);
    }
    const kids = children(item);
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!);
  }
  return out
    .join('')
    .replace(/ *\n */g, '\n')
    .replace(/ {2,}/g, ' ')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

// ---------------------------------------------------------------------------------------------------------------
// An html block's HTML

/** Elements an email's HTML may hold: text, tables, lists, images and links. Any other element is removed. */
const HTML_ELEMENTS = new Set(
  (
    'a abbr address article aside b bdi bdo big blockquote br caption center cite code col colgroup dd del dfn div dl ' +
    'dt em figcaption figure font footer h1 h2 h3 h4 h5 h6 header hr i img ins kbd li main mark nav ol p pre q s ' +
    'samp section small span strike strong sub sup table tbody td tfoot th thead time tr tt u ul var wbr'
  ).split(' '),
);
/**
 * Elements removed with everything inside them: their content is code, styles, another document or a control's value,
 * never text for the reader (and some of them are parsed as raw text, which must never reach the output). Any other
 * element outside HTML_ELEMENTS (a form, a label, a custom element …) is unwrapped: it goes, its content stays.
 */
const DROPPED_WITH_CONTENT = new Set(
  (
    'script style iframe frame frameset object embed applet noscript noembed noframes template svg math textarea ' +
    'select option optgroup datalist title head xmp plaintext listing canvas audio video picture source track link ' +
    'meta base'
  ).split(' '),
);
/** Attributes that hold a URL. */
const URL_ATTRIBUTES = new Set(['href', 'src', 'background', 'cite', 'longdesc', 'action', 'formaction', 'poster']);
/** Attributes removed whatever their value: they embed or submit documents, or carry script. */
const REFUSED_ATTRIBUTES = new Set(['srcdoc', 'srcset', 'formaction', 'action', 'xmlns', 'is']);
/** CSS in a style attribute that runs code or loads from a non-web address in some client. */
const BAD_CSS = /expression\s*\(|behavior\s*:|-moz-binding|javascript:|vbscript:|@import/i;
const CSS_URL = /url\(\s*(['"]?)(.*?)\1\s*\)/gi;
const SCRIPT_MESSAGE = 'email clients never run scripts';

/** An html block's HTML made safe for an email (sanitizeHtml). */
export interface SanitizedHtml {
  /** The HTML as the email carries it, written back out by parse5, without comments; Liquid stays tokens of the guard. */
  html: string;
  /** What was removed, one sentence per kind (an element or attribute named once); [] when nothing was. */
  removed: string[];
  /** Elements nest deeper than MAX_DEPTH.html (a limit the validator refuses; what is deeper was removed). */
  tooDeep: boolean;
}

/**
 * An html block's HTML sanitised like a form's deployed HTML (contract §16 and §4: no script, no event handler, no
 * `javascript:` URL), with rules for email rather than for a web page: what is not allowed is removed and named in
 * `removed` (the render endpoint's warnings), never refused. Removed: `<script>`, `<style>` (email clients drop it from
 * a message's body: styles belong in style attributes), iframes, forms and their controls, `<link>` (no external
 * stylesheet), svg and any other element email clients do not show (HTML_ELEMENTS is the list kept); event handler
 * attributes (`on…`), attributes that embed or submit documents, a URL that is not a web address (`javascript:`,
 * `data:` … or a relative one; an image without its address goes too), a style attribute whose CSS runs code or loads
 * from a non-web address, and comments. Liquid tags that write nothing (`{% if %}`, `{% endif %}` …) in what is removed
 * stay in its place, so that the Liquid still parses.
 * Kept: everything else, inline styles included, so the HTML looks as written. Liquid is tokens of `guard` while the
 * HTML is parsed (`{% if a < b %}` is not a tag), and is checked where it could write an attribute's name.
 */
export function sanitizeHtml(html: string, guard: LiquidGuard): SanitizedHtml {
  const removed = new Map<string, string>();
  let tooDeep = false;
  /** A token that ends the name of an attribute written without its `=""`: Liquid tags alone. */
  let bare: string | undefined;
  const root = parseFragment(guard.protect(html)) as unknown as ParentNode;
  const stack: [ParentNode, number][] = [[root, 0]];
  while (stack.length) {
    const [parent, depth] = stack.pop()!;
    const kept: ChildNode[] = [];
    // A queue of the parent's children: an unwrapped element's children join it in its place.
    const pending: ChildNode[] = [...parent.childNodes].reverse();
    while (pending.length) {
      const node = pending.pop()!;
      if (node.nodeName === '#comment') {
        const data = (node as DefaultTreeAdapterMap['commentNode']).data;
        if (/<\s*script|javascript:/i.test(data))
          removed.set('comment', `A comment with a script in it was removed from the HTML: ${SCRIPT_MESSAGE}.`);
        keepLiquidTags(node, kept, parent, guard);
        continue;
      }
      if (!isElement(node)) {
        kept.push(node);
        continue;
      }
      const tag = node.tagName;
      if (!HTML_ELEMENTS.has(tag)) {
        removed.set(`<${tag}>`, elementRemoved(guard.restore(tag)));
        if (DROPPED_WITH_CONTENT.has(tag)) {
          keepLiquidTags(node, kept, parent, guard);
          continue;
        }
        keepLiquidTags({ ...node, childNodes: [] }, kept, parent, guard);
        const kids = node.childNodes;
        for (let i = kids.length - 1; i >= 0; i--) pending.push(kids[i]!);
        continue;
      }
      if (depth + 1 > MAX_DEPTH.html) {
        tooDeep = true;
        removed.set('depth', `Elements nested more than ${MAX_DEPTH.html} levels deep were removed from the HTML.`);
        keepLiquidTags(node, kept, parent, guard);
        continue;
      }
      // The Liquid tags of a removed attribute stay in its place, written bare (`<td {% if x %} {% endif %}>`), as is an
      // attribute parse5 made of Liquid tags alone (`{% endif %}` after `<td {% if x %}bgcolor="#eee"{% endif %}>`).
      const hadSrc = node.attrs.some((a) => a.name === 'src');
      node.attrs = node.attrs.flatMap((attr) => {
        const problem = attributeProblem(attr.name, guard.restore(attr.value), tag, guard);
        if (problem) {
          removed.set(problem.key, problem.message);
          const tags = guard.tagsIn(attr.name) + guard.tagsIn(attr.value);
          return tags ? [{ name: tags + (bare ??= guard.keep('')), value: '' }] : [];
        }
        if (attr.value === '' && guard.tagsIn(attr.name) === attr.name)
          return [{ name: attr.name + (bare ??= guard.keep('')), value: '' }];
        return [attr];
      });
      // An image whose address was removed shows nothing: it goes.
      if (tag === 'img' && hadSrc && !node.attrs.some((a) => a.name === 'src')) {
        keepLiquidTags(node, kept, parent, guard);
        continue;
      }
      kept.push(node);
      stack.push([node, depth + 1]);
    }
    for (const node of kept) node.parentNode = parent;
    parent.childNodes = kept;
  }
  const out = serialize(root);
  return { html: bare ? out.split(`${bare}=""`).join('') : out, removed: [...removed.values()], tooDeep };
}

/**
 * Removing `node` (with what is inside it) never removes a Liquid tag: the tags in it (in its name, attributes, text
 * and comments) stay in its place as a text node of their tokens, so that an `{% if %}` keeps its `{% endif %}`.
 */
function keepLiquidTags(node: Node, kept: ChildNode[], parent: ParentNode, guard: LiquidGuard): void {
  const out: string[] = [];
  const stack: Node[] = [node];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.nodeName === '#text') out.push(guard.tagsIn((n as DefaultTreeAdapterMap['textNode']).value));
    else if (n.nodeName === '#comment') out.push(guard.tagsIn((n as DefaultTreeAdapterMap['commentNode']).data));
    else if (isElement(n)) {
      out.push(guard.tagsIn(n.tagName));
      for (const a of n.attrs) out.push(guard.tagsIn(a.name), guard.tagsIn(a.value));
      if (n.tagName === 'template') stack.push((n as unknown as { content: Node }).content);
    }
    const kids = children(n);
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!);
  }
  const value = out.join('');
  if (value) kept.push({ nodeName: '#text', value, parentNode: parent } as DefaultTreeAdapterMap['textNode']);
}

function elementRemoved(tag: string): string {
  switch (tag) {
    case 'script':
      return `The <script> element was removed from the HTML: ${SCRIPT_MESSAGE}.`;
    case 'style':
      return 'The <style> element was removed from the HTML: email clients drop it from the body of a message, so put the styles in style attributes instead.';
    case 'link':
      return 'The <link> element was removed from the HTML: an email loads no external stylesheet, so put the styles in style attributes instead.';
    default:
      return `The <${tag}> element was removed from the HTML${DROPPED_WITH_CONTENT.has(tag) ? ', with its content' : ' (its content was kept)'}: email clients do not show it, so use text, links, images and tables.`;
  }
}

/** Why an attribute is removed (a key naming the kind of problem once, and a sentence), or null when it stays. */
function attributeProblem(
  rawName: string,
  value: string,
  tag: string,
  guard: LiquidGuard,
): { key: string; message: string } | null {
  const restored = guard.restore(rawName);
  let name = restored.toLowerCase();
  if (restored !== rawName) {
    // Liquid in the name: a tag that writes nothing (`{% if x %}bgcolor`) is left out of the check; any other could write
    // the name itself (`o{{ x }}nclick`).
    const rest = restored.replace(LIQUID, (m) => (SILENT_TAG.test(m) ? '' : '\u0000')).toLowerCase();
    if (rest.includes('\u0000'))
      return {
        key: `liquid name ${name}`,
        message: `The <${tag}> element's attribute ${quoted(restored)} was removed from the HTML: Liquid may choose whether an attribute is written, not write its name.`,
      };
    name = rest.trim();
  }
  if (name.startsWith('on'))
    return {
      key: `on ${name}`,
      message: `The <${tag}> element's event handler (${name}) was removed from the HTML: ${SCRIPT_MESSAGE}.`,
    };
  if (REFUSED_ATTRIBUTES.has(name) || name.includes(':'))
    return {
      key: `attr ${name}`,
      message: `The <${tag}> element's "${name}" attribute was removed from the HTML: an email cannot use it.`,
    };
  if (URL_ATTRIBUTES.has(name)) {
    const problem = htmlUrlProblem(value, tag === 'img' || name === 'background' ? 'image' : 'link');
    if (problem)
      return {
        key: `url ${value}`,
        message: `The <${tag}> element's ${name} was removed from the HTML: it ${problem}.`,
      };
  } else if (name === 'style') {
    const problem = cssProblem(value);
    if (problem)
      return {
        key: `style ${value}`,
        message: `The <${tag}> element's style was removed from the HTML: it ${problem}`,
      };
  }
  return null;
}

function htmlUrlProblem(value: string, use: UrlUse): string | null {
  const trimmed = value.trim();
  // Browsers ignore tabs and line breaks inside a scheme (`java\tscript:`): they count as what they spell.
  const scheme = /^(javascript|vbscript|data|file):/i.exec(trimmed.replace(/[\s\p{Cc}]+/gu, ''));
  if (scheme)
    return `pointed to a ${scheme[1]!.toLowerCase()}: address (${use === 'image' ? 'an image must be a web address' : SCRIPT_MESSAGE})`;
  if (use === 'link' && (trimmed.startsWith('#') || /^tel:[+\d\s().-]+$/i.test(trimmed))) return null;
  const problem = urlProblem(trimmed, use);
  return problem ? `pointed to ${quoted(trimmed)}, which ${problem}` : null;
}

function cssProblem(css: string): string | null {
  if (BAD_CSS.test(css)) return 'ran code in some email clients (expression, behavior, javascript:): write plain CSS.';
  for (const m of css.matchAll(CSS_URL)) {
    if (urlProblem(m[2]!, 'image') !== null) return `loaded ${quoted(m[2]!)}, which is not a web address.`;
  }
  return null;
}

/**
 * An html block's HTML as the email carries it: sanitised (sanitizeHtml), so an unclosed element cannot swallow the
 * rest of the email and nothing unsafe is written whatever the document holds. Liquid stays tokens.
 */
export function renderHtml(html: string, guard: LiquidGuard): string {
  return sanitizeHtml(html, guard).html;
}
