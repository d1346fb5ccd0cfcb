import { expect, it } from 'vitest';
import { describeApi } from '../helpers/app.js';

describeApi('templates', (h) => {
  it('CRUD with Liquid validation', async () => {
    const ws = await h.workspace();
    const res = await h.call(ws.key, 'POST', '/v1/templates', {
      name: 'Confirm',
      subject: 'Please confirm',
      html: '<a href="{{ confirm_url }}">Confirm</a>',
    });
    expect(res.statusCode).toBe(201);
    const t = res.json();
    expect(res.headers.location).toBe(`/v1/templates/${t.id}`);
    expect(Object.keys(t).sort()).toEqual([
      'alias',
      'createdAt',
      'editorContent',
      'html',
      'id',
      'name',
      'subject',
      'text',
      'updatedAt',
      'version',
    ]);
    expect(t).toMatchObject({ name: 'Confirm', subject: 'Please confirm', text: null });
    expect(t.id).toMatch(/^tmpl_/);
    const bad = await h.call(ws.key, 'POST', '/v1/templates', { name: 'Bad', html: '{% for %}' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors[0].path).toBe('/html');
    const updated = (
      await h.call(ws.key, 'PUT', `/v1/templates/${t.id}`, { text: 'Confirm: {{ confirm_url }}', subject: null })
    ).json();
    expect(updated).toMatchObject({ text: 'Confirm: {{ confirm_url }}', subject: null, html: t.html });
    expect((await h.call(ws.key, 'PUT', `/v1/templates/${t.id}`, { subject: '{{ x | nope }}' })).statusCode).toBe(422);
    expect((await h.call(ws.key, 'PUT', `/v1/templates/${t.id}`, { id: 'tmpl_other' })).statusCode).toBe(422);
    expect((await h.call(ws.key, 'GET', '/v1/templates')).json().data.map((x: { id: string }) => x.id)).toEqual([t.id]);
    expect((await h.call(ws.key, 'DELETE', `/v1/templates/${t.id}`)).statusCode).toBe(204);
    expect((await h.call(ws.key, 'GET', `/v1/templates/${t.id}`)).statusCode).toBe(404);
  });

  it('a template a form uses for double opt-in cannot be deleted (409 resource_in_use)', async () => {
    const ws = await h.workspace();
    const t = (await h.call(ws.key, 'POST', '/v1/templates', { name: 'Confirm', html: '{{ confirm_url }}' })).json();
    const form = await h.call(ws.key, 'POST', '/v1/forms', { name: 'F', type: 'SIGN_UP', doubleOptInEmailId: t.id });
    expect(form.statusCode).toBe(201);
    const res = await h.call(ws.key, 'DELETE', `/v1/templates/${t.id}`);
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('resource_in_use');
    expect((await h.call(ws.key, 'GET', `/v1/templates/${t.id}`)).statusCode).toBe(200);
  });

  it("another workspace's template is 404; scopes are the broadcasts ones", async () => {
    const ws = await h.workspace();
    const other = await h.workspace();
    const t = (await h.call(ws.key, 'POST', '/v1/templates', { name: 'Mine' })).json();
    for (const [method, url, body] of [
      ['GET', `/v1/templates/${t.id}`],
      ['PUT', `/v1/templates/${t.id}`, { name: 'x' }],
      ['DELETE', `/v1/templates/${t.id}`],
    ] as const) {
      expect((await h.call(other.key, method, url, body)).statusCode).toBe(404);
    }
    // and it cannot be referenced from another workspace's form
    expect(
      (await h.call(other.key, 'POST', '/v1/forms', { name: 'F', type: 'SURVEY', doubleOptInEmailId: t.id })).json()
        .code,
    ).toBe('invalid_reference');
    const reader = await h.key(ws, ['read:broadcasts']);
    expect((await h.call(reader, 'GET', `/v1/templates/${t.id}`)).statusCode).toBe(200);
    expect((await h.call(reader, 'POST', '/v1/templates', { name: 'x' })).statusCode).toBe(403);
    const formsOnly = await h.key(ws, ['write:forms']);
    expect((await h.call(formsOnly, 'GET', '/v1/templates')).statusCode).toBe(403);
  });
});
