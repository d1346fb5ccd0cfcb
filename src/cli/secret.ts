import type { Db } from '../db/connection.js';
import { loadServerSecret, type SecretSettings } from '../db/secrets.js';
import { sealClearDkimKeys } from '../mail-setup/domains/domains.repository.js';

/**
 * The configuration as the app and the jobs take it, with the installation's key (db/secrets.ts): what every command
 * that opens the database (serve, worker, inbound, the CLI's) does after the migrations. The first start after
 * migration 0020 also seals the DKIM private keys an older version kept in clear (idempotent; two processes at once
 * seal each key once).
 */
export async function withSecret<C extends SecretSettings>(db: Db, config: C): Promise<C & { secret: Buffer }> {
  const secret = await loadServerSecret(db, config);
  await sealClearDkimKeys(db.kysely, secret);
  return { ...config, secret };
}
