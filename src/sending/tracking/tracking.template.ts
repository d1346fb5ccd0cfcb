import { Tokenizer as LiquidTokenizer, TokenKind, type TagToken } from 'liquidjs';
import { Tokenizer, type TokenHandler } from 'parse5';
import { liquidHtml } from '../../lib/liquid.js';
import { MAX_TRACKED_URL } from './tracking.token.js';
import { absoluteHttpUrl, spaceBefore, TEXT_CONTENT, trackedHref, type LinkRules } from './tracking.rewrite.js';

/**
 * The tracked links of a broadcast's HTML found once per broadcast, not once per message (docs/tracking.md, "What is
 * rewritten"; bench/README.md, "bench:render"). Reading each message's HTML with parse5's tokenizer cost ~1 ms of CPU
 * per message for a 40 KB document, ~40% of all the CPU a message of it took.
 *
 * The HTML template is read with parse5's tokenizer **before** Liquid, each Liquid output or tag standing for text of
 * its own length, and the `href` attribute of every `<a>` is marked in the template's source: MARK_START before it,
 * MARK_END after it. Liquid copies the marks into each message as it copies the rest of the source; per message the
 * marked attributes are found with `indexOf`, their (personalised) URLs read, and the marks taken out or the attribute
 * replaced by its tracked URL. The same links get the same indexes, tokens and exclusions as when each message was
 * read whole (trackableLinks): test/unit/tracking.test.ts compares the two over generated templates.
 *
 * That holds when Liquid cannot change what the tokenizer finds, so a template is marked only when
 * - every Liquid output is escaped (the HTML engine escapes all but `| raw`): its text never holds `<`, `&` or a quote,
 *   so it cannot open a tag, a comment or a reference, nor end an attribute value;
 * - every output sits in text (the tokenizer's data state, or the text of `<title>`, `<style>`, …) or inside a quoted
 *   attribute value, and every tag in text:
 *   what a tag leaves out or repeats (`{% if %}`, `{% for %}`) then begins and ends in text, and reads the same
 *   wherever it lands; only the tags that print nothing but escaped outputs are allowed (no `{% raw %}`, no
 *   `{% liquid %}`, no `{% include %}`);
 * - it has no SVG or MathML (the whole parser's rules) and no mark of its own.
 * Any other template is read per message, as before (`markTemplateLinks` answers null). A link made wholly by a Liquid
 * output (`{{ contact.properties.html | raw }}`) is thus found as before: such a template is not marked.
 */

/** Marks no escaped Liquid output can print (`<` is `&lt;` in one), and that a template holding them is not given. */
export const MARK_START = '<\u0001';
export const MARK_END = '<\u0002';

/** Liquid tags that print nothing of their own (`{% if %}`, `{% for %}`, `{% assign %}`, …): allowed between marks. */
const QUIET_TAGS = new Set([
  'if',
  'elsif',
  'else',
  'endif',
  'unless',
  'endunless',
  'case',
  'when',
  'endcase',
  'for',
  'endfor',
  'break',
  'continue',
  'assign',
  'capture',
  'endcapture',
  'comment',
  'endcomment',
  '#',
]);

const ignore = () => {};

