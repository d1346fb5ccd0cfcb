import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../errors/config-error.js';
import type { Db } from './connection.js';

/**
 * The installation's key: it signs the tokens in public addresses (lib/tokens.ts: VERP, unsubscribe, tracking) and
 * seals the secrets the service keeps in the database (lib/seal.ts: DKIM private keys, webhook secrets). It is never
 * in the database, so that a copy of the database alone neither opens those secrets nor forges tokens (docs/domains.md,
 * "Secrets at rest"). It is never logged.
 *
 * - SECRET_KEY when set (its SHA-256: every process of the installation must share it).
 * - Otherwise the key file (SECRET_KEY_FILE, by default secret.key beside the SQLite file): 32 random bytes in base64,
 *   created at the first start with mode 0600. Every process of the installation (serve, worker, inbound, the CLI) reads
 *   the same file; on several machines copy it (or set SECRET_KEY).
 *
 * The database keeps the key's fingerprint (installation_keys, migration 0020): a process with another key (a machine
 * without the file, a changed SECRET_KEY) refuses to start rather than fail to open every secret or verify every link.
 *
 * Upgrade (before 0020 the generated secret was kept in the database, server_secrets.tokens): the first start adopts
 * that secret as the key file, so that the tokens of links in mail already sent and the sealed webhook secrets keep
 * working, and then deletes it from the database.
 */
export interface SecretSettings {
  secretKey: string | null;
  /** null: no file (an in-memory database: its key lives as long as it does). */
  secretKeyFile: string | null;
  /**
   * Whether SECRET_KEY_FILE was set (false: secretKeyFile is the default place). On PostgreSQL the default is a folder
   * of whichever machine or container runs the command, so a database-held secret is adopted only into a file the
   * operator named (undefined: as set).
   */
  secretKeyFileSet?: boolean;
}

const KEY_BYTES = 32;
const LEGACY_ROW = 'tokens';

export async function loadServerSecret(db: Db, settings: SecretSettings): Promise<Buffer> {
  const k = db.kysely;
  const legacy = await k.selectFrom('server_secrets').select('value').where('name', '=', LEGACY_ROW).executeTakeFirst();
  const known = await k
    .selectFrom('installation_keys')
    .select('fingerprint')
    .where('name', '=', 'server')
    .executeTakeFirst();
  let key: Buffer;
  if (settings.secretKey) {
    // As before 0020 (a database-held secret was not used then either): its tokens already did not verify.
    key = crypto.createHash('sha256').update(settings.secretKey).digest();
  } else if (!settings.secretKeyFile) {
    key = legacy ? Buffer.from(legacy.value, 'base64') : crypto.randomBytes(KEY_BYTES);
  } else {
    const file = settings.secretKeyFile;
    const found = readKeyFile(file);
    const legacyKey = legacy ? Buffer.from(legacy.value, 'base64') : null;
    // A database-held secret is this installation's own unless a recorded fingerprint says otherwise (an older process
    // started after the upgrade makes a new random one: a stray, deleted below).
    const adoptable = legacyKey && (!known || known.fingerprint === fingerprintOf(legacyKey)) ? legacyKey : null;
    if (found) key = found;
    else if (adoptable) {
      if (db.dialect === 'postgres' && settings.secretKeyFileSet === false) {
        throw new ConfigError(
          `this database keeps its secret from before the upgrade, to be moved into a key file outside it, and SECRET_KEY_FILE is not set: on PostgreSQL the default (${file}) is a folder of this machine or container only. Set SECRET_KEY_FILE to a lasting path that every process of the installation reads (or SECRET_KEY), then start again (docs/domains.md, "Secrets at rest")`,
        );
      }
      key = createKeyFile(file, adoptable);
    } else if (known) {
      throw new ConfigError(
        `the key file ${file} does not exist, but this database's secrets were sealed with a key: copy the key file of the machine that created it to ${file} (mode 0600), or set SECRET_KEY_FILE to its path, or set the SECRET_KEY the installation uses (docs/domains.md, "Secrets at rest")`,
      );
    } else key = createKeyFile(file, crypto.randomBytes(KEY_BYTES));
    const stray = legacyKey && known && known.fingerprint === fingerprintOf(key) && !legacyKey.equals(key);
    if (legacyKey && !stray && !legacyKey.equals(key)) {
      throw new ConfigError(
        `the key file ${file} holds another key than the secret this database kept before the upgrade: it belongs to another installation. Move it away to adopt the database's secret (links in mail already sent keep working), or set SECRET_KEY_FILE to this installation's own file`,
      );
    }
  }
  const fingerprint = fingerprintOf(key);
  await k.transaction().execute(async (trx) => {
    // Two processes starting at once: the first to commit records its key; the other then sees whether it has the same.
    await trx
      .insertInto('installation_keys')
      .values({ name: 'server', fingerprint, created_at: new Date().toISOString() })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    const row = await trx
      .selectFrom('installation_keys')
      .select('fingerprint')
      .where('name', '=', 'server')
      .executeTakeFirstOrThrow();
    if (row.fingerprint !== fingerprint) {
      throw new ConfigError(
        `${settings.secretKey ? 'SECRET_KEY' : `the key file ${settings.secretKeyFile ?? '(none)'}`} is not the key this database's secrets were sealed with: every process of an installation must use the same SECRET_KEY or key file (docs/domains.md, "Secrets at rest")`,
      );
    }
    // The secret is in the key file now (or SECRET_KEY is what signs): the database keeps none.
    if (legacy) await trx.deleteFrom('server_secrets').where('name', '=', LEGACY_ROW).execute();
  });
  return key;
}

