import zlib from 'node:zlib';
import { expect, it } from 'vitest';
import { setFormStatus } from '../../src/forms/forms/forms.repository.js';
import { PUBLISHED_FORM_TTL_MS } from '../../src/forms/forms/forms.published.js';
import { SubmissionsService } from '../../src/forms/submissions/submissions.service.js';
import { describeApi } from '../helpers/app.js';

/**
 * The cache of published forms by slug (src/forms/forms/forms.published.ts): a publish in this process takes effect at
 * once; a change it was not told about (another server process) within PUBLISHED_FORM_TTL_MS. Time is the service's
 * clock, moved by the test.
 */
describeApi('Published forms cache', (h) => {
  let t = 1_000_000;
  const clock = () => t;

  async function publishedForm(
    ws: { key: string },
    slug: string,
    name: string,
  ): Promise<{ id: string; formGroupId: string }> {
    const created = (
      await h.call(ws.key, 'POST', '/v1/forms', { name, type: 'SIGN_UP', slug, fieldMapping: { email: 'email' } })
    ).json();
    expect((await h.call(ws.key, 'POST', `/v1/forms/${created.id}/publish`)).statusCode).toBe(200);
    return created;
  }

  async function newVersion(ws: { key: string }, formId: string, name: string): Promise<string> {
    const v2 = (await h.call(ws.key, 'POST', `/v1/forms/${formId}/versions`)).json();
    expect((await h.call(ws.key, 'PUT', `/v1/forms/${v2.id}`, { name })).statusCode).toBe(200);
    return v2.id;
  }

  it('a publish in this process is seen at once', async () => {
    const ws = await h.workspace();
    const submissions = new SubmissionsService(h.db, { clock });
    const v1 = await publishedForm(ws, 'cache-at-once', 'First');
    expect((await submissions.publishedBySlug('cache-at-once')).name).toBe('First');
    const v2 = await newVersion(ws, v1.id, 'Second');
    expect((await submissions.publishedBySlug('cache-at-once')).name).toBe('First'); // a draft changes nothing
    expect((await h.call(ws.key, 'POST', `/v1/forms/${v2}/publish`)).statusCode).toBe(200);
    expect((await submissions.publishedBySlug('cache-at-once')).name).toBe('Second');
  });

  it('a change made elsewhere is seen once the entry is older than the TTL', async () => {
    const ws = await h.workspace();
    const submissions = new SubmissionsService(h.db, { clock });
    const v1 = await publishedForm(ws, 'cache-elsewhere', 'First');
    expect((await submissions.publishedBySlug('cache-elsewhere')).name).toBe('First');
    const v2 = await newVersion(ws, v1.id, 'Second');
    // Another process publishes v2: straight in the database, this process is not told.
    const now = new Date().toISOString();
    await h.db.kysely.transaction().execute(async (trx) => {
      await setFormStatus(trx, ws.id, v1.id, 'PUBLISHED', 'ARCHIVED', now);
      await setFormStatus(trx, ws.id, v2, 'DRAFT', 'PUBLISHED', now);
    });
    t += PUBLISHED_FORM_TTL_MS - 1;
    expect((await submissions.publishedBySlug('cache-elsewhere')).name).toBe('First');
    t += 1;
    expect((await submissions.publishedBySlug('cache-elsewhere')).name).toBe('Second');
  });

  it('a slug without a published form is not kept: one published elsewhere is found at once', async () => {
    const ws = await h.workspace();
    const submissions = new SubmissionsService(h.db, { clock });
    const created = (
      await h.call(ws.key, 'POST', '/v1/forms', {
        name: 'Later',
        type: 'SIGN_UP',
        slug: 'cache-later',
        fieldMapping: { email: 'email' },
      })
    ).json();
    await expect(submissions.publishedBySlug('cache-later')).rejects.toMatchObject({ status: 404 });
    await setFormStatus(h.db.kysely, ws.id, created.id, 'DRAFT', 'PUBLISHED', new Date().toISOString());
    expect((await submissions.publishedBySlug('cache-later')).name).toBe('Later');
  });

  it('hands out a frozen form: a caller cannot change what the next request sees', async () => {
    const ws = await h.workspace();
    const submissions = new SubmissionsService(h.db, { clock });
    await publishedForm(ws, 'cache-frozen', 'Frozen');
    const form = await submissions.publishedBySlug('cache-frozen');
    expect(() => {
      (form as { name: string }).name = 'Changed';
    }).toThrow(TypeError);
    expect(() => {
      (form.settings as { doubleOptIn: boolean }).doubleOptIn = true;
    }).toThrow(TypeError);
    expect((await submissions.publishedBySlug('cache-frozen')).name).toBe('Frozen');
  });

  it('the success page, made and compressed once per form, is the same for every visitor, br, gzip or plain', async () => {
    const ws = await h.workspace();
    await publishedForm(ws, 'cache-page', 'Page');
    const post = async (i: number, encoding?: string) =>
      h.app.inject({
        method: 'POST',
        url: '/f/cache-page',
        payload: `email=visitor${i}%40example.com`,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          ...(encoding ? { 'accept-encoding': encoding } : {}),
        },
      });
    const [a, b] = [await post(1, 'br'), await post(2, 'br')];
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    expect(a.headers['content-encoding']).toBe('br');
    expect(a.rawPayload.equals(b.rawPayload)).toBe(true);
    const page = zlib.brotliDecompressSync(a.rawPayload).toString('utf8');
    expect(page).toContain('data-formcast-success');
    const gz = await post(3, 'gzip');
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(gz.rawPayload).toString('utf8')).toBe(page);
    const plain = await post(4);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.payload).toBe(page);
    const stored = await h.db.kysely.selectFrom('submissions').select('id').where('workspace_id', '=', ws.id).execute();
    expect(stored).toHaveLength(4);
  });
});
