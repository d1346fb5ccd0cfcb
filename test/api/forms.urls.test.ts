import { expect, it } from 'vitest';
import { describeApi, type TestWorkspace } from '../helpers/app.js';

/**
 * Issue 29 item 7: the URLs of a form that end up in headers and pages (the REDIRECT success action, the SEO image and
 * favicon, the logo) are checked and normalised on write, and a URL stored before that cannot break a submission.
 */
const IDN = 'https://例え.jp/ありがとう?q=é#ä';
const IDN_NORMAL = 'https://xn--r8jz45g.jp/%E3%81%82%E3%82%8A%E3%81%8C%E3%81%A8%E3%81%86?q=%C3%A9#%C3%A4';
const BAD = [
  'https://thanks.example/a\nb',
  'https://thanks.example/a\r\nSet-Cookie: x=1',
  'https://thanks.example/a\tb',
  'https://thanks.example/a\u0001b',
  'https://thanks.example/a b',
  'https://thanks.example/a\u0085b',
  'https://thanks.example/a\u2028b',
  ' https://thanks.example/',
  'https://thanks.example/\u007f',
];
let slugs = 0;

describeApi(
  'form URLs: checked and normalised on write; a stored one never breaks a submission (issue 29 item 7)',
  (h) => {
    async function draft(ws: TestWorkspace, body: Record<string, unknown> = {}) {
      const slug = `urls-${h.dbName}-${++slugs}`;
      const res = await h.call(ws.key, 'POST', '/v1/forms', {
        name: 'n',
        type: 'SIGN_UP',
        slug,
        fieldMapping: { email: 'email' },
        ...body,
      });
      expect(res.statusCode, res.body).toBe(201);
      return { ...res.json(), slug };
    }
    const submit = (slug: string, json = false) =>
      h.app.inject({
        method: 'POST',
        url: `/f/${slug}`,
        headers: json
          ? { 'content-type': 'application/json', accept: 'application/json' }
          : { 'content-type': 'application/x-www-form-urlencoded' },
        payload: json ? JSON.stringify({ email: `v${++slugs}@example.com` }) : `email=v${++slugs}%40example.com`,
      });
    const submissions = async (ws: TestWorkspace) =>
      Number(
        (await h.db.kysely
          .selectFrom('submissions')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('workspace_id', '=', ws.id)
          .executeTakeFirst())!.n,
      );

    it('a URL with a line break, a control character or white space is a 422 in every URL field, on create and update; nothing changes', async () => {
      const ws = await h.workspace();
      const form = await draft(ws);
      for (const url of BAD) {
        const bodies: [Record<string, unknown>, string][] = [
          [{ settings: { successAction: { type: 'REDIRECT', url } } }, '/settings/successAction/url'],
          [{ seoImageUrl: url }, '/seoImageUrl'],
          [{ seoFaviconUrl: url }, '/seoFaviconUrl'],
          [{ settings: { appearance: { logoUrl: url } } }, '/settings/appearance/logoUrl'],
        ];
        for (const [body, path] of bodies) {
          for (const res of [
            await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`, body),
            await h.call(ws.key, 'POST', '/v1/forms', { name: 'x', type: 'SIGN_UP', ...body }),
          ]) {
            expect(res.statusCode, JSON.stringify([url, path])).toBe(422);
            expect(res.json().code).toBe('validation_failed');
            expect(res.json().errors.map((e: { path: string }) => e.path)).toContain(path);
          }
        }
      }
      expect((await h.call(ws.key, 'GET', `/v1/forms/${form.id}`)).json()).toMatchObject({
        settings: { successAction: { type: 'MESSAGE' } },
        seoImageUrl: null,
      });
    });

    it('a non-ASCII URL is stored normalised (punycode host, percent-encoded path); a submission is sent there with a 303, JSON gets it too', async () => {
      const ws = await h.workspace();
      const form = await draft(ws, {
        settings: {
          successAction: { type: 'REDIRECT', url: IDN },
          appearance: { logoUrl: 'https://bilder.例え.jp/logoä.png' },
        },
        seoImageUrl: 'https://例え.jp/bild.png',
        seoFaviconUrl: 'https://例え.jp/ä.ico',
      });
      expect(form.settings.successAction.url).toBe(IDN_NORMAL);
      expect(form.settings.appearance.logoUrl).toBe('https://bilder.xn--r8jz45g.jp/logo%C3%A4.png');
      expect(form.seoImageUrl).toBe('https://xn--r8jz45g.jp/bild.png');
      expect(form.seoFaviconUrl).toBe('https://xn--r8jz45g.jp/%C3%A4.ico');
      expect((await h.call(ws.key, 'POST', `/v1/forms/${form.id}/publish`)).statusCode).toBe(200);
      const page = await h.app.inject({ method: 'GET', url: `/f/${form.slug}` });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('content="https://xn--r8jz45g.jp/bild.png"');
      const res = await submit(form.slug);
      expect(res.statusCode, res.body).toBe(303);
      expect(res.headers.location).toBe(IDN_NORMAL);
      const json = await submit(form.slug, true);
      expect(json.json()).toEqual({ ok: true, redirect: IDN_NORMAL });
      expect(await submissions(ws)).toBe(2);
    });

    it('URLs stored before the check: a non-ASCII one is sent encoded; one with a line break or control character shows the message page; never a 500', async () => {
      const ws = await h.workspace();
      const cases: [string, string | null][] = [
        [IDN, IDN_NORMAL],
        ['https://thanks.example/a\nb', null],
        ['https://thanks.example/a\u0001b', null],
        ['https://thanks.example/a\r\nSet-Cookie: x=1', null],
      ];
      let expected = 0;
      for (const [stored, location] of cases) {
        const form = await draft(ws, {
          settings: { successAction: { type: 'REDIRECT', url: 'https://thanks.example/ok' } },
        });
        // As an older version let it be written.
        await h.db.kysely
          .updateTable('forms')
          .set({ settings: JSON.stringify({ successAction: { type: 'REDIRECT', url: stored }, doubleOptIn: false }) })
          .where('id', '=', form.id)
          .execute();
        expect((await h.call(ws.key, 'POST', `/v1/forms/${form.id}/publish`)).statusCode).toBe(200);
        const res = await submit(form.slug);
        const json = await submit(form.slug, true);
        const thanks = await h.app.inject({ method: 'GET', url: `/f/${form.slug}/thanks` });
        expected += 2;
        if (location) {
          expect(res.statusCode, stored).toBe(303);
          expect(res.headers.location).toBe(location);
          expect(json.json()).toEqual({ ok: true, redirect: location });
          expect(thanks.statusCode).toBe(303);
          expect(thanks.headers.location).toBe(location);
        } else {
          expect(res.statusCode, stored).toBe(200);
          expect(res.body).toContain('Thanks! Your submission has been received.');
          expect(res.headers['set-cookie']).toBeUndefined();
          expect(json.statusCode).toBe(200);
          expect(json.json()).toEqual({ ok: true, message: 'Thanks! Your submission has been received.' });
          expect(thanks.statusCode).toBe(200);
        }
        expect(await submissions(ws)).toBe(expected);
      }
    });
  },
);
