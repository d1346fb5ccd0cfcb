import { expect, it } from 'vitest';
import { describeApi, type TestWorkspace } from '../helpers/app.js';

/** A form's `settings.captureTimezone` (issue 34, docs/forms.md "The visitor's time zone"). */
describeApi("forms capture the visitor's time zone", (h) => {
  let slugs = 0;
  async function publishedForm(ws: TestWorkspace, settings: Record<string, unknown>) {
    const slug = `tz-${h.dbName}-${++slugs}`;
    const created = await h.call(ws.key, 'POST', '/v1/forms', {
      name: 'Newsletter',
      type: 'SIGN_UP',
      slug,
      fieldMapping: { email: 'email' },
      settings,
    });
    expect(created.statusCode, created.body).toBe(201);
    const pub = await h.call(ws.key, 'POST', `/v1/forms/${created.json().id}/publish`);
    expect(pub.statusCode, pub.body).toBe(200);
    return { ...pub.json(), slug } as { id: string; slug: string; settings: Record<string, unknown> };
  }
  const zoneOf = async (ws: TestWorkspace, email: string) =>
    (
      await h.db.kysely
        .selectFrom('contacts')
        .select('timezone')
        .where('workspace_id', '=', ws.id)
        .where('email', '=', email)
        .executeTakeFirst()
    )?.timezone;

  it('a sign-up with the hidden field gives the contact its zone; an invalid one is ignored, never refused', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws, { captureTimezone: true });
    expect(form.settings.captureTimezone).toBe(true);
    // the page carries the hidden field the embed fills
    const page = await h.app.inject({ method: 'GET', url: `/f/${form.slug}` });
    expect(page.body).toMatch(/<input type="hidden" name="_fc_tz" value="" data-formcast-tz="">/);
    // ... and the hosted page's one script, of this origin, that fills it (its CSP lets only this origin's scripts run)
    expect(page.body).toContain('<script src="/assets/forms/timezone.js?v=1" defer></script>');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    const script = await h.app.inject({ method: 'GET', url: '/assets/forms/timezone.js?v=1' });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    expect(script.headers['cache-control']).toContain('immutable');
    expect(script.body).toContain('resolvedOptions().timeZone');
    const submit = (body: Record<string, unknown>) => h.call(ws.key, 'POST', `/v1/forms/${form.id}/submissions`, body);
    const ok = await submit({ email: 'ada@example.com', _fc_tz: 'europe/berlin' });
    expect(ok.statusCode, ok.body).toBe(201);
    expect(await zoneOf(ws, 'ada@example.com')).toBe('Europe/Berlin');
    const bad = await submit({ email: 'bob@example.com', _fc_tz: 'Mars/Olympus' });
    expect(bad.statusCode, bad.body).toBe(201);
    expect(await zoneOf(ws, 'bob@example.com')).toBeNull();
    // a contact that has a zone keeps it
    await submit({ email: 'ada@example.com', _fc_tz: 'Asia/Tokyo' });
    expect(await zoneOf(ws, 'ada@example.com')).toBe('Europe/Berlin');
    // a public (hosted) submission too
    const hosted = await h.app.inject({
      method: 'POST',
      url: `/f/${form.slug}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'email=eve%40example.com&_fc_tz=America%2FNew_York',
    });
    expect(hosted.statusCode).toBeLessThan(400);
    expect(await zoneOf(ws, 'eve@example.com')).toBe('America/New_York');
  });

  it('a form without the setting ignores the field and renders none', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws, {});
    expect(form.settings.captureTimezone).toBeUndefined();
    const page = await h.app.inject({ method: 'GET', url: `/f/${form.slug}` });
    expect(page.body).not.toContain('_fc_tz');
    expect(page.body).not.toContain('<script');
    expect(page.headers['content-security-policy']).not.toContain('script-src');
    const res = await h.call(ws.key, 'POST', `/v1/forms/${form.id}/submissions`, {
      email: 'ada@example.com',
      _fc_tz: 'Europe/Berlin',
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(await zoneOf(ws, 'ada@example.com')).toBeNull();
  });
});
