import crypto from 'node:crypto';

/**
 * Random bytes from the CSPRNG, drawn from a pool refilled 4 KiB at a time, each byte handed out once. A call of
 * crypto.randomBytes costs ~10-40 µs here whatever its size (measured: 24 bytes and 4 KiB alike), and under load a
 * form submission spent more in it than in its SQL; Node's own crypto.randomUUID keeps such a cache too. For the
 * ids and tokens of hot paths (lib/ids.ts, a submission's confirmation token).
 */
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let next = POOL_BYTES;

/** `n` random bytes (a copy: the caller owns them). */
export function pooledRandomBytes(n: number): Buffer {
  if (n > POOL_BYTES / 4) return crypto.randomBytes(n);
  if (next + n > POOL_BYTES) {
    crypto.randomFillSync(pool);
    next = 0;
  }
  const out = Buffer.from(pool.subarray(next, next + n));
  next += n;
  return out;
}

/** One random byte, 0-255 (ULIDs take one per character). */
export function pooledRandomByte(): number {
  if (next === POOL_BYTES) {
    crypto.randomFillSync(pool);
    next = 0;
  }
  return pool[next++]!;
}
