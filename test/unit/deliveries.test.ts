import { describe, expect, it } from 'vitest';
import {
  DELIVERY_OPERATIONS,
  DELIVERY_STATUSES,
  OPEN_STATUSES,
  nextStatus,
  statusesFor,
} from '../../src/sending/deliveries/deliveries.state.js';
import { assembleContent } from '../../src/sending/deliveries/message.assembly.js';
import { DEFAULT_SETTINGS } from '../../src/access/workspaces/workspaces.schemas.js';
import { classifySendError, isRelayFailure } from '../../src/mail/outcome.js';

/** Every delivery status against every operation, spelled out independently of the source. */
const _ = null;
const expected: Record<string, Record<string, string | null>> = {
  //          claim       sent    retry     defer     fail      bounce     skip       cancel      hold      release   lateBounce lateReject
  QUEUED: {
    claim: 'SENDING',
    sent: _,
    retry: _,
    defer: _,
    fail: _,
    bounce: _,
    skip: _,
    cancel: 'CANCELED',
    hold: 'PAUSED',
    release: _,
    lateBounce: _,
    lateReject: _,
  },
  SENDING: {
    claim: 'SENDING',
    sent: 'SENT',
    retry: 'QUEUED',
    defer: 'QUEUED',
    fail: 'FAILED',
    bounce: 'BOUNCED',
    skip: 'SKIPPED',
    cancel: 'CANCELED',
    hold: 'PAUSED',
    release: _,
    lateBounce: _,
    lateReject: _,
  },
  PAUSED: {
    claim: _,
    sent: _,
    retry: _,
    defer: _,
    fail: _,
    bounce: _,
    skip: _,
    cancel: 'CANCELED',
    hold: _,
    release: 'QUEUED',
    lateBounce: _,
    lateReject: _,
  },
  SENT: {
    claim: _,
    sent: _,
    retry: _,
    defer: _,
    fail: _,
    bounce: _,
    skip: _,
    cancel: _,
    hold: _,
    release: _,
    lateBounce: 'BOUNCED',
    lateReject: 'FAILED',
  },
  FAILED: {
    claim: _,
    sent: _,
    retry: _,
    defer: _,
    fail: _,
    bounce: _,
    skip: _,
    cancel: _,
    hold: _,
    release: _,
    lateBounce: _,
    lateReject: _,
  },
  BOUNCED: {
    claim: _,
    sent: _,
    retry: _,
    defer: _,
    fail: _,
    bounce: _,
    skip: _,
    cancel: _,
    hold: _,
    release: _,
    lateBounce: _,
    lateReject: _,
  },
  CANCELED: {
    claim: _,
    sent: _,
    retry: _,
    defer: _,
    fail: _,
    bounce: _,
    skip: _,
    cancel: _,
    hold: _,
    release: _,
    lateBounce: _,
    lateReject: _,
  },
  SKIPPED: {
    claim: _,
    sent: _,
    retry: _,
    defer: _,
    fail: _,
    bounce: _,
    skip: _,
    cancel: _,
    hold: _,
    release: _,
    lateBounce: _,
    lateReject: _,
  },
};

describe('delivery state machine', () => {
  for (const status of DELIVERY_STATUSES) {
    for (const op of DELIVERY_OPERATIONS) {
      it(`${status} × ${op} → ${expected[status]![op] ?? 'not allowed'}`, () => {
        expect(nextStatus(status, op)).toBe(expected[status]![op]);
        expect(statusesFor(op).includes(status)).toBe(expected[status]![op] !== null);
      });
    }
  }
  it('open statuses are exactly the ones with work left', () => {
    expect([...OPEN_STATUSES].sort()).toEqual(['PAUSED', 'QUEUED', 'SENDING']);
  });
});

