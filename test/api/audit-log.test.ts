/**
 * The audit log (issue 33 item 23, docs/audit-log.md): each audited change writes exactly one entry in its transaction
 * (a refused change writes none), with the right actor for a console session and for an API key; secrets are named,
 * never stored; GET /v1/audit-log is for admins only, per workspace, filtered and paginated. SQLite and PostgreSQL.
 */
import type { InjectOptions } from 'fastify';
import { expect, it } from 'vitest';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { verifiedDomain } from '../helpers/fixtures.js';

const PASSWORD = 'correct horse battery';
let seq = 0;

interface Session {
  cookie: string;
  csrf: string;
  userId: string;
  email: string;
}

describeApi('audit log', (h) => {
  const rows = (ws: TestWorkspace) =>
    h.db.kysely.selectFrom('audit_log').selectAll().where('workspace_id', '=', ws.id).orderBy('id').execute();

  async function session(ws: TestWorkspace, role: string): Promise<Session> {
    const email = `${role}.${process.pid}.${++seq}@audit.example`;
    const user = await h.app.services.users.create(ws.id, { email, role, password: PASSWORD });
    const { token, csrfToken } = await h.app.services.sessions.create(
      { id: user.id, workspaceId: ws.id },
      { ip: null, userAgent: null },
    );
    return { cookie: `${h.app.services.sessions.cookieName}=${token}`, csrf: csrfToken, userId: user.id, email };
  }

  function asUser(s: Session, method: InjectOptions['method'], url: string, body?: unknown) {
    return h.app.inject({
      method,
      url,
      remoteAddress: '203.0.113.7',
      headers: {
        cookie: s.cookie,
        'x-csrf-token': s.csrf,
        'user-agent': 'Mozilla/5.0 (audit test)',
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
  }

  async function list(key: string, query = '') {
    const res = await h.call(key, 'GET', `/v1/audit-log${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { data: Record<string, any>[]; nextCursor: string | null };
  }

  it('an API key: creating and revoking keys writes one entry each, by the key, with the new key named but never stored', async () => {
    const ws = await h.workspace();
    const before = (await rows(ws)).length;
    const created = await h.call(ws.key, 'POST', '/v1/api-keys', { name: 'Zapier', scopes: ['read:contacts'] });
    expect(created.statusCode, created.body).toBe(201);
    const adminKeyId = (await h.db.kysely
      .selectFrom('api_keys')
      .select('id')
      .where('workspace_id', '=', ws.id)
      .where('name', '=', 'admin')
      .executeTakeFirstOrThrow())!.id;
    let after = await rows(ws);
    expect(after.length).toBe(before + 1);
    const entry = after.at(-1)!;
    expect(entry).toMatchObject({
      action: 'api_key.created',
      actor_type: 'apiKey',
      actor_id: adminKeyId,
      actor_label: 'admin',
      target_type: 'api_key',
      target_id: created.json().id,
      target_label: 'Zapier',
    });
    // The key is a secret: its field is named, its value is nowhere in the log.
    expect(JSON.parse(entry.changes!)).toEqual({
      scopes: { before: null, after: ['read:contacts'] },
      key: { secret: true },
    });
    expect(JSON.stringify(after)).not.toContain(created.json().key);

    const revoked = await h.call(ws.key, 'DELETE', `/v1/api-keys/${created.json().id}`);
    expect(revoked.statusCode).toBe(204);
    after = await rows(ws);
    expect(after.length).toBe(before + 2);
    expect(after.at(-1)).toMatchObject({ action: 'api_key.revoked', target_label: 'Zapier', actor_type: 'apiKey' });

    // A refused change writes nothing: the last admin key stays (409), an unknown scope is 422.
    expect((await h.call(ws.key, 'DELETE', `/v1/api-keys/${adminKeyId}`)).statusCode).toBe(409);
    expect((await h.call(ws.key, 'POST', '/v1/api-keys', { name: 'x', scopes: ['nope'] })).statusCode).toBe(422);
    expect((await rows(ws)).length).toBe(before + 2);

    // The API answers the same entries, newest first.
    const { data } = await list(ws.key);
    expect(data.slice(0, 2).map((e) => e.action)).toEqual(['api_key.revoked', 'api_key.created']);
    expect(data[1]).toMatchObject({
      actor: { type: 'apiKey', id: adminKeyId, label: 'admin' },
      target: { type: 'api_key', id: created.json().id, label: 'Zapier' },
      changes: { key: { secret: true } },
    });
  });

  it('a console session: the person is the actor (id and email), with the address and user agent', async () => {
    const ws = await h.workspace();
    const owner = await session(ws, 'owner');
    const before = (await rows(ws)).length;
    const res = await asUser(owner, 'PUT', '/v1/workspace', { name: 'Renamed', settings: { locale: 'de' } });
    expect(res.statusCode, res.body).toBe(200);
    const after = await rows(ws);
    expect(after.length).toBe(before + 1);
    expect(after.at(-1)).toMatchObject({
      action: 'workspace.updated',
      actor_type: 'user',
      actor_id: owner.userId,
      actor_label: owner.email,
      target_type: 'workspace',
      target_id: ws.id,
      ip: '203.0.113.7',
      user_agent: 'Mozilla/5.0 (audit test)',
    });
    expect(JSON.parse(after.at(-1)!.changes!)).toEqual({
      name: { before: 'Test workspace', after: 'Renamed' },
      'settings.locale': { before: 'en', after: 'de' },
    });
    // Nothing changed: no entry. A refused change (sender not on a verified domain): no entry.
    expect((await asUser(owner, 'PUT', '/v1/workspace', { name: 'Renamed' })).statusCode).toBe(200);
    const refused = await asUser(owner, 'PUT', '/v1/workspace', { settings: { defaultFrom: 'a@nowhere.test' } });
    expect(refused.statusCode).toBe(422);
    expect((await rows(ws)).length).toBe(before + 1);
  });

  it('people: invited, role changed, removed, each once, by the session that did it', async () => {
    const ws = await h.workspace();
    const owner = await session(ws, 'owner');
    const editor = await session(ws, 'editor');
    const before = (await rows(ws)).length;
    const inv = await asUser(owner, 'POST', '/v1/invitations', { email: 'new@audit.example', role: 'viewer' });
    expect(inv.statusCode, inv.body).toBe(201);
    const role = await asUser(owner, 'PUT', `/v1/users/${editor.userId}`, { role: 'admin' });
    expect(role.statusCode, role.body).toBe(200);
    const removed = await asUser(owner, 'DELETE', `/v1/users/${editor.userId}`);
    expect(removed.statusCode, removed.body).toBe(204);
    const after = (await rows(ws)).slice(before);
    expect(after.map((r) => [r.action, r.target_label, r.actor_id])).toEqual([
      ['user.invited', 'new@audit.example', owner.userId],
      ['user.role_changed', editor.email, owner.userId],
      ['user.removed', editor.email, owner.userId],
    ]);
    expect(JSON.parse(after[1]!.changes!)).toEqual({ role: { before: 'editor', after: 'admin' } });
  });

  it('domains, webhooks, suppressions, templates and forms: one entry per change, secrets by name only', async () => {
    const ws = await h.workspace();
    const before = (await rows(ws)).length;
    const dom = await h.call(ws.key, 'POST', '/v1/domains', { name: 'audit-example.test' });
    expect(dom.statusCode, dom.body).toBe(201);
    expect((await h.call(ws.key, 'POST', '/v1/domains', { name: 'audit-example.test' })).statusCode).toBe(409);
    expect((await h.call(ws.key, 'DELETE', `/v1/domains/${dom.json().id}`)).statusCode).toBe(204);

    const wh = await h.call(ws.key, 'POST', '/v1/webhooks', {
      url: 'https://93.184.215.14/hook',
      eventTypes: ['contact.created'],
    });
    expect(wh.statusCode, wh.body).toBe(201);
    const id = wh.json().id;
    expect((await h.call(ws.key, 'PUT', `/v1/webhooks/${id}`, { enabled: false })).statusCode).toBe(200);
    const rotated = await h.call(ws.key, 'POST', `/v1/webhooks/${id}/rotate-secret`);
    expect(rotated.statusCode).toBe(200);
    expect((await h.call(ws.key, 'DELETE', `/v1/webhooks/${id}`)).statusCode).toBe(204);

    expect(
      (await h.call(ws.key, 'POST', '/v1/suppressions', { email: 'Gone@Audit.example', reason: 'MANUAL' })).statusCode,
    ).toBe(201);
    expect(
      (await h.call(ws.key, 'POST', '/v1/suppressions', { email: 'gone@audit.example', reason: 'MANUAL' })).statusCode,
    ).toBe(200);
    expect((await h.call(ws.key, 'DELETE', '/v1/suppressions/gone@audit.example')).statusCode).toBe(204);

    const t = await h.call(ws.key, 'POST', '/v1/templates', { name: 'Old', html: '<p>x</p>' });
    expect((await h.call(ws.key, 'DELETE', `/v1/templates/${t.json().id}`)).statusCode).toBe(204);
    const f = await h.call(ws.key, 'POST', '/v1/forms', { name: 'Draft form', type: 'SIGN_UP' });
    expect((await h.call(ws.key, 'DELETE', `/v1/forms/${f.json().id}`)).statusCode).toBe(204);

    const after = (await rows(ws)).slice(before);
    expect(after.map((r) => [r.action, r.target_label])).toEqual([
      ['domain.added', 'audit-example.test'],
      ['domain.removed', 'audit-example.test'],
      ['webhook.created', 'https://93.184.215.14/hook'],
      ['webhook.updated', 'https://93.184.215.14/hook'],
      ['webhook.secret_rotated', 'https://93.184.215.14/hook'],
      ['webhook.deleted', 'https://93.184.215.14/hook'],
      ['suppression.added', 'gone@audit.example'],
      ['suppression.removed', 'gone@audit.example'],
      ['template.deleted', 'Old'],
      ['form.deleted', 'Draft form'],
    ]);
    expect(JSON.parse(after[3]!.changes!)).toEqual({ enabled: { before: true, after: false } });
    expect(JSON.parse(after[4]!.changes!)).toEqual({ secret: { secret: true } });
    const text = JSON.stringify(after);
    expect(text).not.toContain(wh.json().secret);
    expect(text).not.toContain(rotated.json().secret);
    expect(text).not.toContain('PRIVATE KEY');
  });

  it('sends: scheduled and canceled are recorded with the status and send time before and after', async () => {
    const ws = await h.workspace();
    await verifiedDomain(h, ws);
    const b = await h.call(ws.key, 'POST', '/v1/broadcasts', {
      name: 'October',
      from: 'Acme <news@acme.test>',
      emailContent: { subject: 'Hi', html: '<p>Hi</p>' },
    });
    expect(b.statusCode, b.body).toBe(201);
    const before = (await rows(ws)).length;
    const sendAt = new Date(Date.now() + 3_600_000).toISOString();
    const scheduled = await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.json().id}`, { sendAt });
    expect(scheduled.statusCode, scheduled.body).toBe(200);
    // A past time is refused: no entry.
    const past = await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.json().id}`, { sendAt: '2020-01-01T00:00:00Z' });
    expect(past.statusCode).toBe(422);
    expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${b.json().id}/cancel`)).statusCode).toBe(200);
    const after = (await rows(ws)).slice(before);
    expect(after.map((r) => [r.action, JSON.parse(r.changes!)])).toEqual([
      [
        'broadcast.scheduled',
        { status: { before: 'DRAFT', after: 'SCHEDULED' }, sendAt: { before: null, after: sendAt } },
      ],
      [
        'broadcast.canceled',
        { status: { before: 'SCHEDULED', after: 'DRAFT' }, sendAt: { before: sendAt, after: null } },
      ],
    ]);
  });

  it('admins read it: an admin session and an admin key 200; editor and viewer sessions and narrower keys 403', async () => {
    const ws = await h.workspace();
    const admin = await session(ws, 'admin');
    expect((await asUser(admin, 'GET', '/v1/audit-log')).statusCode).toBe(200);
    for (const role of ['editor', 'viewer']) {
      const res = await asUser(await session(ws, role), 'GET', '/v1/audit-log');
      expect(res.statusCode, role).toBe(403);
      expect(res.json().code).toBe('insufficient_scope');
    }
    const narrow = await h.key(ws, ['write:webhooks', 'write:contacts']);
    const res = await h.call(narrow, 'GET', '/v1/audit-log');
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toContain('admin');
  });

  it("another workspace's entries are never seen, by any filter", async () => {
    const a = await h.workspace();
    const b = await h.workspace();
    const wh = await h.call(a.key, 'POST', '/v1/webhooks', {
      url: 'https://93.184.215.14/a',
      eventTypes: ['contact.created'],
    });
    const id = wh.json().id;
    expect((await list(b.key, `?targetId=${id}`)).data).toEqual([]);
    expect((await list(b.key, '?action=webhook')).data).toEqual([]);
    expect((await list(a.key, `?targetId=${id}`)).data.map((e) => e.action)).toEqual(['webhook.created']);
  });

  it('filters (action, a kind of action, actor, target type, from/to) and cursor pagination', async () => {
    const ws = await h.workspace();
    const owner = await session(ws, 'owner');
    for (const email of ['a@f.example', 'b@f.example', 'c@f.example'])
      await h.call(ws.key, 'POST', '/v1/suppressions', { email, reason: 'MANUAL' });
    await asUser(owner, 'DELETE', '/v1/suppressions/b@f.example');
    const all = await list(ws.key, '?targetType=suppression');
    expect(all.data.map((e) => e.action)).toEqual([
      'suppression.removed',
      'suppression.added',
      'suppression.added',
      'suppression.added',
    ]);
    expect((await list(ws.key, '?action=suppression.added')).data).toHaveLength(3);
    expect((await list(ws.key, '?action=suppression')).data).toHaveLength(4);
    expect((await list(ws.key, `?actor=${owner.userId}`)).data.map((e) => e.target.label)).toEqual(['b@f.example']);
    const pivot = all.data[1]!.occurredAt as string;
    const fromPivot = await list(ws.key, `?targetType=suppression&from=${encodeURIComponent(pivot)}`);
    expect(fromPivot.data.every((e) => e.occurredAt >= pivot)).toBe(true);
    const toFuture = await list(
      ws.key,
      `?targetType=suppression&to=${encodeURIComponent('2999-01-01T00:00:00+02:00')}`,
    );
    expect(toFuture.data).toHaveLength(4);
    expect((await list(ws.key, '?targetType=suppression&to=2000-01-01T00:00:00Z')).data).toHaveLength(0);

    const page1 = await list(ws.key, '?targetType=suppression&limit=3');
    expect(page1.data).toHaveLength(3);
    expect(page1.nextCursor).toEqual(expect.any(String));
    const page2 = await list(ws.key, `?targetType=suppression&limit=3&cursor=${page1.nextCursor}`);
    expect(page2.data.map((e) => e.id)).toEqual([all.data[3]!.id]);
    expect(page2.nextCursor).toBeNull();

    for (const bad of ['?action=Bad Action', '?from=yesterday', '?targetType=planet', '?cursor=zzz'])
      expect((await h.call(ws.key, 'GET', `/v1/audit-log${bad}`)).statusCode, bad).toBe(422);
  });

  it('retention prunes entries older than AUDIT_RETENTION_DAYS', async () => {
    const { pruneOldAudit } = await import('../../src/outbox/audit/audit.service.js');
    const ws = await h.workspace();
    await h.call(ws.key, 'POST', '/v1/suppressions', { email: 'old@f.example', reason: 'MANUAL' });
    const n = (await rows(ws)).length;
    expect(n).toBeGreaterThan(0);
    // A year and a day later, by the clock the job is given.
    await pruneOldAudit(h.db, 365, Date.now() + 366 * 86_400_000);
    expect((await rows(ws)).length).toBe(0);
  });
});
