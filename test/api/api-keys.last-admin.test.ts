/**
 * The last admin key is not revoked (409 last_admin_key, docs/api.md §2): an admin key revoking itself would leave
 * the workspace without any key that can manage keys. On SQLite and PostgreSQL.
 */
import { expect, it } from 'vitest';
import { describeApi } from '../helpers/app.js';

describeApi('API keys: the last admin key', (h) => {
  const adminKeyId = async (key: string) => {
    const list = (await h.call(key, 'GET', '/v1/api-keys')).json();
    return list.data.filter((k: any) => k.scopes.includes('admin') && !k.revokedAt).map((k: any) => k.id as string);
  };

  it('an admin key cannot revoke itself when it is the only one: 409 last_admin_key, and it still works', async () => {
    const ws = await h.workspace();
    const [id] = await adminKeyId(ws.key);
    const res = await h.call(ws.key, 'DELETE', `/v1/api-keys/${id}`);
    expect(res.statusCode).toBe(409);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ code: 'last_admin_key', status: 409, type: '/docs/errors#last_admin_key' });
    expect(res.json().detail).toContain(id);
    expect((await h.call(ws.key, 'GET', '/v1/api-keys')).statusCode).toBe(200);
  });

  it('with a second admin key, either may be revoked, but not both', async () => {
    const ws = await h.workspace();
    const [first] = await adminKeyId(ws.key);
    const second = (await h.call(ws.key, 'POST', '/v1/api-keys', { name: 'second admin', scopes: ['admin'] })).json();
    expect((await h.call(ws.key, 'DELETE', `/v1/api-keys/${first}`)).statusCode).toBe(204);
    expect((await h.call(ws.key, 'GET', '/v1/api-keys')).statusCode).toBe(401);
    const last = await h.call(second.key, 'DELETE', `/v1/api-keys/${second.id}`);
    expect(last.statusCode).toBe(409);
    expect(last.json().code).toBe('last_admin_key');
    // Keys without admin are revoked as before, and revoking an already revoked key changes nothing.
    const reader = (
      await h.call(second.key, 'POST', '/v1/api-keys', { name: 'reader', scopes: ['read:forms'] })
    ).json();
    expect((await h.call(second.key, 'DELETE', `/v1/api-keys/${reader.id}`)).statusCode).toBe(204);
    expect((await h.call(second.key, 'DELETE', `/v1/api-keys/${first}`)).statusCode).toBe(204);
  });

  it('two concurrent revocations of the last two admin keys: exactly one passes', async () => {
    const ws = await h.workspace();
    const [first] = await adminKeyId(ws.key);
    const second = await h.app.services.apiKeys.create(ws.id, { name: 'second admin', scopes: ['admin'] });
    const results = await Promise.allSettled([
      h.app.services.apiKeys.revoke(ws.id, first!),
      h.app.services.apiKeys.revoke(ws.id, second.id),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason.code).toBe('last_admin_key');
  });

  it("another workspace's key id is 404, not 409", async () => {
    const a = await h.workspace();
    const b = await h.workspace();
    const [bId] = await adminKeyId(b.key);
    expect((await h.call(a.key, 'DELETE', `/v1/api-keys/${bId}`)).statusCode).toBe(404);
  });
});
