import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { DestinationResolver, domainOf, type Destination } from '../../src/sending/deliveries/destinations.js';
import { dispatch, Pacer, type Permit, type ThrottleNotice } from '../../src/sending/deliveries/pacing.js';
import {
  DEFAULT_PACING,
  parsePacing,
  type Adaptive,
  type PacingConfig,
} from '../../src/sending/deliveries/pacing.config.js';
import type { TxtAnswer } from '../../src/mail-setup/domains/domains.dns.js';
import { parseRelayUrls } from '../../src/mail/relay-urls.js';
import { pickRelay } from '../../src/mail/relays.js';

/** A clock the test moves by hand: nothing here sleeps, nothing asserts on real time. */
function clock(start = 1_000_000) {
  const c = { t: start, now: () => c.t };
  return c;
}

const adaptive: Adaptive = { decrease: 0.5, minRate: 0.5, pauseMs: 1_000, recoverEveryMs: 10_000, recoverStep: 0.1 };
const dest = (key: string, rate: number, concurrency = 100): Destination => ({ key, limits: { rate, concurrency } });

describe('the pacer (controlled clock)', () => {
  it("spaces a destination's messages by its rate, and says when the next slots come", () => {
    const c = clock();
    const pacer = new Pacer(adaptive, c.now);
    const a = dest('a', 10); // a tenth of a second's worth: 1 message of burst
    expect(pacer.tryAcquire(a)).not.toBeNull();
    expect(pacer.tryAcquire(a)).toBeNull();
    expect(pacer.slotAt(a)).toBe(c.t + 100);
    expect(pacer.slotAt(a, 2)).toBe(c.t + 300);
    c.t += 99;
    expect(pacer.tryAcquire(a)).toBeNull();
    c.t += 1;
    expect(pacer.tryAcquire(a)).not.toBeNull();
    // A larger rate allows a burst of a tenth of a second.
    const b = dest('b', 50);
    expect(Array.from({ length: 6 }, () => pacer.tryAcquire(b) !== null)).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
    ]);
  });

  it('holds at most `concurrency` in flight; a finished or cancelled permit makes room, once', () => {
    const pacer = new Pacer(adaptive, clock().now);
    const a = dest('a', 0, 2);
    const one = pacer.tryAcquire(a)!;
    const two = pacer.tryAcquire(a)!;
    expect(pacer.tryAcquire(a)).toBeNull();
    expect(pacer.full(a)).toBe(true);
    one.done('sent');
    one.done('sent');
    one.cancel();
    const three = pacer.tryAcquire(a)!;
    expect(three).not.toBeNull();
    expect(pacer.tryAcquire(a)).toBeNull();
    two.cancel();
    expect(pacer.tryAcquire(a)).not.toBeNull();
  });

  it('a cancelled permit gives its slot of the rate back', () => {
    const pacer = new Pacer(adaptive, clock().now);
    const a = dest('a', 1);
    pacer.tryAcquire(a)!.cancel();
    expect(pacer.tryAcquire(a)).not.toBeNull();
    expect(pacer.tryAcquire(a)).toBeNull();
  });

  it('a throttle halves the rate and pauses the destination; replies to messages sent before the cut do not cut again', () => {
    const c = clock();
    const notices: ThrottleNotice[] = [];
    const pacer = new Pacer(adaptive, c.now, (n) => notices.push(n));
    const a = dest('a', 10);
    const first = pacer.tryAcquire(a)!;
    c.t += 100;
    const second = pacer.tryAcquire(a)!;
    first.done('throttled', '421 4.7.0 Try again later');
    second.done('throttled', '421 4.7.0 Try again later');
    expect(notices).toEqual([{ key: 'a', from: 10, to: 5, reply: '421 4.7.0 Try again later' }]);
    const pausedUntil = c.t + adaptive.pauseMs;
    expect(pacer.tryAcquire(a)).toBeNull();
    expect(pacer.slotAt(a)).toBe(pausedUntil);
    expect(pacer.slotAt(a, 1)).toBe(pausedUntil + 200); // then 5 a second
    c.t = pausedUntil - 1;
    expect(pacer.tryAcquire(a)).toBeNull();
    c.t += 1;
    const third = pacer.tryAcquire(a)!;
    expect(third).not.toBeNull();
    expect(pacer.tryAcquire(a)).toBeNull();
    // Sent at the new rate and throttled again: cut again, down to the floor and no further.
    third.done('throttled');
    expect(pacer.snapshot()[0]).toMatchObject({ key: 'a', rate: 2.5, configuredRate: 10, throttles: 3 });
    for (let i = 0; i < 5; i++) {
      c.t = pacer.slotAt(a); // sooner than a quiet period: no recovery in between
      const p = pacer.tryAcquire(a);
      expect(p).not.toBeNull();
      p!.done('throttled');
    }
    expect(pacer.snapshot()[0]!.rate).toBe(adaptive.minRate);
  });

  it('recovers a tenth of the full rate per quiet period after the pause, back to the configured rate', () => {
    const c = clock();
    const pacer = new Pacer(adaptive, c.now);
    const a = dest('a', 10);
    pacer.tryAcquire(a)!.done('throttled');
    const quietFrom = c.t + adaptive.pauseMs;
    const rate = () => pacer.snapshot()[0]!.rate;
    c.t = quietFrom + 9_999;
    expect(rate()).toBe(5);
    c.t = quietFrom + 10_000;
    expect(rate()).toBe(6);
    c.t = quietFrom + 30_000;
    expect(rate()).toBe(8);
    // Other sends meanwhile change nothing; a throttle restarts the count from the new (lower) rate.
    c.t = quietFrom + 100_000;
    expect(rate()).toBe(10);
    pacer.tryAcquire(a)!.done('sent');
    expect(rate()).toBe(10);
  });

  it('a destination without a rate is unlimited until it throttles, then limited to half the rate it was sent at, and freed after recovering', () => {
    const c = clock();
    const pacer = new Pacer(adaptive, c.now);
    const a = dest('a', 0);
    let last: Permit | null = null;
    // 20 a second for two seconds.
    for (let i = 0; i < 40; i++) {
      last?.done('sent');
      last = pacer.tryAcquire(a);
      expect(last).not.toBeNull();
      c.t += 50;
    }
    expect(pacer.snapshot()[0]).toMatchObject({ rate: null, configuredRate: null });
    last!.done('throttled');
    expect(pacer.snapshot()[0]!.rate).toBeCloseTo(10, 0);
    c.t += adaptive.pauseMs + 10 * adaptive.recoverEveryMs;
    expect(pacer.snapshot()[0]!.rate).toBeNull();
  });

  it('a priority message (transactional) goes first: one in-flight slot beyond the limit, and a slot of the rate borrowed', () => {
    const c = clock();
    const pacer = new Pacer(adaptive, c.now);
    const a = dest('a', 10, 2); // a burst of 1, 2 in flight
    const first = pacer.tryAcquire(a)!;
    expect(first).not.toBeNull();
    expect(pacer.tryAcquire(a)).toBeNull(); // the rate's slot is spent
    // A receipt borrows the next slot: the destination's next ordinary message waits one slot longer for it.
    expect(pacer.tryAcquire(a, true)).not.toBeNull();
    expect(pacer.tryAcquire(a, true)).toBeNull(); // a burst's worth of debt at most
    expect(pacer.slotAt(a)).toBe(c.t + 200);
    expect(pacer.slotAt(a, 0, true)).toBe(c.t + 100);
    // Later, with 2 in flight (the limit): ordinary messages wait for room, a priority one takes the one extra slot.
    c.t += 1000;
    expect(pacer.full(a)).toBe(true);
    expect(pacer.full(a, true)).toBe(false);
    expect(pacer.tryAcquire(a)).toBeNull();
    expect(pacer.tryAcquire(a, true)).not.toBeNull();
    c.t += 1000;
    expect(pacer.tryAcquire(a, true)).toBeNull(); // 3 in flight: the limit and the extra slot
    first.done('sent');
    expect(pacer.tryAcquire(a)).toBeNull(); // still 2 in flight: the limit, for ordinary messages
    // A throttled destination is paused for priority messages too.
    const b = dest('b', 0, 5);
    pacer.tryAcquire(b)!.done('throttled');
    expect(pacer.tryAcquire(b, true)).toBeNull();
  });

  it('destinations are paced apart: one throttled leaves the others alone', () => {
    const c = clock();
    const pacer = new Pacer(adaptive, c.now);
    pacer.tryAcquire(dest('slow', 10))!.done('throttled');
    const fast = dest('fast', 10);
    expect(pacer.tryAcquire(fast)).not.toBeNull();
    expect(pacer.snapshot().find((s) => s.key === 'fast')).toMatchObject({ rate: 10, throttles: 0, pausedUntil: null });
  });
});

