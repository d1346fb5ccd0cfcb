import crypto from 'node:crypto';
import type { Db } from './connection.js';

/**
 * The server secret that signs tokens in public addresses (lib/tokens.ts). SECRET_KEY when it is set (every
 * process of an installation must share it); otherwise one is generated at the first start and kept in the
 * database, so that every process and restart of the installation uses the same. It is never logged.
 */
export async function loadServerSecret(db: Db, configured: string | null): Promise<Buffer> {
  if (configured) return crypto.createHash('sha256').update(configured).digest();
  const k = db.kysely;
  await k.insertInto('server_secrets').values({ name: 'tokens', value: crypto.randomBytes(32).toString('base64'), created_at: new Date().toISOString() })
    .onConflict((oc) => oc.column('name').doNothing()).execute();
  const row = await k.selectFrom('server_secrets').select('value').where('name', '=', 'tokens').executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'base64');
}

/** The configuration as the app and the jobs take it: with the server secret loaded. */
export async function withSecret<C extends { secretKey: string | null }>(db: Db, config: C): Promise<C & { secret: Buffer }> {
  return { ...config, secret: await loadServerSecret(db, config.secretKey) };
}
