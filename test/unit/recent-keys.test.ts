import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RecentKeys } from '../../src/lib/recent-keys.js';

/** What RecentKeys promises, with a Map and an array: the keys' latest times, and the order they were remembered in. */
class Model {
  private readonly times = new Map<string, number>();
  private readonly ring: [string, number][] = [];

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
  ) {}

  get size(): number {
    return this.times.size;
  }

  private held(at: number, now: number): boolean {
    return this.windowMs === Infinity || (now - at < this.windowMs && now >= at);
  }

  private expire(now: number): void {
    if (this.windowMs === Infinity) return;
    while (this.ring.length && !this.held(this.ring[0]![1], now)) this.dropOldest();
  }

  private dropOldest(): void {
    const [key, at] = this.ring.shift()!;
    if (this.times.get(key) === at) this.times.delete(key);
  }

  lastSeen(key: string, now: number): number | undefined {
    this.expire(now);
    const at = this.times.get(key);
    return at !== undefined && this.held(at, now) ? at : undefined;
  }

  remember(key: string, now: number): void {
    this.expire(now);
    if (this.ring.length === this.max) this.dropOldest();
    this.ring.push([key, now]);
    this.times.set(key, now);
  }

  forget(key: string, at: number): void {
    if (this.times.get(key) === at) this.times.delete(key);
  }

  add(key: string, now: number): boolean {
    if (this.lastSeen(key, now) !== undefined) return false;
    this.remember(key, now);
    return true;
  }
}

type Op = { kind: 'remember' | 'lastSeen' | 'forget' | 'add'; key: number; dt: number };

describe('RecentKeys (lib/recent-keys.ts): keys remembered for a time, off the heap', () => {
  it('answers as a Map in the order of remembering would, whatever the operations (add, collisions in the table included)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.constantFrom(Infinity, 40, 200),
        fc.array(
          fc.record({
            kind: fc.constantFrom('remember', 'remember', 'lastSeen', 'forget', 'add') as fc.Arbitrary<Op['kind']>,
            // Few keys, so that they come back; a table of 8-32 slots, so that their homes collide.
            key: fc.integer({ min: 0, max: 24 }),
            // Mostly forward, sometimes the same millisecond, now and then a clock set back.
            dt: fc.oneof(fc.integer({ min: 0, max: 30 }), fc.constant(0), fc.integer({ min: -50, max: -1 })),
          }),
          { maxLength: 300 },
        ),
        (max, windowMs, ops) => {
          const keys = new RecentKeys(max, windowMs);
          const model = new Model(max, windowMs);
          let now = 1_000;
          const lastRemembered = new Map<string, number>();
          for (const op of ops) {
            now += op.dt;
            const key = `c dlv_${op.key} ${op.key % 3} h`;
            if (op.kind === 'remember') {
              keys.remember(key, now);
              model.remember(key, now);
              lastRemembered.set(key, now);
            } else if (op.kind === 'add') {
              const added = model.add(key, now);
              expect(keys.add(key, now)).toBe(added);
              if (added) lastRemembered.set(key, now);
            } else if (op.kind === 'forget') {
              const at = lastRemembered.get(key) ?? now;
              keys.forget(key, at);
              model.forget(key, at);
            } else expect(keys.lastSeen(key, now)).toBe(model.lastSeen(key, now));
            expect(keys.size).toBe(model.size);
            expect(keys.size).toBeLessThanOrEqual(max);
          }
          // Every key asked at the end: the table's lookups agree with the model's after all the removals.
          for (let k = 0; k <= 24; k++) {
            const key = `c dlv_${k} ${k % 3} h`;
            expect(keys.lastSeen(key, now)).toBe(model.lastSeen(key, now));
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('holds its bound at scale: 300,000 distinct keys through a set of 100,000, the newest all found', () => {
    const keys = new RecentKeys(100_000, 60_000);
    for (let i = 0; i < 300_000; i++) keys.remember(`o dlv_${i} h`, 1_000 + i / 10);
    expect(keys.size).toBe(100_000);
    const now = 1_000 + 300_000 / 10;
    expect(keys.lastSeen('o dlv_299999 h', now)).toBe(1_000 + 299_999 / 10);
    expect(keys.lastSeen('o dlv_200000 h', now)).toBe(1_000 + 200_000 / 10);
    expect(keys.lastSeen('o dlv_199999 h', now)).toBeUndefined(); // pushed out by the bound
    // A minute later every one has left the window.
    expect(keys.lastSeen('o dlv_299999 h', now + 60_000)).toBeUndefined();
    expect(keys.size).toBe(0);
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => new RecentKeys(0)).toThrow(RangeError);
    expect(() => new RecentKeys(1.5)).toThrow(RangeError);
  });
});