describe('dispatch (controlled clock)', () => {
  /** A wait that returns at once when a send finishes, and otherwise moves the clock by `ms`. */
  const waiter = (c: ReturnType<typeof clock>) => async (ms: number, wake: Promise<unknown>) => {
    const woke = await Promise.race([
      wake.then(() => true),
      new Promise<boolean>((resolve) => setImmediate(() => resolve(false))),
    ]);
    if (!woke) c.t += ms;
  };

  it('a destination that must wait does not hold up the others; what cannot go in the window is deferred, spread at its rate', async () => {
    const c = clock(0);
    const pacer = new Pacer(adaptive, c.now);
    const slow = dest('slow', 10);
    const fast = dest('fast', 0);
    const items = [
      ...['s1', 's2', 's3', 's4', 's5'].map((id) => ({ id, d: slow })),
      ...['f1', 'f2', 'f3', 'f4', 'f5'].map((id) => ({ id, d: fast })),
    ];
    const sent: [string, number][] = [];
    const deferred: [string, number][] = [];
    await dispatch({
      items,
      lanes: 3,
      pacer,
      until: 250,
      now: c.now,
      wait: waiter(c),
      destinationOf: (i) => i.d,
      run: async (i, permit) => {
        sent.push([i.id, c.t]);
        permit.done('sent');
      },
      defer: async (i, at) => void deferred.push([i.id, at]),
    });
    expect(sent.filter(([id]) => id.startsWith('f')).map(([, t]) => t)).toEqual([0, 0, 0, 0, 0]);
    expect(sent.filter(([id]) => id.startsWith('s'))).toEqual([
      ['s1', 0],
      ['s2', 100],
      ['s3', 200],
    ]);
    expect(deferred).toEqual([
      ['s4', 300],
      ['s5', 400],
    ]);
  });

  it('a throttle reply defers the rest of that destination past its pause; the others go on', async () => {
    const c = clock(0);
    const pacer = new Pacer(adaptive, c.now);
    const busy = dest('busy', 0);
    const fine = dest('fine', 0);
    const items = [
      { id: 'b1', d: busy },
      { id: 'b2', d: busy },
      { id: 'f1', d: fine },
      { id: 'b3', d: busy },
      { id: 'f2', d: fine },
    ];
    const sent: string[] = [];
    const deferred: [string, number][] = [];
    await dispatch({
      items,
      lanes: 1,
      pacer,
      until: 500,
      now: c.now,
      wait: waiter(c),
      destinationOf: (i) => i.d,
      run: async (i, permit) => {
        if (i.d === busy) return permit.done('throttled', '421 4.7.0 Try again later');
        sent.push(i.id);
        permit.done('sent');
      },
      defer: async (i, at) => void deferred.push([i.id, at]),
    });
    expect(sent).toEqual(['f1', 'f2']);
    expect(deferred).toEqual([
      ['b2', adaptive.pauseMs],
      ['b3', adaptive.pauseMs + 2_000],
    ]);
  });

  it("a destination's in-flight limit holds across lanes; at the end of the window what has not started is deferred", async () => {
    const c = clock(0);
    const pacer = new Pacer(adaptive, c.now);
    const one = dest('one', 0, 1);
    let inFlight = 0;
    let most = 0;
    const release: (() => void)[] = [];
    const deferred: string[] = [];
    const done = dispatch({
      items: ['a', 'b', 'c'].map((id) => ({ id })),
      lanes: 4,
      pacer,
      until: 1_000,
      now: c.now,
      destinationOf: () => one,
      wait: async (ms, wake) => {
        // The first send never finishes within the window: the clock runs to its end.
        const woke = await Promise.race([
          wake.then(() => true),
          new Promise<boolean>((resolve) => setImmediate(() => resolve(false))),
        ]);
        if (!woke) c.t += ms;
      },
      run: (_i, permit) =>
        new Promise<void>((resolve) => {
          inFlight++;
          most = Math.max(most, inFlight);
          release.push(() => {
            inFlight--;
            permit.done('sent');
            resolve();
          });
        }),
      defer: async (i) => void deferred.push(i.id),
    });
    while (!deferred.length) await new Promise((r) => setImmediate(r));
    release.forEach((r) => r());
    await done;
    expect(most).toBe(1);
    expect(deferred).toEqual(['b', 'c']);
  });
});

