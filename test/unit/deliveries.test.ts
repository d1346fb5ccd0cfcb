import { describe, expect, it } from 'vitest';
import { DELIVERY_OPERATIONS, DELIVERY_STATUSES, OPEN_STATUSES, nextStatus, statusesFor } from '../../src/deliveries/deliveries.state.js';
import { htmlToText, textWithUnsubscribe, withPreheader, withUnsubscribeFooter } from '../../src/mail/compose.js';
import { classifySendError } from '../../src/mail/outcome.js';

/** Every delivery status against every operation, spelled out independently of the source. */
const _ = null;
const expected: Record<string, Record<string, string | null>> = {
  //          claim       sent    retry     fail      bounce     skip       cancel      hold      release   lateBounce lateReject
  QUEUED: { claim: 'SENDING', sent: _, retry: _, fail: _, bounce: _, skip: _, cancel: 'CANCELED', hold: 'PAUSED', release: _, lateBounce: _, lateReject: _ },
  SENDING: { claim: 'SENDING', sent: 'SENT', retry: 'QUEUED', fail: 'FAILED', bounce: 'BOUNCED', skip: 'SKIPPED', cancel: 'CANCELED', hold: 'PAUSED', release: _, lateBounce: _, lateReject: _ },
  PAUSED: { claim: _, sent: _, retry: _, fail: _, bounce: _, skip: _, cancel: 'CANCELED', hold: _, release: 'QUEUED', lateBounce: _, lateReject: _ },
  SENT: { claim: _, sent: _, retry: _, fail: _, bounce: _, skip: _, cancel: _, hold: _, release: _, lateBounce: 'BOUNCED', lateReject: 'FAILED' },
  FAILED: { claim: _, sent: _, retry: _, fail: _, bounce: _, skip: _, cancel: _, hold: _, release: _, lateBounce: _, lateReject: _ },
  BOUNCED: { claim: _, sent: _, retry: _, fail: _, bounce: _, skip: _, cancel: _, hold: _, release: _, lateBounce: _, lateReject: _ },
  CANCELED: { claim: _, sent: _, retry: _, fail: _, bounce: _, skip: _, cancel: _, hold: _, release: _, lateBounce: _, lateReject: _ },
  SKIPPED: { claim: _, sent: _, retry: _, fail: _, bounce: _, skip: _, cancel: _, hold: _, release: _, lateBounce: _, lateReject: _ },
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
});

describe('composing', () => {
  it('puts the preheader first in the body, escaped', () => {
    expect(withPreheader('<html><body><p>x</p></body></html>', 'Hi <b>')).toMatch(/<body><div style="display:none[^"]*">Hi &lt;b&gt;<\/div><p>x<\/p>/);
    expect(withPreheader('<p>x</p>', 'Hi')).toMatch(/^<div style="display:none[^"]*">Hi<\/div><p>x<\/p>$/);
    expect(withPreheader('<p>x</p>', null)).toBe('<p>x</p>');
  });
  it('adds an unsubscribe footer only when the template has no unsubscribe_url', () => {
    expect(withUnsubscribeFooter('<body><p>x</p></body>', '<p>x</p>', 'https://u/1')).toMatch(/<a href="https:\/\/u\/1">Unsubscribe<\/a><\/p><\/body>$/);
    expect(withUnsubscribeFooter('<p>x <a href="https://u/1">bye</a></p>', '<p>x <a href="{{ unsubscribe_url }}">bye</a></p>', 'https://u/1')).not.toContain('Unsubscribe</a>');
    expect(textWithUnsubscribe('Hello', null, 'https://u/1')).toContain('Unsubscribe: https://u/1');
    expect(textWithUnsubscribe('Hello https://u/1', 'Hello {{ unsubscribe_url }}', 'https://u/1')).toBe('Hello https://u/1');
  });
  it('derives a text part from HTML', () => {
    const text = htmlToText('<h1>Title</h1><p>Hello <b>Ann</b>, see <a href="https://x.test/a">our site</a>.</p><img src="https://x.test/i.png" alt="logo">');
    expect(text).toContain('TITLE');
    expect(text).toContain('Hello Ann');
    expect(text).toContain('our site [https://x.test/a]');
    expect(text).not.toContain('i.png');
  });
});
