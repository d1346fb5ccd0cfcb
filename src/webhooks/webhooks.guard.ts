import dns from 'node:dns';
import net from 'node:net';

/**
 * The SSRF guard (docs/webhooks.md, contract §13): a webhook URL is https (http only with WEBHOOKS_ALLOW_HTTP),
 * and every address its host resolves to is public (unless WEBHOOKS_ALLOW_PRIVATE). It runs when an endpoint is
 * created or changed, and again before each delivery; the delivery then connects to the address checked (pinned),
 * so a DNS answer that changes between the check and the connection (rebinding) cannot reach another address.
 */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address of a host name (an IP literal resolves to itself). Injectable: tests play DNS changes. */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (host) =>
  (await dns.promises.lookup(host, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

export interface GuardOptions {
  allowHttp: boolean;
  allowPrivate: boolean;
  resolve?: Resolver;
}

export class UrlRefused extends Error {}

/** How long a host's resolution may take before the URL is refused (this time). */
export const RESOLVE_TIMEOUT_MS = 5000;

const V4_BLOCKED: [string, number, string][] = [
  ['0.0.0.0', 8, 'unspecified ("this network")'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, '6to4 relay'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];
const V6_BLOCKED: [string, number, string][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['100::', 64, 'discard-only'],
  ['2001:db8::', 32, 'documentation'],
  ['fc00::', 7, 'unique-local'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
];

const blocked = new Map<string, net.BlockList>();
for (const [prefix, bits, label] of [...V4_BLOCKED, ...V6_BLOCKED]) {
  const list = blocked.get(label) ?? new net.BlockList();
  list.addSubnet(prefix, bits, net.isIPv6(prefix) ? 'ipv6' : 'ipv4');
  blocked.set(label, list);
}

/** The 16 bytes of an IPv6 address (valid, as net.isIPv6 says), for the prefixes that embed an IPv4 one. */
function ipv6Bytes(address: string): number[] {
  let text = address.split('%')[0]!;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1]!.split('.').map(Number) as [number, number, number, number];
    text = text.slice(0, -v4[1]!.length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') as [string, string] : [text, undefined];
  const parse = (s: string) => (s ? s.split(':').map((h) => parseInt(h, 16)) : []);
  const h = parse(head);
  const t = tail === undefined ? [] : parse(tail);
  const groups = [...h, ...Array<number>(8 - h.length - t.length).fill(0), ...t];
  return groups.flatMap((g) => [g >> 8, g & 0xff]);
}

/**
 * Why the address may not be called (a private, loopback, link-local, unique-local, unspecified, multicast,
 * carrier-grade NAT or otherwise non-public range), or null when it is public. IPv4 addresses embedded in IPv6
 * ones (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged as IPv4.
 */
export function nonPublicReason(address: string): string | null {
  const family = net.isIP(address);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const b = ipv6Bytes(address);
    const zeros = (n: number) => b.slice(0, n).every((x) => x === 0);
    const v4 = (at: number) => b.slice(at, at + 4).join('.');
    if (zeros(10) && b[10] === 0xff && b[11] === 0xff) return nonPublicReason(v4(12)) && `IPv4-mapped ${nonPublicReason(v4(12))}`;
    if (zeros(12) && !(b[12] === 0 && b[13] === 0 && b[14] === 0 && (b[15] ?? 0) <= 1)) return nonPublicReason(v4(12)) && `IPv4-compatible ${nonPublicReason(v4(12))}`;
    if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && b.slice(4, 12).every((x) => x === 0)) return nonPublicReason(v4(12)) && `NAT64 ${nonPublicReason(v4(12))}`;
    if (b[0] === 0x20 && b[1] === 0x02) return nonPublicReason(v4(2)) && `6to4 ${nonPublicReason(v4(2))}`;
  }
  for (const [label, list] of blocked) if (list.check(address, family === 6 ? 'ipv6' : 'ipv4')) return label;
  if (family === 4 && address === '255.255.255.255') return 'broadcast';
  return null;
}

/** The URL's shape: absolute, http(s) as allowed, a host. Returns the parsed URL or throws UrlRefused. */
export function checkUrlShape(raw: string, allowHttp: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlRefused('must be an absolute URL');
  }
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) {
    throw new UrlRefused(allowHttp ? 'must be an http:// or https:// URL' : 'must be an https:// URL (http:// only with WEBHOOKS_ALLOW_HTTP=true)');
  }
  if (!url.hostname) throw new UrlRefused('must name a host');
  return url;
}

/** The host as the resolver takes it: IPv6 literals without their brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

export class UrlGuard {
  private readonly resolve: Resolver;

  constructor(private readonly opts: GuardOptions) {
    this.resolve = opts.resolve ?? systemResolver;
  }

  /**
   * Checks the URL and resolves its host: the addresses to connect to (every one of them checked), or UrlRefused
   * saying why (shape, a host that does not resolve, an address that is not public).
   */
  async check(raw: string): Promise<{ url: URL; addresses: ResolvedAddress[] }> {
    const url = checkUrlShape(raw, this.opts.allowHttp);
    const host = hostOf(url);
    let addresses: ResolvedAddress[];
    let timer: NodeJS.Timeout | undefined;
    try {
      // A resolver that never answers must not hold a whole batch of deliveries (or a request) up.
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(Object.assign(new Error('timed out'), { code: 'ETIMEOUT' })), RESOLVE_TIMEOUT_MS);
      });
      addresses = await Promise.race([this.resolve(host), timeout]);
    } catch (err) {
      throw new UrlRefused(`the host ${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    } finally {
      clearTimeout(timer);
    }
    if (!addresses.length) throw new UrlRefused(`the host ${host} does not resolve`);
    if (!this.opts.allowPrivate) {
      for (const a of addresses) {
        const why = nonPublicReason(a.address);
        if (why) throw new UrlRefused(`the host ${host} resolves to ${a.address}, a ${why} address; only public addresses can receive webhooks (WEBHOOKS_ALLOW_PRIVATE=true allows others)`);
      }
    }
    return { url, addresses };
  }
}
