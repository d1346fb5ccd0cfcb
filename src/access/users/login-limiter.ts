import { ipKey } from '../../lib/ip-key.js';

/**
 * Failed sign-ins counted in memory, per process (docs/console.md, "Rate limits"): at most `perKey` failures per
 * address and `perIp` per client IP address (IPv6 by /64: ipKey) within `windowMs`; beyond that, attempts are refused with the
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
    return Math.max(
      wait(this.recent(this.byKey, key, now), this.opts.perKey),
      wait(this.recent(this.byIp, ipKey(ip), now), this.opts.perIp),
    );
  }

  fail(key: string, ip: string, now = Date.now()): void {
    this.push(this.byKey, key, now);
    this.push(this.byIp, ipKey(ip), now);
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

/** How much a sign-in attempt is trusted, from what it brings (docs/console.md, "Rate limits"). */
export type LoginTrust =
  /** A device cookie this account's sign-in set in this browser before: only the device's own failures count. */
  | { kind: 'device'; device: string }
  /** An IP address the account signed in from before: not held by the account-wide backoff. */
  | { kind: 'ip' }
  | { kind: 'none' };

export interface LoginLimits {
  /** Failures per (account, IP address) and per IP address within `windowMs`. */
  perAccountIp: number;
  perIp: number;
  /** Failures per known device (its cookie) within `windowMs`. */
  perDevice: number;
  windowMs: number;
  /** Failures of an account from anywhere (not from its known devices) within `accountWindowMs` before the backoff starts. */
  accountFree: number;
  accountWindowMs: number;
  /** The account-wide backoff: base × 2^(failures − accountFree) after the last failure, at most accountMaxMs. */
  accountBaseMs: number;
  accountMaxMs: number;
  maxEntries?: number;
}

export const LOGIN_LIMITS: LoginLimits = {
  perAccountIp: 5,
  perIp: 20,
  perDevice: 5,
  windowMs: 15 * 60_000,
  accountFree: 10,
  accountWindowMs: 24 * 3600_000,
  accountBaseMs: 30_000,
  accountMaxMs: 15 * 60_000,
};

export { ipKey };

/**
 * Failed console sign-ins (issue 29 item 12), counted in memory per process. Anyone may fail for any address, so no
 * count may let a stranger lock the owner out:
 * - per (account, IP address) and per IP address (IPv6 by /64), in a short window: what one client may try;
 * - per account from everywhere, a slower backoff that grows with each failure (what a client spread over many
 *   addresses may try); a correct password from a known device or from an IP address the account signed in from
 *   before is not held by it;
 * - a known device (a cookie the account's sign-in set) is counted on its own: failures elsewhere never hold it.
 * Every attempt counts before its password is checked (parallel guesses cannot slip past); success takes it back.
 */
export class LoginLimiter {
  private readonly pairs = new Map<string, number[]>();
  private readonly ips = new Map<string, number[]>();
  private readonly devices = new Map<string, number[]>();
  private readonly accounts = new Map<string, number[]>();

  constructor(private readonly limits: LoginLimits = LOGIN_LIMITS) {}

  /** Milliseconds the account-wide backoff still holds attempts from unknown places (0: none). */
  accountWaitMs(account: string, now = Date.now()): number {
    const l = this.limits;
    const list = this.recent(this.accounts, account, now, l.accountWindowMs);
    if (!list || list.length < l.accountFree) return 0;
    const delay = Math.min(l.accountMaxMs, l.accountBaseMs * 2 ** (list.length - l.accountFree));
    return Math.max(0, list[list.length - 1]! + delay - now);
  }

  /** Seconds to wait before trying again, or 0 when the attempt may be checked now. */
  retryAfter(account: string, ip: string, trust: LoginTrust, now = Date.now()): number {
    const l = this.limits;
    const seconds = (ms: number) => (ms > 0 ? Math.max(1, Math.ceil(ms / 1000)) : 0);
    if (trust.kind === 'device')
      return seconds(this.windowWait(this.devices, `${account}\n${trust.device}`, l.perDevice, now));
    const net = ipKey(ip);
    return seconds(
      Math.max(
        this.windowWait(this.pairs, `${account}\n${net}`, l.perAccountIp, now),
        this.windowWait(this.ips, net, l.perIp, now),
        trust.kind === 'ip' ? 0 : this.accountWaitMs(account, now),
      ),
    );
  }

  /** Counts the attempt (unless it must wait); `cleared()` takes it back when the password was right. */
  begin(account: string, ip: string, trust: LoginTrust, now = Date.now()): { retryAfter: number; cleared: () => void } {
    const retryAfter = this.retryAfter(account, ip, trust, now);
    if (retryAfter) return { retryAfter, cleared: () => {} };
    if (trust.kind === 'device') {
      const key = `${account}\n${trust.device}`;
      this.push(this.devices, key, now);
      return { retryAfter: 0, cleared: () => void this.devices.delete(key) };
    }
    const net = ipKey(ip);
    const pair = `${account}\n${net}`;
    this.push(this.pairs, pair, now);
    this.push(this.ips, net, now);
    this.push(this.accounts, account, now);
    return {
      retryAfter: 0,
      cleared: () => {
        // The right password: this client's failures for the account are forgotten; the IP address's and the
        // account's others stay (they may be someone else's).
        this.pairs.delete(pair);
        this.drop(this.ips, net, now);
        this.drop(this.accounts, account, now);
      },
    };
  }

  private windowWait(map: Map<string, number[]>, key: string, limit: number, now: number): number {
    const list = this.recent(map, key, now, this.limits.windowMs);
    if (!list || list.length < limit) return 0;
    return list[list.length - limit]! + this.limits.windowMs - now;
  }

  private recent(map: Map<string, number[]>, key: string, now: number, windowMs: number): number[] | undefined {
    const list = map.get(key);
    if (!list) return undefined;
    const kept = list.filter((t) => t > now - windowMs);
    if (kept.length) map.set(key, kept);
    else map.delete(key);
    return kept.length ? kept : undefined;
  }

  private drop(map: Map<string, number[]>, key: string, at: number): void {
    const list = map.get(key);
    const i = list?.lastIndexOf(at) ?? -1;
    if (list && i >= 0) list.splice(i, 1);
  }

  private push(map: Map<string, number[]>, key: string, now: number): void {
    const list = map.get(key) ?? [];
    list.push(now);
    // Enough to decide every limit: the account backoff grows to its cap within a few dozen failures.
    map.set(key, list.length > 64 ? list.slice(-64) : list);
    // Bounded memory under a flood of distinct keys: the oldest entries go first.
    const max = this.limits.maxEntries ?? 100_000;
    while (map.size > max) map.delete(map.keys().next().value!);
  }
}
