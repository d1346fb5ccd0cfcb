import { signPairToken, verifyPairToken } from '../../lib/tokens.js';

/**
 * The web version of a message (docs/archive.md, contract §19): `{{ webversion_url }}` in a broadcast or an automation's
 * email is `{PUBLIC_URL}/w/{token}`, the recipient's own message in a browser. The token names the workspace and the
 * delivery and is signed with the server secret (lib/tokens.ts, signPairToken): nobody can make one for another
 * delivery, and nothing is stored for it.
 */
const PURPOSE = 'formcast-webversion-v1';
const KIND = 'w';

export function webversionUrl(publicUrl: string, secret: Buffer, workspaceId: string, deliveryId: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/w/${signPairToken(secret, PURPOSE, KIND, workspaceId, deliveryId)}`;
}

/** The workspace and delivery a web version token names, or null when it does not verify. */
export function readWebversionToken(secret: Buffer, token: string): { workspaceId: string; deliveryId: string } | null {
  const t = verifyPairToken(secret, PURPOSE, token);
  return t && t.kind === KIND ? { workspaceId: `ws_${t.a}`, deliveryId: `dlv_${t.b}` } : null;
}

/** What previews and test sends put in `{{ webversion_url }}`: a page that says so (a real one names a delivery). */
export const WEBVERSION_PREVIEW_PATH = '/w/preview';
