import crypto from 'node:crypto';
import type { Executor } from '../../db/connection.js';
import { verifiedDomainHolders } from '../../mail-setup/index.js';
import { dkimSignaturesOf, signedFields, verifyHeaderSignature } from '../../mail/dkim-verify.js';
import { rowOfMessageId, type SignedClaim } from './bounces.proof.js';

/** At most this many signatures of one original are looked at (a report is about one message). */
const MAX_SIGNATURES = 5;

/**
 * The rows that DKIM signatures of ours in a report's original headers name (bounces.proof.ts, `provenTarget`): each
 * signature whose `d=` and `s=` are a verified sending domain's, that verifies over the headers with that domain's
 * public key (mail/dkim-verify.ts: the header hash; a feedback loop's copy may have lost or changed the body), and that
 * signs a Formcast Message-ID. Each comes with the workspace of the key, which the caller checks the row belongs to.
 */
export async function signedClaims(
  db: Executor,
  headers: string | null,
): Promise<(SignedClaim & { workspaceId: string })[]> {
  if (!headers) return [];
  const out: (SignedClaim & { workspaceId: string })[] = [];
  for (const sig of dkimSignaturesOf(headers).slice(0, MAX_SIGNATURES)) {
    const holders = (await verifiedDomainHolders(db, sig.domain)).filter(
      (h) => h.selector.toLowerCase() === sig.selector,
    );
    for (const h of holders) {
      let key: crypto.KeyObject;
      try {
        key = crypto.createPublicKey({ key: Buffer.from(h.publicKey, 'base64'), format: 'der', type: 'spki' });
      } catch {
        continue;
      }
      if (!verifyHeaderSignature(headers, sig, key)) continue;
      const messageId = signedFields(headers, sig).find((f) => f.name === 'message-id');
      const row = messageId ? rowOfMessageId(messageId.field.slice(messageId.field.indexOf(':') + 1).trim()) : null;
      if (row) out.push({ ...row, domain: sig.domain, workspaceId: h.workspaceId });
    }
  }
  return out;
}
