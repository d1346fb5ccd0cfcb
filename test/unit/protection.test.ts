/** The pure parts of sign-up protection (docs/bot-protection.md): networks, signals, the widget in the markup. */
import { describe, expect, it } from 'vitest';
import { ipRange, isInternalRange, signalKey, signalsOf } from '../../src/forms/protection/protection.bursts.js';
import { widgetCsp, withWidget } from '../../src/forms/protection/protection.markup.js';
import { ProofOfWork } from '../../src/forms/protection/protection.pow.js';

describe('sign-up burst signals', () => {
  it('networks: /24 for IPv4 (also mapped into IPv6), /64 for IPv6; internal ranges are recognised', () => {
    expect(ipRange('203.0.113.7')).toBe('203.0.113.0/24');
    expect(ipRange('::ffff:203.0.113.9')).toBe('203.0.113.0/24');
    expect(ipRange('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(ipRange('2001:db8::1')).toBe(ipRange('2001:0db8:0000:0000:ffff::2'));
    expect(ipRange('not an address')).toBeNull();
    for (const ip of ['127.0.0.1', '10.1.2.3', '172.20.1.1', '192.168.0.9', '::1', 'fe80::1', 'fd00:1::2'])
      expect(isInternalRange(ipRange(ip)!), ip).toBe(true);
    for (const ip of ['203.0.113.7', '172.32.0.1', '2001:db8::1'])
      expect(isInternalRange(ipRange(ip)!), ip).toBe(false);
  });

  it('an address gives its pattern (digits blanked), its mailbox (without +tag; Gmail without dots), its domain unless a public provider', () => {
    expect(signalsOf('203.0.113.7', 'user123@acme.test')).toEqual([
      { kind: 'ip_range', value: '203.0.113.0/24' },
      { kind: 'pattern', value: 'user#@acme.test' },
      { kind: 'domain', value: 'acme.test' },
    ]);
    expect(signalsOf('10.0.0.1', 'Jane+News@GMail.com')).toEqual([{ kind: 'mailbox', value: 'jane@gmail.com' }]);
    expect(signalsOf(null, 'j.a.ne@googlemail.com')).toEqual([{ kind: 'mailbox', value: 'jane@gmail.com' }]);
    expect(signalsOf(null, 'plain@gmail.com')).toEqual([]);
    expect(signalsOf(null, '')).toEqual([]);
    // Stored keyed: neither the value nor the kind can be read back.
    const key = signalKey(Buffer.alloc(32, 7), 'pattern', 'user#@acme.test');
    expect(key).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(key).not.toBe(signalKey(Buffer.alloc(32, 8), 'pattern', 'user#@acme.test'));
  });
});

describe('proof of work', () => {
  it('the widget goes before the submit button, with the challenge, the field name and a message slot; the CSP allows this origin only', () => {
    const html = withWidget(
      '<form data-formcast-form><input name="email"><div><button type="submit">Go</button></div></form>',
      { challenge: 'https://forms.example/f/x/challenge', auto: 'onfocus', error: '<b>no</b>' },
    );
    expect(html).toMatch(
      /<div><div class="fc-field fc-pow" data-formcast-pow=""><altcha-widget challenge="https:\/\/forms\.example\/f\/x\/challenge" name="_fc_pow" auto="onfocus"/,
    );
    expect(html).toContain('role="alert">&lt;b&gt;no&lt;/b&gt;</p>');
    expect(html.indexOf('altcha-widget')).toBeLessThan(html.indexOf('<button'));
    expect(withWidget('<p>no form</p>', { challenge: 'x', auto: 'onload' })).toBe('<p>no form</p>');
    expect(widgetCsp("default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")).toBe(
      "default-src 'none'; script-src 'self'; worker-src 'self'; connect-src 'self'; style-src 'self' 'unsafe-inline'; form-action 'self'",
    );
  });

  it('a payload that is not a solution of a challenge signed here is refused without throwing', async () => {
    const pow = new ProofOfWork(Buffer.alloc(32, 1), { cost: 1, minCounter: 1, maxCounter: 2 });
    const other = new ProofOfWork(Buffer.alloc(32, 2), { cost: 1, minCounter: 1, maxCounter: 2 });
    const foreign = await other.challenge('fgrp_1');
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
    expect(await pow.check('fgrp_1', undefined)).toEqual({ ok: false, reason: 'missing' });
    expect(await pow.check('fgrp_1', 'x'.repeat(5000))).toEqual({ ok: false, reason: 'malformed' });
    expect(await pow.check('fgrp_1', b64({ challenge: foreign, solution: { counter: 1, derivedKey: 'ab' } }))).toEqual({
      ok: false,
      reason: 'invalid',
    });
    expect(
      await pow.check(
        'fgrp_1',
        b64({
          challenge: { ...foreign, parameters: { ...foreign.parameters, cost: 'x' } },
          solution: { counter: 1, derivedKey: 'ab' },
        }),
      ),
    ).toEqual({ ok: false, reason: 'malformed' });
    expect(await pow.check('fgrp_1', b64({ challenge: { parameters: { algorithm: 'SHA-1' } }, solution: {} }))).toEqual(
      { ok: false, reason: 'malformed' },
    );
  });
});
