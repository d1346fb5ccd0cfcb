import { expect, it } from 'vitest';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { insertContact, verifiedDomain } from '../helpers/fixtures.js';
import { useSending } from '../helpers/sending.js';

/**
 * Block documents wherever email content is written (contract §16; docs/email-documents-api.md): broadcasts, templates
 * and automation send steps store the html and text rendered from their document (an html or text sent beside it is
 * ignored), a bad document is 422 at its pointer with nothing stored, POST /v1/email-documents/render previews one, and
 * a broadcast built from one arrives over SMTP personalised with the footer filled in.
 */

const doc = (blocks: unknown[], settings?: Record<string, unknown>) => ({
  type: 'formcast/blocks',
  version: 1,
  ...(settings ? { settings } : {}),
  blocks,
});

const GOOD = doc(
  [
    { type: 'heading', text: 'Big news', level: 1 },
    { type: 'text', text: '<p>Hi {{ contact.firstName | default: "there" }}, we <b>shipped</b> it.</p>' },
    { type: 'button', text: 'Read more', url: 'https://example.com/news' },
    { type: 'footer' },
  ],
  { brandColor: '#0b5fff' },
);

/** The bad documents of the issue, each with the pointer (in the document) its error is at or under. */
function badDocuments(): { name: string; editorContent: unknown; at: string }[] {
  let nested: unknown = { type: 'text', text: 'deep' };
  for (let i = 0; i < 100; i++) nested = { type: 'columns', columns: [[nested], [{ type: 'text', text: 'side' }]] };
  return [
    { name: 'a document 100 levels deep', editorContent: doc([nested]), at: '/blocks/0/columns/0/0' },
    {
      name: '10,000 blocks',
      editorContent: doc(Array.from({ length: 10_000 }, () => ({ type: 'divider' }))),
      at: '/blocks',
    },
    {
      name: 'unclosed Liquid in a text block',
      editorContent: doc([{ type: 'text', text: 'Hi {{ contact.firstName' }]),
      at: '/blocks/0/text',
    },
    {
      name: 'Liquid that does not parse in a column',
      editorContent: doc([
        { type: 'columns', columns: [[{ type: 'heading', text: 'ok' }], [{ type: 'button', text: 'Go {%', url: '' }]] },
      ]),
      at: '/blocks/0/columns/1/0/text',
    },
    {
      name: 'a relative image URL',
      editorContent: doc([{ type: 'image', url: '/images/logo.png', alt: 'Logo' }]),
      at: '/blocks/0/url',
    },
  ];
}

