/**
 * Failed sign-ins counted in memory, per process (docs/console.md, "Rate limits"): at most `perKey` failures per
 * address and `perIp` per client IP address within `windowMs`; beyond that, attempts are refused with the
 * seconds until the oldest failure leaves the window. Several processes behind a load balancer each count
 * their own (the limit is then that many times higher); a restart forgets.
 */
export class FailureLimiter {
  private readonly byKey = new Map<string, number[]>();
  private readonly byIp = new Map<string, number[]>();

  constructor(private readonly opts: { perKey: number; perIp: number; windowMs: number; maxEntries?: number }) {}

  /** Seconds to wait before trying again, or 0 when an attempt is allowed now. */
  retryAfter(key: string, ip: string, now = Date.now()): number {
    const wait = (list: number[] | undefined, limit: number) => {
      if (!list || list.length < limit) return 0;
      const oldest = list[list.length - limit]!;
      return Math.max(1, Math.ceil((oldest + this.opts.windowMs - now) / 1000));
    };
    return Math.max(wait(this.recent(this.byKey, key, now), this.opts.perKey), wait(this.recent(this.byIp, ip, now), this.opts.perIp));
  }

  fail(key: string, ip: string, now = Date.now()): void {
    this.push(this.byKey, key, now);
    this.push(this.byIp, ip, now);
  }

  /**
   * Counts an attempt before it is checked (so that parallel guesses cannot all pass the limit while the password
   * hashes are computed); `cleared()` takes it back when the attempt succeeds. Returns the same wait as retryAfter.
   */
  begin(key: string, ip: string, now = Date.now()): { retryAfter: number; cleared: () => void } {
    const retryAfter = this.retryAfter(key, ip, now);
    if (retryAfter) return { retryAfter, cleared: () => {} };
    this.fail(key, ip, now);
    return {
      retryAfter: 0,
      cleared: () => {
        this.drop(this.byIp, ip, now);
        this.byKey.delete(key);
      },
    };
  }

  /** A successful sign-in forgets the address's failures (not the IP address's). */
  succeed(key: string): void {
    this.byKey.delete(key);
  }

  private drop(map: Map<string, number[]>, k: string, at: number): void {
    const list = map.get(k);
    const i = list?.lastIndexOf(at) ?? -1;
    if (list && i >= 0) list.splice(i, 1);
  }

  private recent(map: Map<string, number[]>, k: string, now: number): number[] | undefined {
    const list = map.get(k);
    if (!list) return undefined;
    const kept = list.filter((t) => t > now - this.opts.windowMs);
    if (kept.length) map.set(k, kept);
    else map.delete(k);
    return kept;
  }

  private push(map: Map<string, number[]>, k: string, now: number): void {
    const list = this.recent(map, k, now) ?? [];
    list.push(now);
    map.set(k, list.slice(-Math.max(this.opts.perKey, this.opts.perIp)));
    // Bounded memory under a flood of distinct addresses: the oldest entries go first.
    const max = this.opts.maxEntries ?? 100_000;
    while (map.size > max) map.delete(map.keys().next().value!);
  }
}
