import crypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { sealer } from '../../src/lib/seal.js';
import {
  RESOLVE_TIMEOUT_MS,
  UrlGuard,
  UrlRefused,
  checkUrlShape,
  nonPublicReason,
} from '../../src/integrations/webhooks/webhooks.guard.js';
import { newSecret, signatureHeader } from '../../src/integrations/webhooks/webhooks.sender.js';

describe('webhook SSRF guard: which addresses are public', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified ("this network")'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fd00::1', 'unique-local'],
    ['fc00::abcd', 'unique-local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 link-local'],
    ['2002:c0a8:0101::1', '6to4'],
    ['::127.0.0.1', 'IPv4-compatible (deprecated)'],
    // Issue 29 item 14: every IPv6 form that embeds or leads to an IPv4 address, other than the two judged by it.
    ['::ffff:0:127.0.0.1', 'IPv4-translated'],
    ['::ffff:0:7f00:1', 'IPv4-translated'],
    ['::ffff:0:5db8:d70e', 'IPv4-translated'],
    ['64:ff9b:1::7f00:1', 'local-use NAT64'],
    ['64:ff9b:1:ffff::a9fe:a9fe', 'local-use NAT64'],
    ['64:ff9b::127.0.0.1', 'NAT64 loopback'],
    ['64:ff9b::10.0.0.1', 'NAT64 private'],
    ['2002:5db8:d70e::1', '6to4'],
    ['2002:7f00:1::', '6to4'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['::5db8:d70e', 'IPv4-compatible (deprecated)'],
    ['::ffff:169.254.169.254', 'IPv4-mapped link-local'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped link-local'],
    ['::ffff:0.0.0.0', 'IPv4-mapped unspecified ("this network")'],
    ['fe80::1%eth0', 'link-local'],
  ])('%s is refused (%s)', (address, why) => {
    expect(nonPublicReason(address)).toBe(why);
  });

  it.each([
    '93.184.215.14',
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700::1111',
    '::ffff:93.184.215.14',
    '64:ff9b::5db8:d70e',
    '2001:4860:4860::8888',
  ])('%s is public', (address) => {
    expect(nonPublicReason(address)).toBeNull();
  });

  it('takes https only, http with allowHttp, absolute URLs', () => {
    expect(() => checkUrlShape('http://example.com/', false)).toThrow(/https/);
    expect(checkUrlShape('http://example.com/', true).hostname).toBe('example.com');
    expect(() => checkUrlShape('ftp://example.com/', true)).toThrow(UrlRefused);
    expect(() => checkUrlShape('/relative', false)).toThrow(/absolute/);
  });

  it('refuses a host when any of its addresses is not public, unless allowPrivate', async () => {
    const resolve = async () => [
      { address: '93.184.215.14', family: 4 as const },
      { address: '10.0.0.7', family: 4 as const },
    ];
    await expect(
      new UrlGuard({ allowHttp: false, allowPrivate: false, resolve }).check('https://mixed.example/'),
    ).rejects.toThrow(/10\.0\.0\.7, a private address/);
    const ok = await new UrlGuard({ allowHttp: false, allowPrivate: true, resolve }).check('https://mixed.example/');
    expect(ok.addresses).toHaveLength(2);
    await expect(
      new UrlGuard({
        allowHttp: false,
        allowPrivate: false,
        resolve: async () => {
          throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' });
        },
      }).check('https://nowhere.example/'),
    ).rejects.toThrow(/does not resolve \(ENOTFOUND\)/);
  });

  it('resolves IP literals to themselves (no DNS), IPv6 in brackets', async () => {
    const guard = new UrlGuard({ allowHttp: true, allowPrivate: false });
    await expect(guard.check('http://127.0.0.1:8080/x')).rejects.toThrow(/loopback/);
    await expect(guard.check('https://[::1]/x')).rejects.toThrow(/loopback/);
    await expect(guard.check('https://[::ffff:0:127.0.0.1]/x')).rejects.toThrow(/IPv4-translated/);
    await expect(guard.check('https://[64:ff9b:1::7f00:1]/x')).rejects.toThrow(/local-use NAT64/);
    await expect(guard.check('https://[64:ff9b::7f00:1]/x')).rejects.toThrow(/NAT64 loopback/);
    await expect(guard.check('https://[2002:7f00:1::1]/x')).rejects.toThrow(/6to4/);
    await expect(guard.check('https://[::ffff:127.0.0.1]/x')).rejects.toThrow(/IPv4-mapped loopback/);
    expect((await guard.check('https://93.184.215.14/x')).addresses).toEqual([{ address: '93.184.215.14', family: 4 }]);
  });
});

describe('sealed secrets', () => {
  const key = crypto.randomBytes(32);
  it('open what was sealed, for the same context only, and never in clear', () => {
    const s = sealer(key, 'test');
    const sealed = s.seal('whsec_abc', 'wh_1');
    expect(sealed).not.toContain('abc');
    expect(s.open(sealed, 'wh_1')).toBe('whsec_abc');
    expect(() => s.open(sealed, 'wh_2')).toThrow();
    expect(() => sealer(key, 'other').open(sealed, 'wh_1')).toThrow();
    expect(() => sealer(crypto.randomBytes(32), 'test').open(sealed, 'wh_1')).toThrow();
    expect(s.seal('whsec_abc', 'wh_1')).not.toBe(sealed);
  });
});

describe('signatures', () => {
  it('verify with the standardwebhooks package, each of two secrets alone', () => {
    const [a, b] = [newSecret(), newSecret()];
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const body = JSON.stringify({
      type: 'contact.created',
      timestamp: new Date().toISOString(),
      data: { id: 'evt_1' },
    });
    const ts = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': 'whd_1',
      'webhook-timestamp': String(ts),
      'webhook-signature': signatureHeader([a, b], 'whd_1', ts, body),
    };
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(a).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(b).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(a).verify(`${body} `, headers)).toThrow();
  });
});

describe('webhook SSRF guard: a resolver that never answers', () => {
  it('is refused after the timeout instead of holding the batch up', async () => {
    vi.useFakeTimers();
    try {
      const guard = new UrlGuard({ allowHttp: false, allowPrivate: false, resolve: () => new Promise(() => {}) });
      const checked = guard.check('https://slow.example/x');
      const caught = checked.catch((err: unknown) => err);
      await vi.advanceTimersByTimeAsync(RESOLVE_TIMEOUT_MS);
      expect(await caught).toBeInstanceOf(UrlRefused);
      await expect(checked).rejects.toThrow(/does not resolve \(ETIMEOUT\)/);
    } finally {
      vi.useRealTimers();
    }
  });
});
