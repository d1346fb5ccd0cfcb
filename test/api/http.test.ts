import { expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors/errors.js';
import { describeApi } from '../helpers/app.js';

const problemShape = (res: { headers: Record<string, unknown>; json(): any }, status: number, code: string) => {
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(body).toMatchObject({ type: `/docs/errors#${code}`, status, code });
  expect(typeof body.title).toBe('string');
  expect(typeof body.detail).toBe('string');
  expect(typeof body.requestId).toBe('string');
  return body;
};

describeApi('HTTP conventions, auth and errors', (h) => {
  it('401 without a key, with a malformed, unknown or revoked key, with WWW-Authenticate: Bearer', async () => {
    const ws = await h.workspace();
    const created = (await h.call(ws.key, 'POST', '/v1/api-keys', { name: 'temp', scopes: ['read:forms'] })).json();
    expect((await h.call(created.key, 'GET', '/v1/forms')).statusCode).toBe(200);
    expect((await h.call(ws.key, 'DELETE', `/v1/api-keys/${created.id}`)).statusCode).toBe(204);

    const unknownKey = ws.key.replace(/_[^_]+$/, `_${'A'.repeat(43)}`);
    for (const auth of [
      undefined,
      'Basic abc',
      'Bearer',
      'Bearer nonsense',
      `Bearer ${unknownKey}`,
      `Bearer ${created.key}`,
    ]) {
      const res = await h.app.inject({ method: 'GET', url: '/v1/forms', headers: auth ? { authorization: auth } : {} });
      expect(res.statusCode, String(auth)).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      problemShape(res, 401, 'unauthorized');
    }
  });

  it('403 insufficient_scope naming the scope; write grants read; admin grants all', async () => {
    const ws = await h.workspace();
    const reader = await h.key(ws, ['read:forms']);
    const res = await h.call(reader, 'POST', '/v1/forms', { name: 'x', type: 'SURVEY' });
    expect(problemShape(res, 403, 'insufficient_scope').detail).toContain('write:forms');
    const other = await h.key(ws, ['read:broadcasts']);
    expect((await h.call(other, 'GET', '/v1/forms')).statusCode).toBe(403);
    const writer = await h.key(ws, ['write:forms']);
    expect((await h.call(writer, 'GET', '/v1/forms')).statusCode).toBe(200);
    expect((await h.call(writer, 'GET', '/v1/api-keys')).statusCode).toBe(403);
    expect((await h.call(ws.key, 'GET', '/v1/api-keys')).statusCode).toBe(200);
  });

  it('scope is checked before the body is validated (403 beats 422)', async () => {
    const ws = await h.workspace();
    const reader = await h.key(ws, ['read:forms']);
    expect((await h.call(reader, 'POST', '/v1/forms', { bogus: true })).statusCode).toBe(403);
    expect((await h.call(null, 'POST', '/v1/forms', '{broken')).statusCode).toBe(401);
  });

  it('GET /v1/workspace answers any valid key with { id, name, createdAt, settings }', async () => {
    const ws = await h.workspace('Acme');
    const key = await h.key(ws, ['read:broadcasts']);
    const res = await h.call(key, 'GET', '/v1/workspace');
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json()).sort()).toEqual(['createdAt', 'id', 'name', 'settings', 'slug']);
    expect(res.json()).toMatchObject({
      id: ws.id,
      name: 'Acme',
      settings: { postalAddress: null, locale: 'en', defaultFrom: null },
    });
  });

  it('PUT /v1/workspace (admin): name and settings; defaultFrom must be on a verified domain; others refused', async () => {
    const ws = await h.workspace('Acme');
    const put = await h.call(ws.key, 'PUT', '/v1/workspace', {
      name: 'Acme Books',
      settings: { postalAddress: '1 Main St\nSpringfield', locale: 'de' },
    });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toMatchObject({
      name: 'Acme Books',
      settings: { postalAddress: '1 Main St\nSpringfield', locale: 'de', defaultFrom: null },
    });
    expect((await h.call(ws.key, 'PUT', '/v1/workspace', { settings: { locale: 'it' } })).statusCode).toBe(422);
    expect(
      (await h.call(ws.key, 'PUT', '/v1/workspace', { settings: { defaultFrom: 'Acme <hi@nowhere.test>' } })).json()
        .code,
    ).toBe('sender_domain_not_verified');
    await h.app.services.domains.add(ws.id, 'acme-books.test', { verified: true });
    expect(
      (await h.call(ws.key, 'PUT', '/v1/workspace', { settings: { defaultFrom: 'Acme <hi@acme-books.test>' } })).json()
        .settings,
    ).toMatchObject({ defaultFrom: 'Acme <hi@acme-books.test>', locale: 'de' });
    expect(
      (await h.call(ws.key, 'PUT', '/v1/workspace', { settings: { postalAddress: null } })).json().settings
        .postalAddress,
    ).toBeNull();
    const editor = await h.key(ws, ['write:broadcasts']);
    expect((await h.call(editor, 'PUT', '/v1/workspace', { name: 'x' })).statusCode).toBe(403);
  });

  it('API keys: created once with the key, stored as a hash, listed without it, revoked at once', async () => {
    const ws = await h.workspace();
    const res = await h.call(ws.key, 'POST', '/v1/api-keys', { name: 'ci', scopes: ['read:forms', 'write:forms'] });
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(Object.keys(created).sort()).toEqual(['createdAt', 'id', 'key', 'name', 'scopes']);
    expect(created.key).toMatch(/^fc_[0-9A-Z]{26}_[A-Za-z0-9_-]{43}$/);
    const row = await h.db.kysely
      .selectFrom('api_keys')
      .select(['key_hash'])
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.key_hash).not.toContain(created.key.slice(30));
    expect(JSON.stringify(await h.db.kysely.selectFrom('api_keys').selectAll().execute())).not.toContain(
      created.key.slice(30),
    );
    const list = (await h.call(ws.key, 'GET', '/v1/api-keys')).json();
    expect(list.data.find((k: { id: string }) => k.id === created.id)).not.toHaveProperty('key');
    expect(JSON.stringify(list)).not.toContain(created.key);
    // lastUsedAt is recorded on use
    await h.call(created.key, 'GET', '/v1/forms');
    const used = (await h.call(ws.key, 'GET', '/v1/api-keys'))
      .json()
      .data.find((k: { id: string }) => k.id === created.id);
    expect(used.lastUsedAt).toMatch(/Z$/);
  });

  it('a key cannot create a key with scopes it does not hold; unknown scopes are 422', async () => {
    const ws = await h.workspace();
    expect((await h.call(ws.key, 'POST', '/v1/api-keys', { name: 'x', scopes: ['read:everything'] })).statusCode).toBe(
      422,
    );
    expect((await h.call(ws.key, 'POST', '/v1/api-keys', { name: 'x', scopes: [] })).statusCode).toBe(422);
    // Only admin keys manage keys, and admin holds everything; the rule is enforced in the service too.
    await expect(
      h.app.services.apiKeys.create(ws.id, { name: 'x', scopes: ['admin'] }, ['write:forms']),
    ).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(
      h.app.services.apiKeys.create(ws.id, { name: 'x', scopes: ['read:forms'] }, ['write:forms']),
    ).resolves.toMatchObject({ scopes: ['read:forms'] });
  });

  it("another workspace's API key is answered as missing", async () => {
    const a = await h.workspace();
    const b = await h.workspace();
    const key = (await h.call(a.key, 'POST', '/v1/api-keys', { name: 'x', scopes: ['read:forms'] })).json();
    expect((await h.call(b.key, 'DELETE', `/v1/api-keys/${key.id}`)).statusCode).toBe(404);
    expect((await h.call(key.key, 'GET', '/v1/forms')).statusCode).toBe(200);
  });

  it('400 invalid_json for a body that does not parse', async () => {
    const ws = await h.workspace();
    for (const body of ['{bad', '{"name": "x",}', '[1,', 'nul']) {
      problemShape(await h.call(ws.key, 'POST', '/v1/forms', body), 400, 'invalid_json');
    }
  });

  it('415 for a body that is not JSON', async () => {
    const ws = await h.workspace();
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/forms',
        headers: { authorization: `Bearer ${ws.key}`, 'content-type': type },
        payload: 'name=x',
      });
      problemShape(res, 415, 'unsupported_media_type');
    }
  });

  it('413 for a body over 1 MiB', async () => {
    const ws = await h.workspace();
    const res = await h.call(ws.key, 'POST', '/v1/forms', {
      name: 'x',
      type: 'SURVEY',
      description: 'a'.repeat(1024 * 1024 + 10),
    });
    problemShape(res, 413, 'payload_too_large');
  });

  it('404 not_found for an unknown route, as problem+json', async () => {
    const ws = await h.workspace();
    problemShape(await h.call(ws.key, 'GET', '/v1/nope'), 404, 'not_found');
    problemShape(await h.call(null, 'GET', '/nope'), 404, 'not_found');
  });

  it('X-Request-Id is on every response, echoed when sent, and in the problem body', async () => {
    const ws = await h.workspace();
    const res = await h.call(ws.key, 'GET', '/v1/forms/form_missing', undefined, { 'x-request-id': 'trace-123' });
    expect(res.headers['x-request-id']).toBe('trace-123');
    expect(res.json().requestId).toBe('trace-123');
    const generated = await h.call(ws.key, 'GET', '/v1/forms');
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const hostile = await h.call(ws.key, 'GET', '/v1/forms', undefined, { 'x-request-id': 'bad value\twith tabs' });
    expect(hostile.headers['x-request-id']).not.toBe('bad value\twith tabs');
  });

  it('a 500 hides the detail and carries the request id', async () => {
    h.app.services.forms.get = () => {
      throw new Error('SELECT secret FROM internals');
    };
    try {
      const ws = await h.workspace();
      const res = await h.call(ws.key, 'GET', '/v1/forms/form_x');
      const body = problemShape(res, 500, 'internal_error');
      expect(JSON.stringify(body)).not.toMatch(/SELECT|internals|at /);
    } finally {
      delete (h.app.services.forms as { get?: unknown }).get;
    }
  });

  it('list query parameters are validated (422 with /query paths)', async () => {
    const ws = await h.workspace();
    for (const qs of ['limit=0', 'limit=101', 'limit=abc', 'status=LIVE', 'cursor=xyz', 'other=1']) {
      const body = problemShape(await h.call(ws.key, 'GET', `/v1/forms?${qs}`), 422, 'validation_failed');
      expect(body.errors[0].path).toMatch(/^\/query\//);
    }
  });

  it('Idempotency-Key: a replay returns the first response; another body is 422; keys are per workspace', async () => {
    const ws = await h.workspace();
    const body = { name: 'Idem', type: 'SURVEY' };
    const first = await h.call(ws.key, 'POST', '/v1/forms', body, { 'idempotency-key': 'k1' });
    const again = await h.call(ws.key, 'POST', '/v1/forms', body, { 'idempotency-key': 'k1' });
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.json().id).toBe(first.json().id);
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const list = (await h.call(ws.key, 'GET', '/v1/forms')).json();
    expect(list.data.filter((f: { name: string }) => f.name === 'Idem')).toHaveLength(1);
    problemShape(
      await h.call(ws.key, 'POST', '/v1/forms', { ...body, name: 'Other' }, { 'idempotency-key': 'k1' }),
      422,
      'idempotency_key_reused',
    );
    const other = await h.workspace();
    const theirs = await h.call(other.key, 'POST', '/v1/forms', body, { 'idempotency-key': 'k1' });
    expect(theirs.statusCode).toBe(201);
    expect(theirs.json().id).not.toBe(first.json().id);
  });

  it('Idempotency-Key: a request still in flight answers 409 idempotency_conflict', async () => {
    const ws = await h.workspace();
    const { nowIso } = await import('../../src/lib/time.js');
    const crypto = await import('node:crypto');
    const body = { name: 'Slow', type: 'SURVEY' };
    const hash = crypto
      .createHash('sha256')
      .update(`POST /v1/forms\n${JSON.stringify(body)}`)
      .digest('hex');
    await h.db.kysely
      .insertInto('idempotency_keys')
      .values({
        workspace_id: ws.id,
        key: 'busy',
        request_hash: hash,
        status_code: null,
        response_body: null,
        response_headers: null,
        created_at: nowIso(),
      })
      .execute();
    problemShape(
      await h.call(ws.key, 'POST', '/v1/forms', body, { 'idempotency-key': 'busy' }),
      409,
      'idempotency_conflict',
    );
  });

  it('serves the OpenAPI 3.1 document and the docs page', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/v1/forms',
        '/v1/forms/{formId}',
        '/v1/forms/{formId}/versions',
        '/v1/forms/{formId}/publish',
        '/v1/forms/{formId}/html',
        '/v1/api-keys',
        '/v1/workspace',
      ]),
    );
    expect(
      doc.paths['/v1/forms/{formId}'].put.requestBody.content['application/json'].schema.properties.name.maxLength,
    ).toBe(200);
    expect((await h.app.inject({ method: 'GET', url: '/docs' })).statusCode).toBeLessThan(400);
  });

  it('every /v1 operation documents its 4xx problems; every problem type links to a row of /docs/errors', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.components.schemas.Problem.required).toEqual(
      expect.arrayContaining(['type', 'code', 'status', 'detail', 'requestId']),
    );
    for (const [path, ops] of Object.entries<
      Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>
    >(doc.paths)) {
      if (!path.startsWith('/v1/')) continue;
      for (const [method, op] of Object.entries(ops)) {
        const fours = Object.keys(op.responses).filter((s) => s.startsWith('4'));
        expect(fours, `${method} ${path}`).toContain('401');
        for (const s of fours)
          expect(op.responses[s]!.content, `${method} ${path} ${s}`).toHaveProperty(['application/problem+json']);
      }
    }
    expect(Object.keys(doc.paths['/v1/forms/{formId}'].put.responses)).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '409',
      '413',
      '415',
      '422',
      '429',
    ]);
    expect(doc.paths['/v1/forms/{formId}'].put.responses['409'].description).toContain('form_not_editable');
    const page = await h.app.inject({ method: 'GET', url: '/docs/errors' });
    expect(page.statusCode).toBe(200);
    for (const code of ERROR_CODES) expect(page.body).toContain(`<tr id="${code}">`);
    const problem = (await h.call(null, 'GET', '/v1/forms')).json();
    expect(page.body).toContain(`<tr id="${problem.type.split('#')[1]}">`);
  });

  it('/healthz and /readyz answer 200; /readyz gives its details to the machine itself only', async () => {
    expect((await h.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    const local = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(local.statusCode).toBe(200);
    expect(local.json()).toMatchObject({ status: 'ready', warnings: expect.any(Array) });
    for (const [remoteAddress, headers] of [
      ['203.0.113.5', {}],
      ['127.0.0.1', { 'x-forwarded-for': '203.0.113.5' }],
      ['127.0.0.1', { forwarded: 'for=203.0.113.5' }],
    ] as const) {
      const remote = await h.app.inject({ method: 'GET', url: '/readyz', remoteAddress, headers });
      expect(remote.statusCode).toBe(200);
      expect(remote.json(), `${remoteAddress} ${JSON.stringify(headers)}`).toEqual({ status: 'ready' });
    }
  });
});
