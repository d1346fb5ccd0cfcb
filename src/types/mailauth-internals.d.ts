/**
 * Types for the parts of mailauth's DKIM implementation that src/mail/dkim.ts uses (the package ships
 * declarations for its entry points only). Shapes as in mailauth 4.13.
 */
declare module 'mailauth/lib/tools.js' {
  export interface ParsedHeaderLine {
    key: string;
    casedKey: string;
    line: Buffer;
  }
  export function parseHeaders(buf: Buffer): { parsed: ParsedHeaderLine[]; original: Buffer };
  export function getSigningHeaderLines(parsed: ParsedHeaderLine[], fieldNames: string, verify?: boolean): { keys: string; headers: ParsedHeaderLine[] };
  export function formatSignatureHeaderLine(type: 'DKIM' | 'ARC', values: Record<string, unknown>, folded: boolean): string;
}

declare module 'mailauth/lib/dkim/header/index.js' {
  import type { ParsedHeaderLine } from 'mailauth/lib/tools.js';
  export function generateCanonicalizedHeader(
    type: 'DKIM',
    signingHeaderLines: { keys: string; headers: ParsedHeaderLine[] },
    options: { signingDomain: string; selector: string; algorithm: string; canonicalization: string; bodyHash: string; signTime?: Date },
  ): { canonicalizedHeader: Buffer; signatureHeaderLine: string; dkimHeaderOpts: Record<string, unknown> };
}

declare module 'mailauth/lib/dkim/body/index.js' {
  export function dkimBody(canonicalization: string, hashAlgo: string, maxBodyLength: number | false): { update(chunk: Buffer): void; digest(encoding: 'base64'): string };
}
