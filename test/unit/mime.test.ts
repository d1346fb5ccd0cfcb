import crypto from 'node:crypto';
import fc from 'fast-check';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { simpleParser, type AddressObject } from 'mailparser';
import MailComposer from 'nodemailer/lib/mail-composer';
import { describe, expect, it } from 'vitest';
import type { OutgoingMessage } from '../../src/mail/compose.js';
import { dkimSigningInput, relaxedBody, relaxedHeader } from '../../src/mail/dkim.js';
import { composeMime, headerName, quotedPrintable } from '../../src/mail/mime.js';
import { buildRaw } from '../../src/mail/transport.js';

/**
 * mail/mime.ts composes every message in one pass with nodemailer's encoders, where nodemailer's MailComposer
 * streamed a tree of MIME nodes. The reference is MailComposer itself: for any names, subject, headers, text and HTML,
 * mailparser (a receiver) reads the same message from both. And every message is DKIM-signed (mail/dkim.ts's own
 * relaxed canonicalization) so that mailauth verifies it.
 */
const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'der' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});
const DOMAIN = 'news.example';
const SELECTOR = 'fc1';
const RECORD = `v=DKIM1; k=rsa; p=${publicKey.toString('base64')}`;

/** MailComposer's message, as transport.ts built it before. */
function reference(m: OutgoingMessage, date: Date): Promise<Buffer> {
  return new MailComposer({
    from: { name: m.from.name ?? '', address: m.from.address },
    to: { name: '', address: m.to },
    ...(m.replyTo ? { replyTo: { name: m.replyTo.name ?? '', address: m.replyTo.address } } : {}),
    subject: m.subject,
    ...(m.html !== null ? { html: m.html } : {}),
    text: m.text,
    messageId: m.messageId,
    date,
    headers: Object.fromEntries(
      Object.entries(m.headers).map(([k, v]) => [k, { prepared: true, foldLines: true, value: v }]),
    ),
  })
    .compile()
    .build();
}

/** What a reader sees of a message: its addresses, subject, ids, our headers, text and HTML (line ends as LF). */
async function read(raw: Buffer) {
  const p = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true });
  const addr = (a: AddressObject | AddressObject[] | undefined) =>
    [a ?? []]
      .flat()
      .flatMap((x) => x.value)
      .map((v) => ({ name: v.name, address: v.address }));
  // An empty part and no part read alike (MailComposer leaves an empty text part out).
  const lf = (s: string | false | undefined) =>
    (typeof s === 'string' ? s.replace(/\r\n?/g, '\n').replace(/\n+$/, '') : '') || undefined;
  return {
    from: addr(p.from),
    to: addr(p.to),
    replyTo: addr(p.replyTo),
    subject: p.subject,
    messageId: p.messageId,
    date: p.date?.toISOString(),
    list: p.headers.get('list'),
    feedback: p.headers.get('feedback-id'),
    precedence: p.headers.get('precedence'),
    text: lf(p.text),
    html: lf(p.html),
  };
}

const line = fc.oneof(
  fc.string({ maxLength: 120 }),
  fc.string({ unit: 'grapheme', maxLength: 120 }),
  fc.constantFrom(
    '',
    ' ',
    'trailing  \t',
    '=',
    '=3D',
    '--',
    'x'.repeat(300),
    `<td style="padding:0">${'y'.repeat(990)}`,
    'Ünïcödé <b>€</b> 😀 = '.repeat(60),
    'Ünïcödé Gmbh & Co. KG',
    'Привет, мир',
    '日本語のテキスト',
    '<a href="https://x.test/?a=1&b=2">link</a>',
    '.\r\n.',
    'tab\there',
  ),
);
const body = fc
  .array(line, { maxLength: 8 })
  .chain((lines) => fc.constantFrom('\n', '\r\n', '\r').map((nl) => lines.join(nl)));
const name = fc.oneof(
  fc.constant(null),
  fc.string({ maxLength: 60 }).map((s) => s.replace(/[\r\n]/g, ' ')),
  fc.constantFrom('Acme', 'Acme, Inc.', 'Jöns "J" Ärmel', 'Café ☕', 'a\\b'),
);
const message = fc.record({
  fromName: name,
  replyName: name,
  hasReply: fc.boolean(),
  subject: fc
    .oneof(line, fc.constantFrom('News for Grace: what changed', 'Émile, ton résumé de la semaine ✨'))
    .map((s) => s.replace(/[\r\n]+/g, ' ')),
  text: body,
  html: fc.option(body),
  listName: fc.constantFrom('"Acme"', '=?UTF-8?B?w4ljb2xl?='),
});

type Generated = typeof message extends fc.Arbitrary<infer T> ? T : never;

