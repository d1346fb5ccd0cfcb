/**
 * Absolute http(s) URLs that the service writes into pages, headers and policies (a form's redirect, SEO
 * images): parsed by WHATWG URL, and held to a stricter host than URL accepts (it lets `;`, `'`, `,` or
 * `*` through in a host name, which would break out of a Content-Security-Policy source list).
 */
const HOST_NAME = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const IPV6 = /^\[[0-9a-f:.]+\]$/;

/** The parsed URL when `text` is an absolute http(s) URL with a plain host name or IP and no credentials. */
export function parseHttpUrl(text: string): URL | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username || url.password) return null;
  if (!HOST_NAME.test(url.hostname) && !IPV6.test(url.hostname)) return null;
  return url;
}

export function isHttpUrl(text: string): boolean {
  return text.length <= 2048 && /^https?:\/\//i.test(text) && parseHttpUrl(text) !== null;
}

/** `scheme://host[:port]` of such a URL, safe to write into a CSP source list; null otherwise. */
export function safeOrigin(text: string): string | null {
  return parseHttpUrl(text)?.origin ?? null;
}