describe('destinations: recipient domains grouped by MX', () => {
  function lookups(answers: Record<string, TxtAnswer>) {
    const asked: string[] = [];
    const lookup = async (name: string): Promise<TxtAnswer> => {
      asked.push(name);
      return answers[name] ?? { ok: false, status: 'MISSING', code: 'ENOTFOUND' };
    };
    return { asked, lookup };
  }
  const mx = (...values: string[]): TxtAnswer => ({ ok: true, values });

  it('known providers by name without a lookup, by MX pattern otherwise; other domains share their primary MX host', async () => {
    const { asked, lookup } = lookups({
      'acme.example.org': mx('aspmx.l.google.com', 'alt1.aspmx.l.google.com'),
      'corp.example.net': mx('corp-example-net.mail.protection.outlook.com'),
      'a.example.com': mx('mx1.hosting.example', 'mx2.hosting.example'),
      'b.example.com': mx('MX1.hosting.example.'),
      'nomail.example.com': mx(''),
    });
    const r = new DestinationResolver(DEFAULT_PACING, lookup);
    const key = async (d: string) => (await r.resolve(d)).key;
    expect(await key('gmail.com')).toBe('google');
    expect(await key('Hotmail.com')).toBe('microsoft');
    expect(await key('aol.com')).toBe('yahoo');
    expect(asked).toEqual([]);
    expect(await key('acme.example.org')).toBe('google');
    expect(await key('corp.example.net')).toBe('microsoft');
    expect(await key('a.example.com')).toBe('mx:mx1.hosting.example');
    expect(await key('b.example.com')).toBe('mx:mx1.hosting.example');
    expect(await key('nomail.example.com')).toBe('domain:nomail.example.com'); // a null MX
    expect(await key('nowhere.example.com')).toBe('domain:nowhere.example.com'); // no such domain
    expect(await key('x.invalid')).toBe('domain:x.invalid');
    expect(asked).toEqual([
      'acme.example.org',
      'corp.example.net',
      'a.example.com',
      'b.example.com',
      'nomail.example.com',
      'nowhere.example.com',
    ]);
    expect((await r.resolve('gmail.com')).limits).toEqual({ concurrency: 20, rate: 100 });
    expect((await r.resolve('a.example.com')).limits).toEqual(DEFAULT_PACING.default);
  });

  it('caches answers for mxCacheMs and failures for mxFailureCacheMs (grouped by the domain meanwhile)', async () => {
    const c = clock();
    let failing = true;
    let calls = 0;
    const lookup = async (): Promise<TxtAnswer> => {
      calls++;
      return failing ? { ok: false, status: 'TIMEOUT', code: 'ETIMEOUT' } : mx('mx.example.net');
    };
    const config: PacingConfig = { ...DEFAULT_PACING, mxCacheMs: 60_000, mxFailureCacheMs: 5_000 };
    const r = new DestinationResolver(config, lookup, c.now);
    expect((await r.resolve('example.org')).key).toBe('domain:example.org');
    failing = false;
    c.t += 4_999;
    expect((await r.resolve('example.org')).key).toBe('domain:example.org');
    expect(calls).toBe(1);
    c.t += 1;
    expect((await r.resolve('example.org')).key).toBe('mx:mx.example.net');
    c.t += 59_999;
    expect((await r.resolve('example.org')).key).toBe('mx:mx.example.net');
    expect(calls).toBe(2);
    c.t += 1;
    await r.resolve('example.org');
    expect(calls).toBe(3);
  });

  it('a batch waits at most the lookup budget: an unanswered domain is its own destination until its answer comes', async () => {
    let answer: (a: TxtAnswer) => void = () => {};
    const lookup = (name: string) =>
      name === 'slow.example'
        ? new Promise<TxtAnswer>((resolve) => (answer = resolve))
        : Promise.resolve(mx('mx.fast.example'));
    const r = new DestinationResolver(DEFAULT_PACING, lookup);
    const got = await r.resolveAll(['slow.example', 'fast.example', 'gmail.com', 'fast.example'], 0);
    expect(Object.fromEntries([...got].map(([d, dest]) => [d, dest.key]))).toEqual({
      'slow.example': 'domain:slow.example',
      'fast.example': 'mx:mx.fast.example',
      'gmail.com': 'google',
    });
    answer(mx('gmail-smtp-in.l.google.com'));
    await new Promise((r) => setImmediate(r));
    expect(r.known('slow.example')?.key).toBe('google');
  });

  it('without an MX lookup every domain is its own destination (groups by name still apply)', async () => {
    const r = new DestinationResolver(DEFAULT_PACING, null);
    expect((await r.resolve('example.org')).key).toBe('domain:example.org');
    expect((await r.resolve('gmail.com')).key).toBe('google');
    expect(domainOf('Someone@Example.ORG')).toBe('example.org');
  });
});

