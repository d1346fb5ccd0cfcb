import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { VerifiedKeyCache, type CachedKey } from '../../src/access/api-keys/key-cache.js';

const entry = (id: string): CachedKey => ({ id, keyHash: crypto.randomBytes(32) });

/** A counter the test sets, read through promises the test settles one by one. */
function counter() {
  let value = 0;
  const reads: { resolve: (v: number) => void; reject: (e: Error) => void }[] = [];
  return {
    set(v: number) {
      value = v;
    },
    read: () => new Promise<number>((resolve, reject) => reads.push({ resolve: () => resolve(value), reject })),
    reads,
    /** Settles the oldest pending read with the counter's current value. */
    async answer() {
      reads.shift()!.resolve(value);
      await new Promise((r) => setImmediate(r));
    },
  };
}

describe('VerifiedKeyCache', () => {
  it('keeps at most maxEntries keys, the least recently used out first', () => {
    const cache = new VerifiedKeyCache(async () => 0, { maxEntries: 2 });
    cache.add(entry('a'), cache.generation);
    cache.add(entry('b'), cache.generation);
    expect(cache.get('a')?.id).toBe('a'); // a is now the most recent
    cache.add(entry('c'), cache.generation);
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.id).toBe('a');
    expect(cache.get('c')?.id).toBe('c');
  });

  it('does not keep a key read before an eviction or an emptying (its generation is past)', () => {
    const cache = new VerifiedKeyCache(async () => 0);
    const before = cache.generation;
    cache.evict('a');
    cache.add(entry('a'), before);
    expect(cache.get('a')).toBeUndefined();
    const again = cache.generation;
    cache.clear();
    cache.add(entry('a'), again);
    expect(cache.get('a')).toBeUndefined();
    cache.add(entry('a'), cache.generation);
    expect(cache.get('a')?.id).toBe('a');
  });

  it('reads the counter when its last reading is older than recheckMs; one read serves the requests that wait; a moved counter empties the cache', async () => {
    let now = 0;
    const c = counter();
    const cache = new VerifiedKeyCache(c.read, { recheckMs: 250, now: () => now });
    const first = cache.fresh();
    expect(first).toBeInstanceOf(Promise);
    expect(cache.fresh()).toBe(first); // shared
    await c.answer();
    await first;
    expect(c.reads).toHaveLength(0);
    cache.add(entry('a'), cache.generation);

    now = 250;
    expect(cache.fresh()).toBeUndefined(); // read at 0, trusted until 250
    now = 251;
    const unchanged = cache.fresh()!;
    await c.answer();
    await unchanged;
    expect(cache.get('a')?.id).toBe('a');

    now = 600;
    c.set(1);
    const moved = cache.fresh()!;
    await c.answer();
    await moved;
    expect(cache.get('a')).toBeUndefined();
  });

  it('does not let a request join a read that began more than recheckMs ago, and ignores a read that ends after a later one', async () => {
    let now = 0;
    const c = counter();
    const cache = new VerifiedKeyCache(c.read, { recheckMs: 250, now: () => now });
    const slow = cache.fresh()!; // begins at 0 and hangs
    now = 300;
    const later = cache.fresh()!;
    expect(later).not.toBe(slow);
    expect(c.reads).toHaveLength(2);
    c.set(5);
    c.reads[1]!.resolve(5); // the later read ends first
    await later;
    cache.add(entry('a'), cache.generation);
    c.set(4); // the slow one says something older: it must not empty the cache again nor move the reading back
    c.reads[0]!.resolve(4);
    await slow;
    expect(cache.get('a')?.id).toBe('a');
    now = 550;
    expect(cache.fresh()).toBeUndefined(); // still the reading that began at 300
  });

  it('a failed read rejects the requests that waited for it; the next one reads again', async () => {
    let now = 0;
    const c = counter();
    const cache = new VerifiedKeyCache(c.read, { now: () => now });
    const failing = cache.fresh()!;
    c.reads.shift()!.reject(new Error('database down'));
    await expect(failing).rejects.toThrow('database down');
    now = 1;
    const retry = cache.fresh()!;
    expect(retry).toBeInstanceOf(Promise);
    await c.answer();
    await retry;
  });

  it('maxEntries 0 keeps nothing and reads nothing', () => {
    const cache = new VerifiedKeyCache(() => Promise.reject(new Error('not to be read')), { maxEntries: 0 });
    expect(cache.fresh()).toBeUndefined();
    cache.add(entry('a'), cache.generation);
    expect(cache.get('a')).toBeUndefined();
  });
});
