/**
 * Forms that look like the sender's own and surveys that are surveys (docs/forms.md): `settings.appearance` and
 * `settings.fields` through the API (validation, storage, order kept on both databases), the hosted page and the embed
 * script rendering them (every text escaped), submissions checked against the questions on every path (hosted page,
 * JSON, API), proof of consent stored with them, the answers per question, the per-question summary, and the
 * retention purge of addresses and user agents.
 */
import { parse } from 'parse5';
import { expect, it } from 'vitest';
import { contrastRatio, textOn } from '@formcast/form-appearance';
import { purgeSubmissionNetworkData } from '../../src/forms/submissions/submissions.service.js';
import { describeApi, type TestWorkspace } from '../helpers/app.js';

const XSS = '<img src=x onerror=alert(1)>"><script>alert(2)</script>';
let slugs = 0;

/** Script elements, images other than the logo, and event-handler attributes in a document: what XSS would add. */
function activeParts(html: string): string[] {
  const found: string[] = [];
  const walk = (node: any): void => {
    if (node.tagName === 'script') found.push('script');
    if (
      node.tagName === 'img' &&
      !/^https:\/\/cdn\.example\//.test(node.attrs.find((a: any) => a.name === 'src')?.value ?? '')
    )
      found.push('img');
    for (const a of node.attrs ?? []) if (/^on/i.test(a.name)) found.push(`${node.tagName}[${a.name}]`);
    for (const c of node.childNodes ?? []) walk(c);
  };
  walk(parse(html));
  return found;
}

const SURVEY_FIELDS = {
  email: { label: 'Your email', type: 'email', required: true, placeholder: 'you@example.com' },
  plan: { label: 'Which plan are you on?', type: 'select', options: ['Free', 'Pro', 'Team'], required: true },
  rating: {
    label: 'How likely are you to recommend us?',
    type: 'radio',
    options: ['1', '2', '3', '4', '5'],
    required: true,
  },
  topics: { label: 'What should we write about?', type: 'checkbox', options: ['Guides', 'Releases', 'Events'] },
  seats: { label: 'Seats', type: 'number' },
  started: { label: 'Customer since', type: 'date' },
  comment: { label: 'Anything else?', type: 'textarea', placeholder: 'Tell us more' },
  beta: { label: 'Join the beta', type: 'checkbox' },
};

