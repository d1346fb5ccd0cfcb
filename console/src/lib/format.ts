const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const number = new Intl.NumberFormat();

export function formatDateTime(iso: string | null | undefined): string {
  return iso ? dateTime.format(new Date(iso)) : '—';
}
export function formatDate(iso: string | null | undefined): string {
  return iso ? dateOnly.format(new Date(iso)) : '—';
}
export function formatNumber(n: number | null | undefined): string {
  return n == null ? '—' : number.format(n);
}
/** `part / whole` as a percentage with one decimal, or an em dash when nothing was sent. */
export function percent(part: number | undefined, whole: number | undefined): string {
  if (!whole || part == null) return '—';
  return `${((part / whole) * 100).toFixed(1)}%`;
}
export function formatRate(rate: number): string {
  return `${(rate * 100).toFixed(2)}%`;
}
/** "3 minutes ago", for recent times. */
export function relative(iso: string | null | undefined): string {
  if (!iso) return 'never';
  const s = (Date.now() - new Date(iso).getTime()) / 1000;
  const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  if (Math.abs(s) < 60) return rtf.format(-Math.round(s), 'second');
  if (Math.abs(s) < 3600) return rtf.format(-Math.round(s / 60), 'minute');
  if (Math.abs(s) < 86400) return rtf.format(-Math.round(s / 3600), 'hour');
  return rtf.format(-Math.round(s / 86400), 'day');
}

const plurals = new Intl.PluralRules('en');
/** English plurals the regular way, and the irregular ones the console uses. */
const IRREGULAR: Partial<Record<string, string>> = { person: 'people' };

/** The word for `n` of something: `plural(1, 'row')` is "row", `plural(2, 'row')` "rows" (Intl.PluralRules). */
export function plural(n: number, one: string, other?: string): string {
  if (plurals.select(n) === 'one') return one;
  if (other) return other;
  if (IRREGULAR[one]) return IRREGULAR[one];
  if (/[^aeiou]y$/.test(one)) return `${one.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(one)) return `${one}es`;
  return `${one}s`;
}

/** A number with its word: "1 row", "2,401 rows" (grouped digits, the right plural). */
export function count(n: number, one: string, other?: string): string {
  return `${number.format(n)} ${plural(n, one, other)}`;
}

/** "a" or "an" before a word, by its sound: "an editor", "an admin", "a viewer", "a user", "an hour". */
export function withArticle(word: string): string {
  const w = word.trim().toLowerCase();
  const vowelSound =
    /^(hour|honest|honou?r|heir)/.test(w) ||
    (/^[aeiou]/.test(w) && !/^(u[bcfhjkqrstn][aeiou]|uni|use|usu|eu|one|once)/.test(w));
  return `${vowelSound ? 'an' : 'a'} ${word}`;
}
