import { trackableLinks } from './tracking.rewrite.js';

/**
 * The links of a template as written (docs/tracking.md, "Stats"): what the link report groups clicks by. A click
 * carries the URL its recipient's message had, after Liquid: `…/vip?email={{ contact.email | url_encode }}` is a
 * different URL for every recipient. Each `<a href>` of the template that would be tracked is read here with its Liquid
 * in place, and becomes a **link pattern**: the URL normalised as the rewrite normalises it (WHATWG), each Liquid
 * output or tag a wildcard. A clicked URL belongs to the first pattern it matches: exact links first, then the
 * personalised ones, the most specific (most literal characters) first. URLs no pattern matches (a whole href made by
 * Liquid, such as `{{ webversion_url }}`, or links inside Liquid-made markup) stay one row per URL.
 */
export interface TemplateLink {
  /** The link as the template writes it: the normalised URL with its Liquid put back. */
  written: string;
  /** A link without Liquid: the URL itself. */
  exact: string | null;
  /** A personalised link: its literal parts, in order (the gaps between them are Liquid). */
  literals: string[] | null;
}

/** Stands for one Liquid output or tag while the HTML is read (letters and digits: no normalisation changes it). */
const SLOT = (i: number) => `zzfcliquid${i}zz`;
const SLOT_PATTERN = /zzfcliquid(\d+)zz/g;
const LIQUID = /\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}/g;

/** The tracked links of the templates (a broadcast's HTML, its variants'), each written link once, in the order found. */
export function templateLinks(htmls: readonly (string | null | undefined)[]): TemplateLink[] {
  const out = new Map<string, TemplateLink>();
  for (const html of htmls) {
    if (!html || !/<a[\s>]/i.test(html)) continue;
    const liquid: string[] = [];
    const marked = html.replace(LIQUID, (m) => SLOT(liquid.push(m) - 1));
    for (const { url } of trackableLinks(marked, { keep: () => false })) {
      const link = patternOf(url, liquid);
      if (link && !out.has(link.written)) out.set(link.written, link);
    }
  }
  return [...out.values()];
}

function patternOf(url: string, liquid: readonly string[]): TemplateLink | null {
  const parts = url.split(SLOT_PATTERN); // literal, index, literal, index, …, literal
  if (parts.length === 1) return { written: url, exact: url, literals: null };
  let written = '';
  const literals: string[] = [];
  let literal = '';
  // A tag (`{% if %}…{% endif %}`) may leave out what lies between it and its end: from a link's first tag to its last,
  // everything is one gap.
  const tags = parts.flatMap((p, i) => (i % 2 === 1 && liquid[Number(p)]?.startsWith('{%') ? [i] : []));
  const [firstTag, lastTag] = [tags[0] ?? -1, tags.at(-1) ?? -1];
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (i % 2 === 0) {
      written += p;
      if (!(firstTag >= 0 && i > firstTag && i < lastTag)) literal += p;
      continue;
    }
    written += liquid[Number(p)] ?? '';
    if (firstTag >= 0 && i > firstTag && i <= lastTag) continue; // inside the tags' one gap
    literals.push(literal);
    literal = '';
  }
  literals.push(literal);
  // A link made wholly by Liquid (`{{ webversion_url }}`) matches anything: not a pattern.
  if (!/^https?:\/\/./i.test(literals[0]!)) return null;
  return { written, exact: null, literals };
}

/** The patterns in the order a URL is tried against them: exact ones, then the most literal characters first. */
export function matchOrder(links: readonly TemplateLink[]): TemplateLink[] {
  const size = (l: TemplateLink) => (l.literals ?? []).reduce((n, s) => n + s.length, 0);
  return [
    ...links.filter((l) => l.exact !== null),
    ...links.filter((l) => l.literals).sort((a, b) => size(b) - size(a)),
  ];
}

/** A personalised link as a PostgreSQL LIKE pattern (escape character `\`). */
export function likePattern(literals: readonly string[]): string {
  return literals.map((s) => s.replace(/[\\%_]/g, (c) => `\\${c}`)).join('%');
}

/** A personalised link as a SQLite GLOB pattern (case-sensitive, unlike SQLite's LIKE). */
export function globPattern(literals: readonly string[]): string {
  return literals.map((s) => s.replace(/[*?[]/g, (c) => `[${c}]`)).join('*');
}

/** The same match in JavaScript (tests, and callers without a database). */
export function matchesLink(link: TemplateLink, url: string): boolean {
  if (link.exact !== null) return url === link.exact;
  const lits = link.literals!;
  if (!url.startsWith(lits[0]!)) return false;
  let at = lits[0]!.length;
  for (let i = 1; i < lits.length; i++) {
    const s = lits[i]!;
    if (i === lits.length - 1) return url.length - s.length >= at && url.endsWith(s);
    const found = url.indexOf(s, at);
    if (found < 0) return false;
    at = found + s.length;
  }
  return true;
}
