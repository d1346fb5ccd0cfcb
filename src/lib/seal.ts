import crypto from 'node:crypto';

/**
 * Secrets kept in the database that the service must read back (a webhook endpoint's signing secret, a domain's DKIM
 * private key), sealed with a key derived from the server secret (db/secrets.ts: SECRET_KEY or the key file, never in
 * the database): AES-256-GCM, a fresh 96-bit nonce per seal, the key from HKDF-SHA256 with a `purpose`, so that each
 * use has its own key. `context` (e.g. the row's id) is bound as additional data: a sealed value copied onto another
 * row does not open there. A copy of the database alone does not reveal the secrets; the server secret does.
 *
 * Format: `v1.<base64url(nonce ‖ ciphertext ‖ tag)>`.
 */
export interface Sealer {
  seal(plaintext: string, context: string): string;
  /** The plaintext, or throws when the value was not sealed by this key for this context (tampered, moved). */
  open(sealed: string, context: string): string;
}

const VERSION = 'v1';
const NONCE = 12;
const TAG = 16;

export function sealer(serverSecret: Buffer, purpose: string): Sealer {
  const key = Buffer.from(
    crypto.hkdfSync('sha256', serverSecret, Buffer.alloc(0), `formcast seal ${VERSION}: ${purpose}`, 32),
  );
  return {
    seal(plaintext, context) {
      const nonce = crypto.randomBytes(NONCE);
      const cipher = crypto.createCipheriv('aes-256-gcm', key, nonce);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `${VERSION}.${Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64url')}`;
    },
    open(sealed, context) {
      const dot = sealed.indexOf('.');
      if (dot < 0 || sealed.slice(0, dot) !== VERSION) throw new Error('not a sealed value of this version');
      const raw = Buffer.from(sealed.slice(dot + 1), 'base64url');
      if (raw.length < NONCE + TAG) throw new Error('sealed value too short');
      const decipher = crypto.createDecipheriv('aes-256-gcm', key, raw.subarray(0, NONCE));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(raw.subarray(raw.length - TAG));
      return Buffer.concat([decipher.update(raw.subarray(NONCE, raw.length - TAG)), decipher.final()]).toString('utf8');
    },
  };
}
