import { pooledRandomByte } from './random.js';

/** Resource ids: a type prefix and a ULID, so ids sort by creation time (lists are ordered by id). */
export type IdPrefix =
  | 'ws'
  | 'key'
  | 'form'
  | 'fgrp'
  | 'tmpl'
  | 'dom'
  | 'ct'
  | 'topic'
  | 'seg'
  | 'imp'
  | 'bc'
  | 'dlv'
  | 'sub'
  | 'cnf'
  | 'sup'
  | 'inb'
  | 'dmr'
  | 'tst'
  | 'evt'
  | 'wh'
  | 'whd'
  | 'wha'
  | 'usr'
  | 'ses'
  | 'inv'
  | 'pwr'
  | 'aut'
  | 'run'
  | 'sig'
  | 'img'
  | 'aud'
  | 'rcv'
  | 'ntc'
  | 'bulk'
  | 'em';

const B32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'; // Crockford's, as ULIDs use
const HALF = 2 ** 40;

/**
 * The 80-bit random part of the last ULID, as two 40-bit halves (exact in a double), and its millisecond. Ids made in
 * one millisecond must keep their order (lists, the event outbox and cursors read by id, and a burst such as an import
 * or a broadcast's deliveries is made within one), but a monotonic ULID adds 1 to the previous id's random part: a
 * subscriber who sees their own message's id (Message-ID, the VERP address) knew their neighbour's (issue 29). So the
 * next id in the same millisecond adds a random step of 1 to 2^64 from the CSPRNG pool instead: still in order, but
 * the neighbour of a known id is one of 2^64 values. A new millisecond starts from 80 fresh random bits.
 */
let lastTime = -1;
let hi = 0;
let lo = 0;

/** A random number of `bytes` bytes from the CSPRNG pool (no Buffer allocated: this is on every insert's path). */
function randomBits(bytes: number): number {
  let n = 0;
  for (let i = 0; i < bytes; i++) n = n * 256 + pooledRandomByte();
  return n;
}

/**
 * An id's characters are written into this buffer and read out as one string: built by `+=` a ULID was ~26 strings
 * of garbage, and ids are made on every insert's path (a tracking hit's event, each delivery of a send; bench/README.md,
 * bench:track "Allocation").
 */
const SCRATCH = Buffer.alloc(16 + 26); // IdPrefix's names are at most 4 characters
const B32_CODES = Uint8Array.from(B32, (c) => c.charCodeAt(0));

/** `count` characters of `n` (at most 2^53), most significant first, ending before `end`. */
function writeBase32(n: number, end: number, count: number): void {
  for (let i = end - 1; i >= end - count; i--) {
    SCRATCH[i] = B32_CODES[n % 32]!;
    n = Math.floor(n / 32);
  }
}

/** `prefix_` and the ULID of `time`, `hi`, `lo` (10 + 8 + 8 characters). */
function formatId(prefix: string, time: number, high: number, low: number): string {
  const start = SCRATCH.write(prefix, 0, 'latin1');
  SCRATCH[start] = 0x5f; // _
  const at = start + 1;
  writeBase32(time, at + 10, 10);
  writeBase32(high, at + 18, 8);
  writeBase32(low, at + 26, 8);
  return SCRATCH.toString('latin1', 0, at + 26);
}

/**
 * `prefix` and the ULID held in 16 bytes at `offset` (128 bits, two leading zero bits: a ULID's 26 characters), e.g.
 * `dlv_01J…`. Tracking tokens carry their ids so (sending/tracking/tracking.token.ts).
 */
export function idFromBytes(prefix: string, buf: Buffer, offset: number): string {
  let at = SCRATCH.write(prefix, 0, 'latin1');
  let value = 0;
  let bits = 2; // two leading zero bits
  for (let i = 0; i < 16; i++) {
    value = ((value << 8) | buf[offset + i]!) & 0x1fff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      SCRATCH[at++] = B32_CODES[(value >>> bits) & 31]!;
    }
  }
  return SCRATCH.toString('latin1', 0, at);
}

function nextId(prefix: string): string {
  // A clock that steps back keeps the last millisecond, as the library's monotonic factory does.
  const now = Math.max(Date.now(), lastTime);
  if (now === lastTime) {
    // step = stepHi * 2^40 + stepLo + 1, from 64 random bits (stepHi: 24, stepLo: 40).
    lo += randomBits(5) + 1;
    hi += randomBits(3);
    if (lo >= HALF) {
      lo -= HALF;
      hi += 1;
    }
    if (hi < HALF) return formatId(prefix, lastTime, hi, lo);
    // This millisecond's space is spent (some 65,000 ids into it): go on in the next one.
    lastTime += 1;
  } else {
    lastTime = now;
  }
  hi = randomBits(5);
  lo = randomBits(5);
  return formatId(prefix, lastTime, hi, lo);
}

/**
 * A new id: 48 bits of time and 80 bits that no other id tells (see above). Ids sort by creation time, within one
 * process also within one millisecond.
 */
export function newId(prefix: IdPrefix): string {
  return nextId(prefix);
}
