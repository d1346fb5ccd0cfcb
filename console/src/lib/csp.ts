/**
 * The nonce of this page's Content-Security-Policy (style-src), from `<meta property="csp-nonce" nonce="…">`,
 * which the server fills per answer. Browsers hide the nonce attribute's value from getAttribute, not from
 * the `nonce` property. Empty under `npm run dev` (no CSP there).
 */
export function cspNonce(): string {
  const meta = document.querySelector<HTMLMetaElement>('meta[property="csp-nonce"]');
  const nonce = meta?.nonce || meta?.getAttribute('nonce') || '';
  return nonce === '__CSP_NONCE__' ? '' : nonce;
}
