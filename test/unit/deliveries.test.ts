import { describe, expect, it } from 'vitest';
import { DELIVERY_OPERATIONS, DELIVERY_STATUSES, OPEN_STATUSES, nextStatus, statusesFor } from '../../src/deliveries/deliveries.state.js';
import { htmlToText, textWithUnsubscribe, withPreheader, withUnsubscribeFooter } from '../../src/mail/compose.js';
import { classifySendError } from '../../src/mail/outcome.js';

/** Every delivery status against every operation, spelled out independently of the source. */
const expected: Record<string, Record<string, string | null>> = {
  QUEUED: { claim: 'SENDING', sent: null, retry: null, fail: null, bounce: null, skip: null, cancel: 'CANCELED' },
  SENDING: { claim: 'SENDING', sent: 'SENT', retry: 'QUEUED', fail: 'FAILED', bounce: 'BOUNCED', skip: 'SKIPPED', cancel: 'CANCELED' },
  SENT: { claim: null, sent: null, retry: null, fail: null, bounce: null, skip: null, cancel: null },
  FAILED: { claim: null, sent: null, retry: null, fail: null, bounce: null, skip: null, cancel: null },
  BOUNCED: { claim: null, sent: null, retry: null, fail: null, bounce: null, skip: null, cancel: null },
  CANCELED: { claim: null, sent: null, retry: null, fail: null, bounce: null, skip: null, cancel: null },
  SKIPPED: { claim: null, sent: null, retry: null, fail: null, bounce: null, skip: null, cancel: null },
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
    expect(OPEN_STATUSES.sort()).toEqual(['QUEUED', 'SENDING']);
  });
});

describe('classifySendError', () => {
  it.each([
    [{ responseCode: 421, response: '421 4.7.0 Try again later' }, 'temporary'],
    [{ responseCode: 450, response: '450 4.2.1 Mailbox busy' }, 'temporary'],
    [{ responseCode: 550, response: '550 5.1.1 <x@example.com>: Recipient address rejected: User unknown' }, 'bounce'],
    [{ responseCode: 553, response: '553 5.1.3 Bad recipient address syntax' }, 'bounce'],
    [{ responseCode: 554, response: '554 5.7.1 Message rejected as spam' }, 'permanent'],
    [{ responseCode: 552, response: '552 5.3.4 Message too big' }, 'permanent'],
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