describe('classifySendError (the bounce table applied to a reply at send time)', () => {
  it.each([
    [{ responseCode: 421, response: '421 4.7.0 Try again later' }, 'temporary'],
    [{ responseCode: 450, response: '450 4.2.1 Mailbox busy' }, 'temporary'],
    [{ responseCode: 552, response: '552 5.2.2 Mailbox full' }, 'temporary'],
    [{ responseCode: 550, response: '550 5.1.1 <x@example.com>: Recipient address rejected: User unknown' }, 'hard'],
    [{ responseCode: 553, response: '553 5.1.3 Bad recipient address syntax' }, 'hard'],
    [{ responseCode: 550, response: '550 No such user here' }, 'hard'],
    [{ responseCode: 554, response: '554 5.7.1 Message rejected as spam' }, 'blocked'],
    [{ responseCode: 552, response: '552 5.3.4 Message too big' }, 'failed'],
    [{ responseCode: 550, response: '550 Rejected' }, 'failed'],
    [{ code: 'ECONNECTION', message: 'Connection closed' }, 'temporary'],
    [{ code: 'ETIMEDOUT', message: 'Timeout' }, 'temporary'],
    [new Error('something odd'), 'temporary'],
  ])('%j → %s', (err, kind) => {
    expect(classifySendError(err).kind).toBe(kind);
  });

  it.each([
    // The throttles of the big providers: "try later" for the destination, no soft bounce of the recipient.
    [{ code: 'ECONNECTION', command: 'CONN', responseCode: 421, response: '421 4.7.0 Try again later' }, true, true],
    [
      {
        code: 'EENVELOPE',
        command: 'RCPT TO',
        responseCode: 421,
        response: '421-4.7.28 Our system has detected an unusual rate of unsolicited mail',
      },
      true,
      true,
    ],
    [
      {
        code: 'EENVELOPE',
        command: 'RCPT TO',
        responseCode: 421,
        response:
          '421 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily deferred due to unexpected volume or user complaints',
      },
      true,
      true,
    ],
    [
      {
        code: 'EMESSAGE',
        command: 'DATA',
        responseCode: 451,
        response: '451 4.7.500 Server busy. Please try again later from [192.0.2.1]',
      },
      true,
      true,
    ],
    [
      {
        code: 'EENVELOPE',
        command: 'RCPT TO',
        responseCode: 450,
        response: '450 4.7.1 Greylisted, please try again later',
      },
      true,
      true,
    ],
    // Temporary, but about the mailbox: retried, a soft bounce when attempts run out.
    [
      {
        code: 'EENVELOPE',
        command: 'RCPT TO',
        responseCode: 450,
        response:
          '450 4.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages',
      },
      true,
      false,
    ],
    [{ code: 'EENVELOPE', command: 'RCPT TO', responseCode: 452, response: '452 4.2.2 Mailbox full' }, true, false],
    [
      {
        code: 'EENVELOPE',
        command: 'RCPT TO',
        responseCode: 451,
        response: '451 4.7.1 Sender address rejected: Access denied',
      },
      true,
      false,
    ],
    // The relay itself: no reply about the message (another relay may take it).
    [
      { code: 'EPROTOCOL', command: 'CONN', responseCode: 421, response: '421 4.3.2 Service not available, closing' },
      false,
      false,
    ],
    [{ code: 'ESOCKET', command: 'CONN', originalCode: 'ECONNREFUSED', message: 'connect ECONNREFUSED' }, false, false],
    [
      { code: 'EAUTH', command: 'AUTH PLAIN', responseCode: 535, response: '535 5.7.8 Authentication failed' },
      false,
      false,
    ],
  ])('%j → reply %s, throttle %s', (err, reply, throttle) => {
    const result = classifySendError(err);
    expect(result.kind).toBe('temporary');
    expect(result).toMatchObject({ reply, throttle });
    expect(isRelayFailure(err)).toBe(!reply);
  });
});

