import { encodeTime } from 'ulid';
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

function encode40(n: number): string {
  let out = '';
  for (let i = 0; i < 8; i++) {
    out = B32[n % 32]! + out;
    n = Math.floor(n / 32);
  }
  return out;
}

function nextUlid(): string {
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
    if (hi < HALF) return encodeTime(lastTime, 10) + encode40(hi) + encode40(lo);
    // This millisecond's space is spent (some 65,000 ids into it): go on in the next one.
    lastTime += 1;
  } else {
    lastTime = now;
  }
  hi = randomBits(5);
  lo = randomBits(5);
  return encodeTime(lastTime, 10) + encode40(hi) + encode40(lo);
}

/**
 * A new id: 48 bits of time and 80 bits that no other id tells (see above). Ids sort by creation time, within one
 * process also within one millisecond.
 */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${nextUlid()}`;
}
