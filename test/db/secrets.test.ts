import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withSecret } from '../../src/cli/secret.js';
import { ConfigError } from '../../src/config.js';
import type { Db } from '../../src/db/connection.js';
import { loadServerSecret } from '../../src/db/secrets.js';
import { getSigningKey } from '../../src/mail-setup/domains/domains.repository.js';
import { PG_URL, testDatabases } from '../helpers/db.js';

/**
 * The installation's key in process (db/secrets.ts; the processes themselves: test/secrets-at-rest.test.ts): two
 * connections starting at once, as two processes of one installation do, on the layout before migration 0020.
 */
for (const name of ['sqlite', 'postgres'] as const) {
  const target = testDatabases.find((d) => d.name === name);
  describe.skipIf(!target)(
    `the installation's key [${name}${!target && !PG_URL ? ': TEST_DATABASE_URL not set' : ''}]`,
    () => {
      let dbs: [Db, Db];
      let drop: () => Promise<void>;
      let dir: string;
      beforeAll(async () => {
        ({ dbs, drop } = await target!.openTwice());
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-key-'));
      });
      afterAll(async () => {
        await drop?.();
        fs.rmSync(dir, { recursive: true, force: true });
      });

      it('two processes upgrading at once adopt the same secret into one key file, delete it from the database, and seal each DKIM key once', async () => {
        const [a, b] = dbs;
        const old = crypto.randomBytes(32);
        const now = new Date().toISOString();
        const ws = `ws_${'0'.repeat(25)}1`;
        await a.kysely
          .insertInto('workspaces')
          .values({ id: ws, name: 'Old', created_at: now, settings: null })
          .execute();
        const { privateKey } = crypto.generateKeyPairSync('rsa', {
          modulusLength: 2048,
          publicKeyEncoding: { type: 'spki', format: 'der' },
          privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
        });
        await a.kysely
          .insertInto('domains')
          .values({
            id: `dom_${'0'.repeat(25)}1`,
            workspace_id: ws,
            name: 'old.example',
            status: 'VERIFIED',
            verification_token: 'x',
            dkim_selector: 's1',
            dkim_public_key: 'p',
            dkim_private_key: privateKey,
            verification: null,
            created_at: now,
            verified_at: now,
          })
          .execute();
        await a.kysely
          .insertInto('server_secrets')
          .values({ name: 'tokens', value: old.toString('base64'), created_at: now })
          .execute();

        const settings = { secretKey: null, secretKeyFile: path.join(dir, 'secret.key') };
        // At once on PostgreSQL. SQLite's two connections here share one thread, where a connection waiting for the write
        // lock (busy_timeout, synchronous) would block the one holding it: one after the other (the processes of
        // test/secrets-at-rest.test.ts start at once on both).
        const [ka, kb] =
          name === 'postgres'
            ? await Promise.all([withSecret(a, settings), withSecret(b, settings)])
            : [await withSecret(a, settings), await withSecret(b, settings)];
        expect(ka.secret.equals(old)).toBe(true);
        expect(kb.secret.equals(old)).toBe(true);
        expect(fs.readdirSync(dir)).toEqual(['secret.key']);
        expect(await a.kysely.selectFrom('server_secrets').selectAll().execute()).toEqual([]);
        const stored = (await a.kysely.selectFrom('domains').select('dkim_private_key').executeTakeFirstOrThrow())
          .dkim_private_key;
        expect(stored).toMatch(/^v1\./);
        expect((await getSigningKey(b.kysely, ws, 'old.example', old))?.privateKey).toBe(privateKey);

        // A key file that holds no key, or a changed SECRET_KEY: refused, with the reason.
        const bad = path.join(dir, 'bad.key');
        fs.writeFileSync(bad, 'not a key\n', { mode: 0o600 });
        await expect(loadServerSecret(a, { secretKey: null, secretKeyFile: bad })).rejects.toThrow(ConfigError);
        await expect(loadServerSecret(a, { secretKey: null, secretKeyFile: bad })).rejects.toThrow(
          /does not hold a key/,
        );
        await expect(loadServerSecret(a, { secretKey: 'x'.repeat(40), secretKeyFile: null })).rejects.toThrow(
          /SECRET_KEY is not the key this database's secrets were sealed with/,
        );
        // The same key again: idempotent.
        expect((await loadServerSecret(b, settings)).equals(old)).toBe(true);
      });
      it('after the upgrade: a secret an older process put back in the database is a stray, deleted (never adopted, never a refusal); on PostgreSQL a secret is adopted only into a key file SECRET_KEY_FILE names', async () => {
        const [a] = dbs;
        const file = path.join(dir, 'secret.key');
        const key = await loadServerSecret(a, { secretKey: null, secretKeyFile: file });
        const now = new Date().toISOString();
        // An 8110232 process (a rollback, an old worker restarting) made a new random secret.
        await a.kysely
          .insertInto('server_secrets')
          .values({ name: 'tokens', value: crypto.randomBytes(32).toString('base64'), created_at: now })
          .execute();
        expect((await loadServerSecret(a, { secretKey: null, secretKeyFile: file })).equals(key)).toBe(true);
        expect(await a.kysely.selectFrom('server_secrets').selectAll().execute()).toEqual([]);
        // The same stray on a machine without the key file: the file is missing (never made from the stray).
        await a.kysely
          .insertInto('server_secrets')
          .values({ name: 'tokens', value: crypto.randomBytes(32).toString('base64'), created_at: now })
          .execute();
        const elsewhere = path.join(dir, 'elsewhere', 'secret.key');
        await expect(loadServerSecret(a, { secretKey: null, secretKeyFile: elsewhere })).rejects.toThrow(
          /does not exist/,
        );
        expect(fs.existsSync(elsewhere)).toBe(false);
        await a.kysely.deleteFrom('server_secrets').execute();

        // A database as 8110232 left it, opened where SECRET_KEY_FILE is not set: PostgreSQL refuses to adopt into the
        // default place (a folder of whatever machine runs the command); SQLite's default is beside the database file.
        await a.kysely.deleteFrom('installation_keys').execute();
        await a.kysely
          .insertInto('server_secrets')
          .values({ name: 'tokens', value: key.toString('base64'), created_at: now })
          .execute();
        const fresh = path.join(dir, 'default', 'secret.key');
        const unnamed = loadServerSecret(a, { secretKey: null, secretKeyFile: fresh, secretKeyFileSet: false });
        if (name === 'postgres') {
          await expect(unnamed).rejects.toThrow(/SECRET_KEY_FILE is not set/);
          expect(fs.existsSync(fresh)).toBe(false);
          expect(await a.kysely.selectFrom('server_secrets').select('name').execute()).toEqual([{ name: 'tokens' }]);
          expect(
            (await loadServerSecret(a, { secretKey: null, secretKeyFile: fresh, secretKeyFileSet: true })).equals(key),
          ).toBe(true);
        } else {
          expect((await unnamed).equals(key)).toBe(true);
        }
        expect(await a.kysely.selectFrom('server_secrets').selectAll().execute()).toEqual([]);
      });
    },
  );
}
