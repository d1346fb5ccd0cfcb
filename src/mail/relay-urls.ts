/** SMTP_URLS (docs/sending.md, "Several relays"): the relays and their weights, read at start (config.ts). */
export interface RelayUrl {
  url: string;
  weight: number;
}

export class RelayConfigError extends Error {}

/**
 * SMTP_URLS: comma-separated `smtp://` or `smtps://` URLs, each optionally followed by `;weight=N` (1 to 1000,
 * default 1): `smtp://a:25;weight=3,smtp://b:25`. A comma or semicolon in a user name or password is
 * percent-encoded, as anything else special in a URL.
 */
export function parseRelayUrls(raw: string): RelayUrl[] {
  const relays = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const [url, ...params] = entry.split(';').map((s) => s.trim());
      if (!/^smtps?:\/\/[^/]/.test(url!))
        throw new RelayConfigError(`SMTP_URLS: each relay must be an smtp:// or smtps:// URL, got "${redact(url!)}"`);
      try {
        new URL(url!);
      } catch {
        throw new RelayConfigError(`SMTP_URLS: "${redact(url!)}" is not a valid URL`);
      }
      let weight = 1;
      for (const p of params) {
        const m = /^weight=(\d{1,4})$/.exec(p);
        if (!m || Number(m[1]) < 1 || Number(m[1]) > 1000)
          throw new RelayConfigError(`SMTP_URLS: "${p}" after ${redact(url!)} is not weight=N (1 to 1000)`);
        weight = Number(m[1]);
      }
      return { url: url!, weight };
    });
  if (!relays.length) throw new RelayConfigError('SMTP_URLS names no relay');
  return relays;
}

/** protocol://host:port, without credentials, for logs and /readyz. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//');
  }
}