describe('SEND_PACING', () => {
  it('is laid over the defaults: limits of a built-in group, a new group by domains or MX, the adaptive settings', () => {
    const p = parsePacing(
      JSON.stringify({
        default: { rate: 30 },
        groups: {
          google: { rate: 20 },
          corp: { domains: ['Corp.Example'], concurrency: 2, rate: 1 },
          host: { mx: ['*.mx.example.net'] },
        },
        adaptive: { pauseMs: 100 },
        giveUpAfterMs: 3_600_000,
      }),
    );
    expect(p.default).toEqual({ concurrency: 20, rate: 30 });
    expect(p.groups.google).toEqual({ ...DEFAULT_PACING.groups.google, rate: 20 });
    expect(p.groups.corp).toEqual({ concurrency: 2, rate: 1, mx: [], domains: ['corp.example'] });
    expect(p.groups.host).toEqual({ concurrency: 20, rate: 30, mx: ['*.mx.example.net'], domains: [] });
    expect(p.groups.microsoft).toEqual(DEFAULT_PACING.groups.microsoft);
    expect(p.adaptive).toEqual({ ...DEFAULT_PACING.adaptive, pauseMs: 100 });
    expect(p.giveUpAfterMs).toBe(3_600_000);
    expect(parsePacing(undefined)).toBe(DEFAULT_PACING);
    expect(parsePacing('')).toBe(DEFAULT_PACING);
  });

  it('may name a JSON file', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pacing-')), 'pacing.json');
    fs.writeFileSync(file, '{"groups": {"yahoo": {"concurrency": 3}}}');
    expect(loadConfig({ SEND_PACING: file }).sendPacing.groups.yahoo!.concurrency).toBe(3);
  });

  it.each([
    ['{"default": {"rate": -1}}', /\/default\/rate must be >= 0/],
    ['{"groups": {"x": {"rate": 1}}}', /the group "x" needs "mx" patterns or "domains"/],
    ['{"groups": {"google": {"rates": 1}}}', /must not have additional properties \(rates\)/],
    ['{"adaptive": {"decrease": 1}}', /\/adaptive\/decrease/],
    ['{"default": ', /not valid JSON/],
    ['/nonexistent/pacing.json', /neither JSON nor a readable file/],
  ])('refuses %s at start', (raw, message) => {
    expect(() => loadConfig({ SEND_PACING: raw })).toThrow(ConfigError);
    expect(() => loadConfig({ SEND_PACING: raw })).toThrow(message);
  });
});

