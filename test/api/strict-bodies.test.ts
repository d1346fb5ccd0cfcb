/**
 * The README's walk-throughs as the contract says (§1: request bodies are strict): an unknown field is refused with
 * 422 validation_failed naming it, never silently dropped, in `POST /v1/events/track`, the contact writes, and the
 * headless submissions (a `first_name` the form does not map). `first_name` is not mapped to `firstName`: the
 * contract names the field `firstName`. And `GET /` leads to the console. SQLite and PostgreSQL.
 */
import { expect, it } from 'vitest';
import { describeApi } from '../helpers/app.js';

describeApi('unknown fields are refused; GET / leads to the console', (h) => {
  const count = async (table: 'contacts' | 'events' | 'submissions', workspaceId: string) =>
    Number(
      (
        await h.db.kysely
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('workspace_id', '=', workspaceId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const paths = (res: { json(): any }) => res.json().errors.map((e: { path: string }) => e.path);

  it('POST /v1/events/track with an unknown field: 422 naming it, no event', async () => {
    const ws = await h.workspace();
    expect((await h.call(ws.key, 'POST', '/v1/contacts', { email: 'lin@example.com' })).statusCode).toBe(201);
    const events = await count('events', ws.id);
    const res = await h.call(ws.key, 'POST', '/v1/events/track', {
      email: 'lin@example.com',
      name: 'trial.started',
      first_name: 'Lin',
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('validation_failed');
    expect(paths(res)).toContain('/first_name');
    expect(await count('events', ws.id)).toBe(events);
    const ok = await h.call(ws.key, 'POST', '/v1/events/track', {
      email: 'lin@example.com',
      name: 'trial.started',
      properties: { first_name: 'Lin' },
    });
    expect(ok.statusCode).toBe(202);
  });

  it('contact writes with first_name: 422 naming it; the contract field firstName works', async () => {
    const ws = await h.workspace();
    const refused = await h.call(ws.key, 'POST', '/v1/contacts', { email: 'lin@example.com', first_name: 'Lin' });
    expect(refused.statusCode).toBe(422);
    expect(paths(refused)).toContain('/first_name');
    expect(await count('contacts', ws.id)).toBe(0);
    const created = await h.call(ws.key, 'POST', '/v1/contacts', { email: 'lin@example.com', firstName: 'Lin' });
    expect(created.statusCode).toBe(201);
    const id = created.json().id;
    const put = await h.call(ws.key, 'PUT', `/v1/contacts/${id}`, { first_name: 'Linda' });
    expect(put.statusCode).toBe(422);
    expect(paths(put)).toContain('/first_name');
    expect((await h.call(ws.key, 'GET', `/v1/contacts/${id}`)).json().firstName).toBe('Lin');
  });

  it('a headless submission with a field the form does not map: 422 at its path, nothing stored', async () => {
    const ws = await h.workspace();
    const form = (
      await h.call(ws.key, 'POST', '/v1/forms', {
        name: 'Newsletter',
        type: 'SIGN_UP',
        fieldMapping: { email: 'email' },
      })
    ).json();
    expect((await h.call(ws.key, 'POST', `/v1/forms/${form.id}/publish`)).statusCode).toBe(200);
    const res = await h.call(ws.key, 'POST', `/v1/forms/${form.id}/submissions`, {
      email: 'lin@example.com',
      first_name: 'Lin',
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('validation_failed');
    expect(res.json().errors).toEqual([
      { path: '/first_name', message: expect.stringContaining('not a field of this form') },
    ]);
    expect(await count('submissions', ws.id)).toBe(0);
    expect(await count('contacts', ws.id)).toBe(0);

    // Mapped, it reaches the contact as firstName.
    const v2 = (await h.call(ws.key, 'POST', `/v1/forms/${form.id}/versions`)).json();
    await h.call(ws.key, 'PUT', `/v1/forms/${v2.id}`, { fieldMapping: { email: 'email', first_name: 'firstName' } });
    expect((await h.call(ws.key, 'POST', `/v1/forms/${v2.id}/publish`)).statusCode).toBe(200);
    // Posted to the archived version's id: it goes to the group's PUBLISHED version, with its mapping.
    const ok = await h.call(ws.key, 'POST', `/v1/forms/${form.id}/submissions`, {
      email: 'lin@example.com',
      first_name: 'Lin',
    });
    expect(ok.statusCode, ok.body).toBe(201);
    const contact = (await h.call(ws.key, 'GET', '/v1/contacts')).json().data[0];
    expect(contact).toMatchObject({ email: 'lin@example.com', firstName: 'Lin' });
    // The published version is what `?status=PUBLISHED` lists (the README's welcome sequence picks it so).
    const published = (await h.call(ws.key, 'GET', '/v1/forms?status=PUBLISHED')).json().data;
    expect(published.map((f: { id: string }) => f.id)).toEqual([v2.id]);
    expect(published[0].stats.submissions).toBe(1);
  });

  it('GET / redirects to the console', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/app');
  });
});
