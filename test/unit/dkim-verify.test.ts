import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { dkimSignature } from '../../src/mail/dkim.js';
import { dkimSignaturesOf, signedFields, verifyHeaderSignature } from '../../src/mail/dkim-verify.js';
import { claimsOf, provenTarget } from '../../src/sending/bounces/bounces.proof.js';

/**
 * A DKIM signature of ours checked over a header block alone (mail/dkim-verify.ts), as the proof of a complaint at
 * fbl@/abuse@ uses it (bounces.proof.ts): what the signer signed verifies whatever happened to the body; any change to
 * a signed header, or a second instance of an oversigned one, does not.
 */
const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const LINES = [
  'From: Acme <news@acme.test>',
  'To: ann@example.com',
  'Subject: =?utf-8?Q?Gr=C3=BC=C3=9Fe?=',
  'Date: Tue, 24 Nov 2026 09:30:00 +0000',
  'Message-ID: <dlv_01JD7Q8W3K2M4N5P6R7S8T9V0W@acme.test>',
  'MIME-Version: 1.0',
  'Content-Type: text/plain; charset=utf-8',
];
const signed = (body = 'Hello\r\n') => {
  const headers = LINES.map((line) => ({ name: line.slice(0, line.indexOf(':')), line }));
  const sig = dkimSignature(headers, body, { domainName: 'acme.test', keySelector: 'fc1', privateKey });
  // A receiver's trace headers on top, as a feedback loop returns them.
  return ['Received: from mx.example.net by mta1.example.com; Tue, 24 Nov 2026 09:31:00 +0000', sig, ...LINES].join(
    '\r\n',
  );
};
const verify = (block: string, key = publicKey) => {
  const [sig] = dkimSignaturesOf(block);
  return sig ? verifyHeaderSignature(block, sig, key) : false;
};

describe('DKIM over a header block', () => {
  it('verifies our own signature, names its domain and selector, and hands out the Message-ID it signs', () => {
    const block = signed();
    expect(verify(block)).toBe(true);
    const [sig] = dkimSignaturesOf(block);
    expect(sig).toMatchObject({ domain: 'acme.test', selector: 'fc1', algorithm: 'rsa-sha256' });
    expect(signedFields(block, sig!).find((f) => f.name === 'message-id')?.field).toBe(LINES[4]);
    // Folded differently and with LF line ends, as a mail system may pass it on: relaxed canonicalization holds.
    expect(verify(block.replace('Subject: ', 'Subject:\r\n  ').replace(/\r\n/g, '\n'))).toBe(true);
  });

  it('fails for a changed signed header, a second Message-ID (oversigned), another key, or a signature that is not ours', () => {
    const block = signed();
    expect(verify(block.replace('To: ann@example.com', 'To: bob@example.com'))).toBe(false);
    expect(
      verify(
        block.replace(
          'Message-ID: <dlv_',
          'Message-ID: <dlv_01JD7Q8W3K2M4N5P6R7S8T9V0X@acme.test>\r\nMessage-ID: <dlv_',
        ),
      ),
    ).toBe(false);
    expect(verify(`${block}\r\nMessage-ID: <dlv_01JD7Q8W3K2M4N5P6R7S8T9V0X@acme.test>`)).toBe(false);
    expect(verify(block, crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey)).toBe(false);
    expect(verify(block.replace('a=rsa-sha256', 'a=rsa-sha1'))).toBe(false);
    expect(verify(block.replace('c=relaxed/relaxed', 'c=simple/simple'))).toBe(false);
    // Unsigned headers may come and go.
    expect(verify(`X-Spam-Score: 0.1\r\n${block}\r\nX-Forwarded-For: someone`)).toBe(true);
  });

  it("a verified signature proves its Message-ID's message; with a token naming another, nothing is proved", () => {
    const report = {
      kind: 'complaint' as const,
      feedbackType: 'abuse',
      recipient: null,
      originalMessageId: '<dlv_01JD7Q8W3K2M4N5P6R7S8T9V0W@acme.test>',
      originalSenders: [],
      originalHeaders: signed(),
      subject: '',
    };
    const own = { kind: 'd' as const, id: 'dlv_01JD7Q8W3K2M4N5P6R7S8T9V0W', domain: 'acme.test' };
    expect(provenTarget(claimsOf(Buffer.alloc(32), report, [own]))).toMatchObject({ id: own.id, purpose: 'bounce' });
    expect(provenTarget(claimsOf(Buffer.alloc(32), report, []))).toBeNull();
    const other = { ...own, id: 'dlv_01JD7Q8W3K2M4N5P6R7S8T9V0X' };
    expect(provenTarget(claimsOf(Buffer.alloc(32), report, [other]))).toBeNull();
  });
});
