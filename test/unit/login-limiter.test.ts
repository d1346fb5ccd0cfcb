import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LoginLimiter, ipKey } from '../../src/access/users/login-limiter.js';

/** Issue 29 item 12: nobody can lock the owner out, and an attacker stays limited (the clock is the test's). */
const OWNER = 'owner@example.com';
const HOUR = 3600_000;

describe('login limiter', () => {
  it('counts IPv6 by /64 and IPv4-mapped as IPv4', () => {
    expect(ipKey('10.1.2.3')).toBe('10.1.2.3');
    expect(ipKey('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(ipKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::');
    expect(ipKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::');
    expect(ipKey('2001:DB8:1:2:3::')).toBe('2001:db8:1:2::');
    expect(ipKey('2001:db8::1')).toBe('2001:db8::');
    expect(ipKey('::1')).toBe('::');
    expect(ipKey('not an address')).toBe('not an address');
  });

  // Attacks: failures for the owner's address from addresses drawn from a pool (IPv4 and IPv6), at random gaps.
  const attack = fc.array(
    fc.record({
      gapMs: fc.integer({ min: 0, max: 120_000 }),
      ip: fc.oneof(
        fc.integer({ min: 1, max: 60 }).map((n) => `203.0.113.${n}`),
        fc.integer({ min: 1, max: 60 }).map((n) => `2001:db8:${n}::${n}`),
      ),
      ownerTurn: fc.constantFrom('none', 'device', 'known-ip', 'new-place'),
    }),
    { minLength: 1, maxLength: 400 },
  );

  it('sweep: the owner from a known device or a known address is never held; the attacker gets at most 20 guesses in the first hour', () => {
    let runs = 0;
    let attempts = 0;
    fc.assert(
      fc.property(attack, (events) => {
        runs++;
        const limiter = new LoginLimiter();
        let now = Date.parse('2031-01-01T00:00:00Z');
        const start = now;
        let guessedFirstHour = 0;
        for (const e of events) {
          now += e.gapMs;
          attempts++;
          const a = limiter.begin(OWNER, e.ip, { kind: 'none' }, now);
          if (!a.retryAfter && now - start < HOUR) guessedFirstHour++;
          // Interleaved, the owner with the right password (the attempt cleared at once, as a success does).
          if (e.ownerTurn === 'device') {
            const o = limiter.begin(OWNER, e.ip, { kind: 'device', device: 'the owner browser entry' }, now);
            expect(o.retryAfter).toBe(0);
            o.cleared();
          } else if (e.ownerTurn === 'known-ip') {
            const o = limiter.begin(OWNER, '198.51.100.7', { kind: 'ip' }, now);
            expect(o.retryAfter).toBe(0);
            o.cleared();
          }
        }
        expect(guessedFirstHour).toBeLessThanOrEqual(20);
      }),
      { numRuns: 300 },
    );
    expect(runs).toBe(300);
    expect(attempts).toBeGreaterThan(300);
  });

  it('a success takes its attempt back; the backoff caps at 15 minutes and ends after a day', () => {
    const limiter = new LoginLimiter();
    let now = 0;
    for (let i = 0; i < 30; i++) {
      now += 16 * 60_000;
      expect(limiter.begin(OWNER, `192.0.2.${i}`, { kind: 'none' }, now).retryAfter).toBe(0);
    }
    expect(limiter.retryAfter(OWNER, '192.0.2.200', { kind: 'none' }, now)).toBe(900);
    expect(limiter.retryAfter(OWNER, '192.0.2.200', { kind: 'ip' }, now)).toBe(0);
    now += 25 * HOUR;
    expect(limiter.retryAfter(OWNER, '192.0.2.200', { kind: 'none' }, now)).toBe(0);
    const ok = limiter.begin('other@example.com', '192.0.2.1', { kind: 'none' }, now);
    ok.cleared();
    for (let i = 0; i < 5; i++) limiter.begin('other@example.com', '192.0.2.1', { kind: 'none' }, now);
    expect(limiter.retryAfter('other@example.com', '192.0.2.1', { kind: 'none' }, now)).toBe(900);
  });
});
