import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeEmail, parseMailbox, parsedMailbox } from '../../src/lib/email.js';

/**
 * parseMailbox reads the commonest inputs (`ada@example.com`, `Acme News <news@acme.com>`) without the RFC 5322 parser
 * (lib/email.ts, plainMailbox); every answer must be the parser's.
 */
const reference = (input: string) =>
  input.length > 998 || /[\r\n]/.test(input) || input.includes('\u0000') || !input.isWellFormed()
    ? null
    : parsedMailbox(input.trim());

const atext = fc.constantFrom(..."abcXYZ019!#$%&'*+/=?^_`{|}~-".split(''));
const label = fc.string({ unit: fc.constantFrom(...'abZ09-'.split('')), minLength: 1, maxLength: 6 });
const near = fc.constantFrom(...' .@<>"(),;:[]\\\tÉé'.split(''));

describe('parseMailbox', () => {
  it('answers what the parser answers for addresses of the plain shape and for their near misses (property)', () => {
    const local = fc.array(fc.string({ unit: atext, minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 3 });
    const domain = fc.array(label, { minLength: 1, maxLength: 4 });
    const name = fc.array(fc.string({ unit: fc.constantFrom(...'Acme09 '.split('')), maxLength: 6 }), {
      maxLength: 3,
    });
    fc.assert(
      fc.property(
        local,
        domain,
        name,
        fc.array(fc.tuple(fc.nat(), near), { maxLength: 2 }),
        fc.boolean(),
        (l, d, n, noise, padded) => {
          const addr = `${l.join('.')}@${d.join('.')}`;
          let input = n.length ? `${n.join(' ')} <${addr}>` : addr;
          for (const [at, c] of noise) {
            const i = at % (input.length + 1);
            input = input.slice(0, i) + c + input.slice(i);
          }
          if (padded) input = ` ${input} `;
          expect(parseMailbox(input), JSON.stringify(input)).toEqual(reference(input));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('answers what the parser answers for any short text (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.oneof(atext, near, fc.constantFrom('a', '@', '.', ' ')), maxLength: 24 }),
        (s) => {
          expect(parseMailbox(s), JSON.stringify(s)).toEqual(reference(s));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('examples', () => {
    expect(parseMailbox('Acme News <News@Acme.COM>')).toEqual({
      name: 'Acme News',
      address: 'News@acme.com',
      local: 'News',
      domain: 'acme.com',
    });
    expect(normalizeEmail(' Ada@Example.com ')).toBe('ada@example.com');
    expect(parseMailbox(`${'a'.repeat(65)}@example.com`)).toBeNull();
    expect(parseMailbox('a@localhost')).toBeNull();
    expect(parseMailbox('a..b@example.com')).toBeNull();
    expect(parseMailbox('"a b"@example.com')).toBeNull();
    expect(parseMailbox('a@bücher.example')?.domain).toBe('xn--bcher-kva.example');
  });
});
