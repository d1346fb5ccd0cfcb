/**
 * Hits counted per key in fixed windows (each key's window starts at its first hit and lasts `windowMs`), in the
 * memory of the process: the per-visitor limits that answer a hit over the limit differently rather than refuse it
 * (form views not counted, tracking hits not recorded). At most `max` keys are remembered: past that the oldest
 * window is forgotten, so a flood of addresses costs bounded memory (a forgotten key starts afresh).
 */
export class WindowCounter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs = 60_000,
    private readonly max = 100_000,
  ) {}

  /** Counts a hit of `key` at `now` (ms); false when the key is over its limit in its window. */
  allow(key: string, now: number): boolean {
    return this.hit(key, now) === 0;
  }

  /** Counts a hit of `key` at `now` (ms); 0 when it is within the limit, else the ms until the key's window ends. */
  hit(key: string, now: number): number {
    this.expire(now);
    let w = this.windows.get(key);
    if (!w || !this.current(w, now)) {
      this.windows.delete(key);
      w = { start: now, count: 0 };
      this.windows.set(key, w);
      if (this.windows.size > this.max) this.windows.delete(this.windows.keys().next().value!);
    }
    return ++w.count <= this.limit ? 0 : w.start + this.windowMs - now;
  }

  private current(w: { start: number }, now: number): boolean {
    // A clock set back starts a new window rather than stretching the old one.
    return now - w.start < this.windowMs && now >= w.start;
  }

  /** Windows are kept in the order they started: the ended ones are at the front. */
  private expire(now: number): void {
    for (const [key, w] of this.windows) {
      if (this.current(w, now)) break;
      this.windows.delete(key);
    }
  }
}