const SIMPLE: Generated = {
  fromName: 'Acme',
  replyName: null,
  hasReply: false,
  subject: 'Hello',
  text: 'Hi',
  html: '<p>Hi</p>',
  listName: '"Acme"',
};

function outgoing(o: Generated): OutgoingMessage {
  return {
    from: { name: o.fromName, address: `news@${DOMAIN}` },
    to: 'grace.hopper@example.com',
    replyTo: o.hasReply ? { name: o.replyName, address: `reply@${DOMAIN}` } : null,
    returnPath: `bounces+x@bounces.${DOMAIN}`,
    subject: o.subject,
    html: o.html,
    text: o.text,
    messageId: `<dlv_01jbroadcast@${DOMAIN}>`,
    headers: {
      'List-Unsubscribe': `<https://mail.${DOMAIN}/unsubscribe/${'t'.repeat(60)}>, <mailto:unsubscribe+${'d'.repeat(50)}@bounces.${DOMAIN}?subject=unsubscribe>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      'List-Id': `${o.listName} <all.ws-01.${DOMAIN}>`,
      'Feedback-ID': 'bc_01:ws_01:formcast',
      Precedence: 'bulk',
    },
    dkim: { domainName: DOMAIN, keySelector: SELECTOR, privateKey: privateKey as string },
  };
}

describe('mime.ts composes what MailComposer composed', () => {
  it('a reader reads the same message from both, for any names, subject, text and HTML', async () => {
    await fc.assert(
      fc.asyncProperty(message, async (o) => {
        const m = { ...outgoing(o), dkim: null };
        const date = new Date('2026-11-25T07:00:00Z');
        const { headers, body: b } = composeMime(m, date);
        const ours = Buffer.from(`${headers.map((h) => h.line).join('\r\n')}\r\n\r\n${b}`);
        // Every line ends with CRLF, none is longer than RFC 5322's 998, and the body is 7-bit.
        expect(ours.toString('latin1')).not.toMatch(/(?<!\r)\n|\r(?!\n)/);
        expect(
          ours
            .toString('latin1')
            .split('\r\n')
            .every((l) => l.length <= 998),
        ).toBe(true);
        expect(Buffer.byteLength(b)).toBe(b.length);
        expect(await read(ours)).toEqual(await read(await reference(m, date)));
      }),
      { numRuns: 200 },
    );
  });

  it('signs what mailauth verifies, for any of those messages', async () => {
    await fc.assert(
      fc.asyncProperty(message, async (o) => {
        const raw = buildRaw(outgoing(o));
        const { results } = await dkimVerify(raw, {
          resolver: async (n: string) => (n === `${SELECTOR}._domainkey.${DOMAIN}` ? [[RECORD]] : []),
        });
        expect(results[0]?.status).toMatchObject({ result: 'pass' });
      }),
      { numRuns: 100 },
    );
  });

  it('says a body is plain (relaxed canonicalization keeps its lines) only when it is, and signs it the same either way', () => {
    const key = { domainName: DOMAIN, keySelector: SELECTOR };
    const bodyHash = (unsigned: string) => /bh=([^;]+);/.exec(unsigned)![1];
    let plain = 0;
    fc.assert(
      fc.property(message, fc.boolean(), (o, attach) => {
        const m = {
          ...outgoing(o),
          dkim: null,
          ...(attach
            ? { attachments: [{ filename: 'a  b\t.txt', contentType: 'text/plain', content: Buffer.from('x') }] }
            : {}),
        };
        const { headers, body, plainWhitespace } = composeMime(m, new Date());
        if (plainWhitespace) {
          plain++;
          const lines = body.replace(/(\r\n)+$/, '');
          expect(relaxedBody(body)).toBe(lines ? `${lines}\r\n` : '');
        }
        const told = dkimSigningInput(headers, Buffer.from(body, 'latin1'), key, plainWhitespace);
        expect(bodyHash(told.unsigned)).toBe(bodyHash(dkimSigningInput(headers, body, key).unsigned));
      }),
      { numRuns: 300 },
    );
    // (Both kinds were generated.)
    expect(plain).toBeGreaterThan(10);
    expect(plain).toBeLessThan(290);
  });

  it('signs a body that is not ASCII and not plain (a part header from a raw SMTP submission) so that mailauth verifies it', async () => {
    const resolver = async (n: string) => (n === `${SELECTOR}._domainkey.${DOMAIN}` ? [[RECORD]] : []);
    const raw = buildRaw({
      ...outgoing({ ...SIMPLE, text: 'Hi  there,\tfriend ' }),
      attachments: [{ filename: 'a.bin', contentType: 'application/x-ã©tude', content: Buffer.from('x') }],
    });
    expect((await dkimVerify(raw, { resolver })).results[0]?.status).toMatchObject({ result: 'pass' });
  });

  it('a header added after signing (a second Subject, a Reply-To) breaks the signature: oversigning', async () => {
    const resolver = async (n: string) => (n === `${SELECTOR}._domainkey.${DOMAIN}` ? [[RECORD]] : []);
    const raw = buildRaw(
      outgoing({
        fromName: 'Acme',
        replyName: null,
        hasReply: false,
        subject: 'Hello',
        text: 'Hi',
        html: '<p>Hi</p>',
        listName: '"Acme"',
      }),
    );
    expect((await dkimVerify(raw, { resolver })).results[0]?.status).toMatchObject({ result: 'pass' });
    for (const added of ['Subject: Urgent: pay now\r\n', 'Reply-To: thief@evil.example\r\n']) {
      const forged = Buffer.concat([Buffer.from(added), raw]);
      expect((await dkimVerify(forged, { resolver })).results[0]?.status).toMatchObject({ result: 'fail' });
    }
  });

  it("writes field names as nodemailer did, except Postmark's metadata keys, whose case Postmark returns as written", () => {
    expect(
      [
        'List-Id',
        'list-unsubscribe-post',
        'Feedback-ID',
        'mime-version',
        'X-PM-Metadata-deliveryId',
        'Bad Name:\r\n',
      ].map(headerName),
    ).toEqual([
      'List-ID',
      'List-Unsubscribe-Post',
      'Feedback-ID',
      'MIME-Version',
      'X-PM-Metadata-deliveryId',
      'Badname',
    ]);
  });

  it('canonicalizes as RFC 6376 §3.4.2 and §3.4.4 say', () => {
    expect(relaxedHeader('Subject:  Hello \t  world\r\n  again  ')).toBe('subject:Hello world again');
    expect(relaxedHeader('List-Id : "A"  <a.b>')).toBe('list-id:"A" <a.b>');
    expect(relaxedBody(' C \r\nD \t E\r\n\r\n\r\n')).toBe(' C\r\nD E\r\n');
    expect(relaxedBody('\r\n\r\n')).toBe('');
    expect(relaxedBody('')).toBe('');
    expect(relaxedBody('last line  ')).toBe('last line\r\n');
  });

  it('sends ASCII with lines of at most 998 octets as it is (7bit), anything else in quoted-printable of 76-character lines', () => {
    const part = (html: string) => {
      const { body } = composeMime({ ...outgoing(SIMPLE), html, dkim: null }, new Date());
      return body.split(/\r\n--/)[1]!;
    };
    const wide = `<table><tr><td style="padding:0">${'x'.repeat(900)}</td></tr></table>`;
    expect(part(wide)).toContain(`Content-Transfer-Encoding: 7bit\r\n\r\n${wide}\r\n`);
    for (const html of [`<p>${'x'.repeat(999)}</p>`, `<p>Grüße aus München, ${'schöne Grüße '.repeat(30)} 😀</p>`]) {
      const p = part(html);
      expect(p).toContain('Content-Transfer-Encoding: quoted-printable');
      const lines = p.split('\r\n\r\n')[1]!.split('\r\n');
      expect(lines.every((l) => l.length <= 76)).toBe(true);
      // A soft break never cuts an =XX, nor a character's bytes.
      expect(lines.some((l) => /=[0-9A-F]?=$|=[0-9A-F]$/.test(l))).toBe(false);
      expect(lines.some((l) => /^=[89AB][0-9A-F]/.test(l))).toBe(false);
    }
  });

  it('quoted-printable: what goes in comes out (a reader decodes it), whitespace before a line end encoded', () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 6 }), (lines) => {
        const text = `${lines.join('\r\n').replace(/\r(?!\n)|(?<!\r)\n/g, '\r\n')}\r\n`;
        const qp = quotedPrintable(text);
        expect(qp).toMatch(/^[\t\x20-\x7e\r\n]*$/);
        expect(qp.split('\r\n').every((l) => l.length <= 76 && !/[ \t]$/.test(l))).toBe(true);
        const decoded = Buffer.from(
          qp.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
          'latin1',
        ).toString('utf8');
        expect(decoded).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  it('relaxed body canonicalization: the same as the three rewrites of RFC 6376 §3.4.4, for any body', () => {
    const reference = (body: string) => {
      const b = body
        .replace(/[ \t]+(?=\r\n|$)/g, '')
        .replace(/[ \t]+/g, ' ')
        .replace(/(?:\r\n)+$/, '');
      return b.length ? `${b}\r\n` : '';
    };
    const piece = fc.constantFrom(' ', '  ', '\t', 'a', '\r\n', '<p>', ' \t ');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => {
        const body = pieces.join('');
        expect(relaxedBody(body)).toBe(reference(body));
      }),
      { numRuns: 2000 },
    );
  });
});
