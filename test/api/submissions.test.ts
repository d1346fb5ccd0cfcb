import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createMailer, type Mailer } from '../../src/mail/transport.js';
import { ConfirmationSender } from '../../src/forms/submissions/confirmations.sender.js';
import { embedRuntime } from '../../src/forms/hosted/embed.js';
import { VIEWS_PER_VISITOR_PER_MINUTE } from '../../src/forms/submissions/submissions.service.js';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { insertContact, verifiedDomain } from '../helpers/fixtures.js';
import { startSmtpServer } from '../helpers/smtp.js';
import { TEST_SECRET } from '../helpers/secret.js';

const XSS = '<img src=x onerror=alert(1)>"><script>alert(2)</script>';
let slugs = 0;

describeApi('public forms and submissions', (h) => {
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let mailer: Mailer;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${smtp.port}`, outboxDir: '', maxConnections: 1, rateLimit: 0 });
  });
  afterAll(async () => {
    await mailer?.close();
    await smtp?.close();
  });

  async function publishedForm(ws: TestWorkspace, body: Record<string, unknown> = {}, html?: string) {
    const slug = `form-${h.dbName}-${++slugs}`;
    const created = await h.call(ws.key, 'POST', '/v1/forms', {
      name: 'Newsletter',
      type: 'SIGN_UP',
      slug,
      fieldMapping: { email: 'email', first_name: 'firstName', plan: 'plan' },
      ...body,
    });
    expect(created.statusCode, created.body).toBe(201);
    const form = created.json();
    if (html) expect((await h.call(ws.key, 'PUT', `/v1/forms/${form.id}/html`, { html })).statusCode).toBe(200);
    const pub = await h.call(ws.key, 'POST', `/v1/forms/${form.id}/publish`);
    expect(pub.statusCode, pub.body).toBe(200);
    return { ...pub.json(), slug };
  }
  const post = (slug: string, form: string, headers: Record<string, string> = {}) =>
    h.app.inject({
      method: 'POST',
      url: `/f/${slug}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: form,
    });
  const postJson = (slug: string, body: unknown) =>
    h.app.inject({
      method: 'POST',
      url: `/f/${slug}`,
      headers: { 'content-type': 'application/json', accept: 'application/json', origin: 'https://elsewhere.example' },
      payload: JSON.stringify(body),
    });
  const contactByEmail = (ws: TestWorkspace, email: string) =>
    h.db.kysely
      .selectFrom('contacts')
      .selectAll()
      .where('workspace_id', '=', ws.id)
      .where('email', '=', email)
      .executeTakeFirst();
  const submissionsOf = (ws: TestWorkspace) =>
    h.db.kysely.selectFrom('submissions').selectAll().where('workspace_id', '=', ws.id).execute();

  it('GET /f/{slug} serves the PUBLISHED version with SEO tags, the honeypot and a strict CSP; views are counted', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws, {
      seoTitle: 'Join us',
      seoDescription: 'Monthly news',
      seoImageUrl: 'https://cdn.example/og.png',
      seoFaviconUrl: 'https://cdn.example/f.ico',
    });
    const res = await h.app.inject({ method: 'GET', url: `/f/${form.slug}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.headers['content-security-policy']).not.toContain('script-src');
    for (const piece of [
      '<title>Join us</title>',
      '<meta name="description" content="Monthly news">',
      '<meta property="og:image" content="https://cdn.example/og.png">',
      '<meta name="twitter:card" content="summary_large_image">',
      '<link rel="icon" href="https://cdn.example/f.ico">',
      `action="/f/${form.slug}"`,
      'method="post"',
      'name="_fc_hp"',
      'name="email"',
      'type="email"',
    ]) {
      expect(res.body).toContain(piece);
    }
    expect(res.body).not.toContain('<script');
    await h.app.inject({ method: 'GET', url: `/f/${form.slug}` });
    expect((await h.call(ws.key, 'GET', `/v1/forms/${form.id}`)).json().stats).toEqual({
      views: 2,
      submissions: 0,
      confirmations: 0,
      conversion: 0,
    });
    // Each page view counts, but a script cannot inflate the views from one address: at most
    // VIEWS_PER_VISITOR_PER_MINUTE per visitor and form a minute (the page is still served).
    for (let i = 0; i < VIEWS_PER_VISITOR_PER_MINUTE + 5; i++) {
      const page = await h.app.inject({ method: 'GET', url: `/f/${form.slug}`, remoteAddress: '198.51.100.30' });
      expect(page.statusCode).toBe(200);
    }
    await h.app.inject({ method: 'GET', url: `/f/${form.slug}`, remoteAddress: '198.51.100.31' });
    expect((await h.call(ws.key, 'GET', `/v1/forms/${form.id}`)).json().stats.views).toBe(
      2 + VIEWS_PER_VISITOR_PER_MINUTE + 1,
    );
    // a new DRAFT version does not change the page; publishing it does
    const v2 = (await h.call(ws.key, 'POST', `/v1/forms/${form.id}/versions`)).json();
    await h.call(ws.key, 'PUT', `/v1/forms/${v2.id}`, { seoTitle: 'Join us v2' });
    expect((await h.app.inject({ method: 'GET', url: `/f/${form.slug}` })).body).toContain('<title>Join us</title>');
    await h.call(ws.key, 'POST', `/v1/forms/${v2.id}/publish`);
    expect((await h.app.inject({ method: 'GET', url: `/f/${form.slug}` })).body).toContain('<title>Join us v2</title>');
  });

  it('404 for an unknown slug and for a form that is not published', async () => {
    const ws = await h.workspace();
    await h.call(ws.key, 'POST', '/v1/forms', {
      name: 'Draft',
      type: 'SIGN_UP',
      slug: `draft-only-${h.dbName}`,
      fieldMapping: { email: 'email' },
    });
    for (const url of ['/f/nope', `/f/draft-only-${h.dbName}`, '/f/Bad_Slug', `/f/nope/embed.js`]) {
      const res = await h.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
    }
    expect((await post('nope', 'email=a@example.com')).statusCode).toBe(404);
  });

  it('a valid submission creates the contact, stores the submission with its version, and shows the success message', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws, {
      settings: { successAction: { type: 'MESSAGE', message: 'Welcome aboard!' } },
    });
    const res = await post(form.slug, 'email=Ann%40Example.COM&first_name=Ann&plan=pro&ignored=zzz');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Welcome aboard!');
    expect(res.body).toContain('data-formcast-success');
    const contact = await contactByEmail(ws, 'ann@example.com');
    expect(contact).toMatchObject({ first_name: 'Ann', status: 'SUBSCRIBED' });
    expect(JSON.parse(contact!.properties)).toEqual({ plan: 'pro' });
    const [sub] = await submissionsOf(ws);
    expect(sub).toMatchObject({ form_id: form.id, form_version: 1, contact_id: contact!.id, source: 'HOSTED' });
    expect(JSON.parse(sub!.data)).toEqual({ email: 'ann@example.com', first_name: 'Ann', plan: 'pro' }); // unmapped fields ignored
    expect((await h.call(ws.key, 'GET', `/v1/forms/${form.id}`)).json().stats.submissions).toBe(1);
    const listed = (await h.call(ws.key, 'GET', `/v1/forms/${form.id}/submissions`)).json();
    expect(listed.data).toEqual([
      expect.objectContaining({
        formId: form.id,
        formVersion: 1,
        contactId: contact!.id,
        data: { email: 'ann@example.com', first_name: 'Ann', plan: 'pro' },
      }),
    ]);
  });

  it('an invalid submission re-renders the page with the error next to the field and the values kept (422)', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws);
    const res = await post(form.slug, 'email=not-an-email&first_name=Zo%C3%AB+%3Cb%3E&plan=pro');
    expect(res.statusCode).toBe(422);
    expect(res.body).toMatch(/aria-invalid="true"/);
    expect(res.body).toMatch(/data-formcast-error="email"[^>]*>Enter a valid email address/);
    expect(res.body).toContain('value="not-an-email"');
    expect(res.body).toContain('value="Zoë &lt;b&gt;"');
    expect(await submissionsOf(ws)).toHaveLength(0);
    expect(await contactByEmail(ws, 'not-an-email')).toBeUndefined();
    const missing = await post(form.slug, 'first_name=Ann');
    expect(missing.statusCode).toBe(422);
    expect(missing.body).toContain('Enter your email address.');
  });

  it('custom HTML: errors go where data-formcast-error says, the summary is filled, and the values are kept', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(
      ws,
      { fieldMapping: { mail: 'email', topics: 'interests' } },
      '<form><div data-formcast-error-summary></div><input name="mail" type="email"><span data-formcast-error="mail" class="oops"></span>' +
        '<label><input type="checkbox" name="topics" value="a"> A</label><label><input type="checkbox" name="topics" value="b"> B</label><button>Go</button></form>',
    );
    const res = await post(form.slug, 'mail=bad&topics=b');
    expect(res.statusCode).toBe(422);
    expect(res.body).toMatch(/<span data-formcast-error="mail" class="oops" id="[^"]+">Enter a valid email address/);
    expect(res.body).toMatch(/data-formcast-error-summary="" role="alert">Please correct/);
    expect(res.body).toMatch(/value="b" checked=""/);
    expect(res.body).not.toMatch(/value="a" checked/);
    const ok = await post(form.slug, 'mail=multi%40example.com&topics=a&topics=b');
    expect(ok.statusCode).toBe(200);
    expect(JSON.parse((await contactByEmail(ws, 'multi@example.com'))!.properties)).toEqual({ interests: ['a', 'b'] });
  });

  it('a REDIRECT success action answers 303 to the URL, and the page allows that form target', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws, {
      settings: { successAction: { type: 'REDIRECT', url: 'https://example.com/thanks' } },
    });
    expect(
      (await h.app.inject({ method: 'GET', url: `/f/${form.slug}` })).headers['content-security-policy'],
    ).toContain("form-action 'self' https://example.com");
    const res = await post(form.slug, 'email=r%40example.com');
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('https://example.com/thanks');
  });

  it('JSON submissions (embeds) get JSON answers and CORS headers; the preflight is allowed', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws);
    const pre = await h.app.inject({
      method: 'OPTIONS',
      url: `/f/${form.slug}`,
      headers: {
        origin: 'https://elsewhere.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(pre.statusCode).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('*');
    expect(String(pre.headers['access-control-allow-headers'])).toContain('content-type');
    const ok = await postJson(form.slug, { email: 'j@example.com', first_name: 'J' });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe('*');
    expect(ok.json()).toEqual({ ok: true, message: expect.any(String) });
    const bad = await postJson(form.slug, { email: 'nope' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toEqual({
      ok: false,
      errors: [{ field: 'email', message: expect.stringContaining('valid email') }],
    });
    expect((await submissionsOf(ws))[0]).toMatchObject({ source: 'EMBED' });
    // the fragment and the embed script are served cross-origin too
    const fragment = await h.app.inject({ method: 'GET', url: `/f/${form.slug}?fragment=1` });
    expect(fragment.headers['access-control-allow-origin']).toBe('*');
    expect(fragment.body).not.toContain('<html');
    const script = await h.app.inject({ method: 'GET', url: `/f/${form.slug}/embed.js` });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    expect(script.headers['cache-control']).toBe('public, max-age=300');
    expect(script.headers['access-control-allow-origin']).toBe('*');
    expect(script.body).toContain(await embedRuntime()); // the compiled src/forms/hosted/embed.runtime.ts (test/unit/embed.test.ts)
  });

  it('a filled honeypot is answered like a success and stores nothing', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws);
    const res = await post(form.slug, 'email=bot%40example.com&_fc_hp=http%3A%2F%2Fspam');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('data-formcast-success');
    expect((await postJson(form.slug, { email: 'bot2@example.com', _fc_hp: 'x' })).json()).toMatchObject({ ok: true });
    expect(await contactByEmail(ws, 'bot@example.com')).toBeUndefined();
    expect(await submissionsOf(ws)).toHaveLength(0);
  });

  it('submissions are rate limited per IP address and form (429 with Retry-After)', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws);
    const other = await publishedForm(ws);
    const codes: number[] = [];
    for (let i = 0; i < 11; i++)
      codes.push(
        (await post(form.slug, `email=rl${i}%40example.com`, { 'x-forwarded-for': '203.0.113.9' })).statusCode,
      );
    expect(codes.slice(0, 10).every((c) => c === 200)).toBe(true);
    expect(codes[10]).toBe(429);
    const limited = await post(form.slug, 'email=rl%40example.com');
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
    expect(limited.body).toContain('Too many submissions');
    expect((await post(other.slug, 'email=fine%40example.com')).statusCode).toBe(200); // another form is not affected
  });

  it('an IPv6 visitor is counted by its /64: a client cannot get a fresh limit from each address of its network', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws);
    const from = (remoteAddress: string, i: number) =>
      h.app.inject({
        method: 'POST',
        url: `/f/${form.slug}`,
        remoteAddress,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `email=v6-${i}%40example.com`,
      });
    const codes: number[] = [];
    for (let i = 0; i < 11; i++) codes.push((await from(`2001:db8:1:2::${(i + 1).toString(16)}`, i)).statusCode);
    expect(codes.slice(0, 10).every((c) => c === 200)).toBe(true);
    expect(codes[10]).toBe(429);
    expect((await from('2001:db8:1:2:ffff:ffff:ffff:ffff', 11)).statusCode).toBe(429);
    expect((await from('2001:db8:1:3::1', 12)).statusCode).toBe(200); // another network
    // Its views too: at most VIEWS_PER_VISITOR_PER_MINUTE from one /64.
    for (let i = 0; i < VIEWS_PER_VISITOR_PER_MINUTE + 5; i++)
      await h.app.inject({ method: 'GET', url: `/f/${form.slug}`, remoteAddress: `2001:db8:9:9::${i + 1}` });
    expect((await h.call(ws.key, 'GET', `/v1/forms/${form.id}`)).json().stats.views).toBe(VIEWS_PER_VISITOR_PER_MINUTE);
  });

  it('a SURVEY stores the submission and leaves contacts alone', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws, { type: 'SURVEY', fieldMapping: { q1: 'answer_one', email: 'email' } });
    expect((await post(form.slug, 'q1=Blue&email=survey%40example.com')).statusCode).toBe(200);
    expect((await post(form.slug, 'q1=Red')).statusCode).toBe(200); // email optional on a survey
    expect(await contactByEmail(ws, 'survey@example.com')).toBeUndefined();
    expect((await submissionsOf(ws)).map((s) => JSON.parse(s.data).q1).sort()).toEqual(['Blue', 'Red']);
    expect((await submissionsOf(ws)).every((s) => s.contact_id === null)).toBe(true);
  });

  it('sign-up rules: SUBSCRIBED is never downgraded; UNSUBSCRIBED and BOUNCED come back only through a confirmation', async () => {
    const ws = await h.workspace();
    await verifiedDomain(h, ws, `s${h.dbName}.test`);
    const plain = await publishedForm(ws);
    const doi = await publishedForm(ws, { settings: { doubleOptIn: true } });
    await insertContact(h, ws, { email: 'sub@example.com', status: 'SUBSCRIBED' });
    const unsub1 = await insertContact(h, ws, { email: 'unsub1@example.com', status: 'UNSUBSCRIBED' });
    const unsub2 = await insertContact(h, ws, { email: 'unsub2@example.com', status: 'UNSUBSCRIBED' });
    const bouncedId = await insertContact(h, ws, {
      email: 'bounced@example.com',
      status: 'BOUNCED',
      properties: { keep: 'me' },
    });
    await post(doi.slug, 'email=sub%40example.com&first_name=Sue');
    expect(await contactByEmail(ws, 'sub@example.com')).toMatchObject({ status: 'SUBSCRIBED', first_name: 'Sue' }); // a blank filled in
    // Re-subscribing needs the address's owner, with or without double opt-in on the form.
    await post(plain.slug, 'email=unsub1%40example.com');
    expect((await contactByEmail(ws, 'unsub1@example.com'))!.status).toBe('UNSUBSCRIBED');
    await post(doi.slug, 'email=unsub2%40example.com');
    expect((await contactByEmail(ws, 'unsub2@example.com'))!.status).toBe('UNSUBSCRIBED');
    await post(plain.slug, 'email=bounced%40example.com&plan=pro');
    const bounced = (await contactByEmail(ws, 'bounced@example.com'))!;
    expect(bounced.status).toBe('BOUNCED');
    expect(JSON.parse(bounced.properties)).toEqual({ keep: 'me', plan: 'pro' }); // merged, not replaced
    // A confirmation is queued for each re-subscription (its owner may confirm), none for someone already subscribed.
    const confirmations = await h.db.kysely
      .selectFrom('confirmations')
      .select('contact_id')
      .where('workspace_id', '=', ws.id)
      .execute();
    expect(confirmations.map((c) => c.contact_id).sort()).toEqual([unsub1, unsub2, bouncedId].sort());
  });

  it('double opt-in: PENDING, a confirmation email with a single-use link, then SUBSCRIBED', async () => {
    const ws = await h.workspace('Acme Books');
    const domain = await verifiedDomain(h, ws, `doi${h.dbName}.test`);
    const form = await publishedForm(ws, { settings: { doubleOptIn: true } });
    expect((await post(form.slug, 'email=dora%40example.com&first_name=Dora')).statusCode).toBe(200);
    expect((await contactByEmail(ws, 'dora@example.com'))!.status).toBe('PENDING');
    const sender = new ConfirmationSender(
      h.db,
      mailer,
      'https://forms.example.test',
      pino({ level: 'silent' }) as never,
      TEST_SECRET,
    );
    smtp.received.length = 0;
    expect(await sender.sendDue()).toBeGreaterThanOrEqual(1); // (other tests' confirmations go out too)
    expect(await sender.sendDue()).toBe(0); // each is sent once
    expect(smtp.received.filter((m) => m.to === 'dora@example.com')).toHaveLength(1);
    const mail = smtp.received.find((m) => m.to === 'dora@example.com')!;
    expect(mail.parsed.from?.value[0]).toMatchObject({ name: 'Acme Books', address: `no-reply@${domain.name}` });
    expect(mail.parsed.subject).toBe('Please confirm your subscription to Acme Books'); // the form's name is internal: its heading, else the workspace's name
    expect(mail.parsed.html).toContain('Hi Dora');
    const link = String(mail.parsed.html).match(
      /href="https:\/\/forms\.example\.test(\/confirm\/[A-Za-z0-9_-]+)"/,
    )![1]!;
    expect(mail.parsed.headerLines.some((l) => l.key === 'dkim-signature')).toBe(true);
    // GET and HEAD (link scanners) change nothing: the page has one button, whose POST confirms.
    for (const method of ['GET', 'HEAD'] as const)
      expect((await h.app.inject({ method, url: link })).statusCode).toBe(200);
    const shown = await h.app.inject({ method: 'GET', url: link });
    expect(shown.body).toContain(
      `<form method="post" action="${link}"><button type="submit">Confirm my subscription</button></form>`,
    );
    expect((await contactByEmail(ws, 'dora@example.com'))!.status).toBe('PENDING');
    expect((await h.call(ws.key, 'GET', `/v1/forms/${form.id}`)).json().stats.confirmations).toBe(0);
    const page = await h.app.inject({ method: 'POST', url: link });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('You are subscribed');
    expect((await contactByEmail(ws, 'dora@example.com'))!.status).toBe('SUBSCRIBED');
    expect((await h.call(ws.key, 'GET', `/v1/forms/${form.id}`)).json().stats).toMatchObject({
      submissions: 1,
      confirmations: 1,
    });
    const again = await h.app.inject({ method: 'POST', url: link });
    expect(again.statusCode).toBe(200);
    expect(again.body).toContain('Already confirmed');
    expect((await h.app.inject({ method: 'GET', url: link })).body).toContain('Already confirmed');
    expect((await h.call(ws.key, 'GET', `/v1/forms/${form.id}`)).json().stats.confirmations).toBe(1);
    // an expired link does nothing
    await post(form.slug, 'email=late%40example.com');
    await h.db.kysely
      .updateTable('confirmations')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('used_at', 'is', null)
      .execute();
    const token = (
      await h.db.kysely
        .selectFrom('confirmations')
        .select('token')
        .where('used_at', 'is', null)
        .where('workspace_id', '=', ws.id)
        .executeTakeFirstOrThrow()
    ).token;
    expect((await h.app.inject({ method: 'GET', url: `/confirm/${token}` })).statusCode).toBe(410);
    expect((await h.app.inject({ method: 'POST', url: `/confirm/${token}` })).statusCode).toBe(410);
    expect((await contactByEmail(ws, 'late@example.com'))!.status).toBe('PENDING');
    expect((await h.app.inject({ method: 'GET', url: '/confirm/AAAAAAAAAAAAAAAAAAAAAAAA' })).statusCode).toBe(404);
  });

  it('double opt-in with a template of the workspace; publishing checks it links confirm_url and that a domain can send it', async () => {
    const ws = await h.workspace();
    const noConfirm = (
      await h.call(ws.key, 'POST', '/v1/templates', { name: 'Bad', subject: 'Hi', html: '<p>no link</p>' })
    ).json();
    const good = (
      await h.call(ws.key, 'POST', '/v1/templates', {
        name: 'Good',
        subject: 'Confirm, {{ contact.email }}',
        html: '<a href="{{ confirm_url }}">yes</a>',
      })
    ).json();
    const slug = `tmpl-${h.dbName}`;
    const draft = (
      await h.call(ws.key, 'POST', '/v1/forms', {
        name: 'T',
        type: 'SIGN_UP',
        slug,
        fieldMapping: { email: 'email' },
        settings: { doubleOptIn: true },
        doubleOptInEmailId: noConfirm.id,
      })
    ).json();
    let res = await h.call(ws.key, 'POST', `/v1/forms/${draft.id}/publish`);
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('form_incomplete');
    expect(
      res
        .json()
        .errors.map((e: { path: string }) => e.path)
        .sort(),
    ).toEqual(['/doubleOptInEmailId', '/settings/doubleOptIn']);
    await h.call(ws.key, 'PUT', `/v1/forms/${draft.id}`, { doubleOptInEmailId: good.id });
    await verifiedDomain(h, ws, `tm${h.dbName}.test`);
    res = await h.call(ws.key, 'POST', `/v1/forms/${draft.id}/publish`);
    expect(res.statusCode, res.body).toBe(200);
    await post(slug, 'email=tess%40example.com');
    smtp.received.length = 0;
    await new ConfirmationSender(
      h.db,
      mailer,
      'https://forms.example.test',
      pino({ level: 'silent' }) as never,
      TEST_SECRET,
    ).sendDue();
    expect(smtp.received.find((m) => m.to === 'tess@example.com')!.parsed.subject).toBe('Confirm, tess@example.com');
  });

  it('POST /v1/forms/{id}/submissions: the same code path for headless forms', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws);
    const res = await h.call(ws.key, 'POST', `/v1/forms/${form.id}/submissions`, {
      email: 'api@example.com',
      first_name: 'Api',
      plan: 3,
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      formId: form.id,
      formVersion: 1,
      source: 'API',
      data: { email: 'api@example.com', first_name: 'Api', plan: '3' },
    });
    expect(JSON.parse((await contactByEmail(ws, 'api@example.com'))!.properties)).toEqual({ plan: 3 });
    const bad = await h.call(ws.key, 'POST', `/v1/forms/${form.id}/submissions`, { email: 'nope' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/email' }] });
    // A key that is no field of the form is refused, not dropped (contract §1: strict bodies).
    const extra = await h.call(ws.key, 'POST', `/v1/forms/${form.id}/submissions`, {
      email: 'extra@example.com',
      extra: 'refused',
    });
    expect(extra.statusCode).toBe(422);
    expect(extra.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/extra' }] });
    expect(await contactByEmail(ws, 'extra@example.com')).toBeUndefined();
    // a draft version sends its submissions to the group's published version
    const v2 = (await h.call(ws.key, 'POST', `/v1/forms/${form.id}/versions`)).json();
    expect(
      (await h.call(ws.key, 'POST', `/v1/forms/${v2.id}/submissions`, { email: 'via-draft@example.com' })).json(),
    ).toMatchObject({ formId: form.id });
    // a group with nothing published takes none
    const draftOnly = (
      await h.call(ws.key, 'POST', '/v1/forms', { name: 'D', type: 'SIGN_UP', fieldMapping: { email: 'email' } })
    ).json();
    const np = await h.call(ws.key, 'POST', `/v1/forms/${draftOnly.id}/submissions`, { email: 'x@example.com' });
    expect(np.statusCode).toBe(409);
    expect(np.json().code).toBe('form_not_published');
    // scopes and tenants
    const reader = await h.key(ws, ['read:forms']);
    expect(
      (await h.call(reader, 'POST', `/v1/forms/${form.id}/submissions`, { email: 'r@example.com' })).statusCode,
    ).toBe(403);
    expect((await h.call(reader, 'GET', `/v1/forms/${form.id}/submissions`)).statusCode).toBe(200);
    const intruder = await h.workspace();
    expect(
      (await h.call(intruder.key, 'POST', `/v1/forms/${form.id}/submissions`, { email: 'i@example.com' })).statusCode,
    ).toBe(404);
    expect((await h.call(intruder.key, 'GET', `/v1/forms/${form.id}/submissions`)).statusCode).toBe(404);
  });

  it('user-supplied values render inert: name, SEO fields, success message, submitted values', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws, {
      name: XSS,
      seoTitle: XSS,
      seoDescription: XSS,
      settings: { successAction: { type: 'MESSAGE', message: XSS } },
      fieldMapping: { email: 'email', first_name: 'firstName' },
    });
    const pages = [
      await h.app.inject({ method: 'GET', url: `/f/${form.slug}` }),
      await post(form.slug, `email=x%40example.com&first_name=${encodeURIComponent(XSS)}`),
      await post(form.slug, `email=${encodeURIComponent(XSS)}&first_name=${encodeURIComponent(XSS)}`),
    ];
    for (const p of pages) {
      expect(p.body).not.toContain('<script>alert');
      expect(p.body).not.toMatch(/<img[^>]*onerror/);
      expect(p.body).toContain('&lt;');
    }
    expect(pages[2]!.statusCode).toBe(422);
  });
});
