import { describe, expect, it } from 'vitest';
import { canonicalTimeZone, instantOfWallTime, wallTimeIn } from '../../src/lib/zones.js';

/** lib/zones.ts: wall-clock times in a zone through Intl, DST resolved as Temporal's `compatible` (issue 34). */
describe('wall-clock times in a zone', () => {
  const at = (wall: string, zone: string) => new Date(instantOfWallTime(wall, zone)).toISOString();

  it('converts a wall-clock time to its instant on either side of a DST change', () => {
    expect(at('2027-03-27T09:00:00', 'Europe/Berlin')).toBe('2027-03-27T08:00:00.000Z');
    expect(at('2027-03-28T09:00:00', 'Europe/Berlin')).toBe('2027-03-28T07:00:00.000Z');
    expect(at('2027-11-07T09:00:00', 'America/New_York')).toBe('2027-11-07T14:00:00.000Z');
    expect(at('2027-11-06T09:00', 'America/New_York')).toBe('2027-11-06T13:00:00.000Z');
    expect(at('2027-03-28T09:00:00', 'UTC')).toBe('2027-03-28T09:00:00.000Z');
    expect(at('2027-03-28T09:00:00', 'Asia/Kolkata')).toBe('2027-03-28T03:30:00.000Z');
  });

  it('a skipped time moves forward by the gap; a repeated one is its earlier instant', () => {
    // Berlin skips 02:00–03:00 on 2027-03-28: 02:30 is 03:30 CEST
    expect(at('2027-03-28T02:30:00', 'Europe/Berlin')).toBe('2027-03-28T01:30:00.000Z');
    // New York repeats 01:00–02:00 on 2027-11-07: 01:30 EDT first
    expect(at('2027-11-07T01:30:00', 'America/New_York')).toBe('2027-11-07T05:30:00.000Z');
  });

  it('reads an instant as a wall-clock time, and spells zones as Intl does', () => {
    expect(wallTimeIn(Date.parse('2027-03-28T13:00:00Z'), 'America/New_York')).toBe('2027-03-28T09:00:00');
    expect(canonicalTimeZone('europe/berlin')).toBe('Europe/Berlin');
    expect(canonicalTimeZone('Mars/Base')).toBeUndefined();
  });
});