describeApi('forms: appearance, fields, surveys, consent', (h) => {
  async function publish(ws: TestWorkspace, body: Record<string, unknown>) {
    const slug = `look-${h.dbName}-${++slugs}`;
    const created = await h.call(ws.key, 'POST', '/v1/forms', {
      name: 'Internal name Q4-list',
      type: 'SIGN_UP',
      slug,
      fieldMapping: { email: 'email' },
      ...body,
    });
    expect(created.statusCode, created.body).toBe(201);
    const pub = await h.call(ws.key, 'POST', `/v1/forms/${created.json().id}/publish`);
    expect(pub.statusCode, pub.body).toBe(200);
    return { ...pub.json(), slug } as { id: string; formGroupId: string; slug: string; settings: any };
  }
  const postForm = (slug: string, form: string) =>
    h.app.inject({
      method: 'POST',
      url: `/f/${slug}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'Mozilla/5.0 (Test) Browser/1.0' },
      payload: form,
    });
  const postJson = (slug: string, body: unknown) =>
    h.app.inject({
      method: 'POST',
      url: `/f/${slug}`,
      headers: { 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'EmbedTest/2' },
      payload: JSON.stringify(body),
    });
  const rows = (ws: TestWorkspace) =>
    h.db.kysely.selectFrom('submissions').selectAll().where('workspace_id', '=', ws.id).orderBy('id').execute();
  const survey = (ws: TestWorkspace, appearance: Record<string, unknown> = {}) =>
    publish(ws, {
      type: 'SURVEY',
      fieldMapping: { email: 'email' },
      settings: {
        fields: SURVEY_FIELDS,
        appearance: { heading: 'Customer survey', consentText: 'I agree that Acme stores my answers.', ...appearance },
      },
    });

  it('validates appearance with one error per violation, at its JSON Pointer', async () => {
    const ws = await h.workspace();
    const res = await h.call(ws.key, 'POST', '/v1/forms', {
      name: 'x',
      type: 'SIGN_UP',
      settings: {
        appearance: {
          heading: 'h'.repeat(201),
          intro: 'i'.repeat(2001),
          buttonLabel: 'b'.repeat(61),
          consentText: 'c'.repeat(1001),
          brandColor: 'red',
          logoUrl: 'http://cdn.example/logo.png',
          theme: 'blue',
          font: 'x',
        },
      },
    });
    expect(res.statusCode).toBe(422);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const body = res.json();
    expect(body.code).toBe('validation_failed');
    const paths = body.errors.map((e: { path: string }) => e.path);
    for (const p of ['heading', 'intro', 'buttonLabel', 'consentText', 'brandColor', 'logoUrl', 'theme'])
      expect(paths).toContain(`/settings/appearance/${p}`);
    expect(JSON.stringify(body.errors)).toContain('font');
    for (const logoUrl of [
      'javascript:alert(1)',
      'https://user:pw@cdn.example/x.png',
      '/logo.png',
      `https://cdn.example/${XSS}`,
      'https://cdn.example/a b.png',
    ]) {
      const r = await h.call(ws.key, 'POST', '/v1/forms', {
        name: 'x',
        type: 'SIGN_UP',
        settings: { appearance: { logoUrl } },
      });
      expect(r.statusCode, logoUrl).toBe(422);
    }
    for (const brandColor of ['#12345', '#1234567', 'rgb(0,0,0)', `#fff;}${XSS}`, '#gggggg']) {
      const r = await h.call(ws.key, 'POST', '/v1/forms', {
        name: 'x',
        type: 'SIGN_UP',
        settings: { appearance: { brandColor } },
      });
      expect(r.statusCode, brandColor).toBe(422);
    }
    const bad = await h.call(
      ws.key,
      'POST',
      '/v1/forms',
      '{"name": "x", "type": "SIGN_UP", "settings": {"appearance": {',
    );
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('invalid_json');
  });

  it('validates fields when the form is saved: options for select/radio, types, reserved names, the email mapping', async () => {
    const ws = await h.workspace();
    const res = await h.call(ws.key, 'POST', '/v1/forms', {
      name: 'x',
      type: 'SURVEY',
      settings: {
        fields: {
          color: { label: 'Colour', type: 'select' },
          size: { label: 'Size', type: 'radio' },
          name: { label: 'Name', type: 'text', options: ['a'] },
          dup: { label: 'Dup', type: 'checkbox', options: ['a', 'b', 'a'] },
          pick: { label: 'Pick', type: 'radio', options: ['a'], placeholder: 'x' },
          _fc_x: { label: 'Reserved', type: 'text' },
        },
      },
    });
    expect(res.statusCode).toBe(422);
    expect(
      res
        .json()
        .errors.map((e: { path: string }) => e.path)
        .sort(),
    ).toEqual([
      '/settings/fields/_fc_x',
      '/settings/fields/color/options',
      '/settings/fields/dup/options/2',
      '/settings/fields/name/options',
      '/settings/fields/pick/placeholder',
      '/settings/fields/size/options',
    ]);
    const schema = await h.call(ws.key, 'POST', '/v1/forms', {
      name: 'x',
      type: 'SURVEY',
      settings: {
        fields: {
          a: { label: '', type: 'url' },
          'bad name!': { label: 'x', type: 'text' },
          b: { label: 'b', type: 'select', options: [] },
        },
      },
    });
    expect(schema.statusCode).toBe(422);
    const paths = schema.json().errors.map((e: { path: string }) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining(['/settings/fields/a/label', '/settings/fields/a/type', '/settings/fields/b/options']),
    );
    // A field mapped to email must be an email field: on create, and on an update of either side.
    const mismatch = await h.call(ws.key, 'POST', '/v1/forms', {
      name: 'x',
      type: 'SIGN_UP',
      fieldMapping: { mail: 'email' },
      settings: { fields: { mail: { label: 'Mail', type: 'text' } } },
    });
    expect(mismatch.statusCode).toBe(422);
    expect(mismatch.json().errors).toEqual([
      { path: '/settings/fields/mail/type', message: expect.stringContaining('email') },
    ]);
    const ok = await h.call(ws.key, 'POST', '/v1/forms', {
      name: 'x',
      type: 'SIGN_UP',
      fieldMapping: { mail: 'email' },
      settings: { fields: { mail: { label: 'Mail', type: 'email' } } },
    });
    expect(ok.statusCode, ok.body).toBe(201);
    const id = ok.json().id;
    const later = await h.call(ws.key, 'PUT', `/v1/forms/${id}`, { fieldMapping: { mail: 'email', other: 'email' } });
    expect(later.statusCode).toBe(422);
    const remap = await h.call(ws.key, 'PUT', `/v1/forms/${id}`, {
      settings: { fields: { mail: { label: 'Mail', type: 'textarea' } } },
    });
    expect(remap.statusCode).toBe(422);
    const row = await h.db.kysely.selectFrom('forms').select('settings').where('id', '=', id).executeTakeFirstOrThrow();
    expect(JSON.parse(row.settings).fields.mail.type).toBe('email');
  });

  it('stores appearance and fields (brand colour in lower case, question order kept on both databases); null clears them', async () => {
    const ws = await h.workspace();
    const fields = {
      zeta: { label: 'Z', type: 'text' },
      a: { label: 'A', type: 'radio', options: ['y', 'n'] },
      mm: { label: 'M', type: 'number', required: true },
    };
    const created = await h.call(ws.key, 'POST', '/v1/forms', {
      name: 'x',
      type: 'SURVEY',
      settings: { appearance: { heading: 'Hello', brandColor: '#FF6600', theme: 'dark' }, fields },
    });
    expect(created.statusCode, created.body).toBe(201);
    const form = created.json();
    expect(form.settings.appearance).toEqual({ heading: 'Hello', brandColor: '#ff6600', theme: 'dark' });
    expect(Object.keys(form.settings.fields)).toEqual(['zeta', 'a', 'mm']);
    const got = (await h.call(ws.key, 'GET', `/v1/forms/${form.id}`)).json();
    expect(Object.keys(got.settings.fields)).toEqual(['zeta', 'a', 'mm']);
    expect(got.settings.fields.a).toEqual({ label: 'A', type: 'radio', options: ['y', 'n'] });
    const row = await h.db.kysely
      .selectFrom('forms')
      .select('settings')
      .where('id', '=', form.id)
      .executeTakeFirstOrThrow();
    expect(JSON.parse(row.settings).appearance.brandColor).toBe('#ff6600');
    // A new version copies them.
    await h.call(ws.key, 'POST', `/v1/forms/${form.id}/publish`);
    const v2 = (await h.call(ws.key, 'POST', `/v1/forms/${form.id}/versions`)).json();
    expect(Object.keys(v2.settings.fields)).toEqual(['zeta', 'a', 'mm']);
    expect(v2.settings.appearance.theme).toBe('dark');
    const cleared = await h.call(ws.key, 'PUT', `/v1/forms/${v2.id}`, { settings: { appearance: null, fields: null } });
    expect(cleared.statusCode, cleared.body).toBe(200);
    expect(cleared.json().settings.appearance).toBeUndefined();
    expect(cleared.json().settings.fields).toBeUndefined();
  });

  it('the hosted page shows the public heading, never the internal name, and renders the appearance', async () => {
    const ws = await h.workspace();
    const plain = await publish(ws, {});
    const page0 = (await h.app.inject({ method: 'GET', url: `/f/${plain.slug}` })).body;
    expect(page0).not.toContain('Internal name Q4-list');
    expect(page0).toContain('<h1 class="fc-heading">Subscribe to our newsletter</h1>');
    expect(page0).toContain('<title>Subscribe to our newsletter</title>');
    expect(page0).toContain('>Subscribe</button>');
    expect(page0).toContain('<meta name="color-scheme" content="light">');

    const form = await publish(ws, {
      fieldMapping: { email: 'email', first_name: 'firstName' },
      settings: {
        appearance: {
          heading: 'Join 5,000 gardeners',
          intro: 'One email a month.\nNo spam.\n\nUnsubscribe any time.',
          buttonLabel: 'Count me in',
          consentText: 'I agree to the privacy policy.',
          brandColor: '#FFD500',
          logoUrl: 'https://cdn.example/logo.png',
          theme: 'dark',
        },
      },
    });
    const res = await h.app.inject({ method: 'GET', url: `/f/${form.slug}` });
    const page = res.body;
    expect(page).not.toContain('Internal name Q4-list');
    for (const piece of [
      '<title>Join 5,000 gardeners</title>',
      '<h1 class="fc-heading">Join 5,000 gardeners</h1>',
      '<p>One email a month.<br>No spam.</p><p>Unsubscribe any time.</p>',
      '>Count me in</button>',
      'name="_fc_consent"',
      'I agree to the privacy policy.',
      '<img class="fc-logo" src="https://cdn.example/logo.png" alt="">',
      '<meta name="color-scheme" content="dark">',
      '--fc-brand:#ffd500',
      '--fc-on-brand:#000000',
      'autocomplete="given-name"',
    ]) {
      expect(page).toContain(piece);
    }
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page).not.toContain('<script');
  });

  it('picks a text colour on the brand colour with a contrast of at least 4.5:1', () => {
    for (const c of [
      '#ffd500',
      '#0969da',
      '#000000',
      '#ffffff',
      '#777777',
      '#ff6600',
      '#00ff00',
      '#1a7f37',
      '#e11d48',
      '#808080',
    ]) {
      expect(contrastRatio(c, textOn(c)), c).toBeGreaterThanOrEqual(4.5);
    }
  });

  it('renders every question type on the page and in the embed', async () => {
    const ws = await h.workspace();
    const form = await survey(ws);
    const page = (await h.app.inject({ method: 'GET', url: `/f/${form.slug}` })).body;
    for (const piece of [
      '<select id="fc-field-1" name="plan" required=""><option value="">Choose…</option><option value="Free">Free</option>',
      'type="radio" value="3"',
      'name="topics" type="checkbox" value="Events"',
      'name="seats" type="text" inputmode="decimal"',
      'name="started" type="date"',
      '<textarea id="fc-field-6" name="comment" rows="4" placeholder="Tell us more">',
      'name="beta" type="checkbox" value="yes"',
      'placeholder="you@example.com"',
      '<legend>How likely are you to recommend us?<span class="fc-required" aria-hidden="true">*</span></legend>',
    ]) {
      expect(page).toContain(piece);
    }
    // Order: mapped fields without a definition first, then the questions in their order.
    const order = [...page.matchAll(/<(?:input|select|textarea)[^>]*\sname="([a-z_]+)"/g)]
      .map((m) => m[1])
      .filter((n, i, a) => a.indexOf(n) === i);
    expect(order).toEqual([
      'email',
      'plan',
      'rating',
      'topics',
      'seats',
      'started',
      'comment',
      'beta',
      '_fc_consent',
      '_fc_hp',
    ]);
    const embed = await h.app.inject({ method: 'GET', url: `/f/${form.slug}/embed.js` });
    expect(embed.statusCode).toBe(200);
    expect(embed.body).toContain('Customer survey');
    expect(embed.body).toContain('How likely are you to recommend us?');
    expect(embed.body).toContain('--fc-brand:#0969da');
  });

  it('keeps XSS in every new field inert on the page, the fragment and the embed script', async () => {
    const ws = await h.workspace();
    const form = await publish(ws, {
      type: 'SURVEY',
      fieldMapping: {},
      settings: {
        appearance: {
          heading: XSS,
          intro: `${XSS}\n${XSS}`,
          buttonLabel: XSS.slice(0, 60),
          consentText: XSS,
          logoUrl: 'https://cdn.example/a.png?x=1&y=javascript:alert(3)',
          brandColor: '#123456',
        },
        fields: {
          q: { label: XSS, type: 'select', options: [XSS, 'b'], placeholder: XSS },
          r: { label: XSS, type: 'radio', options: [XSS] },
          t: { label: XSS, type: 'text', placeholder: XSS },
        },
      },
    });
    const page = (await h.app.inject({ method: 'GET', url: `/f/${form.slug}` })).body;
    const fragment = (await h.app.inject({ method: 'GET', url: `/f/${form.slug}?fragment=1` })).body;
    for (const html of [page, fragment]) {
      expect(activeParts(html)).toEqual([]);
      expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
      expect(html).toContain('src="https://cdn.example/a.png?x=1&amp;y=javascript:alert(3)"');
    }
    const embed = (await h.app.inject({ method: 'GET', url: `/f/${form.slug}/embed.js` })).body;
    expect(embed).not.toMatch(/<script|<img|<\/script/i);
    // The configuration carries the escaped markup: its HTML, once decoded from JSON, holds the payload as text only.
    const cfg = JSON.parse(/\}\)\((\{.*\})\);\s*$/s.exec(embed)![1]!);
    expect(cfg.html).not.toMatch(/<script|<img src=x/i);
    expect(cfg.html).toContain('&lt;script&gt;alert(2)&lt;/script&gt;');
    expect(cfg.title).toBe(XSS);
    // Submitted values re-rendered after an error stay escaped too.
    const res = await postForm(form.slug, `t=${encodeURIComponent(XSS)}&q=nope`);
    expect(res.statusCode).toBe(422);
    expect(activeParts(res.body)).toEqual([]);
    expect(res.body).toContain(
      'value="&lt;img src=x onerror=alert(1)&gt;&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;"',
    );
  });

  it('checks a hosted-page submission against the questions: 422 with errors next to the fields, values kept', async () => {
    const ws = await h.workspace();
    const form = await survey(ws);
    const res = await postForm(
      form.slug,
      'email=ann%40example.com&plan=Enterprise&rating=&topics=Guides&topics=Nope&seats=many&started=2026-02-30&comment=Hello+there&beta=yes',
    );
    expect(res.statusCode).toBe(422);
    const page = res.body;
    expect(page).toContain(
      '<p class="fc-error" data-formcast-error="plan" id="fc-error-plan">Choose one of the options.</p>',
    );
    expect(page).toContain('data-formcast-error="rating" id="fc-error-rating">Choose an option.</p>');
    expect(page).toContain('Choose from the options.');
    expect(page).toContain('data-formcast-error="seats" id="fc-error-seats">Enter a number.</p>');
    expect(page).toContain('Enter a date, like 2026-01-31.');
    expect(page).toContain(
      'data-formcast-error="_fc_consent" id="fc-error-_fc_consent">Tick the box to agree before you continue.</p>',
    );
    // values kept
    expect(page).toContain('value="ann@example.com"');
    expect(page).toContain('>Hello there</textarea>');
    expect(page).toMatch(/value="Guides" checked/);
    expect(page).toMatch(/name="beta" type="checkbox" value="yes" checked/);
    expect(page).toContain('value="many"');
    expect(await rows(ws)).toHaveLength(0);

    const ok = await postForm(
      form.slug,
      'email=Ann%40Example.com&plan=Pro&rating=5&topics=Guides&topics=Events&seats=3&started=2024-02-29&comment=Great&beta=yes&_fc_consent=yes',
    );
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.body).toContain('data-formcast-success');
    const [row] = await rows(ws);
    expect(JSON.parse(row!.data)).toEqual({
      email: 'ann@example.com',
      plan: 'Pro',
      rating: '5',
      topics: ['Guides', 'Events'],
      seats: '3',
      started: '2024-02-29',
      comment: 'Great',
      beta: 'true',
    });
    expect(row!.consent_text).toBe('I agree that Acme stores my answers.');
    expect(new Date(row!.consent_accepted_at!).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(row!.ip).toBe('127.0.0.1');
    expect(row!.user_agent).toBe('Mozilla/5.0 (Test) Browser/1.0');
    expect(row!.contact_id).toBeNull(); // a survey does not touch contacts
  });

  it('checks JSON (embed) and API submissions the same way; the API stores consent and answers per question', async () => {
    const ws = await h.workspace();
    const form = await survey(ws);
    const bad = await postJson(form.slug, { email: 'x', plan: 'Pro', rating: 9, seats: '1e400' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors).toEqual([
      { field: 'email', message: 'Enter a valid email address, like name@example.com.' },
      { field: 'rating', message: 'Choose one of the options.' },
      { field: 'seats', message: 'Enter a number.' },
      { field: '_fc_consent', message: expect.any(String) },
    ]);
    const good = await postJson(form.slug, {
      email: 'bo@example.com',
      plan: 'Team',
      rating: '4',
      topics: 'Releases',
      seats: 12.5,
      _fc_consent: true,
    });
    expect(good.statusCode, good.body).toBe(200);

    const api = await h.call(ws.key, 'POST', `/v1/forms/${form.id}/submissions`, {
      email: 'cy@example.com',
      plan: 'Gold',
      rating: '1',
    });
    expect(api.statusCode).toBe(422);
    expect(api.json().code).toBe('validation_failed');
    expect(api.json().errors).toEqual([
      { path: '/plan', message: 'Choose one of the options.' },
      { path: '/_fc_consent', message: expect.any(String) },
    ]);
    const created = await h.call(
      ws.key,
      'POST',
      `/v1/forms/${form.id}/submissions`,
      { email: 'cy@example.com', plan: 'Free', rating: '1', started: '2025-12-01', _fc_consent: 'yes' },
      { 'user-agent': 'server-side/1' },
    );
    expect(created.statusCode, created.body).toBe(201);
    const s = created.json();
    expect(s.consent).toEqual({ text: 'I agree that Acme stores my answers.', acceptedAt: expect.any(String) });
    expect(s.userAgent).toBe('server-side/1');
    expect(s.answers.map((a: { field: string }) => a.field)).toEqual([
      'email',
      'plan',
      'rating',
      'topics',
      'seats',
      'started',
      'comment',
      'beta',
    ]);
    expect(s.answers[1]).toEqual({ field: 'plan', label: 'Which plan are you on?', type: 'select', value: 'Free' });
    expect(s.answers[3]).toEqual({
      field: 'topics',
      label: 'What should we write about?',
      type: 'checkbox',
      value: null,
    });

    const list = (await h.call(ws.key, 'GET', `/v1/forms/${form.id}/submissions`)).json();
    expect(list.data).toHaveLength(2);
    expect(list.data[1].answers.find((a: { field: string }) => a.field === 'topics').value).toEqual(['Releases']);
    expect(list.data[1].answers.find((a: { field: string }) => a.field === 'seats').value).toBe('12.5');
    const stored = await rows(ws);
    expect(stored.map((r) => r.consent_text)).toEqual([
      'I agree that Acme stores my answers.',
      'I agree that Acme stores my answers.',
    ]);
    expect(stored.map((r) => r.source).sort()).toEqual(['API', 'EMBED']);
  });

  it('GET /v1/forms/{id}/submissions/summary counts per option and answered per question, in its own workspace only', async () => {
    const ws = await h.workspace();
    const form = await survey(ws);
    const answers = [
      { plan: 'Pro', rating: '5', topics: ['Guides', 'Events'], seats: '3', beta: 'yes' },
      { plan: 'Pro', rating: '4', topics: ['Guides'], comment: 'Nice' },
      { plan: 'Free', rating: '5' },
    ];
    for (const [i, a] of answers.entries()) {
      const r = await h.call(ws.key, 'POST', `/v1/forms/${form.id}/submissions`, {
        email: `p${i}@example.com`,
        _fc_consent: true,
        ...a,
      });
      expect(r.statusCode, r.body).toBe(201);
    }
    const res = await h.call(ws.key, 'GET', `/v1/forms/${form.id}/submissions/summary`);
    expect(res.statusCode, res.body).toBe(200);
    const summary = res.json();
    expect(summary.total).toBe(3);
    const q = Object.fromEntries(summary.questions.map((x: { field: string }) => [x.field, x]));
    expect(q.plan).toEqual({
      field: 'plan',
      label: 'Which plan are you on?',
      type: 'select',
      answered: 3,
      options: [
        { value: 'Free', count: 1 },
        { value: 'Pro', count: 2 },
        { value: 'Team', count: 0 },
      ],
      other: 0,
    });
    expect(q.rating.options.map((o: { count: number }) => o.count)).toEqual([0, 0, 0, 1, 2]);
    expect(q.topics).toMatchObject({
      answered: 2,
      options: [
        { value: 'Guides', count: 2 },
        { value: 'Releases', count: 0 },
        { value: 'Events', count: 1 },
      ],
    });
    expect(q.seats).toEqual({ field: 'seats', label: 'Seats', type: 'number', answered: 1 });
    expect(q.comment.answered).toBe(1);
    expect(q.beta.answered).toBe(1);
    expect(q.email.answered).toBe(3);

    const other = await h.workspace('Other');
    expect((await h.call(other.key, 'GET', `/v1/forms/${form.id}/submissions/summary`)).statusCode).toBe(404);
    const reader = await h.key(ws, ['read:forms']);
    expect((await h.call(reader, 'GET', `/v1/forms/${form.id}/submissions/summary`)).statusCode).toBe(200);
    const noScope = await h.key(ws, ['read:contacts']);
    expect((await h.call(noScope, 'GET', `/v1/forms/${form.id}/submissions/summary`)).statusCode).toBe(403);
  });

  it('custom HTML without the consent box or a required question cannot be published (field_not_in_html); _fc names cannot be mapped', async () => {
    const ws = await h.workspace();
    const created = (
      await h.call(ws.key, 'POST', '/v1/forms', {
        name: 'Custom',
        type: 'SIGN_UP',
        fieldMapping: { email: 'email' },
        settings: {
          fields: { plan: { label: 'Plan', type: 'select', options: ['a', 'b'], required: true } },
          appearance: { consentText: 'I agree.' },
        },
      })
    ).json();
    const deployed = await h.call(ws.key, 'PUT', `/v1/forms/${created.id}/html`, {
      html: '<form><input name="email"></form>',
    });
    expect(deployed.statusCode, deployed.body).toBe(200);
    const form = (await h.call(ws.key, 'GET', `/v1/forms/${created.id}`)).json();
    expect(form.htmlValidation.valid).toBe(false);
    expect(form.htmlValidation.errors).toEqual([
      { code: 'field_not_in_html', field: 'plan' },
      { code: 'field_not_in_html', field: '_fc_consent' },
    ]);
    expect((await h.call(ws.key, 'POST', `/v1/forms/${created.id}/publish`)).json()).toMatchObject({
      code: 'form_incomplete',
    });
    await h.call(ws.key, 'PUT', `/v1/forms/${created.id}/html`, {
      html: '<form><input name="email"><select name="plan"><option>a</option></select><input type="checkbox" name="_fc_consent"></form>',
    });
    const fixed = (await h.call(ws.key, 'GET', `/v1/forms/${created.id}`)).json();
    expect(fixed.htmlValidation).toMatchObject({ valid: true, errors: [], warnings: [] });
    const reserved = await h.call(ws.key, 'PUT', `/v1/forms/${created.id}`, {
      fieldMapping: { email: 'email', _fc_hp: 'trap' },
    });
    expect(reserved.statusCode).toBe(422);
    expect(reserved.json().errors.map((e: { path: string }) => e.path)).toEqual(['/fieldMapping/_fc_hp']);
  });

  it('fields named like built-ins of JavaScript objects (constructor, toString) are fields like any other', async () => {
    const ws = await h.workspace();
    const form = await publish(ws, {
      fieldMapping: { email: 'email', constructor: 'company' },
      settings: { fields: { toString: { label: 'Size', type: 'select', options: ['S', 'M'] } } },
    });
    const page = (await h.app.inject({ method: 'GET', url: `/f/${form.slug}` })).body;
    expect(page).toContain('name="constructor"');
    expect((await postJson(form.slug, { email: 'obj@example.com' })).statusCode).toBe(200);
    expect(
      (await postJson(form.slug, { email: 'obj2@example.com', constructor: 'Acme', toString: 'M' })).statusCode,
    ).toBe(200);
    const contacts = await h.db.kysely
      .selectFrom('contacts')
      .select(['email', 'properties'])
      .where('workspace_id', '=', ws.id)
      .orderBy('email')
      .execute();
    expect(contacts.map((c) => [c.email, JSON.parse(c.properties)])).toEqual([
      ['obj2@example.com', { company: 'Acme' }],
      ['obj@example.com', {}],
    ]);
    const list = (await h.call(ws.key, 'GET', `/v1/forms/${form.id}/submissions`)).json().data;
    expect(list.map((x: { answers: { field: string; value: unknown }[] }) => x.answers.map((a) => a.value))).toEqual([
      ['obj2@example.com', 'Acme', 'M'],
      ['obj@example.com', null, null],
    ]);
  });

  it('without fields, labels come from the field names and submissions work as before', async () => {
    const ws = await h.workspace();
    const form = await publish(ws, { fieldMapping: { email: 'email', favourite_colour: 'favouriteColour' } });
    const page = (await h.app.inject({ method: 'GET', url: `/f/${form.slug}` })).body;
    expect(page).toContain('>Favourite colour</label>');
    const ok = await postForm(form.slug, 'email=dee%40example.com&favourite_colour=green');
    expect(ok.statusCode).toBe(200);
    const [row] = await rows(ws);
    expect(JSON.parse(row!.data)).toEqual({ email: 'dee@example.com', favourite_colour: 'green' });
    expect(row!.consent_text).toBeNull();
  });

  it('purges IP and user agent after the retention period and keeps the consent', async () => {
    const ws = await h.workspace();
    const form = await survey(ws);
    for (const email of ['old@example.com', 'new@example.com']) {
      const r = await postJson(form.slug, { email, plan: 'Pro', rating: '3', _fc_consent: 'yes' });
      expect(r.statusCode, r.body).toBe(200);
    }
    const [old] = await rows(ws);
    await h.db.kysely
      .updateTable('submissions')
      .set({ created_at: new Date(Date.now() - 200 * 86_400_000).toISOString() })
      .where('id', '=', old!.id)
      .execute();
    const purged = await purgeSubmissionNetworkData(h.db, 180, Date.now(), 1);
    expect(purged).toBeGreaterThanOrEqual(1);
    const after = await rows(ws);
    expect(after[0]).toMatchObject({
      ip: null,
      user_agent: null,
      consent_text: 'I agree that Acme stores my answers.',
    });
    expect(after[0]!.consent_accepted_at).not.toBeNull();
    expect(after[1]).toMatchObject({ ip: '127.0.0.1', user_agent: 'EmbedTest/2' });
    expect(await purgeSubmissionNetworkData(h.db, 180)).toBe(0);
  });
});