describeApi('email documents', (h) => {
  const sending = useSending(h, { workerId: 'documents-test' });

  async function countRows(table: 'broadcasts' | 'templates' | 'automations', ws: TestWorkspace): Promise<number> {
    const r = await h.db.kysely
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', ws.id)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  const broadcastRow = (id: string) =>
    h.db.kysely
      .selectFrom('broadcasts')
      .select(['html', 'text', 'editor_content'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
  const templateRow = (id: string) =>
    h.db.kysely
      .selectFrom('templates')
      .select(['html', 'text', 'editor_content'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
  const storedSteps = async (automationId: string) => {
    const r = await h.db.kysely
      .selectFrom('automation_versions')
      .select('steps')
      .where('automation_id', '=', automationId)
      .orderBy('version', 'desc')
      .executeTakeFirstOrThrow();
    return JSON.parse(r.steps) as { id: string; emailContent: { html: string | null; text: string | null } }[];
  };

  /** What the document renders to: its texts, the footer's Liquid, none of what was sent beside it. */
  function expectRendered(html: string | null, text: string | null) {
    expect(html).toContain('Big news');
    expect(html).toContain('{{ contact.firstName | default: "there" }}');
    expect(html).toContain('{{ unsubscribe_url }}');
    expect(html).toContain('{{ workspace.postal_address }}');
    expect(html).not.toContain('IGNORED');
    expect(text).toContain('Big news');
    expect(text).not.toContain('IGNORED');
  }

  it('broadcasts: create and update store the html and text rendered from the document, ignoring those sent', async () => {
    const ws = await h.workspace();
    const created = await h.call(ws.key, 'POST', '/v1/broadcasts', {
      name: 'Doc',
      emailContent: { subject: 'News', html: '<p>IGNORED</p>', text: 'IGNORED', editorContent: GOOD },
    });
    expect(created.statusCode, created.body).toBe(201);
    const b = created.json();
    expect(b.emailContent.editorContent).toEqual(GOOD);
    expectRendered(b.emailContent.html, b.emailContent.text);
    const row = await broadcastRow(b.id);
    expectRendered(row.html, row.text);
    expect(JSON.parse(row.editor_content!)).toEqual(GOOD);

    const changed = doc([{ type: 'heading', text: 'Second edition' }]);
    const put = await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.id}`, {
      emailContent: { subject: 'News', html: '<p>IGNORED</p>', editorContent: changed },
    });
    expect(put.statusCode, put.body).toBe(200);
    const after = await broadcastRow(b.id);
    expect(after.html).toContain('Second edition');
    expect(after.html).not.toContain('Big news');
    expect(after.html).not.toContain('IGNORED');
    // A document is one editor's JSON among others: anything else is kept as given, and html is stored as sent.
    const other = await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.id}`, {
      emailContent: { subject: 'News', html: '<p>Raw {{ contact.email }}</p>', editorContent: { type: 'mjml', x: 1 } },
    });
    expect(other.statusCode, other.body).toBe(200);
    expect((await broadcastRow(b.id)).html).toBe('<p>Raw {{ contact.email }}</p>');
  });

  it('templates: editorContent is kept and rendered on create and update; a partial update keeps the document', async () => {
    const ws = await h.workspace();
    const res = await h.call(ws.key, 'POST', '/v1/templates', {
      name: 'Welcome',
      subject: 'Welcome',
      html: '<p>IGNORED</p>',
      editorContent: GOOD,
    });
    expect(res.statusCode, res.body).toBe(201);
    const t = res.json();
    expect(t.editorContent).toEqual(GOOD);
    expectRendered(t.html, t.text);
    const row = await templateRow(t.id);
    expectRendered(row.html, row.text);
    expect(JSON.parse(row.editor_content!)).toEqual(GOOD);
    expect((await h.call(ws.key, 'GET', `/v1/templates/${t.id}`)).json()).toEqual(t);

    // An html sent without the document, while the template keeps one, is ignored too.
    const partial = await h.call(ws.key, 'PUT', `/v1/templates/${t.id}`, { name: 'Hello', html: '<p>IGNORED</p>' });
    expect(partial.statusCode, partial.body).toBe(200);
    expect(partial.json()).toMatchObject({ name: 'Hello', html: t.html, editorContent: GOOD });
    const replaced = await h.call(ws.key, 'PUT', `/v1/templates/${t.id}`, {
      editorContent: doc([{ type: 'text', text: '<p>Version two</p>' }]),
      text: 'IGNORED',
    });
    expect(replaced.statusCode, replaced.body).toBe(200);
    expect((await templateRow(t.id)).html).toContain('Version two');
    expect((await templateRow(t.id)).text).not.toContain('IGNORED');
    // Back to code: the document dropped, the html as sent.
    const code = await h.call(ws.key, 'PUT', `/v1/templates/${t.id}`, { editorContent: null, html: '<p>Mine</p>' });
    expect(code.json()).toMatchObject({ editorContent: null, html: '<p>Mine</p>' });
    expect(await templateRow(t.id)).toMatchObject({ html: '<p>Mine</p>', editor_content: null });
  });

  it('automations: a send step with a document stores the rendered html and text, on create and update', async () => {
    const ws = await h.workspace();
    const step = (id: string, editorContent: unknown) => ({
      id,
      type: 'send',
      from: 'News <news@acme.test>',
      emailContent: { subject: 'Welcome', html: '<p>IGNORED</p>', text: 'IGNORED', editorContent },
    });
    const res = await h.call(ws.key, 'POST', '/v1/automations', {
      name: 'Welcome',
      trigger: { type: 'api' },
      steps: [
        { type: 'wait', duration: 'P1D' },
        {
          type: 'branch',
          filter: { field: 'firstName', op: 'exists' },
          then: [step('hello', GOOD)],
          else: [],
        },
      ],
    });
    expect(res.statusCode, res.body).toBe(201);
    const a = res.json();
    const sent = a.steps[1].then[0];
    expectRendered(sent.emailContent.html, sent.emailContent.text);
    expect(sent.emailContent.editorContent).toEqual(GOOD);
    const stored = (await storedSteps(a.id)) as unknown as {
      then: { emailContent: { html: string; text: string } }[];
    }[];
    expectRendered(stored[1]!.then[0]!.emailContent.html, stored[1]!.then[0]!.emailContent.text);

    const put = await h.call(ws.key, 'PUT', `/v1/automations/${a.id}`, {
      steps: [step('bye', doc([{ type: 'heading', text: 'Goodbye' }]))],
    });
    expect(put.statusCode, put.body).toBe(200);
    const [only] = await storedSteps(a.id);
    expect(only!.emailContent.html).toContain('Goodbye');
    expect(only!.emailContent.html).not.toContain('IGNORED');
    expect(only!.emailContent.text).not.toContain('IGNORED');
  });

  for (const bad of badDocuments()) {
    it(`${bad.name}: 422 at its pointer, nothing stored (broadcasts, templates, automations)`, async () => {
      const ws = await h.workspace();
      const pathsOf = (body: { errors?: { path: string }[] }) => (body.errors ?? []).map((e) => e.path);
      const expectAt = (res: { statusCode: number; json(): unknown; body: string }, base: string) => {
        expect(res.statusCode, res.body.slice(0, 300)).toBe(422);
        const body = res.json() as { code: string; errors?: { path: string }[] };
        expect(body.code).toBe('validation_failed');
        const want = `${base}/editorContent${bad.at}`;
        expect(
          pathsOf(body).some((p) => p === want || p.startsWith(`${want}/`)),
          `${pathsOf(body).join(', ')} has ${want}`,
        ).toBe(true);
      };

      expectAt(
        await h.call(ws.key, 'POST', '/v1/broadcasts', {
          name: 'Bad',
          emailContent: { subject: 'x', html: '<p>ok</p>', editorContent: bad.editorContent },
        }),
        '/emailContent',
      );
      expect(await countRows('broadcasts', ws)).toBe(0);
      const b = (
        await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'Good', emailContent: { editorContent: GOOD } })
      ).json();
      const before = await broadcastRow(b.id);
      expectAt(
        await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.id}`, {
          name: 'Changed',
          emailContent: { editorContent: bad.editorContent },
        }),
        '/emailContent',
      );
      expect(await broadcastRow(b.id)).toEqual(before);
      expect((await h.call(ws.key, 'GET', `/v1/broadcasts/${b.id}`)).json().name).toBe('Good');

      expectAt(await h.call(ws.key, 'POST', '/v1/templates', { name: 'Bad', editorContent: bad.editorContent }), '');
      expect(await countRows('templates', ws)).toBe(0);
      const t = (await h.call(ws.key, 'POST', '/v1/templates', { name: 'Good', editorContent: GOOD })).json();
      const tBefore = await templateRow(t.id);
      expectAt(
        await h.call(ws.key, 'PUT', `/v1/templates/${t.id}`, { name: 'Changed', editorContent: bad.editorContent }),
        '',
      );
      expect(await templateRow(t.id)).toEqual(tBefore);

      const steps = [{ type: 'send', emailContent: { subject: 'x', editorContent: bad.editorContent } }];
      expectAt(
        await h.call(ws.key, 'POST', '/v1/automations', { name: 'Bad', trigger: { type: 'api' }, steps }),
        '/steps/0/emailContent',
      );
      expect(await countRows('automations', ws)).toBe(0);
      const a = (
        await h.call(ws.key, 'POST', '/v1/automations', { name: 'Good', trigger: { type: 'api' }, steps: [] })
      ).json();
      expectAt(await h.call(ws.key, 'PUT', `/v1/automations/${a.id}`, { steps }), '/steps/0/emailContent');
      expect(await storedSteps(a.id)).toEqual([]);
    });
  }

  it('a bad document is reported with the other problems of the write', async () => {
    const ws = await h.workspace();
    const res = await h.call(ws.key, 'POST', '/v1/broadcasts', {
      name: 'Bad',
      from: 'not an address',
      emailContent: { editorContent: doc([{ type: 'image', url: '/logo.png', alt: 'Logo' }]) },
    });
    expect(res.statusCode).toBe(422);
    const paths = res.json().errors.map((e: { path: string }) => e.path);
    expect(paths).toContain('/from');
    expect(paths.some((p: string) => p.startsWith('/emailContent/editorContent/blocks/0'))).toBe(true);
  });

  it('an html block is sanitised, not refused: 200, the stored document and html without what was removed', async () => {
    const ws = await h.workspace();
    const unsafe =
      '<p style="color:#333">Hello</p><script>alert(1)</script><a href="javascript:alert(2)" onclick="alert(3)">x</a>' +
      '<iframe src="https://example.com/f"></iframe><form action="https://example.com/p"><input name="q"></form>' +
      '<style>p{color:red}</style><link rel="stylesheet" href="https://example.com/a.css">';
    const editorContent = doc([
      { type: 'html', html: unsafe },
      { type: 'columns', columns: [[{ type: 'html', html: '<b onclick="alert(4)">col</b>' }], []] },
      { type: 'footer' },
    ]);
    const sanitised = doc([
      { type: 'html', html: '<p style="color:#333">Hello</p><a>x</a>' },
      { type: 'columns', columns: [[{ type: 'html', html: '<b>col</b>' }], []] },
      { type: 'footer' },
    ]);
    const expectSafe = (html: string | null) => {
      const body = (html ?? '').slice((html ?? '').indexOf('<body'));
      expect(body).toContain('<p style="color:#333">Hello</p><a>x</a>');
      expect(body).toContain('<b>col</b>');
      expect(body).not.toMatch(/<script|<iframe|<form|<input|<style|<link|\son\w+=|javascript:|alert\(/i);
    };

    const b = await h.call(ws.key, 'POST', '/v1/broadcasts', {
      name: 'Doc',
      emailContent: { subject: 'x', editorContent },
    });
    expect(b.statusCode, b.body).toBe(201);
    expect(b.json().emailContent.editorContent).toEqual(sanitised);
    const row = await broadcastRow(b.json().id);
    expect(JSON.parse(row.editor_content!)).toEqual(sanitised);
    expectSafe(row.html);
    const put = await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.json().id}`, { emailContent: { editorContent } });
    expect(put.statusCode, put.body).toBe(200);
    expect(JSON.parse((await broadcastRow(b.json().id)).editor_content!)).toEqual(sanitised);

    const t = await h.call(ws.key, 'POST', '/v1/templates', { name: 'T', subject: 'x', editorContent });
    expect(t.statusCode, t.body).toBe(201);
    const trow = await templateRow(t.json().id);
    expect(JSON.parse(trow.editor_content!)).toEqual(sanitised);
    expectSafe(trow.html);

    const a = await h.call(ws.key, 'POST', '/v1/automations', {
      name: 'A',
      trigger: { type: 'api' },
      steps: [{ type: 'send', emailContent: { subject: 'x', editorContent } }],
    });
    expect(a.statusCode, a.body).toBe(201);
    const [step] = await storedSteps(a.json().id);
    expect((step!.emailContent as unknown as { editorContent: unknown }).editorContent).toEqual(sanitised);
    expectSafe(step!.emailContent.html);

    const r = await h.call(ws.key, 'POST', '/v1/email-documents/render', { editorContent });
    expect(r.statusCode, r.body).toBe(200);
    expectSafe(r.json().html);
    const warnings = r.json().warnings as { path: string; code: string; message: string }[];
    const removed = warnings.filter((w) => w.code === 'html_sanitized');
    expect(removed.map((w) => w.path)).toEqual([...Array(8).fill('/blocks/0'), '/blocks/1/columns/0/0']);
    expect(removed.map((w) => w.message).join(' | ')).toMatch(/<script> element was removed/);
    expect(removed.map((w) => w.message).join(' | ')).toMatch(/event handler \(onclick\) was removed/);
    // What is not about the HTML's content is still refused: the nesting limit.
    const deep = await h.call(ws.key, 'POST', '/v1/email-documents/render', {
      editorContent: doc([{ type: 'html', html: `${'<div>'.repeat(150)}x` }]),
    });
    expect(deep.statusCode).toBe(422);
    expect(deep.json().errors[0].path).toBe('/editorContent/blocks/0/html');
  });

  it('Liquid that does not parse is 422 at the pointer of its field (broadcasts, the render endpoint)', async () => {
    const ws = await h.workspace();
    const broken = doc([
      { type: 'heading', text: 'ok' },
      { type: 'text', text: 'Hi {{ contact.firstName' },
      { type: 'columns', columns: [[{ type: 'text', text: 'ok' }], [{ type: 'footer', text: '{% if x %}' }]] },
    ]);
    const b = await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'Doc', emailContent: { editorContent: broken } });
    expect(b.statusCode, b.body).toBe(422);
    expect(b.json().code).toBe('validation_failed');
    expect(b.json().errors.map((e: { path: string }) => e.path)).toEqual([
      '/emailContent/editorContent/blocks/1/text',
      '/emailContent/editorContent/blocks/2/columns/1/0/text',
    ]);
    expect(await countRows('broadcasts', ws)).toBe(0);
    const r = await h.call(ws.key, 'POST', '/v1/email-documents/render', { editorContent: broken });
    expect(r.statusCode, r.body).toBe(422);
    expect(r.json().errors.map((e: { path: string }) => e.path)).toEqual([
      '/editorContent/blocks/1/text',
      '/editorContent/blocks/2/columns/1/0/text',
    ]);
    expect(r.json().errors[0].message).toMatch(/^The Liquid in the text block's text does not parse: /);
  });

  it('POST /v1/email-documents/render: personalised for a contact or sample data, with warnings, saving nothing', async () => {
    const ws = await h.workspace('Acme');
    await h.call(ws.key, 'PUT', '/v1/workspace', { settings: { postalAddress: '1 Main Street, Springfield' } });
    const contactId = await insertContact(h, ws, { email: 'ada@example.com', firstName: 'Ada' });
    const before = { b: await countRows('broadcasts', ws), t: await countRows('templates', ws) };

    const forContact = await h.call(ws.key, 'POST', '/v1/email-documents/render', { editorContent: GOOD, contactId });
    expect(forContact.statusCode, forContact.body).toBe(200);
    const r = forContact.json();
    expect(Object.keys(r).sort()).toEqual(['html', 'text', 'warnings']);
    expect(r.html).toContain('Hi Ada, we <b>shipped</b> it.');
    expect(r.html).toContain('1 Main Street, Springfield');
    expect(r.html).toContain('http://localhost:3000/unsubscribe/preview');
    expect(r.html).toMatch(/<html[^>]* lang="en"/);
    expect(r.html).not.toMatch(/\{\{|\{%/);
    expect(r.text).toContain('Big news');
    expect(r.text).toContain('1 Main Street, Springfield');
    expect(Array.isArray(r.warnings)).toBe(true);

    const sample = (
      await h.call(await h.key(ws, ['read:broadcasts']), 'POST', '/v1/email-documents/render', { editorContent: GOOD })
    ).json();
    expect(sample.html).toContain('Hi Jane,');

    const bad = await h.call(ws.key, 'POST', '/v1/email-documents/render', {
      editorContent: doc([{ type: 'image', url: 'logo.png', alt: 'Logo' }]),
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors[0].path).toMatch(/^\/editorContent\/blocks\/0/);
    const notADocument = await h.call(ws.key, 'POST', '/v1/email-documents/render', { editorContent: { x: 1 } });
    expect(notADocument.statusCode).toBe(422);
    expect(notADocument.json().errors[0].path).toMatch(/^\/editorContent/);
    expect((await h.call(ws.key, 'POST', '/v1/email-documents/render', {})).statusCode).toBe(422);

    expect({ b: await countRows('broadcasts', ws), t: await countRows('templates', ws) }).toEqual(before);
    expect(
      (
        await h.call(await h.key(ws, ['write:forms']), 'POST', '/v1/email-documents/render', {
          editorContent: GOOD,
        })
      ).statusCode,
    ).toBe(403);
    expect((await h.call(null, 'POST', '/v1/email-documents/render', { editorContent: GOOD })).statusCode).toBe(401);
  });

  it("render: another workspace's contact is 404, as an unknown one", async () => {
    const ws = await h.workspace();
    const other = await h.workspace();
    const theirs = await insertContact(h, other, { email: 'them@example.com', firstName: 'Them' });
    for (const contactId of [theirs, 'ct_00000000000000000000000000']) {
      const res = await h.call(ws.key, 'POST', '/v1/email-documents/render', { editorContent: GOOD, contactId });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('not_found');
      expect(res.body).not.toContain('Them');
    }
    const mine = await h.call(other.key, 'POST', '/v1/email-documents/render', {
      editorContent: GOOD,
      contactId: theirs,
    });
    expect(mine.json().html).toContain('Hi Them,');
  });

  it("preflight lists the document's warnings (an image without alt, a button without a link)", async () => {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, `pf${ws.id.slice(-8).toLowerCase()}.test`);
    const b = (
      await h.call(ws.key, 'POST', '/v1/broadcasts', {
        name: 'Warnings',
        from: `news@${domain.name}`,
        emailContent: {
          subject: 'Hi',
          editorContent: doc([
            { type: 'text', text: '<p>Hello</p>' },
            { type: 'image', url: 'https://cdn.example.com/a.png', alt: '' },
            { type: 'button', text: 'Go', url: '' },
          ]),
        },
      })
    ).json();
    const pf = await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/preflight`);
    expect(pf.statusCode, pf.body).toBe(200);
    const by = Object.fromEntries(pf.json().checks.map((c: { id: string }) => [c.id, c]));
    expect(by.document_image_alt_missing).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining('/emailContent/editorContent/blocks/1'),
    });
    expect(by.document_button_link_missing).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining('/emailContent/editorContent/blocks/2'),
    });
    // A clean document passes.
    await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.id}`, { emailContent: { subject: 'Hi', editorContent: GOOD } });
    const clean = (await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/preflight`)).json();
    expect(clean.checks.find((c: { id: string }) => c.id === 'document')).toMatchObject({ status: 'pass' });
    expect(clean.checks.filter((c: { id: string }) => c.id.startsWith('document_'))).toEqual([]);
  });

  it('workspace settings: brandColor (#rrggbb or null), null by default', async () => {
    const ws = await h.workspace();
    expect((await h.call(ws.key, 'GET', '/v1/workspace')).json().settings.brandColor).toBeNull();
    const put = await h.call(ws.key, 'PUT', '/v1/workspace', { settings: { brandColor: '#0B5FFF' } });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json().settings).toMatchObject({ brandColor: '#0B5FFF', locale: 'en' });
    const bad = await h.call(ws.key, 'PUT', '/v1/workspace', { settings: { brandColor: 'blue' } });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors[0].path).toBe('/settings/brandColor');
    expect((await h.call(ws.key, 'GET', '/v1/workspace')).json().settings.brandColor).toBe('#0B5FFF');
    await h.call(ws.key, 'PUT', '/v1/workspace', { settings: { brandColor: null } });
    expect((await h.call(ws.key, 'GET', '/v1/workspace')).json().settings.brandColor).toBeNull();
  });

  it("`workspace` is in the Liquid scope of previews, and a whole document gets the workspace's locale", async () => {
    const ws = await h.workspace('Acme Books');
    await h.call(ws.key, 'PUT', '/v1/workspace', { settings: { postalAddress: '9 Rue Haute\nParis', locale: 'fr' } });
    const b = (
      await h.call(ws.key, 'POST', '/v1/broadcasts', {
        name: 'Scope',
        emailContent: {
          subject: 'From {{ workspace.name }}',
          html: '<html><head><title></title></head><body><p>{{ workspace.name }} · {{ workspace.postal_address }}</p></body></html>',
        },
      })
    ).json();
    const preview = (await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/preview`, {})).json();
    expect(preview.subject).toBe('From Acme Books');
    expect(preview.html).toMatch(/<html lang="fr">/);
    expect(preview.html).toContain('<title>From Acme Books</title>');
    expect(preview.html).toContain('<p>Acme Books · 9 Rue Haute\nParis</p>');
    // The address the content shows is not added a second time by the footer.
    expect(preview.html.match(/9 Rue Haute/g)).toHaveLength(1);
  });

  it('a broadcast built from a document arrives over SMTP with the rendered HTML, personalised, its footer filled', async () => {
    const ws = await h.workspace('Acme');
    await h.call(ws.key, 'PUT', '/v1/workspace', {
      settings: { postalAddress: 'Acme Inc., 1 Main Street, Springfield' },
    });
    const domain = await verifiedDomain(h, ws, `doc${ws.id.slice(-8).toLowerCase()}.test`);
    await insertContact(h, ws, { email: 'ada@example.com', firstName: 'Ada' });
    await insertContact(h, ws, { email: 'nobody@example.com' });
    const b = (
      await h.call(ws.key, 'POST', '/v1/broadcasts', {
        name: 'Doc send',
        from: `Acme <news@${domain.name}>`,
        tracking: { opens: false, clicks: false },
        emailContent: { subject: 'Big news', html: '<p>IGNORED</p>', editorContent: GOOD },
      })
    ).json();
    const stored = (await broadcastRow(b.id)).html!;
    expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/send`)).statusCode).toBe(202);
    await sending.drain();

    expect(sending.smtp.received.map((m) => m.to).sort()).toEqual(['ada@example.com', 'nobody@example.com']);
    // The longest stretch of the rendered document without Liquid: the layout the renderer made, as it was stored.
    const layout = stored
      .split(/\{\{.*?\}\}|\{%.*?%\}|<html[^>]*>|<title>.*?<\/title>/s)
      .reduce((a, c) => (c.length > a.length ? c : a), '');
    expect(layout.length).toBeGreaterThan(10);
    for (const m of sending.smtp.received) {
      const html = m.parsed.html as string;
      expect(html).toContain(layout);
      expect(html).toContain(m.to === 'ada@example.com' ? 'Hi Ada, we' : 'Hi there, we');
      expect(html).toContain('Acme Inc., 1 Main Street, Springfield');
      expect(html).toMatch(/href="https:\/\/mail\.example\.test\/unsubscribe\/[A-Za-z0-9_-]{32}"/);
      expect(html).not.toMatch(/\{\{|\{%|IGNORED/);
      expect(html).toMatch(/<html[^>]* lang="en"/);
      // The document links the unsubscribe URL and shows the address: the assembly adds no second footer.
      expect(html.match(/Acme Inc\., 1 Main Street, Springfield/g)).toHaveLength(1);
      expect(m.parsed.text).toContain('Acme Inc., 1 Main Street, Springfield');
      expect(m.parsed.text).toMatch(/https:\/\/mail\.example\.test\/unsubscribe\/[A-Za-z0-9_-]{32}/);
    }
  });
});
