import { sealer, type Sealer } from '../../lib/seal.js';

/**
 * DKIM private keys at rest: sealed with a key derived from the installation's key (db/secrets.ts, lib/seal.ts), bound to
 * the domain's id, so that a copy of the database alone does not reveal them and a sealed key copied onto another
 * domain does not open there.
 */
const PURPOSE = 'dkim private key';

/** A clear PKCS#8 PEM, as rows were kept before migration 0020 (the first start after it seals them: sealClearDkimKeys). */
export function isClearPem(stored: string): boolean {
  return stored.startsWith('-----BEGIN');
}

/**
 * Per key (the process's one secret, the tests' several): its sealer, and the keys it opened. A sending batch asks
 * for its domain's key; opening is cheap (AES-GCM), but the same few keys are asked for all day. Keyed by the stored
 * value, whose nonce makes it unique; a new key (a new domain) is a new value.
 */
const keyrings = new WeakMap<Buffer, { sealer: Sealer; opened: Map<string, string> }>();

function keyring(secret: Buffer) {
  let ring = keyrings.get(secret);
  if (!ring) keyrings.set(secret, (ring = { sealer: sealer(secret, PURPOSE), opened: new Map() }));
  return ring;
}

export function sealDkimKey(secret: Buffer, pem: string, domainId: string): string {
  return keyring(secret).sealer.seal(pem, domainId);
}

/** The PEM; throws when the value was not sealed with this key for this domain. */
export function openDkimKey(secret: Buffer, stored: string, domainId: string): string {
  // A key an older process stored in clear during an upgrade still signs; the next start seals it.
  if (isClearPem(stored)) return stored;
  const ring = keyring(secret);
  const cacheKey = `${domainId}\n${stored}`;
  let pem = ring.opened.get(cacheKey);
  if (pem === undefined) {
    pem = ring.sealer.open(stored, domainId);
    if (ring.opened.size >= 100) ring.opened.delete(ring.opened.keys().next().value!);
    ring.opened.set(cacheKey, pem);
  }
  return pem;
}
