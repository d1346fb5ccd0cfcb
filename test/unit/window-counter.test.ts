import { describe, expect, it } from 'vitest';
import { WindowCounter } from '../../src/lib/window-counter.js';

describe('WindowCounter', () => {
  it('allows `limit` hits per key in a window from its first hit, then starts afresh', () => {
    const c = new WindowCounter(2, 1000);
    expect([c.allow('a', 0), c.allow('a', 10), c.allow('a', 999)]).toEqual([true, true, false]);
    expect(c.allow('b', 500)).toBe(true);
    expect(c.allow('a', 1000)).toBe(true);
    expect(c.allow('b', 600)).toBe(true);
    expect(c.allow('b', 700)).toBe(false);
  });

  it('a clock set back starts a new window', () => {
    const c = new WindowCounter(1, 1000);
    expect(c.allow('a', 5000)).toBe(true);
    expect(c.allow('a', 5001)).toBe(false);
    expect(c.allow('a', 4000)).toBe(true);
  });

  it('remembers at most `max` keys, forgetting the oldest window first', () => {
    const c = new WindowCounter(1, 60_000, 2);
    c.allow('a', 0);
    c.allow('b', 1);
    c.allow('c', 2);
    expect(c.allow('a', 3)).toBe(true); // forgotten: a fresh window
    expect(c.allow('c', 4)).toBe(false);
  });

  it('says how long until the window of a key over its limit ends', () => {
    const c = new WindowCounter(1, 60_000);
    expect(c.hit('a', 1000)).toBe(0);
    expect(c.hit('a', 11_000)).toBe(50_000);
    expect(c.hit('a', 61_000)).toBe(0);
  });

  it('a limit of 0 allows nothing', () => {
    expect(new WindowCounter(0).allow('a', 0)).toBe(false);
  });
});
