import crypto from 'node:crypto';
import fc from 'fast-check';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { dkimSignature, dkimSignatureAsync } from '../../src/mail/dkim.js';
import { composeMime } from '../../src/mail/mime.js';
import { buildRaw, buildRawAsync } from '../../src/mail/transport.js';
import { builtInConfirmation, confirmationMessage } from '../../src/forms/submissions/confirmations.sender.js';
import { LOCALES } from '../../src/access/workspaces/workspaces.schemas.js';

/**
 * DKIM signatures of confirmation emails (mail/dkim.ts), verified by mailauth as a receiver would. A signature
 * used to fail about once in 600 messages (a CI flake of deliverability.test.ts): mailauth read the clock for
 * t= once for the header it hashed and again for the header it wrote, and a signing that straddled a half
 * second (Math.round) wrote another t= than it signed. Here the clock is moved on every read, so every
 * signing straddles one: deterministic, whatever the tokens and names.
 */
const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'der' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});
const DOMAIN = 'acme-news.example';
const SELECTOR = 'fc20261124';
const RECORD = `v=DKIM1; k=rsa; p=${publicKey.toString('base64')}`;

/** Date.now from `start`, moved on by `step` ms at every read; returns when the clock ends. */
function movingClock(start: number, step: number): () => number {
  let t = start;
  const spy = vi.spyOn(Date, 'now').mockImplementation(() => (t += step) - step);
  return () => {
    spy.mockRestore();
    return t;
  };
}

async function verify(raw: Buffer, curTime: Date) {
  const { results } = await dkimVerify(raw, {
    curTime,
    resolver: async (name: string) => (name === `${SELECTOR}._domainkey.${DOMAIN}` ? [[RECORD]] : []),
  });
  return results[0]?.status;
}

async function signedConfirmation(o: {
  token: string;
  firstName: string | null;
  heading: string;
  locale: (typeof LOCALES)[number];
}): Promise<Buffer> {
  return buildRaw(
    confirmationMessage({
      source: builtInConfirmation(o.locale),
      locale: o.locale,
      contact: { email: 'grace@example.com', firstName: o.firstName, lastName: null, properties: {} },
      form: { id: 'form_1', name: 'Newsletter', heading: o.heading },
      workspace: { name: 'Acme', postal_address: null },
      confirmUrl: `https://mail.acme-news.example/confirm/${o.token}`,
      from: { name: o.heading.replace(/[\r\n]+/g, ' '), address: `no-reply@${DOMAIN}`, domain: DOMAIN },
      returnPath: `bounces+c1@bounces.${DOMAIN}`,
      messageId: `<cnf_${o.token.slice(0, 12)}.0@${DOMAIN}>`,
      key: { domain: DOMAIN, selector: SELECTOR, privateKey },
    }),
  );
}

describe('DKIM signatures of confirmation emails', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('are the same when the RSA signature is computed in the thread pool (buildRawAsync, the send threads)', async () => {
    vi.spyOn(Date, 'now').mockReturnValue(Date.UTC(2026, 10, 28, 9, 30));
    const { headers, body } = composeMime(
      confirmationMessage({
        source: builtInConfirmation('en'),
        locale: 'en',
        contact: { email: 'grace@example.com', firstName: 'Grace', lastName: null, properties: {} },
        form: { id: 'form_1', name: 'Newsletter', heading: 'Acme' },
        workspace: { name: 'Acme', postal_address: null },
        confirmUrl: 'https://mail.acme-news.example/confirm/t1',
        from: { name: 'Acme', address: `no-reply@${DOMAIN}`, domain: DOMAIN },
        returnPath: `bounces+c1@bounces.${DOMAIN}`,
        messageId: `<cnf_t1.0@${DOMAIN}>`,
        key: { domain: DOMAIN, selector: SELECTOR, privateKey },
      }),
      new Date(),
    );
    const key = { domainName: DOMAIN, keySelector: SELECTOR, privateKey: crypto.createPrivateKey(privateKey) };
    // RSA PKCS#1 v1.5 signatures are deterministic: the same headers, body and clock give the same signature either way.
    expect(await dkimSignatureAsync(headers, body, key)).toBe(dkimSignature(headers, body, key));
    // And a whole message made so verifies.
    const raw = await buildRawAsync(
      confirmationMessage({
        source: builtInConfirmation('de'),
        locale: 'de',
        contact: { email: 'grace@example.com', firstName: 'Grace', lastName: null, properties: {} },
        form: { id: 'form_1', name: 'Newsletter', heading: 'Acme' },
        workspace: { name: 'Acme', postal_address: null },
        confirmUrl: 'https://mail.acme-news.example/confirm/t2',
        from: { name: 'Acme', address: `no-reply@${DOMAIN}`, domain: DOMAIN },
        returnPath: `bounces+c1@bounces.${DOMAIN}`,
        messageId: `<cnf_t2.0@${DOMAIN}>`,
        key: { domain: DOMAIN, selector: SELECTOR, privateKey },
      }),
    );
    expect(await verify(raw, new Date(Date.UTC(2026, 10, 28, 9, 31)))).toMatchObject({ result: 'pass' });
  });

  it('verify when the signing straddles a half second (t= is read from the clock once)', async () => {
    const start = Math.floor(Date.now() / 1000) * 1000 - 60_000 + 400; // x.400 s: a read 300 ms later rounds up
    const stop = movingClock(start, 300);
    const raw = await signedConfirmation({
      token: 'hdYcveKLVSjM2DkUsQ2Taep_bef2NtCj',
      firstName: 'Grace',
      heading: 'Acme',
      locale: 'en',
    });
    const end = stop();
    expect(await verify(raw, new Date(end + 1000))).toMatchObject({ result: 'pass' });
  });

  it('verify for any token, name, heading and locale, whenever they are signed', async () => {
    const token = fc.uint8Array({ minLength: 24, maxLength: 24 }).map((b) => Buffer.from(b).toString('base64url'));
    const text = fc.oneof(
      fc.string({ maxLength: 80 }),
      fc.string({ unit: 'grapheme', maxLength: 80 }),
      fc.constantFrom('.', '.hidden', ' trailing ', 'x'.repeat(200), 'Ünïcödé Gmbh & Co. KG'),
    );
    const now = Math.floor(Date.now() / 1000) * 1000 - 60_000;
    await fc.assert(
      fc.asyncProperty(
        fc.record({ token, firstName: fc.option(text), heading: text, locale: fc.constantFrom(...LOCALES) }),
        fc.integer({ min: 0, max: 999 }),
        fc.integer({ min: 0, max: 1_500 }),
        async (o, offset, step) => {
          const stop = movingClock(now + offset, step);
          let raw: Buffer;
          try {
            raw = await signedConfirmation(o);
          } finally {
            stop();
          }
          expect(await verify(raw, new Date(now + 3_600_000))).toMatchObject({ result: 'pass' });
        },
      ),
      { numRuns: 150 },
    );
  });
});
