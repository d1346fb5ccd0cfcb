import type { Limits, PacingConfig } from './pacing.config.js';

/**
 * Where a recipient's mail goes, for pacing (docs/sending.md): recipient domains grouped by their MX. A group of
 * the configuration claims a domain by name or by its MX hosts (`*.google.com` → google); any other domain shares
 * its destination with the domains of the same primary MX host; a domain whose MX cannot be looked up is its own.
 */
export interface Destination {
  /** `google` (a group), `mx:mx1.example.net` (an MX host) or `domain:example.org`. */
  key: string;
  limits: Limits;
}

/**
 * An MX lookup: the exchange host names of a domain, or why there are none (`MISSING`: no MX, or no such domain, an
 * answer; anything else is a failure). mail-setup's DNS lookups (domains.dns.ts, through DNS_SERVERS) are one.
 */
export type MxLookup = (domain: string) => Promise<{ ok: true; values: string[] } | { ok: false; status: string }>;

/** Names never looked up (RFC 6761 lets software treat them as special): each is its own destination. */
const SPECIAL = /(^|\.)(invalid|localhost)$|^\[/;

interface Cached {
  dest: Destination;
  until: number;
}

export class DestinationResolver {
  private readonly byDomain = new Map<string, Destination>();
  private readonly patterns: { group: string; exact: string | null; suffix: string | null }[] = [];
  private readonly cache = new Map<string, Cached>();
  private readonly pending = new Map<string, Promise<Destination>>();

  /** `lookup`: the MX lookup; null groups every domain by itself. */
  constructor(
    private readonly config: PacingConfig,
    private readonly lookup: MxLookup | null,
    private readonly now: () => number = Date.now,
  ) {
    for (const [group, g] of Object.entries(config.groups)) {
      for (const d of g.domains) this.byDomain.set(d, this.group(group));
      for (const p of g.mx)
        this.patterns.push(
          p.startsWith('*.') ? { group, exact: null, suffix: p.slice(1) } : { group, exact: p, suffix: null },
        );
    }
  }

  private group(name: string): Destination {
    const g = this.config.groups[name]!;
    return { key: name, limits: { concurrency: g.concurrency, rate: g.rate } };
  }

  private own(domain: string): Destination {
    return { key: `domain:${domain}`, limits: this.config.default };
  }

  /** The destination of MX hosts in order of preference. */
  ofMx(domain: string, hosts: readonly string[]): Destination {
    const names = hosts.map((h) => h.toLowerCase().replace(/\.$/, '')).filter(Boolean);
    // A null MX (RFC 7505: "MX 0 .") or none at all: the domain itself (its address record is the implicit MX).
    if (!names.length) return this.own(domain);
    for (const host of names) {
      const hit = this.patterns.find((p) => (p.exact !== null ? host === p.exact : host.endsWith(p.suffix!)));
      if (hit) return this.group(hit.group);
    }
    return { key: `mx:${names[0]}`, limits: this.config.default };
  }

  /** The destination known without waiting: by name, from the cache, or null when a lookup is needed. */
  known(domain: string): Destination | null {
    const d = domain.toLowerCase();
    const named = this.byDomain.get(d);
    if (named) return named;
    if (!this.lookup || SPECIAL.test(d)) return this.own(d);
    const hit = this.cache.get(d);
    if (hit && hit.until > this.now()) return hit.dest;
    return null;
  }

  /** Looks the domain's MX up (one lookup at a time per domain) and caches the answer. */
  resolve(domain: string): Promise<Destination> {
    const d = domain.toLowerCase();
    const known = this.known(d);
    if (known) return Promise.resolve(known);
    let p = this.pending.get(d);
    if (!p) {
      p = this.lookup!(d)
        .then(
          (answer) => {
            // No MX (ENODATA) and no such domain (ENOTFOUND) are answers; a timeout or a server failure is not.
            const answered = answer.ok || answer.status === 'MISSING';
            const dest = answer.ok ? this.ofMx(d, answer.values) : this.own(d);
            if (this.cache.size >= 50_000) this.cache.clear();
            this.cache.set(d, {
              dest,
              until: this.now() + (answered ? this.config.mxCacheMs : this.config.mxFailureCacheMs),
            });
            return dest;
          },
          () => this.own(d),
        )
        .finally(() => this.pending.delete(d));
      this.pending.set(d, p);
    }
    return p;
  }

  /**
   * The destinations of a batch's domains, waiting at most `budgetMs` for lookups: a domain not answered by then
   * is grouped by itself for this batch (its lookup goes on and fills the cache for the next one).
   */
  async resolveAll(domains: Iterable<string>, budgetMs: number): Promise<Map<string, Destination>> {
    const out = new Map<string, Destination>();
    const waits: Promise<void>[] = [];
    for (const domain of new Set(domains)) {
      const known = this.known(domain);
      if (known) out.set(domain, known);
      else waits.push(this.resolve(domain).then((dest) => void out.set(domain, dest)));
    }
    if (waits.length) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(waits), new Promise<void>((resolve) => (timer = setTimeout(resolve, budgetMs)))]);
      clearTimeout(timer);
      for (const domain of new Set(domains)) if (!out.has(domain)) out.set(domain, this.own(domain.toLowerCase()));
    }
    return out;
  }
}

/** The domain of an address (the part after the last @), lower-cased. */
export function domainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}