/** A parse5 tokenizer over HTML given in chunks, with the `<a>` start tags it finds (trackableLinks's switches). */
function linkTokenizer(onLink: (start: number, end: number) => void): Tokenizer {
  const handler: TokenHandler = {
    onStartTag(token) {
      if (token.tagName === 'a') {
        const href = token.location?.attrs?.href;
        if (href && !token.attrs.some((a) => a.name === 'data-no-track')) onLink(href.startOffset, href.endOffset);
      }
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
  };
  const tokenizer = new Tokenizer({ sourceCodeLocationInfo: true }, handler);
  return tokenizer;
}

/** The tokenizer's states this module needs, read from the tokenizer itself (its enum is not exported). */
function stateAfter(html: string): number {
  const t = linkTokenizer(ignore);
  t.write(html, false);
  return t.state;
}
const DATA = stateAfter('');
/**
 * Where an escaped output changes nothing: text, the text of `<title>`, `<textarea>`, `<style>` and `<script>` (only a
 * `<` or a `&` begins something there), a quoted attribute value. Not a comment: an output ending in `--` before a
 * `>` of the template would end it.
 */
const OUTPUT_STATES = new Set([
  DATA,
  stateAfter('<title>'),
  stateAfter('<style>'),
  stateAfter('<script>'),
  stateAfter('<a href="'),
  stateAfter("<a href='"),
]);

/** A Liquid construct of an HTML template: where it is, and the HTML tokenizer's state where it begins. */
export interface TemplateConstruct {
  begin: number;
  end: number;
  /** `{{ … }}` or `{% … %}` (its tag's name). */
  kind: 'output' | 'tag';
  name: string | null;
  text: string;
  /** The HTML tokenizer's state before it (DATA: text), and whether it is one where an escaped output changes nothing. */
  state: number;
  inText: boolean;
  /** An output printed as it is (`| raw`): it could open a tag, end an attribute, … */
  raw: boolean;
}

/**
 * The Liquid constructs of an HTML template read with parse5's tokenizer, each construct standing for text of its own
 * length (letters, which change no state: offsets stay the source's), and the `<a href>` attributes found meanwhile
 * (`hrefs`, source offsets). Null when it does not parse as Liquid, or a construct changed the tokenizer's state (it
 * would not stand for text: the template is then read per message by whoever asked).
 */
export function scanHtmlTemplate(
  source: string,
): { constructs: TemplateConstruct[]; hrefs: [number, number][] } | null {
  let tokens;
  try {
    tokens = new LiquidTokenizer(source, liquidHtml.options.operators)
      .readTopLevelTokens(liquidHtml.options)
      .filter((t) => t.kind !== TokenKind.HTML);
  } catch {
    return null; // (it does not parse: its send fails the same way either way)
  }
  const hrefs: [number, number][] = [];
  const tokenizer = linkTokenizer((start, end) => hrefs.push([start, end]));
  const constructs: TemplateConstruct[] = [];
  let at = 0;
  for (const c of tokens) {
    tokenizer.write(source.slice(at, c.begin), false);
    const state = tokenizer.state;
    const text = c.getText();
    tokenizer.write('x'.repeat(c.end - c.begin), false);
    if (tokenizer.state !== state) return null;
    const tag = c.kind === TokenKind.Tag;
    constructs.push({
      begin: c.begin,
      end: c.end,
      kind: tag ? 'tag' : 'output',
      name: tag ? (c as TagToken).name : null,
      text,
      state,
      inText: OUTPUT_STATES.has(state),
      raw: !tag && /\braw\b/.test(text),
    });
    at = c.end;
  }
  tokenizer.write(source.slice(at), true);
  hrefs.sort((a, b) => a[0] - b[0]);
  return { constructs, hrefs };
}

/** A tag that prints nothing but escaped outputs (`{% if %}`, `{% for %}`, …), and only where text is. */
export function quietTag(c: TemplateConstruct): boolean {
  return c.kind === 'tag' && QUIET_TAGS.has(c.name!) && c.state === DATA;
}

/**
 * `source` (an HTML template) with each `<a href>` attribute between MARK_START and MARK_END, or null when Liquid could
 * change where the links are (above) or there is no link: then each message is read whole.
 */
export function markTemplateLinks(source: string): string | null {
  if (!/<a[\s>]/i.test(source) || source.includes(MARK_START) || source.includes(MARK_END)) return null;
  if (/<(svg|math)[\s/>]/i.test(source)) return null;
  const scan = scanHtmlTemplate(source);
  if (!scan) return null;
  for (const c of scan.constructs) {
    if (c.kind === 'tag' ? !quietTag(c) : c.raw || !c.inText) return null;
  }
  const { hrefs } = scan;
  if (!hrefs.length) return null;
  const parts: string[] = [];
  let at = 0;
  for (const [start, end] of hrefs) {
    parts.push(source.slice(at, start), MARK_START, source.slice(start, end), MARK_END);
    at = end;
  }
  parts.push(source.slice(at));
  return parts.join('');
}

/** A rendered message's HTML with the marks taken out: byte for byte what the unmarked template renders. */
export function unmarkLinks(html: string): string {
  return markAt(html, MARK_START, 0) >= 0 || markAt(html, MARK_END, 0) >= 0
    ? html.split(MARK_START).join('').split(MARK_END).join('')
    : html;
}

/**
 * The URL of each `href=…` attribute's text seen lately (or null: not an http(s) URL): a send's links are few, and
 * the same in every message but for their Liquid. Reading one with WHATWG's URL costs a few µs.
 */
const urls = new Map<string, string | null>();

/** The value of an `href=…` attribute's text, as the tokenizer reads it. */
function hrefValue(attribute: string): string {
  const eq = attribute.indexOf('=');
  if (eq < 0) return '';
  const rest = attribute.slice(eq + 1).trimStart();
  const quote = rest[0];
  const value = quote === '"' || quote === "'" ? rest.slice(1, -1) : rest;
  if (!/[&\r\0]/.test(value)) return value;
  // A character reference, a CR or a NUL: read by the tokenizer itself.
  let read = '';
  const t = new Tokenizer(
    {},
    {
      onStartTag: (token) => (read = token.attrs[0]?.value ?? ''),
      onEndTag: ignore,
      onComment: ignore,
      onDoctype: ignore,
      onEof: ignore,
      onCharacter: ignore,
      onNullCharacter: ignore,
      onWhitespaceCharacter: ignore,
    },
  );
  t.write(`<a ${attribute}>`, true);
  return read;
}

/**
 * Rewrites a marked message (`html` rendered from a template markTemplateLinks marked): each marked link that is tracked
 * (an absolute http(s) URL of at most MAX_TRACKED_URL characters, not kept by `rules.keep`) gets
 * `href="<trackedUrl(url, index, count)>"`, the others stay as written; the marks go. What trackableLinks and
 * rewriteLinks make of the unmarked HTML.
 */
export function rewriteMarkedLinks(
  html: string,
  rules: LinkRules,
  trackedUrl: (url: string, index: number, count: number) => string,
): string {
  const found: { start: number; end: number; url: string | null }[] = [];
  let count = 0;
  // Every pair is whole (each is in one literal of the template): when one is not, the marks left are taken out below.
  let whole = true;
  for (let start = markAt(html, MARK_START, 0); start >= 0;) {
    const end = markAt(html, MARK_END, start + MARK_START.length);
    if (end < 0) {
      whole = false; // (cannot happen)
      break;
    }
    const attribute = html.slice(start + MARK_START.length, end);
    let url = urls.get(attribute);
    if (url === undefined) {
      url = absoluteHttpUrl(hrefValue(attribute));
      if (urls.size >= 1000) urls.clear();
      urls.set(attribute, url);
    }
    if (url !== null && (url.length > MAX_TRACKED_URL || rules.keep(url))) url = null;
    if (url !== null) count++;
    found.push({ start, end, url });
    start = markAt(html, MARK_START, end + MARK_END.length);
  }
  const parts: string[] = [];
  let at = 0;
  let index = 0;
  for (const { start, end, url } of found) {
    if (url === null) {
      parts.push(html.slice(at, start), html.slice(start + MARK_START.length, end));
    } else {
      const space = spaceBefore(html, start, at);
      parts.push(html.slice(at, start - space), trackedHref(trackedUrl(url, index++, count), space));
    }
    at = end + MARK_END.length;
  }
  parts.push(html.slice(at));
  // Marks a broken pair left (none are expected) go too.
  return whole ? parts.join('') : unmarkLinks(parts.join(''));
}

/**
 * Where the mark (`<` and a control character) is at or after `from`, or -1. Found by its second character, a
 * one-character search (memchr): searched for whole, the two characters cost a slow search of the whole 40 KB message,
 * as every `<` is a candidate. A control character that is not a mark's (a contact's name holding one) is passed over.
 */
function markAt(html: string, mark: string, from: number): number {
  const c = mark[1]!;
  for (let i = html.indexOf(c, from + 1); i >= 0; i = html.indexOf(c, i + 1))
    if (html.charCodeAt(i - 1) === 0x3c) return i - 1;
  return -1;
}
