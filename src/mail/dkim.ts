import crypto from 'node:crypto';
import type * as DkimBody from 'mailauth/lib/dkim/body/index.js';
import type * as DkimHeader from 'mailauth/lib/dkim/header/index.js';
import type * as MailauthTools from 'mailauth/lib/tools.js';
import { lazyRequire } from '../lib/lazy.js';

// mailauth (with joi and a public-suffix list) is loaded on the first signature, not at start (lib/lazy.ts).
const body = lazyRequire<typeof DkimBody>('mailauth/lib/dkim/body/index.js');
const header = lazyRequire<typeof DkimHeader>('mailauth/lib/dkim/header/index.js');
const tools = lazyRequire<typeof MailauthTools>('mailauth/lib/tools.js');

/**
 * DKIM signing (RFC 6376, relaxed/relaxed, rsa-sha256) with **oversigning**: the headers a reader trusts
 * (OVERSIGNED) are listed in `h=` once more than the message has them, so that a header added later (a
 * second Subject, a Reply-To) breaks the signature instead of being shown to the reader under a valid one.
 * Neither nodemailer's signer nor mailauth's can oversign; this one uses mailauth's own canonicalization,
 * body hash and header formatting (mailauth is also what verifies in the tests) and adds only the `h=` list.
 */
export const SIGNED = ['From', 'To', 'Subject', 'Date', 'Message-ID', 'Reply-To', 'List-Unsubscribe', 'List-Unsubscribe-Post', 'List-Id', 'Feedback-ID', 'Precedence', 'Auto-Submitted', 'MIME-Version', 'Content-Type'];
export const OVERSIGNED = ['From', 'To', 'Subject', 'Date', 'Message-ID', 'Reply-To', 'List-Unsubscribe', 'List-Unsubscribe-Post', 'List-Id'];

export interface SigningKey {
  domainName: string;
  keySelector: string;
  privateKey: crypto.KeyObject;
}

/** The message with a DKIM-Signature header in front. `raw` is a whole message with CRLF line ends. */
export function dkimSign(raw: Buffer, key: SigningKey): Buffer {
  const split = raw.indexOf('\r\n\r\n');
  if (split < 0) throw new Error('dkimSign: the message has no header/body separator');
  const { dkimBody } = body();
  const { generateCanonicalizedHeader } = header();
  const { formatSignatureHeaderLine, getSigningHeaderLines, parseHeaders } = tools();
  const { parsed } = parseHeaders(raw.subarray(0, split + 2));
  const hasher = dkimBody('relaxed', 'sha256', false);
  hasher.update(raw.subarray(split + 4));
  const present = getSigningHeaderLines(parsed, SIGNED.join(':'));
  // The present instances first (bottom-up, as hashed), then one more of each oversigned name: a verifier
  // finds no instance left for those and hashes the null string, unless somebody added one.
  const keys = [present.keys, ...OVERSIGNED].filter(Boolean).join(': ');
  // The signing time is fixed here, once. Without it mailauth writes t= from the clock twice: into the header it
  // hashes (rounded to the second) and again into the header the message gets (formatSignatureHeaderLine's
  // default) — a signing that straddles a half second put another t= in the message than was signed, and the
  // signature failed ("bad signature", ~1 message in 600 at ~2 ms a signature, more under load).
  const signTime = new Date(Date.now()); // Date.now(): the clock a test moves (test/unit/dkim.test.ts)
  const t = Math.floor(signTime.getTime() / 1000);
  const options: Parameters<typeof generateCanonicalizedHeader>[2] = {
    signingDomain: key.domainName, selector: key.keySelector, algorithm: 'rsa-sha256', canonicalization: 'relaxed/relaxed', bodyHash: hasher.digest('base64'), signTime,
  };
  const { canonicalizedHeader, dkimHeaderOpts } = generateCanonicalizedHeader('DKIM', { keys, headers: present.headers }, options);
  // What is written must be what was hashed: a mailauth that ignored signTime would bring the race back.
  if (dkimHeaderOpts.t !== t) throw new Error(`dkimSign: the signed header has t=${String(dkimHeaderOpts.t)}, not t=${t}`);
  dkimHeaderOpts.b = crypto.sign('rsa-sha256', canonicalizedHeader, key.privateKey).toString('base64');
  return Buffer.concat([Buffer.from(`${formatSignatureHeaderLine('DKIM', dkimHeaderOpts, true)}\r\n`), raw]);
}