/** Tells keys apart without revealing them (HKDF of a 256-bit key: nothing to guess from). */
function fingerprintOf(key: Buffer): string {
  return Buffer.from(crypto.hkdfSync('sha256', key, Buffer.alloc(0), 'formcast key fingerprint v1', 16)).toString(
    'base64url',
  );
}

/** The key in the file, or undefined when there is none; refuses a file others can read or change, or that holds no key. */
function readKeyFile(file: string): Buffer | undefined {
  let text: string;
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const stat = fs.fstatSync(fd);
      // As ssh does with a private key: a key others could read is not a secret any more.
      if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0) {
        throw new ConfigError(
          `the key file ${file} can be read or changed by other users (mode ${(stat.mode & 0o777).toString(8).padStart(4, '0')}): run chmod 600 ${file}`,
        );
      }
      text = fs.readFileSync(fd, 'utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(
      `cannot read the key file ${file}: ${(err as Error).message} (run every process as the user that owns it)`,
    );
  }
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== KEY_BYTES || key.toString('base64') !== text.trim()) {
    throw new ConfigError(
      `the key file ${file} does not hold a key (the base64 of ${KEY_BYTES} bytes, e.g. openssl rand -base64 32)`,
    );
  }
  return key;
}

/**
 * Writes `key` to `file` (mode 0600) unless it exists, and returns the key the file holds. The key is written to a
 * file of this process's own and linked into place: another process never reads a half-written file, and of two
 * processes creating it at once one wins and the other reads the winner's key.
 */
function createKeyFile(file: string, key: Buffer): Buffer {
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.${crypto.randomBytes(6).toString('hex')}`);
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const fd = fs.openSync(temp, 'wx', 0o600);
    try {
      fs.fchmodSync(fd, 0o600);
      fs.writeFileSync(fd, `${key.toString('base64')}\n`);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    try {
      fs.linkSync(temp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      fs.unlinkSync(temp);
    }
  } catch (err) {
    throw new ConfigError(
      `cannot create the key file ${file}: ${(err as Error).message} (set SECRET_KEY_FILE to a path this process may write, or SECRET_KEY)`,
    );
  }
  // Durable before the database forgets its copy of an adopted secret.
  try {
    const dirFd = fs.openSync(dir, 'r');
    fs.fsyncSync(dirFd);
    fs.closeSync(dirFd);
  } catch {
    // Not every platform can open a folder (Windows): the file itself was synced.
  }
  return readKeyFile(file)!;
}
