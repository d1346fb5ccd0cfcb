import { randomBytes } from 'node:crypto';

/** A Liquid output (`{{ … }}`) or tag (`{% … %}`), as written. */
export const LIQUID = /\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}/g;

export function hasLiquid(text: string): boolean {
  return /\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}/.test(text);
}

/**
 * A Liquid tag that writes nothing of its own: it chooses, repeats, captures or comments out what is around it
 * (`{% if %}`, `{% for %}`, `{% raw %}` …, and their ends). Where markup is removed (markup.ts, sanitizeHtml), these tags
 * stay, so that Liquid which parsed still parses.
 */
export const SILENT_TAG =
  /^\{%-?\s*(?:if|elsif|else|endif|unless|endunless|case|when|endcase|for|endfor|break|continue|comment|endcomment|raw|endraw|capture|endcapture|assign)\b[\s\S]*%\}$/;

/** True when the whole value (white space aside) is Liquid, e.g. `{{ contact.properties.link }}`. */
export function isOnlyLiquid(text: string): boolean {
  return hasLiquid(text) && text.replace(LIQUID, '').trim() === '';
}

/**
 * Keeps Liquid byte for byte through a library that escapes, re-quotes or minifies what it is given: `protect`
 * swaps each Liquid output or tag for an opaque token of letters and digits (which no HTML parser, CSS inliner or
 * escaper changes), and `restore` puts the Liquid back in the finished output. The token's prefix is random per guard
 * and absent from the input it was made for, so no text of the author's can be mistaken for one.
 */
export class LiquidGuard {
  private readonly saved: string[] = [];
  private readonly prefix: string;
  private readonly token: RegExp;

  /** `source`: all the text this guard will see (the document as JSON), to pick a prefix that is not in it. */
  constructor(source: string) {
    let prefix: string;
    do
      prefix = `lq${randomBytes(6)
        .toString('hex')
        .replace(/[0-9]/g, (d) => 'ghijklmnop'[Number(d)]!)}`;
    while (source.toLowerCase().includes(prefix));
    this.prefix = prefix;
    this.token = new RegExp(`${prefix}(\\d+)z`, 'g');
  }

  /** The text with each Liquid output or tag replaced by a token. */
  protect(text: string): string {
    return text.replace(LIQUID, (m) => this.keep(m));
  }

  /** A token for any text that must come out exactly as it is (Liquid, an html block's markup). */
  keep(text: string): string {
    this.saved.push(text);
    return `${this.prefix}${this.saved.length - 1}z`;
  }

  /**
   * The tokens in `text` that stand for silent Liquid tags (SILENT_TAG), in order and joined: what must stay when markup
   * around them is removed, so that Liquid that parsed still parses (an `{% if %}` keeps its `{% endif %}`).
   */
  tagsIn(text: string): string {
    return [...text.matchAll(this.token)]
      .filter((m) => SILENT_TAG.test(this.saved[Number(m[1])] ?? ''))
      .map((m) => m[0])
      .join('');
  }

  /** The text with every token replaced by what it stands for (tokens inside kept text too). */
  restore(text: string): string {
    let out = text;
    // A kept chunk may hold tokens of its own (an html block's Liquid): a few rounds restore every level.
    for (let round = 0; round < 3 && out.includes(this.prefix); round++)
      out = out.replace(this.token, (m, i: string) => this.saved[Number(i)] ?? m);
    return out;
  }
}
