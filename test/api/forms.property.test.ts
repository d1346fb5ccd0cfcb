import fc from 'fast-check';
import { expect, it } from 'vitest';
import { describeApi } from '../helpers/app.js';

/**
 * Random JSON bodies against Update Form: every answer is a 200 or a problem+json 4xx (never a 5xx),
 * and a rejected request leaves the stored form exactly as it was.
 */
const field = fc.constantFrom(
  'name',
  'description',
  'type',
  'display',
  'fieldMapping',
  'settings',
  'doubleOptInEmailId',
  'seoTitle',
  'seoDescription',
  'seoImageUrl',
  'seoFaviconUrl',
  'slug',
  'id',
  'status',
  'version',
  'createdAt',
  '__proto__',
  'constructor',
  'x',
);
const plausible = fc.oneof(
  fc.constantFrom(
    'SIGN_UP',
    'SURVEY',
    'POPUP',
    'INLINE_EMBED',
    'https://example.com/a.png',
    'javascript:alert(1)',
    'my-slug',
    'Bad Slug',
    '',
  ),
  fc.string({ maxLength: 250 }),
  fc.string({ unit: 'grapheme', maxLength: 220 }),
  fc.dictionary(
    fc.string({ maxLength: 12 }),
    fc.constantFrom('email', 'firstName', 'lastName', 'custom_1', '1bad', ''),
  ),
  fc.record(
    {
      successAction: fc.record(
        { type: fc.constantFrom('MESSAGE', 'REDIRECT', 'OTHER'), url: fc.webUrl(), message: fc.string() },
        { requiredKeys: [] },
      ),
      doubleOptIn: fc.anything(),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue({ maxDepth: 3 }),
);
const body = fc.oneof(
  { weight: 5, arbitrary: fc.dictionary(field, plausible, { maxKeys: 6 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

describeApi('forms: property test of PUT /v1/forms/{id}', (h) => {
  it('never answers 5xx, and a rejected request changes nothing', async () => {
    const ws = await h.workspace();
    const other = (await h.call(ws.key, 'POST', '/v1/forms', { name: 'Other', type: 'SURVEY', slug: 'taken' })).json();
    expect(other.slug).toBe('taken');
    const form = (
      await h.call(ws.key, 'POST', '/v1/forms', { name: 'Prop', type: 'SIGN_UP', fieldMapping: { email: 'email' } })
    ).json();
    const snapshot = () =>
      h.db.kysely.selectFrom('forms').selectAll().where('id', '=', form.id).executeTakeFirstOrThrow();
    const slugs = () =>
      h.db.kysely.selectFrom('form_slugs').selectAll().where('workspace_id', '=', ws.id).orderBy('slug').execute();

    await fc.assert(
      fc.asyncProperty(body, async (payload) => {
        const before = await snapshot();
        const slugsBefore = await slugs();
        const res = await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`, JSON.stringify(payload));
        expect(res.statusCode).toBeLessThan(500);
        if (res.statusCode === 200) {
          expect(res.json().id).toBe(form.id);
          expect(res.json().status).toBe('DRAFT');
        } else {
          expect(res.statusCode).toBeGreaterThanOrEqual(400);
          expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
          expect(res.json().status).toBe(res.statusCode);
          expect(typeof res.json().code).toBe('string');
          expect(await snapshot()).toEqual(before);
          expect(await slugs()).toEqual(slugsBefore);
        }
      }),
      { numRuns: 300 },
    );
  });
});
