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

/**
 * Controls and white space anywhere in the text as written: WHATWG URL silently drops tabs and line breaks (so
 * `https://a.example/x\ny` would parse) and a header cannot carry them (Node throws, which was a 500).
 */
const CONTROL_OR_SPACE = /[\p{Cc}\p{Zs}\p{Zl}\p{Zp}]/u;
/** What WHATWG URL serialises to: printable ASCII only, safe in a header as it is. */
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;
export const MAX_URL_LENGTH = 2048;

/**
 * The URL as the service stores and writes it (a Location header, an attribute): WHATWG URL's serialisation, with
 * the host in IDNA punycode and non-ASCII path, query and fragment percent-encoded (`https://例え.jp/ありがとう` →
 * `https://xn--r8jz45g.jp/%E3%81%82…`). Null when the text is not an acceptable absolute http(s) URL (see
 * parseHttpUrl), carries a control character or white space, or is longer than MAX_URL_LENGTH once encoded.
 */
export function normalHttpUrl(text: string): string | null {
  if (text.length > MAX_URL_LENGTH || CONTROL_OR_SPACE.test(text) || !/^https?:\/\//i.test(text)) return null;
  const href = parseHttpUrl(text)?.href;
  return href !== undefined && href.length <= MAX_URL_LENGTH && PRINTABLE_ASCII.test(href) ? href : null;
}

export function isHttpUrl(text: string): boolean {
  return normalHttpUrl(text) !== null;
}

/** `scheme://host[:port]` of such a URL, safe to write into a CSP source list; null otherwise. */
export function safeOrigin(text: string): string | null {
  return parseHttpUrl(text)?.origin ?? null;
}
