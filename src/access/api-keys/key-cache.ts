import { performance } from 'node:perf_hooks';

/** What a verified key leaves in memory: its id and the hash of its secret (never the secret), and what it grants. */
export interface CachedKey {
  readonly id: string;
  /** SHA-256 of the secret (32 bytes): a presented secret is still compared with it, in constant time. */
  readonly keyHash: Buffer;
}

export interface KeyCacheOptions {
  /** Keys kept, least recently used out first. 0 keeps none. */
  maxEntries?: number;
  /**
   * How long a reading of the revocation counter is trusted, in ms: a revocation made by another process is
   * refused here from at most this long after it (plus one read of the counter) on.
   */
  recheckMs?: number;
  /** A monotonic clock in ms; tests move it. */
  now?: () => number;
}

export const DEFAULT_KEY_CACHE: Required<Omit<KeyCacheOptions, 'now'>> = { maxEntries: 10_000, recheckMs: 250 };

/**
 * Verified API keys of this process, so that a request need not read its key's row (bench/README.md,
 * bench:api). A revocation must still hold at once here and within a second in every other process:
 *
 * - In this process, the service evicts the key right after the revocation commits (evict).
 * - Every change to a key's authority moves a counter in the database (a trigger, migration 0012). Cached
 *   keys are trusted only while the last reading of that counter is at most `recheckMs` old; an older one is
 *   read again first (one small query per `recheckMs` at most, shared by the requests that wait for it), and
 *   a counter that moved empties the cache.
 * - A key read from the database is kept only if nothing was evicted or emptied while it was being read
 *   (the generation did not change): a read that began before a revocation cannot put the key back after it.
 *
 * Only keys whose secret matched are kept, so unknown ids cannot fill it, and a hit still compares the
 * presented secret's hash with the kept one in constant time (the caller does).
 */
export class VerifiedKeyCache<K extends CachedKey = CachedKey> {
  private readonly entries = new Map<string, K>();
  private readonly maxEntries: number;
  private readonly recheckMs: number;
  private readonly now: () => number;
  private generationCount = 0;
  /** The counter's value as last read, and when that read began. */
  private version: number | undefined;
  private checkedAt = -Infinity;
  private pending: { startedAt: number; done: Promise<void> } | undefined;

  constructor(
    private readonly readVersion: () => Promise<number>,
    options: KeyCacheOptions = {},
  ) {
    this.maxEntries = options.maxEntries ?? DEFAULT_KEY_CACHE.maxEntries;
    this.recheckMs = options.recheckMs ?? DEFAULT_KEY_CACHE.recheckMs;
    this.now = options.now ?? (() => performance.now());
  }

  /** Moves on every eviction and emptying; a read of a key's row that began under another one is not kept. */
  get generation(): number {
    return this.generationCount;
  }

  /**
   * Undefined when the kept keys may be trusted now; otherwise a promise that settles once the counter has
   * been read again (and the cache emptied if it moved). Rejects if the database cannot be read.
   */
  fresh(): Promise<void> | undefined {
    if (this.maxEntries === 0) return undefined;
    const now = this.now();
    if (now - this.checkedAt <= this.recheckMs) return undefined;
    // A read under way that began recently enough will do; an older one is not enough for this request.
    if (this.pending && now - this.pending.startedAt <= this.recheckMs) return this.pending.done;
    const startedAt = now;
    const done = this.readVersion()
      .then((version) => {
        // Reads may finish out of order; only a later-begun one counts.
        if (startedAt <= this.checkedAt) return;
        if (version !== this.version) this.clear();
        this.version = version;
        this.checkedAt = startedAt;
      })
      .finally(() => {
        if (this.pending?.done === done) this.pending = undefined;
      });
    this.pending = { startedAt, done };
    return done;
  }

  /** The kept key, if any (call fresh first). */
  get(id: string): K | undefined {
    const entry = this.entries.get(id);
    if (entry) {
      // Least recently used out first: a hit moves to the end.
      this.entries.delete(id);
      this.entries.set(id, entry);
    }
    return entry;
  }

  /** Keeps a key just verified from the database, unless the cache was evicted from or emptied since `generation`. */
  add(entry: K, generation: number): void {
    if (this.maxEntries === 0 || generation !== this.generationCount) return;
    this.entries.delete(entry.id);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(entry.id, entry);
  }

  /** Forgets one key (its revocation committed in this process). */
  evict(id: string): void {
    this.entries.delete(id);
    this.generationCount++;
  }

  clear(): void {
    this.entries.clear();
    this.generationCount++;
  }

  get size(): number {
    return this.entries.size;
  }
}
