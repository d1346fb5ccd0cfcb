import { htmlToText } from '../../mail/compose.js';
import { quietTag, scanHtmlTemplate } from '../tracking/tracking.template.js';

/**
 * The text part of an email written in HTML alone, made once per broadcast version instead of once per message
 * (deliveries/CONTEXT.md, "Render"; bench/README.md, "bench:send"): the HTML template is turned into text with its
 * Liquid left in place, and each message renders that text template, as it renders the HTML. html-to-text over each
 * message's HTML cost ~35 µs of a message's CPU, with the garbage of a document tree.
 *
 * Each Liquid construct of the HTML is replaced by a character of Unicode's private use area (one character: it has no
 * case to change in an upper-cased heading, no space to wrap at, no entity to decode), the HTML is turned into text
 * (mail/compose.ts htmlToText, as for a message), and the characters are replaced by their constructs again. The text
 * then reads as each message's HTML turned into text would, but for its lines' wrapping (a construct is one character
 * wide when the text is wrapped), the case of a heading's personalised words (not upper-cased), and a link whose text
 * and address are both personalised (its address shown): a property test compares the two, words and order.
 *
 * Each output gets `| fold_whitespace` (lib/liquid.ts, liquidTextOfHtml): its value's line breaks and runs of spaces
 * read as one space, as in the HTML.
 *
 * Null (each message's HTML is turned into text, as before) when the HTML has no Liquid that could be moved this way:
 * an output printed raw (`| raw`: it may be markup), a construct anywhere but in text or a quoted attribute value, a tag
 * that prints more than escaped outputs, or one outside text (tracking.template.ts's rules for its link marks), a loop
 * (`{% for %}`: the conversion would number and space its items once, for the template), a tag with an ordered list
 * (its numbers), Liquid's whitespace control (it would trim the text's line ends, not the HTML's), a character of the
 * private use area already there or encoded (`&#xE000;`), text that Liquid would read as a construct of its own (`{{`
 * from `&#123;&#123;`), or a construct that the conversion left out or repeated (one in `<title>`, in a hidden
 * preheader, in a `style` attribute).
 */

const FIRST = 0xe000;
const LAST = 0xf8ff;
const PRIVATE_USE = /[\ue000-\uf8ff]/;

export interface TextTemplate {
  source: string;
  /** It has tags (`{% if %}`, …): a rendered text may carry the empty lines of what they left out (tidyText). */
  hasTags: boolean;
}

export function textTemplateOf(html: string): TextTemplate | null {
  if (PRIVATE_USE.test(html) || encodesPrivateUse(html)) return null;
  const scan = scanHtmlTemplate(html);
  if (!scan) return null;
  const { constructs } = scan;
  if (constructs.length > LAST - FIRST + 1) return null;
  const hasTags = constructs.some((c) => c.kind === 'tag');
  // A loop's items, or an ordered list some of whose items a tag may leave out, are numbered and spaced by the
  // conversion once, for the template: not as each message's list would be.
  if (constructs.some((c) => c.kind === 'tag' && (c.name === 'for' || c.name === 'tablerow'))) return null;
  if (hasTags && /<ol[\s>]/i.test(html)) return null;
  for (const c of constructs) {
    if (c.kind === 'tag' ? !quietTag(c) : c.raw || !c.inText) return null;
    if (/^\{[{%]-|-[}%]\}$/.test(c.text)) return null;
  }
  const parts: string[] = [];
  let at = 0;
  constructs.forEach((c, i) => {
    parts.push(html.slice(at, c.begin), String.fromCharCode(FIRST + i));
    at = c.end;
  });
  parts.push(html.slice(at));
  const text = htmlToText(parts.join(''));
  const out: string[] = [];
  let from = 0;
  const literal = (piece: string) => !piece.includes('{{') && !piece.includes('{%') && !PRIVATE_USE.test(piece);
  for (let i = 0; i < constructs.length; i++) {
    const mark = String.fromCharCode(FIRST + i);
    const j = text.indexOf(mark, from);
    if (j < 0 || text.includes(mark, j + 1)) return null;
    const piece = text.slice(from, j);
    // (A `{` just before a construct would make `{{{`.)
    if (!literal(piece) || piece.endsWith('{')) return null;
    const c = constructs[i]!;
    // An output's value folded as the HTML folded it (lib/liquid.ts, liquidTextOfHtml).
    out.push(piece, c.kind === 'output' ? `${c.text.slice(0, -2).trimEnd()} | fold_whitespace }}` : c.text);
    from = j + 1;
  }
  const rest = text.slice(from);
  if (!literal(rest)) return null;
  out.push(rest);
  return { source: out.join(''), hasTags };
}

/** A character reference to the private use area (`&#xE000;`): decoded, it could stand in for a construct the conversion left out. */
function encodesPrivateUse(html: string): boolean {
  for (const m of html.matchAll(/&#(x[0-9a-f]+|[0-9]+)/gi)) {
    const code = m[1]![0] === 'x' || m[1]![0] === 'X' ? parseInt(m[1]!.slice(1), 16) : parseInt(m[1]!, 10);
    if (code >= FIRST && code <= LAST) return true;
  }
  return false;
}

/**
 * A text rendered from a TextTemplate with tags: the lines a tag left empty taken out (no more than one empty line in a
 * row, no spaces at a line's end), as html-to-text writes the text of the HTML without what the tag left out.
 */
export function tidyText(text: string): string {
  return text
    .replace(/[ \t]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/^\n+/, '');
}
