import { randomInt } from 'node:crypto';

/**
 * A bounded set of string keys, each with the time it was last remembered, kept outside the JavaScript heap: typed
 * arrays sized once, so that remembering a key allocates nothing the garbage collector has to trace or move. Made
 * for the tracking endpoints' replay memory (src/sending/tracking/tracking.guards.ts), which remembers every hit
 * for a minute: as Maps of strings and objects, those entries outlived the young generation, were promoted, and then
 * died by the thousand a second, and the old generation's collections were the endpoints' p99 and ~37 µs of CPU a
 * hit (bench/README.md, bench:track, "The replay memory off the heap").
 *
 * - A key is stored as its 64-bit hash (two 32-bit halves, seeded per instance at random): two keys are taken for one
 *   with a probability of about size / 2^64 a lookup (~5·10⁻¹⁵ when full), and the keys of the tracking guards are
 *   chosen by whoever signed the token, not by the caller. (The seeds are 31-bit; the hash is 64.)
 * - Open addressing, linear probing, at most half full; a key is removed by shifting the keys after it back (no
 *   tombstones, so lookups stay short however long the process runs).
 * - The order in which keys were remembered is a ring of (hash, time) records of `max` entries: the oldest go first
 *   (a record whose key was remembered again since is skipped), so the set never holds more than `max` keys.
 * - With a window, a key remembered longer ago than `windowMs`, or in the future (a clock set back), is gone.
 */
export class RecentKeys {
  private readonly mask: number;
  // Empty until the first key is remembered (~6 MB for 100,000 keys: a process or a test that records no hit pays
  // nothing); a lookup in an empty table finds nothing.
  private used = new Uint8Array(0);
  private hashHi = new Int32Array(0);
  private hashLo = new Int32Array(0);
  private times = new Float64Array(0);
  private ringHi = new Int32Array(0);
  private ringLo = new Int32Array(0);
  private ringTimes = new Float64Array(0);
  private ringStart = 0;
  private ringLength = 0;
  private live = 0;
  private readonly seedHi = randomInt(0x7fffffff);
  private readonly seedLo = randomInt(0x7fffffff);
  /** The hash of the last key given to hash(): two numbers without a tuple allocated per call. */
  private hi = 0;
  private lo = 0;

