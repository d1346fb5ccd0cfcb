import crypto from 'node:crypto';
import fc from 'fast-check';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { dkimSignature, dkimSignatureAsync } from '../../src/mail/dkim.js';
import { composeMime } from '../../src/mail/mime.js';
import { buildRaw, buildRawAsync } from '../../src/mail/transport.js';
import { builtInConfirmation, confirmationMessage } from '../../src/forms/submissions/confirmations.sender.js';
import { LOCALES } from '../../src/access/workspaces/workspaces.schemas.js';
import { loadConfig } from '../../src/config.js';
import { sesEvent } from '../../src/sending/bounces/bounces.providers.js';
import { detectRelayProfile, envelopeDns, forRelay, relayProfile, sesRegionOf } from '../../src/mail/relay-profiles.js';

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

describe('oversigning and relay profiles', () => {
  const curTime = new Date();
  const message = (profile: Parameters<typeof relayProfile>[0]) =>
    forRelay(
      {
        from: { name: 'Acme', address: `news@${DOMAIN}` },
        to: 'ada@example.com',
        replyTo: null,
        returnPath: `bounces+d1@bounces.${DOMAIN}`,
        subject: 'November at Acme',
        html: '<p>Hello <b>Ada</b></p>',
        text: 'Hello Ada',
        messageId: `<dlv_1@${DOMAIN}>`,
        headers: { 'List-Unsubscribe': '<https://mail.acme-news.example/unsubscribe/t>' },
        dkim: { domainName: DOMAIN, keySelector: SELECTOR, privateKey },
      },
      relayProfile(profile),
    );
  const prepend = (raw: Buffer, lines: string) => Buffer.concat([Buffer.from(lines), raw]);
  /** The message with one header's value replaced, as a relay that rewrites it would. */
  const rewrite = (raw: Buffer, name: string, value: string) =>
    Buffer.from(raw.toString('utf8').replace(new RegExp(`^${name}: .*$`, 'mi'), `${name}: ${value}`));

  it('a header that changes how the message displays or parses, added in front, breaks the signature', async () => {
    const raw = buildRaw(message('smtp'));
    expect((await verify(raw, curTime))?.result).toBe('pass');
    // A second Content-Type makes a client read the body as something else; Cc and Sender change what it shows.
    for (const added of [
      'Content-Type: text/plain; charset=us-ascii\r\n',
      'Cc: everyone@example.com\r\n',
      'Sender: Your Bank <alerts@bank.example>\r\n',
      'In-Reply-To: <order-42@shop.example>\r\n',
      'Content-Transfer-Encoding: base64\r\n',
      'MIME-Version: 1.0\r\n',
    ])
      expect((await verify(prepend(raw, added), curTime))?.result, added).not.toBe('pass');
    // A trace header a relay adds does not.
    expect(
      (await verify(prepend(raw, 'Received: from relay.example.net; Tue, 24 Nov 2026\r\n'), curTime))?.result,
    ).toBe('pass');
  });

  it('the SES profile leaves Message-ID and Date unsigned: SES rewriting them keeps DKIM passing', async () => {
    const ses = buildRaw(message('ses'));
    const rewritten = rewrite(
      rewrite(ses, 'Message-ID', '<0100018c2b3d4e5f-1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d-000000@email.amazonses.com>'),
      'Date',
      'Tue, 24 Nov 2026 09:00:01 +0000',
    );
    expect((await verify(rewritten, curTime))?.result).toBe('pass');
    const dkim = /^DKIM-Signature:[\s\S]*?(?=\r\n\S)/m.exec(ses.toString())![0];
    expect(dkim).not.toMatch(/message-id|[:=\s]date[:;]/i);
    // With the generic profile the same rewrite breaks the signature: that is why the profile exists.
    const generic = buildRaw(message('smtp'));
    expect((await verify(rewrite(generic, 'Message-ID', '<other@email.amazonses.com>'), curTime))?.result).not.toBe(
      'pass',
    );
    // The SES profile still oversigns the rest.
    expect((await verify(prepend(ses, 'Subject: You won\r\n'), curTime))?.result).not.toBe('pass');
  });

  it('SendGrid and Mailgun get their own tracking turned off (it would rewrite the signed body)', () => {
    expect(buildRaw(message('sendgrid')).toString()).toMatch(/^X-SMTPAPI:\s+\{"filters":\{"clicktrack"/m);
    expect(buildRaw(message('mailgun')).toString()).toMatch(/^X-Mailgun-Track: no$/m);
    expect(buildRaw(message('smtp')).toString()).not.toMatch(/X-SMTPAPI|X-Mailgun/);
  });
});

describe('relay profiles from the configuration', () => {
  it('are recognised from the relay host, or set by RELAY_PROFILE', () => {
    expect(detectRelayProfile(['email-smtp.eu-west-1.amazonaws.com'])).toBe('ses');
    expect(sesRegionOf(['email-smtp.eu-west-1.amazonaws.com'])).toBe('eu-west-1');
    expect(detectRelayProfile(['smtp.postmarkapp.com'])).toBe('postmark');
    expect(detectRelayProfile(['smtp.sendgrid.net'])).toBe('sendgrid');
    expect(detectRelayProfile(['smtp.eu.mailgun.org'])).toBe('mailgun');
    expect(detectRelayProfile(['mail.example.net'])).toBe('smtp');
    expect(loadConfig({ SMTP_URL: 'smtp://u:p@email-smtp.eu-west-1.amazonaws.com:587' })).toMatchObject({
      relayProfile: 'ses',
      sesRegion: 'eu-west-1',
    });
    expect(loadConfig({ SMTP_URL: 'smtp://relay.example.net', RELAY_PROFILE: 'Mailgun' }).relayProfile).toBe('mailgun');
    expect(() => loadConfig({ RELAY_PROFILE: 'sparkpost' })).toThrow(/RELAY_PROFILE must be one of/);
  });

  it('advise the records of the envelope sender domain each relay uses', () => {
    const s = { bounceMxHost: 'in.formcast.example', sendingSpf: 'ip4:203.0.113.7', sesRegion: 'eu-west-1' };
    expect(envelopeDns('example.com', { ...s, profile: 'smtp' }).records).toEqual([
      { type: 'MX', name: 'bounces.example.com', value: 'in.formcast.example', priority: 10 },
      { type: 'TXT', name: 'bounces.example.com', value: 'v=spf1 ip4:203.0.113.7 ~all' },
    ]);
    expect(envelopeDns('example.com', { ...s, profile: 'ses' }).records).toEqual([
      { type: 'MX', name: 'bounces.example.com', value: 'feedback-smtp.eu-west-1.amazonses.com', priority: 10 },
      { type: 'TXT', name: 'bounces.example.com', value: 'v=spf1 include:amazonses.com ~all' },
    ]);
    expect(envelopeDns('example.com', { ...s, profile: 'postmark' }).records).toEqual([
      { type: 'CNAME', name: 'pm-bounces.example.com', value: 'pm.mtasv.net' },
    ]);
    expect(envelopeDns('example.com', { ...s, profile: 'mailgun' }).domain).toBe('example.com');
    expect(envelopeDns('example.com', { ...s, profile: 'sendgrid' })).toMatchObject({ domain: null, records: [] });
  });
});

describe('SES notifications', () => {
  const bounce = (mail: Record<string, unknown>) =>
    JSON.stringify({
      notificationType: 'Bounce',
      bounce: {
        bounceType: 'Permanent',
        bounceSubType: 'General',
        bouncedRecipients: [{ emailAddress: 'ada@example.com', status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1' }],
      },
      mail: { messageId: '0102018f1a2b3c4d-000000', destination: ['ada@example.com'], ...mail },
    });
  const id = 'dlv_01JDB3V6Z8B0D2F4H6K8M0P2R4';

  it('are matched by the formcast-delivery tag of a configuration set, or by the original headers', () => {
    expect(sesEvent(bounce({ tags: { 'formcast-delivery': [id] } }))).toMatchObject({ kind: 'bounce', deliveryId: id });
    expect(sesEvent(bounce({ commonHeaders: { messageId: `<${id}@acme.example>` } }))).toMatchObject({
      kind: 'bounce',
      deliveryId: id,
    });
  });

  it('without either, are not silently dropped: the reason names the SES setting to turn on', () => {
    expect(sesEvent(bounce({}))).toMatchObject({
      kind: 'ignored',
      warn: true,
      why: expect.stringContaining('Include original headers'),
    });
  });
});
