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