  /**
   * @param max keys held at most (the oldest forgotten first)
   * @param windowMs how long a key is held; Infinity: until `max` newer keys push it out
   */
  constructor(
    readonly max: number,
    readonly windowMs = Infinity,
  ) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError('max must be a positive integer');
    let capacity = 8;
    while (capacity < max * 2) capacity *= 2;
    this.mask = capacity - 1;
  }

  private allocate(): void {
    const capacity = this.mask + 1;
    this.used = new Uint8Array(capacity);
    this.hashHi = new Int32Array(capacity);
    this.hashLo = new Int32Array(capacity);
    this.times = new Float64Array(capacity);
    this.ringHi = new Int32Array(this.max);
    this.ringLo = new Int32Array(this.max);
    this.ringTimes = new Float64Array(this.max);
  }

  /** Keys held now (as of the last call that was given a time). */
  get size(): number {
    return this.live;
  }

  /** When `key` was last remembered, if it is still held at `now`; undefined otherwise. */
  lastSeen(key: string, now: number): number | undefined {
    this.expire(now);
    this.hash(key);
    const slot = this.find(this.hi, this.lo);
    if (slot < 0) return undefined;
    const at = this.times[slot]!;
    // The ring is in time order unless the clock was set back: a key of such a time is checked here.
    return this.windowMs === Infinity || (now - at < this.windowMs && now >= at) ? at : undefined;
  }

  /** Remembers `key` at `now` (again, if it was held: its time moves to `now`). */
  remember(key: string, now: number): void {
    if (this.used.length === 0) this.allocate();
    this.expire(now);
    this.hash(key);
    this.insert(this.hi, this.lo, now);
  }

  /** The key of hash (hi, lo) remembered at `now`: a ring record, and its slot (its time moved if it was held). */
  private insert(hi: number, lo: number, now: number): void {
    if (this.ringLength === this.max) this.dropOldest();
    const end = (this.ringStart + this.ringLength) % this.max;
    this.ringHi[end] = hi;
    this.ringLo[end] = lo;
    this.ringTimes[end] = now;
    this.ringLength++;
    let slot = this.home(hi, lo);
    while (this.used[slot]) {
      if (this.hashHi[slot] === hi && this.hashLo[slot] === lo) {
        this.times[slot] = now;
        return;
      }
      slot = (slot + 1) & this.mask;
    }
    this.used[slot] = 1;
    this.hashHi[slot] = hi;
    this.hashLo[slot] = lo;
    this.times[slot] = now;
    this.live++;
  }

  /**
   * Remembers `key` at `now` unless it is held: true when it was added, false when it was held (its time unchanged).
   * lastSeen and remember in one lookup, for a set of first sightings.
   */
  add(key: string, now: number): boolean {
    if (this.used.length === 0) this.allocate();
    this.expire(now);
    this.hash(key);
    const slot = this.find(this.hi, this.lo);
    if (slot >= 0) {
      const at = this.times[slot]!;
      if (this.windowMs === Infinity || (now - at < this.windowMs && now >= at)) return false;
    }
    this.insert(this.hi, this.lo, now);
    return true;
  }

  /** Forgets `key` if it was last remembered at `at` (a later remembering of it stays). */
  forget(key: string, at: number): void {
    this.hash(key);
    const slot = this.find(this.hi, this.lo);
    if (slot >= 0 && this.times[slot] === at) this.remove(slot);
  }

  private expire(now: number): void {
    if (this.windowMs === Infinity) return;
    while (this.ringLength > 0) {
      const at = this.ringTimes[this.ringStart]!;
      if (now - at < this.windowMs && now >= at) return;
      this.dropOldest();
    }
  }

  /** Takes the oldest record off the ring, and its key with it unless that key was remembered again since. */
  private dropOldest(): void {
    const i = this.ringStart;
    const slot = this.find(this.ringHi[i]!, this.ringLo[i]!);
    if (slot >= 0 && this.times[slot] === this.ringTimes[i]) this.remove(slot);
    this.ringStart = (i + 1) % this.max;
    this.ringLength--;
  }

  private find(hi: number, lo: number): number {
    let slot = this.home(hi, lo);
    while (this.used[slot]) {
      if (this.hashHi[slot] === hi && this.hashLo[slot] === lo) return slot;
      slot = (slot + 1) & this.mask;
    }
    return -1;
  }

  private home(hi: number, lo: number): number {
    return (hi ^ (lo >>> 11)) & this.mask;
  }

  /** Empties `slot` and moves back the keys after it that would no longer be found (Knuth's algorithm R). */
  private remove(slot: number): void {
    this.live--;
    let hole = slot;
    let next = slot;
    for (;;) {
      next = (next + 1) & this.mask;
      if (!this.used[next]) break;
      const home = this.home(this.hashHi[next]!, this.hashLo[next]!);
      // The key at `next` stays if its home lies cyclically in (hole, next]: it is still found from there.
      const stays = hole <= next ? hole < home && home <= next : hole < home || home <= next;
      if (stays) continue;
      this.hashHi[hole] = this.hashHi[next]!;
      this.hashLo[hole] = this.hashLo[next]!;
      this.times[hole] = this.times[next]!;
      hole = next;
    }
    this.used[hole] = 0;
  }

  /** Two 32-bit hashes of the key's UTF-16 units (murmur3's mixing with two seeds), into this.hi and this.lo. */
  private hash(key: string): void {
    let h1 = this.seedHi;
    let h2 = this.seedLo;
    for (let i = 0; i < key.length; i++) {
      const c = key.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0xcc9e2d51);
      h1 = (h1 << 15) | (h1 >>> 17);
      h2 = Math.imul(h2 ^ c, 0x1b873593);
      h2 = (h2 << 13) | (h2 >>> 19);
      h2 = Math.imul(h2, 5) + 0xe6546b64;
    }
    h1 ^= key.length;
    h1 = Math.imul(h1 ^ (h1 >>> 16), 0x85ebca6b);
    h1 = Math.imul(h1 ^ (h1 >>> 13), 0xc2b2ae35);
    h2 ^= key.length;
    h2 = Math.imul(h2 ^ (h2 >>> 16), 0x85ebca6b);
    h2 = Math.imul(h2 ^ (h2 >>> 13), 0xc2b2ae35);
    this.hi = h1 ^ (h1 >>> 16);
    this.lo = h2 ^ (h2 >>> 16);
  }
}
