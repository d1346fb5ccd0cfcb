/**
 * The verified-key cache (src/access/api-keys/key-cache.ts): a revoked key is refused by the next request in the
 * process that revoked it, and within a second in any other process, which learns of it from the counter the
 * triggers of migration 0012 move. "Another process" is another connection (pool) to the same database with
 * its own services or app, as a second `formcast serve` would have. On SQLite (a file, WAL) and PostgreSQL.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAuthVersion } from '../../src/access/api-keys/api-keys.repository.js';
import { ApiKeysService } from '../../src/access/api-keys/api-keys.service.js';
import type { Db } from '../../src/db/connection.js';
import { buildApp } from '../../src/app.js';
import { PG_URL, testDatabases, type TestDatabase } from '../helpers/db.js';
import { TEST_SECRET } from '../helpers/secret.js';

const config = { logLevel: 'silent', publicUrl: 'http://localhost:3000', secret: TEST_SECRET };

for (const name of ['sqlite', 'postgres'] as TestDatabase['name'][]) {
  const target = testDatabases.find((d) => d.name === name);
  (target ? describe : describe.skip)(
    `API key cache and revocation [${name}${!target && !PG_URL ? ': TEST_DATABASE_URL not set' : ''}]`,
    () => {
      let dbA: Db;
      let dbB: Db;
      let appA: FastifyInstance;
      let appB: FastifyInstance;
      let drop: () => Promise<void>;
      beforeAll(async () => {
        const opened = await target!.openTwice();
        [dbA, dbB] = opened.dbs;
        drop = opened.drop;
        appA = await buildApp({ db: dbA, config, logger: false });
        appB = await buildApp({ db: dbB, config, logger: false });
        await Promise.all([appA.ready(), appB.ready()]);
      });
      afterAll(async () => {
        await appA?.close();
        await appB?.close();
        await drop?.();
      });

      const get = (app: FastifyInstance, key: string) =>
        app.inject({ method: 'GET', url: '/v1/forms', headers: { authorization: `Bearer ${key}` } });
      const bearer = (key: string) => `Bearer ${key}`;
      const newWorkspace = () => appA.services.workspaces.createWithAdminKey('Cache');
      /** A new key of a new workspace, used twice through `app` (so that app has it cached), then revoked over HTTP in app A. */
      const cachedThenRevoked = async (app: FastifyInstance) => {
        const { workspace, apiKey } = await newWorkspace();
        const key = await appA.services.apiKeys.create(workspace.id, { name: 'soon revoked', scopes: ['read:forms'] });
        expect((await get(app, key.key)).statusCode).toBe(200);
        expect((await get(app, key.key)).statusCode).toBe(200);
        const del = await appA.inject({
          method: 'DELETE',
          url: `/v1/api-keys/${key.id}`,
          headers: { authorization: bearer(apiKey.key) },
        });
        expect(del.statusCode).toBe(204);
        return key.key;
      };

      it("the counter moves with every change to a key's authority (revocation, scopes, hash, deletion, workspace deletion), not with lastUsedAt", async () => {
        const k = dbA.kysely;
        const { workspace, apiKey } = await newWorkspace();
        const other = await appA.services.apiKeys.create(workspace.id, { name: 'other', scopes: ['read:forms'] });
        const third = await appA.services.apiKeys.create(workspace.id, { name: 'third', scopes: ['read:forms'] });
        let before = await getAuthVersion(k);
        const moved = async () => {
          const now = await getAuthVersion(dbB.kysely); // the other connection sees it committed
          const delta = now - before;
          before = now;
          return delta;
        };
        await k
          .updateTable('api_keys')
          .set({ last_used_at: new Date().toISOString() })
          .where('id', '=', apiKey.id)
          .execute();
        expect(await moved()).toBe(0);
        await k.updateTable('api_keys').set({ name: 'renamed' }).where('id', '=', apiKey.id).execute();
        expect(await moved()).toBe(0);
        await k
          .updateTable('api_keys')
          .set({ scopes: JSON.stringify(['read:forms', 'write:forms']) })
          .where('id', '=', other.id)
          .execute();
        expect(await moved()).toBe(1);
        await k
          .updateTable('api_keys')
          .set({ key_hash: '0'.repeat(64) })
          .where('id', '=', other.id)
          .execute();
        expect(await moved()).toBe(1);
        await appA.services.apiKeys.revoke(workspace.id, other.id);
        expect(await moved()).toBe(1);
        await k.deleteFrom('api_keys').where('id', '=', third.id).execute();
        expect(await moved()).toBe(1);
        // The workspace's deletion takes its remaining keys with it (the admin key and the revoked one).
        await k.deleteFrom('workspaces').where('id', '=', workspace.id).execute();
        expect(await moved()).toBeGreaterThanOrEqual(1);
      });

      it('same process: the request after a revocation is refused, though the key was cached', async () => {
        const key = await cachedThenRevoked(appA);
        const res = await get(appA, key);
        expect(res.statusCode).toBe(401);
        expect(res.json().detail).toContain('revoked');
      });

      it('a cached key still checks the presented secret: its id with another secret is refused', async () => {
        const { apiKey } = await newWorkspace();
        expect((await get(appA, apiKey.key)).statusCode).toBe(200);
        const forged = apiKey.key.replace(/_[^_]+$/, `_${'A'.repeat(43)}`);
        expect((await get(appA, forged)).statusCode).toBe(401);
        expect((await get(appA, apiKey.key)).statusCode).toBe(200);
      });

      it('authenticateNow answers at once only for a key verified lately, with the cache fresh and the right secret', async () => {
        let clock = 0;
        const b = new ApiKeysService(dbB, { now: () => clock });
        const { apiKey } = await newWorkspace();
        const forged = apiKey.key.replace(/_[^_]+$/, `_${'A'.repeat(43)}`);
        expect(b.authenticateNow(bearer(apiKey.key))).toBeUndefined(); // not verified yet
        const auth = await b.authenticate(bearer(apiKey.key));
        expect(b.authenticateNow(bearer(apiKey.key))).toBe(auth);
        for (const header of [undefined, 'Basic abc', `Bearer ${forged}`, `Bearer ${apiKey.key}x`])
          expect(b.authenticateNow(header)).toBeUndefined();
        clock += 1000; // the counter's reading is too old: authenticate must read it again first
        expect(b.authenticateNow(bearer(apiKey.key))).toBeUndefined();
        await expect(b.authenticate(bearer(apiKey.key))).resolves.toBe(auth);
        expect(b.authenticateNow(bearer(apiKey.key))).toBe(auth);
      });

      it('another process, controlled clock: a key revoked elsewhere is refused within 1 s of the revocation', async () => {
        let clock = 0;
        const b = new ApiKeysService(dbB, { now: () => clock });
        const { workspace } = await newWorkspace();
        const key = await appA.services.apiKeys.create(workspace.id, {
          name: 'revoked elsewhere',
          scopes: ['read:forms'],
        });
        await expect(b.authenticate(bearer(key.key))).resolves.toMatchObject({ keyId: key.id, scopes: ['read:forms'] });

        await appA.services.apiKeys.revoke(workspace.id, key.id);
        // B's clock has not moved: it trusts what it verified (so the poll below measures the cache's window).
        await expect(b.authenticate(bearer(key.key))).resolves.toMatchObject({ keyId: key.id });
        let refusedAfterMs: number | undefined;
        for (let waited = 0; waited <= 1000; waited += 50) {
          try {
            await b.authenticate(bearer(key.key));
          } catch (err) {
            expect(err).toMatchObject({ code: 'unauthorized' });
            refusedAfterMs = waited;
            break;
          }
          clock += 50;
        }
        expect(refusedAfterMs).toBeDefined();
        expect(refusedAfterMs!).toBeLessThanOrEqual(1000);
      });

      it('another process, controlled clock: the keys of a deleted workspace are refused within 1 s', async () => {
        let clock = 0;
        const b = new ApiKeysService(dbB, { now: () => clock });
        const { workspace, apiKey } = await newWorkspace();
        await expect(b.authenticate(bearer(apiKey.key))).resolves.toMatchObject({ workspaceId: workspace.id });
        await dbA.kysely.deleteFrom('workspaces').where('id', '=', workspace.id).execute();
        let refused = false;
        for (let waited = 0; waited <= 1000 && !refused; waited += 50) {
          refused = await b.authenticate(bearer(apiKey.key)).then(
            () => false,
            () => true,
          );
          clock += 50;
        }
        expect(refused).toBe(true);
      });

      it("without the counter's row (deleted by hand), another process still refuses a revoked key within 1 s", async () => {
        let clock = 0;
        const b = new ApiKeysService(dbB, { now: () => clock });
        const { workspace } = await newWorkspace();
        const key = await appA.services.apiKeys.create(workspace.id, { name: 'no counter', scopes: ['read:forms'] });
        await dbA.kysely.deleteFrom('auth_version').execute();
        try {
          await expect(b.authenticate(bearer(key.key))).resolves.toMatchObject({ keyId: key.id });
          await appA.services.apiKeys.revoke(workspace.id, key.id);
          let refused = false;
          for (let waited = 0; waited <= 1000 && !refused; waited += 50) {
            refused = await b.authenticate(bearer(key.key)).then(
              () => false,
              () => true,
            );
            clock += 50;
          }
          expect(refused).toBe(true);
        } finally {
          await dbA.kysely.insertInto('auth_version').values({ id: 1, version: 1000 }).execute();
        }
      });

      it('another process, real clocks: two apps on one database; revoked over HTTP in one, the other refuses (polled up to a deadline)', async () => {
        const key = await cachedThenRevoked(appB);
        expect((await get(appA, key)).statusCode).toBe(401);
        // A deadline far beyond the 1 s bound (the controlled-clock tests check the bound): this checks the wiring.
        const deadline = Date.now() + 10_000;
        let status = 200;
        while (status === 200 && Date.now() < deadline) {
          status = (await get(appB, key)).statusCode;
          if (status === 200) await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect(status).toBe(401);
      });
    },
  );
}
