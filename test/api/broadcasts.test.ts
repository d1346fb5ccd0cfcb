import { expect, it } from 'vitest';
import { describeApi, type Harness, type TestWorkspace } from '../helpers/app.js';
import { insertContact, insertSegment, insertTopic, setTopicChoice, verifiedDomain } from '../helpers/fixtures.js';

const RESPONSE_KEYS = [
  'id',
  'name',
  'status',
  'from',
  'emailContent',
  'replyTo',
  'topicId',
  'segmentId',
  'sendAt',
  'createdAt',
];
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const inOneHour = () => new Date(Date.now() + 3600_000).toISOString();
const complete = {
  from: 'Acme News <news@acme.test>',
  emailContent: {
    subject: 'Hello {{ contact.firstName | default: "there" }}',
    html: '<p>Hi {{ contact.firstName }}</p>',
  },
};

async function setup(h: Harness) {
  const ws = await h.workspace();
  await verifiedDomain(h, ws);
  return ws;
}

async function create(h: Harness, ws: TestWorkspace, body: Record<string, unknown> = {}) {
  const res = await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'October', ...body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

const row = (h: Harness, id: string) =>
  h.db.kysely.selectFrom('broadcasts').selectAll().where('id', '=', id).executeTakeFirst();
const count = async (h: Harness, ws: TestWorkspace) =>
  (await h.db.kysely.selectFrom('broadcasts').select('id').where('workspace_id', '=', ws.id).execute()).length;

describeApi('broadcasts', (h) => {
  it('Create Broadcast: 201, Location, status DRAFT, every response field present, id generated', async () => {
    const ws = await setup(h);
    const res = await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'October' });
    expect(res.statusCode).toBe(201);
    const b = res.json();
    expect(res.headers.location).toBe(`/v1/broadcasts/${b.id}`);
    for (const key of RESPONSE_KEYS) expect(b).toHaveProperty(key);
    expect(b).toMatchObject({
      name: 'October',
      status: 'DRAFT',
      from: null,
      replyTo: null,
      topicId: null,
      segmentId: null,
      sendAt: null,
      emailContent: { subject: null, html: null, text: null, previewText: null, editorContent: null },
    });
    expect(b.id).toMatch(/^bc_/);
    expect(b.createdAt).toMatch(ISO);
    expect((await row(h, b.id))!.status).toBe('DRAFT');
  });

  it('creates with every field; the content is stored as given', async () => {
    const ws = await setup(h);
    const topicId = await insertTopic(h, ws);
    const segmentId = await insertSegment(h, ws);
    const b = await create(h, ws, {
      ...complete,
      replyTo: 'support@acme.test',
      topicId,
      segmentId,
      emailContent: {
        ...complete.emailContent,
        text: 'Hi',
        previewText: 'News inside',
        editorContent: { blocks: [{ type: 'p', text: 'Hi' }] },
      },
    });
    expect(b).toMatchObject({
      from: 'Acme News <news@acme.test>',
      replyTo: 'support@acme.test',
      topicId,
      segmentId,
      status: 'DRAFT',
    });
    expect(b.emailContent).toEqual({
      subject: complete.emailContent.subject,
      html: complete.emailContent.html,
      text: 'Hi',
      previewText: 'News inside',
      editorContent: { blocks: [{ type: 'p', text: 'Hi' }] },
    });
    expect((await h.call(ws.key, 'GET', `/v1/broadcasts/${b.id}`)).json()).toEqual(b);
  });

  it.each([
    ['name missing', {}, '/name', 'validation_failed'],
    ['name empty', { name: '' }, '/name', 'validation_failed'],
    ['name of 256', { name: 'a'.repeat(256) }, '/name', 'validation_failed'],
    ['name of 256 emoji', { name: '😀'.repeat(256) }, '/name', 'validation_failed'],
    ['unknown field', { name: 'x', colour: 'red' }, '/colour', 'validation_failed'],
    ['read-only status', { name: 'x', status: 'SENT' }, '/status', 'validation_failed'],
    ['sendAt at creation', { name: 'x', sendAt: '2030-01-01T00:00:00Z' }, '/sendAt', 'validation_failed'],
    ['malformed from', { name: 'x', from: 'not an address' }, '/from', 'validation_failed'],
    ['two addresses in from', { name: 'x', from: 'a@acme.test, b@acme.test' }, '/from', 'validation_failed'],
    [
      'header injection in from',
      { name: 'x', from: 'a@acme.test\r\nBcc: victim@example.com' },
      '/from',
      'validation_failed',
    ],
    ['malformed replyTo', { name: 'x', replyTo: 'nope' }, '/replyTo', 'validation_failed'],
    ['unknown emailContent key', { name: 'x', emailContent: { body: 'x' } }, '/emailContent/body', 'validation_failed'],
    [
      'subject of 999',
      { name: 'x', emailContent: { subject: 'a'.repeat(999) } },
      '/emailContent/subject',
      'validation_failed',
    ],
    [
      'previewText of 501',
      { name: 'x', emailContent: { previewText: 'a'.repeat(501) } },
      '/emailContent/previewText',
      'validation_failed',
    ],
    [
      'html that is not Liquid',
      { name: 'x', emailContent: { html: '<p>{% if %}</p>' } },
      '/emailContent/html',
      'validation_failed',
    ],
    [
      'subject with an unknown filter',
      { name: 'x', emailContent: { subject: '{{ x | shout }}' } },
      '/emailContent/subject',
      'validation_failed',
    ],
    [
      'from on an unverified domain',
      { name: 'x', from: 'news@unverified.test' },
      '/from',
      'sender_domain_not_verified',
    ],
    ['unknown topic', { name: 'x', topicId: 'topic_nope' }, '/topicId', 'invalid_reference'],
    ['unknown segment', { name: 'x', segmentId: 'seg_nope' }, '/segmentId', 'invalid_reference'],
  ])('POST rejects %s and creates nothing', async (_label, body, path, code) => {
    const ws = await setup(h);
    const res = await h.call(ws.key, 'POST', '/v1/broadcasts', body);
    expect(res.statusCode).toBe(422);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.json().code).toBe(code);
    expect(res.json().errors.map((e: { path: string }) => e.path)).toContain(path);
    expect(await count(h, ws)).toBe(0);
  });

  it('from: a pending (not verified) domain of the workspace, or another workspace’s verified domain, is not enough', async () => {
    const ws = await setup(h);
    await h.app.services.domains.add(ws.id, 'pending.test');
    const other = await h.workspace();
    await verifiedDomain(h, other, 'theirs.test');
    for (const from of ['news@pending.test', 'news@theirs.test']) {
      expect((await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'x', from })).json().code).toBe(
        'sender_domain_not_verified',
      );
    }
    // display-name form, case and IDN are parsed properly
    expect(
      (await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'x', from: '"Acme, Inc." <News@ACME.test>' })).statusCode,
    ).toBe(201);
    await verifiedDomain(h, ws, 'bücher.test');
    expect(
      (await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'x', from: 'Bücher <info@bücher.test>' })).statusCode,
    ).toBe(201);
  });

  it('a topic or segment of another workspace is an invalid reference', async () => {
    const ws = await setup(h);
    const other = await h.workspace();
    const topicId = await insertTopic(h, other);
    const segmentId = await insertSegment(h, other);
    expect((await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'x', topicId })).json().code).toBe(
      'invalid_reference',
    );
    expect((await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'x', segmentId })).json().code).toBe(
      'invalid_reference',
    );
  });

  it('PUT is partial; emailContent replaced whole; null clears; updatedAt refreshed', async () => {
    const ws = await setup(h);
    const b = await create(h, ws, {
      ...complete,
      replyTo: 'r@acme.test',
      emailContent: { ...complete.emailContent, text: 'plain' },
    });
    await new Promise((r) => setTimeout(r, 5));
    const res = await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.id}`, {
      name: 'Renamed',
      replyTo: null,
      emailContent: { subject: 'New' },
    });
    expect(res.statusCode).toBe(200);
    const u = res.json();
    expect(u).toMatchObject({
      name: 'Renamed',
      replyTo: null,
      from: complete.from,
      status: 'DRAFT',
      emailContent: { subject: 'New', html: null, text: null, previewText: null, editorContent: null },
    });
    expect(u.updatedAt > b.updatedAt).toBe(true);
  });

  it('a future sendAt schedules a complete broadcast; null unschedules; a past one is 422', async () => {
    const ws = await setup(h);
    const b = await create(h, ws, complete);
    const at = new Date(Date.now() + 3600_000);
    const offset = at.toISOString().replace('Z', '+00:00');
    const res = await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.id}`, { sendAt: offset });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'SCHEDULED', sendAt: at.toISOString() });
    // an offset other than UTC is stored in UTC
    const plus2 = new Date(at.getTime() + 7200_000);
    const local = `${plus2.toISOString().slice(0, 19)}+02:00`;
    expect((await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.id}`, { sendAt: local })).json().sendAt).toBe(
      `${at.toISOString().slice(0, 19)}.000Z`,
    );
    // editing a scheduled broadcast keeps it scheduled
    expect((await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.id}`, { name: 'Still scheduled' })).json().status).toBe(
      'SCHEDULED',
    );
    const un = await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.id}`, { sendAt: null });
    expect(un.json()).toMatchObject({ status: 'DRAFT', sendAt: null });
    const past = await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.id}`, { sendAt: '2020-01-01T00:00:00Z' });
    expect(past.statusCode).toBe(422);
    expect(past.json().errors[0].path).toBe('/sendAt');
    for (const bad of ['tomorrow', '2030-01-01', '2030-01-01T10:00:00']) {
      expect((await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.id}`, { sendAt: bad })).statusCode).toBe(422);
    }
    expect((await row(h, b.id))!.status).toBe('DRAFT');
  });

  it('scheduling an incomplete broadcast is 422 broadcast_incomplete listing each missing item, and changes nothing', async () => {
    const ws = await setup(h);
    const b = await create(h, ws);
    const before = await row(h, b.id);
    const res = await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.id}`, { sendAt: inOneHour() });
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('broadcast_incomplete');
    expect(
      res
        .json()
        .errors.map((e: { path: string }) => e.path)
        .sort(),
    ).toEqual(['/emailContent', '/emailContent/subject', '/from']);
    expect(await row(h, b.id)).toEqual(before);
    // whitespace-only subject counts as empty; text alone is enough body
    const partial = await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.id}`, {
      from: complete.from,
      emailContent: { subject: '  ', text: 'hello' },
      sendAt: inOneHour(),
    });
    expect(partial.json().errors.map((e: { path: string }) => e.path)).toEqual(['/emailContent/subject']);
    const ok = await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.id}`, {
      from: complete.from,
      emailContent: { subject: 'Hi', text: 'hello' },
      sendAt: inOneHour(),
    });
    expect(ok.json().status).toBe('SCHEDULED');
    // and a scheduled broadcast cannot be edited into an incomplete one
    const broken = await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.id}`, { emailContent: { subject: 'Hi' } });
    expect(broken.json().code).toBe('broadcast_incomplete');
    expect((await row(h, b.id))!.text).toBe('hello');
  });

  it('scheduling checks the sender domain again (it may have been deleted since)', async () => {
    const ws = await setup(h);
    const b = await create(h, ws, complete);
    await h.db.kysely.deleteFrom('domains').where('workspace_id', '=', ws.id).execute();
    const res = await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.id}`, { sendAt: inOneHour() });
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('sender_domain_not_verified');
  });

  it.each(['SENDING', 'SENT', 'CANCELED', 'FAILED'] as const)(
    'PUT on a %s broadcast is 409 broadcast_not_editable and changes nothing',
    async (status) => {
      const ws = await setup(h);
      const b = await create(h, ws, complete);
      await h.db.kysely.updateTable('broadcasts').set({ status }).where('id', '=', b.id).execute();
      const before = await row(h, b.id);
      for (const body of [{ name: 'x' }, { sendAt: inOneHour() }, { sendAt: null }]) {
        const res = await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.id}`, body);
        expect(res.statusCode).toBe(409);
        expect(res.json().code).toBe('broadcast_not_editable');
      }
      expect(await row(h, b.id)).toEqual(before);
      expect((await h.call(ws.key, 'DELETE', `/v1/broadcasts/${b.id}`)).json().code).toBe('invalid_state');
    },
  );

  it('cancel: SCHEDULED → DRAFT; a DRAFT cannot be canceled', async () => {
    const ws = await setup(h);
    const b = await create(h, ws, complete);
    expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/cancel`)).json().code).toBe('invalid_state');
    await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.id}`, { sendAt: inOneHour() });
    const res = await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/cancel`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'DRAFT', sendAt: null });
  });

  it('DELETE removes a DRAFT (204); a SCHEDULED one is 409', async () => {
    const ws = await setup(h);
    const b = await create(h, ws, complete);
    await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.id}`, { sendAt: inOneHour() });
    expect((await h.call(ws.key, 'DELETE', `/v1/broadcasts/${b.id}`)).statusCode).toBe(409);
    await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/cancel`);
    expect((await h.call(ws.key, 'DELETE', `/v1/broadcasts/${b.id}`)).statusCode).toBe(204);
    expect((await h.call(ws.key, 'GET', `/v1/broadcasts/${b.id}`)).statusCode).toBe(404);
  });

  it('lists newest first with cursor pagination and a status filter', async () => {
    const ws = await setup(h);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await create(h, ws, { name: `B${i}`, ...complete })).id);
    await h.call(ws.key, 'PUT', `/v1/broadcasts/${ids[2]}`, { sendAt: inOneHour() });
    const p1 = (await h.call(ws.key, 'GET', '/v1/broadcasts?limit=3')).json();
    expect(p1.data.map((b: { id: string }) => b.id)).toEqual([ids[3], ids[2], ids[1]]);
    const p2 = (await h.call(ws.key, 'GET', `/v1/broadcasts?limit=3&cursor=${p1.nextCursor}`)).json();
    expect(p2).toMatchObject({ data: [{ id: ids[0] }], nextCursor: null });
    expect(
      (await h.call(ws.key, 'GET', '/v1/broadcasts?status=SCHEDULED')).json().data.map((b: { id: string }) => b.id),
    ).toEqual([ids[2]]);
  });

  it('preview renders for a contact or sample data, escaping contact values in HTML', async () => {
    const ws = await setup(h);
    const b = await create(h, ws, {
      ...complete,
      emailContent: {
        subject: 'Hi {{ contact.firstName | default: "there" }}',
        html: '<p>Hi {{ contact.firstName }} ({{ contact.properties.plan }}) <a href="{{ unsubscribe_url }}">unsubscribe</a> {{ broadcast.name }}</p>',
        text: 'Hi {{ contact.firstName }}',
        previewText: 'For {{ contact.email }}',
      },
    });
    const sample = (await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/preview`, {})).json();
    expect(sample.subject).toBe('Hi Jane');
    expect(sample.contact).toEqual({ id: null, email: 'jane.doe@example.com' });
    const contactId = await insertContact(h, ws, {
      email: 'x@example.com',
      firstName: '<script>alert(1)</script>',
      properties: { plan: 'pro' },
    });
    const res = await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/preview`, { contactId });
    expect(res.statusCode).toBe(200);
    const p = res.json();
    expect(p.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(p.html).not.toContain('<script>');
    expect(p.html).toContain('(pro)');
    expect(p.html).toContain('/unsubscribe/');
    expect(p.html).toContain('October');
    // The text part exactly as a send carries it: the author's text, then the footer after "-- ".
    expect(p.text).toBe(
      'Hi <script>alert(1)</script>\n\n-- \nYou receive this email because you subscribed to Test workspace.\nUnsubscribe: http://localhost:3000/unsubscribe/preview\n',
    );
    expect(p.previewText).toBe('For x@example.com');
    // no body at all is fine too
    expect(
      (
        await h.app.inject({
          method: 'POST',
          url: `/v1/broadcasts/${b.id}/preview`,
          headers: { authorization: `Bearer ${ws.key}` },
        })
      ).statusCode,
    ).toBe(200);
    const other = await h.workspace();
    const theirs = await insertContact(h, other, { email: 'y@example.com' });
    expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/preview`, { contactId: theirs })).json().code).toBe(
      'invalid_reference',
    );
  });

  it('audience: SUBSCRIBED contacts of the segment, subscribed to the topic, counted and paged', async () => {
    const ws = await setup(h);
    const a = await insertContact(h, ws, { email: 'a@example.com' });
    const b = await insertContact(h, ws, { email: 'b@example.com' });
    await insertContact(h, ws, { email: 'c@example.com', status: 'UNSUBSCRIBED' });
    await insertContact(h, ws, { email: 'd@example.com', status: 'BOUNCED' });
    const other = await h.workspace();
    await insertContact(h, other, { email: 'a@example.com' });
    const everyone = await create(h, ws, complete);
    const res = await h.call(ws.key, 'GET', `/v1/broadcasts/${everyone.id}/audience?limit=1`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.count).toBe(2);
    expect(body.data).toEqual([{ id: b, email: 'b@example.com', firstName: null, lastName: null }]);
    const next = (
      await h.call(ws.key, 'GET', `/v1/broadcasts/${everyone.id}/audience?limit=1&cursor=${body.nextCursor}`)
    ).json();
    expect(next.data.map((c: { id: string }) => c.id)).toEqual([a]);
    expect(next.nextCursor).toBeNull();
    // an OPT_OUT topic: only those who opted in
    const topicId = await insertTopic(h, ws, 'OPT_OUT');
    await setTopicChoice(h, ws, a, topicId, true);
    const topical = await create(h, ws, { ...complete, topicId });
    const t = (await h.call(ws.key, 'GET', `/v1/broadcasts/${topical.id}/audience`)).json();
    expect(t.count).toBe(1);
    expect(t.data.map((c: { id: string }) => c.id)).toEqual([a]);
  });

  it("another workspace's broadcast is 404 for every operation", async () => {
    const ws = await setup(h);
    const intruder = await setup(h);
    const b = await create(h, ws, complete);
    const before = await row(h, b.id);
    for (const [method, url, body] of [
      ['GET', `/v1/broadcasts/${b.id}`],
      ['PUT', `/v1/broadcasts/${b.id}`, { name: 'x' }],
      ['DELETE', `/v1/broadcasts/${b.id}`],
      ['POST', `/v1/broadcasts/${b.id}/cancel`],
      ['POST', `/v1/broadcasts/${b.id}/preview`, {}],
      ['GET', `/v1/broadcasts/${b.id}/audience`],
    ] as const) {
      const res = await h.call(intruder.key, method, url, body);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().code).toBe('not_found');
    }
    expect((await h.call(intruder.key, 'GET', '/v1/broadcasts')).json().data).toEqual([]);
    expect(await row(h, b.id)).toEqual(before);
  });

  it('scopes: write:broadcasts to change, read:broadcasts to read', async () => {
    const ws = await setup(h);
    const b = await create(h, ws, complete);
    const reader = await h.key(ws, ['read:broadcasts']);
    for (const [method, url, body] of [
      ['POST', '/v1/broadcasts', { name: 'x' }],
      ['PUT', `/v1/broadcasts/${b.id}`, { name: 'x' }],
      ['DELETE', `/v1/broadcasts/${b.id}`],
      ['POST', `/v1/broadcasts/${b.id}/cancel`],
    ] as const) {
      const res = await h.call(reader, method, url, body);
      expect(res.statusCode).toBe(403);
      expect(res.json().detail).toContain('write:broadcasts');
    }
    expect((await h.call(reader, 'GET', `/v1/broadcasts/${b.id}`)).statusCode).toBe(200);
    expect((await h.call(reader, 'POST', `/v1/broadcasts/${b.id}/preview`, {})).statusCode).toBe(200);
    const forms = await h.key(ws, ['write:forms']);
    expect((await h.call(forms, 'GET', '/v1/broadcasts')).statusCode).toBe(403);
  });

  it('html up to 2 MiB is accepted; more is 413', async () => {
    const ws = await setup(h);
    const big = `<p>${'a'.repeat(2 * 1024 * 1024 - 10)}</p>`;
    expect(
      (await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'big', emailContent: { html: big } })).statusCode,
    ).toBe(201);
    const tooBig = await h.call(ws.key, 'POST', '/v1/broadcasts', {
      name: 'big',
      emailContent: { html: `${big}${'a'.repeat(100)}` },
    });
    expect(tooBig.statusCode).toBe(413);
  });
});