describe('composing', () => {
  const ctx = (settings: Partial<typeof DEFAULT_SETTINGS> = {}) => ({
    unsubscribeUrl: 'https://u.test/unsubscribe/tok1',
    workspace: { name: 'Acme', settings: { ...DEFAULT_SETTINGS, ...settings } },
  });
  const content = (html: string | null, extra: Partial<{ text: string | null; previewText: string | null }> = {}) => ({
    subject: 'Hi',
    html,
    text: null,
    previewText: null,
    ...extra,
  });

  it('wraps a fragment in a whole document; keeps a whole document, giving it the locale and the subject it lacks', () => {
    const a = assembleContent(content('<p>x</p>'), ctx({ locale: 'de' }));
    expect(a.html).toMatch(/^<!doctype html>\n<html lang="de">[\s\S]*<title>Hi<\/title>[\s\S]*<body>\n<p>x<\/p>/);
    // A rendered block document has no lang and an empty title (docs/email-documents-api.md): the send fills both.
    expect(assembleContent(content('<html><body><p>x</p></body></html>'), ctx({ locale: 'de' })).html).toMatch(
      /^<html lang="de"><body><p>x<\/p>/,
    );
    expect(
      assembleContent(content('<html class="a"><head><title></title></head><body><p>x</p></body></html>'), ctx()).html,
    ).toMatch(/^<html lang="en" class="a"><head><title>Hi<\/title><\/head><body><p>x<\/p>/);
    // What the author set is kept.
    expect(
      assembleContent(content('<html lang="fr"><head><title>Mine</title></head><body>x</body></html>'), ctx()).html,
    ).toMatch(/^<html lang="fr"><head><title>Mine<\/title>/);
  });

  it('puts the preheader first in the body, escaped, padded, without tiny fonts', () => {
    const html = assembleContent(content('<html><body><p>x</p></body></html>', { previewText: 'Hi <b>' }), ctx()).html!;
    expect(html).toMatch(/<body><div style="display:none[^"]*">Hi &lt;b&gt;(&zwnj;&nbsp;){40}<\/div><p>x<\/p>/);
    expect(html).not.toContain('font-size:1px');
  });

  it("adds the footer unless the rendered HTML links the recipient's unsubscribe URL; a comment naming unsubscribe_url does not count", () => {
    expect(assembleContent(content('<p>x</p>'), ctx()).html).toContain(
      'You receive this email because you subscribed to Acme. <a href="https://u.test/unsubscribe/tok1">Unsubscribe</a>',
    );
    expect(
      assembleContent(content('<p>x <a href="https://u.test/unsubscribe/tok1">bye</a></p>'), ctx()).html,
    ).not.toContain('>Unsubscribe</a>');
    expect(assembleContent(content('<!-- unsubscribe_url --><p>x</p>'), ctx()).html).toContain('>Unsubscribe</a>');
    expect(assembleContent(content('<p>x</p>'), ctx({ locale: 'fr' })).html).toContain('>Se désabonner</a>');
  });

  it('shows the postal address in both parts, once', () => {
    const a = assembleContent(content('<p>x</p>'), ctx({ postalAddress: 'Acme Inc.\n1 Main St, Springfield' }));
    expect(a.html).toContain('Acme Inc.<br>1 Main St, Springfield');
    expect(a.text.match(/1 Main St/g)).toHaveLength(1);
  });

  it('the text part: from the HTML with image alt text, the unsubscribe link once, after a "-- " separator', () => {
    const a = assembleContent(
      content(
        '<h1>Title</h1><p>Hello <b>Ann</b>, see <a href="https://x.test/a">our site</a>.</p><img src="https://x.test/i.png" alt="Our logo">',
      ),
      ctx(),
    );
    expect(a.text).toContain('TITLE');
    expect(a.text).toContain('Hello Ann');
    expect(a.text).toContain('our site [https://x.test/a]');
    expect(a.text).toContain('Our logo');
    expect(a.text).not.toContain('i.png');
    expect(a.text.match(/https:\/\/u\.test\/unsubscribe\/tok1/g)).toHaveLength(1);
    expect(a.text).toContain(
      '\n-- \nYou receive this email because you subscribed to Acme.\nUnsubscribe: https://u.test/unsubscribe/tok1\n',
    );
    expect(assembleContent(content(null, { text: 'Hello, bye at https://u.test/unsubscribe/tok1' }), ctx()).text).toBe(
      'Hello, bye at https://u.test/unsubscribe/tok1\n',
    );
  });
});