describe('SMTP_URLS', () => {
  it('lists relays with weights; SMTP_URL is one relay', () => {
    expect(parseRelayUrls('smtp://a.example:25;weight=3, smtps://user:p%40ss@b.example ')).toEqual([
      { url: 'smtp://a.example:25', weight: 3 },
      { url: 'smtps://user:p%40ss@b.example', weight: 1 },
    ]);
    expect(loadConfig({ SMTP_URLS: 'smtp://a:25;weight=2,smtp://b:25' })).toMatchObject({
      smtpUrl: 'smtp://a:25',
      smtpRelays: [
        { url: 'smtp://a:25', weight: 2 },
        { url: 'smtp://b:25', weight: 1 },
      ],
    });
    expect(loadConfig({ SMTP_URL: 'smtp://a:25' })).toMatchObject({
      smtpUrl: 'smtp://a:25',
      smtpRelays: [{ url: 'smtp://a:25', weight: 1 }],
    });
    expect(loadConfig({})).toMatchObject({ smtpUrl: null, smtpRelays: [] });
  });

  it.each([
    ['http://a:25', /must be an smtp:\/\/ or smtps:\/\/ URL/],
    ['smtp://a:25;weight=0', /weight=N \(1 to 1000\)/],
    ['smtp://a:25;prio=1', /is not weight=N/],
    [' , ', /names no relay/],
  ])('refuses %s', (raw, message) => {
    expect(() => loadConfig({ SMTP_URLS: raw })).toThrow(message);
  });

  it('never repeats credentials in its errors; SMTP_URL and SMTP_URLS together are refused', () => {
    expect(() => loadConfig({ SMTP_URLS: 'smtp://user:secret@a:25;weight=x' })).toThrow(/^(?!.*secret)/);
    expect(() => loadConfig({ SMTP_URL: 'smtp://a:25', SMTP_URLS: 'smtp://b:25' })).toThrow(/not both/);
  });

  it('chooses by weight among the relays that are up; when all are down, the one back first', () => {
    const relays = [
      { id: 'a', weight: 3, downUntil: 0 },
      { id: 'b', weight: 1, downUntil: 0 },
    ];
    expect(pickRelay(relays, 100, () => 0).id).toBe('a');
    expect(pickRelay(relays, 100, () => 0.74).id).toBe('a');
    expect(pickRelay(relays, 100, () => 0.75).id).toBe('b');
    expect(pickRelay(relays, 100, () => 0.999).id).toBe('b');
    const aDown = [{ ...relays[0]!, downUntil: 200 }, relays[1]!];
    expect(pickRelay(aDown, 100, () => 0).id).toBe('b');
    expect(pickRelay(aDown, 200, () => 0).id).toBe('a');
    expect(
      pickRelay(
        [
          { id: 'a', weight: 1, downUntil: 300 },
          { id: 'b', weight: 1, downUntil: 250 },
        ],
        100,
        () => 0,
      ).id,
    ).toBe('b');
  });
});
