import http from 'node:http';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isHttpUrl, normalHttpUrl, safeOrigin } from '../../src/lib/url.js';

/** Issue 29 item 7: a URL the service accepts can always be written into a header, and is stored in one form. */
describe('http(s) URLs written into headers and pages', () => {
  it('normalises to WHATWG serialisation: punycode host, percent-encoded path, query and fragment', () => {
    expect(normalHttpUrl('https://例え.jp/ありがとう')).toBe(
      'https://xn--r8jz45g.jp/%E3%81%82%E3%82%8A%E3%81%8C%E3%81%A8%E3%81%86',
    );
    expect(normalHttpUrl('HTTPS://Example.COM')).toBe('https://example.com/');
    expect(normalHttpUrl('https://example.com/a"b<c>?q=ä#`x`')).toBe(
      'https://example.com/a%22b%3Cc%3E?q=%C3%A4#%60x%60',
    );
  });

  it.each([
    'https://a.example/x\ny',
    'https://a.example/x\ry',
    'https://a.example/x\ty',
    'https://a.example/\u0000',
    'https://a.example/\u001f',
    'https://a.example/\u007f',
    'https://a.example/\u0085',
    'https://a.example/a b',
    'https://a.example/\u00a0',
    'https://a.example/\u2028',
    ' https://a.example/',
    'https://a.example/\u3000',
    `https://a.example/${'é'.repeat(1000)}`,
  ])('refuses %j', (text) => {
    expect(normalHttpUrl(text)).toBeNull();
    expect(isHttpUrl(text)).toBe(false);
  });

  it('sweep: whatever is accepted serialises to a value Node accepts in a header, stable when normalised again', () => {
    let accepted = 0;
    const text = fc.oneof(
      fc.webUrl({ withQueryParameters: true, withFragments: true }),
      fc
        .tuple(fc.constantFrom('https://', 'http://', 'HTTPS://'), fc.string({ unit: 'binary', maxLength: 80 }))
        .map(([a, b]) => a + b),
      fc.tuple(fc.webUrl(), fc.string({ unit: 'binary', maxLength: 20 })).map(([a, b]) => a + b),
    );
    fc.assert(
      fc.property(text, (t) => {
        const n = normalHttpUrl(t);
        if (n === null) return;
        accepted++;
        expect(() => http.validateHeaderValue('location', n)).not.toThrow();
        expect(normalHttpUrl(n)).toBe(n);
        expect(safeOrigin(n)).toMatch(/^https?:\/\/[a-z0-9.[\]:-]+$/);
      }),
      { numRuns: 3000 },
    );
    expect(accepted).toBeGreaterThan(100);
  });
});
