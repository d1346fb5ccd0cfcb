/**
 * The submission listener's guards (docs/smtp-submission.md, "Limits"), in the memory of the process: connections
 * at once per address, failed AUTHs per address (a lock-out, as submission servers do), and messages a minute per
 * API key (the API's RATE_LIMIT_PER_KEY idea). `now` is a clock the tests move.
 */
export interface SubmissionGuardSettings {
  /** Connections at once from one address; then 421. */
  maxConnectionsPerIp: number;
  /** Failed AUTHs from one address within `authFailureWindowMs` that lock it out for `lockoutMs`. */
  maxAuthFailures: number;
  authFailureWindowMs: number;
  lockoutMs: number;
  /** Messages a minute per API key; 0: no limit. */
  messagesPerMinute: number;
}

export const DEFAULT_SUBMISSION_GUARDS: SubmissionGuardSettings = {
  maxConnectionsPerIp: 10,
  maxAuthFailures: 5,
  authFailureWindowMs: 15 * 60_000,
  lockoutMs: 15 * 60_000,
  messagesPerMinute: 1200,
};

/** Entries kept before the expired ones are swept (an address that keeps failing stays). */
const SWEEP_AT = 10_000;

export class SubmissionGuards {
  private readonly open = new Map<string, Set<string>>();
  private readonly failures = new Map<string, { count: number; since: number; lockedUntil: number }>();
  private readonly sent = new Map<string, { count: number; window: number }>();

  constructor(
    private readonly settings: SubmissionGuardSettings,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether a connection from `ip` may begin; a connection admitted must be ended with closed(). */
  admit(ip: string, sessionId: string): 'ok' | 'locked' | 'too_many' {
    if (this.lockedOut(ip)) return 'locked';
    const set = this.open.get(ip) ?? new Set<string>();
    if (set.size >= this.settings.maxConnectionsPerIp) return 'too_many';
    set.add(sessionId);
    this.open.set(ip, set);
    return 'ok';
  }

  closed(ip: string, sessionId: string): void {
    const set = this.open.get(ip);
    if (!set) return;
    set.delete(sessionId);
    if (set.size === 0) this.open.delete(ip);
  }

  lockedOut(ip: string): boolean {
    const entry = this.failures.get(ip);
    return !!entry && entry.lockedUntil > this.now();
  }

  /** A failed AUTH from `ip`; true when it locks the address out. */
  authFailed(ip: string): boolean {
    const now = this.now();
    let entry = this.failures.get(ip);
    if (!entry || now - entry.since > this.settings.authFailureWindowMs) {
      if (this.failures.size >= SWEEP_AT) this.sweep(now);
      entry = { count: 0, since: now, lockedUntil: entry?.lockedUntil ?? 0 };
      this.failures.set(ip, entry);
    }
    entry.count++;
    if (entry.count < this.settings.maxAuthFailures) return false;
    entry.lockedUntil = now + this.settings.lockoutMs;
    entry.count = 0;
    entry.since = now;
    return true;
  }

  authSucceeded(ip: string): void {
    const entry = this.failures.get(ip);
    if (entry && entry.lockedUntil <= this.now()) this.failures.delete(ip);
  }

  /** Counts a message of `keyId`; the seconds to wait when it is over the limit, else 0. */
  message(keyId: string): number {
    const limit = this.settings.messagesPerMinute;
    if (limit <= 0) return 0;
    const now = this.now();
    const window = Math.floor(now / 60_000);
    let entry = this.sent.get(keyId);
    if (!entry || entry.window !== window) {
      if (this.sent.size >= SWEEP_AT) for (const [k, e] of this.sent) if (e.window !== window) this.sent.delete(k);
      entry = { count: 0, window };
      this.sent.set(keyId, entry);
    }
    if (entry.count >= limit) return Math.ceil(((window + 1) * 60_000 - now) / 1000);
    entry.count++;
    return 0;
  }

  private sweep(now: number): void {
    for (const [ip, e] of this.failures)
      if (e.lockedUntil <= now && now - e.since > this.settings.authFailureWindowMs) this.failures.delete(ip);
  }
}
