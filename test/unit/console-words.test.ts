/** The console's words (issue 33 item 6): problems as sentences at their fields, and counts with the right plural. */
import { describe, expect, it } from 'vitest';

// The console's sources are typed by console/tsconfig.json (bundler resolution), not by the root project's NodeNext:
// loaded by a path the root typecheck does not follow, with the few types the test needs.
interface Described {
  fields: Record<string, string>;
  message: string | null;
  rest: string[];
}
const at = (file: string) => `../../console/src/${file}`;
const { ApiError } = (await import(/* @vite-ignore */ at('api/client.ts'))) as {
  ApiError: new (status: number, problem: Record<string, unknown>) => Error;
};
const { count, plural, withArticle } = (await import(/* @vite-ignore */ at('lib/format.ts'))) as {
  count: (n: number, one: string, other?: string) => string;
  plural: (n: number, one: string, other?: string) => string;
  withArticle: (word: string) => string;
};
const { describeError, describeProblem } = (await import(/* @vite-ignore */ at('lib/problems.ts'))) as {
  describeError: (err: unknown) => string;
  describeProblem: (err: unknown, labels?: Record<string, string>) => Described;
};

const invalid = (errors: { path: string; message: string; keyword?: string; params?: Record<string, unknown> }[]) =>
  new ApiError(422, { code: 'validation_failed', detail: 'name must NOT have fewer than 1 characters', errors });

describe('console problems', () => {
  it('places each error at its labelled field, as a sentence naming it; no banner when all are placed', () => {
    const d = describeProblem(
      invalid([
        { path: '/name', message: 'must NOT have fewer than 1 characters', keyword: 'minLength', params: { limit: 1 } },
        { path: '/emails/1', message: 'must be a valid email address', keyword: 'format', params: { format: 'email' } },
      ]),
      { '/name': 'Name', '/emails/*': 'Address' },
    );
    expect(d.fields['/name']).toBe('Name cannot be empty.');
    expect(d.fields['/emails/*']).toBe('Address 2 must be an email address, like jane@example.com.');
    expect(d.message).toBeNull();
    expect(d.rest).toEqual([]);
  });

  it('the banner only for what no field shows, named in words, never by pointer', () => {
    const d = describeProblem(
      invalid([
        {
          path: '/name',
          message: 'must NOT have more than 200 characters',
          keyword: 'maxLength',
          params: { limit: 200 },
        },
        { path: '/settings/defaultFrom', message: 'is not on a verified domain', keyword: 'verified_domain' },
        {
          path: '/slug',
          message: 'must match pattern "^[a-z0-9-]+$"',
          keyword: 'pattern',
          params: { pattern: '^[a-z0-9-]+$' },
        },
      ]),
      { '/name': 'Name' },
    );
    expect(d.fields['/name']).toBe('Name can be at most 200 characters long.');
    expect(d.message).toBe('Some details need fixing:');
    expect(d.rest).toEqual([
      'Default sender must be an address on one of your verified domains.',
      'Address is not written the expected way.',
    ]);
  });

  it('service messages without a keyword lose their API calls and pointers', () => {
    const d = describeProblem(
      invalid([{ path: '/sendAt', message: 'must be in the future (use POST /v1/broadcasts/{id}/send to send now)' }]),
      { '/sendAt': 'Send time' },
    );
    expect(d.fields['/sendAt']).toBe('Send time must be in the future.');
    const coded = describeError(
      new ApiError(403, { code: 'insufficient_scope', detail: 'this operation needs the manage:keys scope' }),
    );
    expect(coded).not.toMatch(/manage:keys|scope/);
    expect(describeError(new ApiError(409, { code: 'slug_taken', detail: 'slug x is taken' }))).toBe(
      'Another form already uses this address.',
    );
  });
});

describe('console counts', () => {
  it('Intl plural rules, and "an" before a vowel sound', () => {
    expect(count(1, 'row')).toBe('1 row');
    expect(count(2401, 'row')).toMatch(/^2.401 rows$/);
    expect(count(0, 'link')).toBe('0 links');
    expect(plural(2, 'entry')).toBe('entries');
    expect(plural(3, 'person')).toBe('people');
    expect(withArticle('editor')).toBe('an editor');
    expect(withArticle('admin')).toBe('an admin');
    expect(withArticle('viewer')).toBe('a viewer');
    expect(withArticle('owner')).toBe('an owner');
    expect(withArticle('user')).toBe('a user');
  });
});
