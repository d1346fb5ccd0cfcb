/**
 * Liquid in a form's success message (docs/forms.md, "The success message"): rendered with the submission's answers
 * on the hosted page, its thanks page (through the visitor's own cookie) and the embeds' JSON; escaped; never another
 * visitor's answers (no cached page); refused on save with a clear 422 when it does not parse. SQLite and PostgreSQL.
 */
import { expect, it } from 'vitest';
import { describeApi, type TestWorkspace } from '../helpers/app.js';

let slugs = 0;
const MESSAGE = 'Thanks, {{ first_name | default: "friend" }}! We wrote to {{ contact.email }} ({{ fields.plan }}).';

describeApi('Liquid in the success message', (h) => {
  const post = (slug: string, body: string) =>
    h.app.inject({
      method: 'POST',
      url: `/f/${slug}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: body,
    });
  const successText = (html: string) => /<div data-formcast-success role="status"><p>(.*?)<\/p><\/div>/.exec(html)?.[1];

  async function publishedForm(ws: TestWorkspace, message: string) {
    const slug = `liquid-${h.dbName}-${++slugs}`;
    const created = await h.call(ws.key, 'POST', '/v1/forms', {
      name: 'Newsletter',
      type: 'SIGN_UP',
      slug,
      fieldMapping: { email: 'email', first_name: 'firstName', plan: 'plan' },
      settings: { successAction: { type: 'MESSAGE', message } },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect((await h.call(ws.key, 'POST', `/v1/forms/${created.json().id}/publish`)).statusCode).toBe(200);
    return { id: created.json().id as string, slug };
  }

  it('a message that does not parse is refused on save, at its pointer, and nothing changes', async () => {
    const ws = await h.workspace();
    for (const message of ['Thanks {{ first_name ', 'Thanks {% if x %}', 'Thanks {{ first_name | shout }}']) {
      const res = await h.call(ws.key, 'POST', '/v1/forms', {
        name: 'Bad',
        type: 'SIGN_UP',
        settings: { successAction: { type: 'MESSAGE', message } },
      });
      expect(res.statusCode, message).toBe(422);
      expect(res.json()).toMatchObject({
        code: 'validation_failed',
        errors: [{ path: '/settings/successAction/message', message: expect.stringContaining('not a valid Liquid') }],
      });
    }
    const draft = (await h.call(ws.key, 'POST', '/v1/forms', { name: 'Ok', type: 'SIGN_UP' })).json();
    const put = await h.call(ws.key, 'PUT', `/v1/forms/${draft.id}`, {
      settings: { successAction: { type: 'MESSAGE', message: 'Hi {{ first_name' } },
    });
    expect(put.statusCode).toBe(422);
    expect((await h.call(ws.key, 'GET', `/v1/forms/${draft.id}`)).json().settings.successAction.message).toBe(
      draft.settings.successAction.message,
    );
    const good = await h.call(ws.key, 'PUT', `/v1/forms/${draft.id}`, {
      settings: { successAction: { type: 'MESSAGE', message: MESSAGE } },
    });
    expect(good.statusCode).toBe(200);
    expect(good.json().settings.successAction.message).toBe(MESSAGE);
  });

  it('renders the answers on the page, the thanks page and the embed, each visitor their own, escaped', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws, MESSAGE);
    const res = await post(form.slug, 'email=lin%40example.com&first_name=Lin&plan=pro');
    expect(res.statusCode).toBe(200);
    expect(successText(res.body)).toBe('Thanks, Lin! We wrote to lin@example.com (pro).');
    expect(res.headers.refresh).toBe(`0; url=/f/${form.slug}/thanks`);
    const cookie = String(res.headers['set-cookie']);
    expect(cookie).toMatch(
      new RegExp(`^fc_thanks=[^;]+; Path=/f/${form.slug}/thanks; Max-Age=600; HttpOnly; SameSite=Lax$`),
    );

    // The thanks page the browser goes to at once: the visitor's own message.
    const thanks = await h.app.inject({
      method: 'GET',
      url: `/f/${form.slug}/thanks`,
      headers: { cookie: cookie.split(';')[0]! },
    });
    expect(successText(thanks.body)).toBe('Thanks, Lin! We wrote to lin@example.com (pro).');
    // Without it (another browser, later): rendered without answers.
    const bare = await h.app.inject({ method: 'GET', url: `/f/${form.slug}/thanks` });
    expect(successText(bare.body)).toBe('Thanks, friend! We wrote to  ().');

    // The next visitor sees their own answers (the page is not cached), and markup in an answer stays text.
    const next = await post(form.slug, 'email=ada%40example.com&first_name=%3Cb%3EAda%3C%2Fb%3E');
    expect(successText(next.body)).toBe('Thanks, &lt;b&gt;Ada&lt;/b&gt;! We wrote to ada@example.com ().');
    expect(next.body).not.toContain('<b>Ada');

    // An embed (JSON): the rendered message, shown as text by the embed.
    const embed = await h.app.inject({
      method: 'POST',
      url: `/f/${form.slug}`,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      payload: JSON.stringify({ email: 'grace@example.com', first_name: 'Grace', plan: 'free' }),
    });
    expect(embed.json()).toEqual({ ok: true, message: 'Thanks, Grace! We wrote to grace@example.com (free).' });

    // The submissions are stored as usual.
    const stored = await h.db.kysely.selectFrom('submissions').select('id').where('workspace_id', '=', ws.id).execute();
    expect(stored).toHaveLength(3);
  });

  it('a message without Liquid is shown as written, and its thanks page needs no cookie', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws, 'Thanks! 50% off with code {WELCOME}.');
    const res = await post(form.slug, 'email=plain%40example.com');
    expect(successText(res.body)).toBe('Thanks! 50% off with code {WELCOME}.');
    expect(res.headers['set-cookie']).toBeUndefined();
    const thanks = await h.app.inject({ method: 'GET', url: `/f/${form.slug}/thanks` });
    expect(successText(thanks.body)).toBe('Thanks! 50% off with code {WELCOME}.');
  });
});
