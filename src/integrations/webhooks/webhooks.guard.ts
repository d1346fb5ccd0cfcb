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
  (await dns.promises.lookup(host, { all: true, verbatim: true })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4,
  }));

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

/**
 * IPv6 ranges that carry an IPv4 address, or lead to one through a translator or tunnel, refused whatever they carry:
 * where the IPv4 address sits depends on the translator's configuration (local-use NAT64 takes any prefix length in
 * 64:ff9b:1::/48), the forms are deprecated (IPv4-compatible), or a relay anywhere decides (6to4, Teredo). No
 * webhook receiver needs them. `::` and `::1` are matched first (above) under their own names.
 */
const V6_EMBEDDING: [string, number, string][] = [
  ['::', 96, 'IPv4-compatible (deprecated)'],
  ['::ffff:0:0:0', 96, 'IPv4-translated'],
  ['64:ff9b:1::', 48, 'local-use NAT64'],
  ['2002::', 16, '6to4'],
  ['2001::', 32, 'Teredo'],
];

/**
 * The ranges, by reason and family, in the order they are tried; net.BlockList does the parsing and matching. The two forms that stand for one IPv4 address
 * and are in real use, IPv4-mapped (::ffff:0:0/96) and the well-known NAT64 prefix (64:ff9b::/96, which DNS64 gives
 * IPv4-only hosts on IPv6-only networks), are judged by the IPv4 address they carry.
 */
const blocked = { ipv4: new Map<string, net.BlockList>(), ipv6: new Map<string, net.BlockList>() };
/** Adds a range under `label` to the lists tried for addresses of `family` (an IPv4 rule also matches ::ffff:a.b.c.d). */
function block(family: 'ipv4' | 'ipv6', label: string, prefix: string, bits: number): void {
  const lists = blocked[family];
  const list = lists.get(label) ?? new net.BlockList();
  list.addSubnet(prefix, bits, net.isIPv6(prefix) ? 'ipv6' : 'ipv4');
  lists.set(label, list);
}
for (const [prefix, bits, label] of V6_BLOCKED) block('ipv6', label, prefix, bits);
for (const [prefix, bits, label] of V4_BLOCKED) block('ipv6', `IPv4-mapped ${label}`, `::ffff:${prefix}`, 96 + bits);
for (const [prefix, bits, label] of V4_BLOCKED) block('ipv6', `NAT64 ${label}`, `64:ff9b::${prefix}`, 96 + bits);
for (const [prefix, bits, label] of V6_EMBEDDING) block('ipv6', label, prefix, bits);
for (const [prefix, bits, label] of V4_BLOCKED) block('ipv4', label, prefix, bits);

/**
 * Why the address may not be called (a private, loopback, link-local, unique-local, unspecified, multicast,
 * carrier-grade NAT or otherwise non-public range, or an IPv6 form that embeds or tunnels to IPv4 other than the
 * two judged by their IPv4 address: see V6_EMBEDDING), or null when it is public.
 */
export function nonPublicReason(address: string): string | null {
  const bare = address.split('%')[0]!; // an IPv6 zone (fe80::1%eth0) names an interface, not an address
  const family = net.isIP(bare);
  if (family === 0) return 'not an IP address';
  const lists = family === 6 ? blocked.ipv6 : blocked.ipv4;
  for (const [label, list] of lists) if (list.check(bare, family === 6 ? 'ipv6' : 'ipv4')) return label;
  if (family === 4 && bare === '255.255.255.255') return 'broadcast';
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
    throw new UrlRefused(
      allowHttp
        ? 'must be an http:// or https:// URL'
        : 'must be an https:// URL (http:// only with WEBHOOKS_ALLOW_HTTP=true)',
    );
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
        timer = setTimeout(
          () => reject(Object.assign(new Error('timed out'), { code: 'ETIMEOUT' })),
          RESOLVE_TIMEOUT_MS,
        );
      });
      addresses = await Promise.race([this.resolve(host), timeout]);
    } catch (err) {
      throw new UrlRefused(
        `the host ${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    } finally {
      clearTimeout(timer);
    }
    if (!addresses.length) throw new UrlRefused(`the host ${host} does not resolve`);
    if (!this.opts.allowPrivate) {
      for (const a of addresses) {
        const why = nonPublicReason(a.address);
        if (why)
          throw new UrlRefused(
            `the host ${host} resolves to ${a.address}, a ${why} address; only public addresses can receive webhooks (WEBHOOKS_ALLOW_PRIVATE=true allows others)`,
          );
      }
    }
    return { url, addresses };
  }
}
