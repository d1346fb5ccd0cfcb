import { describe, expect, it } from 'vitest';
import { ClaimCursor } from '../../src/sending/deliveries/claim-cursor.js';

const at = (s: number) => new Date(Date.UTC(2026, 11, 1, 12, 0, s)).toISOString();
/** A claim's deliveries: those taken from the due range carry their due time, the others (leases, emails) none. */
const took = (...dues: (number | null)[]) => dues.map((s) => (s === null ? {} : { dueAt: at(s) }));

describe('ClaimCursor: where the broadcasts’ lane claims from', () => {
  it('looks from the start first, then from the latest due time the last claim took, from the start again every interval', () => {
    const c = new ClaimCursor(5_000);
    const first = c.begin(0);
    expect(first).toMatchObject({ from: undefined, whole: true });
    c.note(first, took(1, 3, 2), 3, 10);
    expect(c.position).toBe(at(3));
    const second = c.begin(1_000);
    expect(second).toMatchObject({ from: at(3), whole: false });
    c.note(second, took(3, 4, 5), 3, 1_010);
    expect(c.begin(5_009)).toMatchObject({ from: at(5), whole: false });
    expect(c.begin(5_010)).toMatchObject({ from: undefined, whole: true });
  });

  it('a claim that took nothing from the due range leaves the position where it was', () => {
    const c = new ClaimCursor(5_000);
    c.note(c.begin(0), took(7), 2, 0);
    c.note(c.begin(100), [], 2, 100);
    c.note(c.begin(200), took(null, null), 2, 200);
    expect(c.position).toBe(at(7));
  });

  it('a look from the start that expired leases or emails filled first does not count: the next claim looks from the start again', () => {
    const c = new ClaimCursor(5_000);
    c.note(c.begin(0), took(7), 2, 0);
    const look = c.begin(6_000);
    expect(look.whole).toBe(true);
    c.note(look, took(null, null), 2, 6_000); // the batch full before the due range was reached
    expect(c.begin(6_100).whole).toBe(true);
    c.note(c.begin(6_100), took(null), 2, 6_100); // not full: the due range was reached, and was empty
    expect(c.begin(6_200).whole).toBe(false);
    c.note(c.begin(11_200), took(8), 1, 11_200); // reached and took from it, the batch full
    expect(c.begin(11_300)).toMatchObject({ from: at(8), whole: false });
  });

  it('goes back to a delivery written due before its position (a look from the start, or nothing due past it)', () => {
    const c = new ClaimCursor(5_000);
    c.note(c.begin(0), took(10), 1, 0);
    c.note(c.begin(100), took(4), 1, 100); // nothing past 10: the claim looked from the start and found one due at 4
    expect(c.position).toBe(at(4));
  });

  it('a step back is not undone by the other loop’s claim that began before it, from the later time', () => {
    const c = new ClaimCursor(5_000);
    c.note(c.begin(0), took(10), 2, 0);
    const a = c.begin(100); // loop A: from 10
    const b = c.begin(100); // loop B: from 10, finds nothing past it and looks from the start
    c.note(b, took(2, 3), 2, 150);
    expect(c.position).toBe(at(3));
    c.note(a, took(11, 12), 2, 160); // A began before the step back: its later time would skip what is due 3–10
    expect(c.position).toBe(at(3));
    const next = c.begin(200);
    c.note(next, took(5, 11), 2, 210); // a claim that began after it moves on as usual
    expect(c.position).toBe(at(11));
  });
});
