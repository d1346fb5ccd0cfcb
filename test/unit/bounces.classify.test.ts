import { describe, expect, it } from 'vitest';
import { CLASSIFICATION, classify, enhancedStatus, replyCode, replyOf } from '../../src/mail/classify.js';

/** The classification table, row by row: each row's cases, and that no earlier row takes them. */
const cases: Record<string, [code: number | null, text: string, expected: ReturnType<typeof classify>][]> = {
  '4.x.x status or 4xx reply: temporary': [
    [421, '421 4.7.0 Try again later, closing connection', 'soft'],
    [450, '450 4.2.1 The user you are trying to contact is receiving mail too quickly', 'soft'],
    [451, '451 Temporary local problem', 'soft'],
    [null, 'Status: 4.4.7 delivery time expired', 'soft'],
  ],
  '5.2.2 mailbox full': [
    [552, '552 5.2.2 Mailbox full', 'soft'],
    [550, '550 5.2.2 The email account that you tried to reach is over quota', 'soft'],
  ],
  '5.1.x bad mailbox or domain': [
    [550, '550 5.1.1 <a@b.example>: Recipient address rejected: User unknown', 'hard'],
    [550, '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup', 'hard'],
    [553, '553 5.1.3 Bad recipient address syntax', 'hard'],
    [550, '550 5.1.2 Host unknown', 'hard'],
    // The sender's address refused: 5.1.x, so hard as contract §11 has it.
    [553, '553 5.1.8 <bounces+x@bounces.example.com>: Sender address rejected: Domain not found', 'hard'],
    [550, '550 5.1.7 No such domain bounces.example.com', 'hard'],
  ],
  '5.2.1 mailbox disabled': [[550, '550 5.2.1 The email account that you tried to reach is disabled', 'hard']],
  '5.5.0 (or the generic 5.0.0) with a "no such user" text': [
    [550, '550 5.5.0 Requested action not taken: mailbox unavailable', 'hard'],
    [550, '550 5.0.0 <a@b.example>... User unknown', 'hard'],
  ],
  '550 without an enhanced code, with a "no such user" text': [
    [550, '550 No such user here', 'hard'],
    [550, '550 Requested action not taken: mailbox unavailable', 'hard'],
    [550, '550 sorry, no mailbox here by that name', 'hard'],
  ],
  '5.7.x policy, reputation, authentication': [
    [554, '554 5.7.1 Service unavailable; Client host blocked using zen.spamhaus.org', 'blocked'],
    [
      550,
      '550 5.7.26 This mail is unauthenticated, which poses a security risk to the sender and Gmail users',
      'blocked',
    ],
    [554, '554 5.7.9 Message not accepted for policy reasons', 'blocked'],
  ],
  'any other 5.x.x or 5xx': [
    [552, '552 5.3.4 Message size exceeds fixed limit', 'failed'],
    [554, '554 5.4.4 Unable to route', 'failed'],
    [550, '550 Rejected', 'failed'],
    [550, '550 5.5.0 Syntax error', 'failed'],
  ],
};

describe('bounce classification table', () => {
  it('has a case for every row, and only those rows', () => {
    expect(Object.keys(cases)).toEqual(CLASSIFICATION.map((r) => r.label));
  });
  for (const row of CLASSIFICATION) {
    for (const [code, text, expected] of cases[row.label] ?? []) {
      it(`${row.label}: ${text} → ${expected}`, () => {
        const reply = replyOf(code, text);
        expect(classify(reply)).toBe(expected);
        // The first row that matches is this one (no earlier row takes the case).
        const first = CLASSIFICATION.find((r) => r.test(reply));
        if (row.label !== '550 without an enhanced code, with a "no such user" text' || reply.status === null)
          expect(first?.label).toBe(row.label);
      });
    }
  }
  it('is not a failure without a 4xx/5xx code or a 4.x.x/5.x.x status', () => {
    expect(classify(replyOf(250, '250 2.0.0 OK'))).toBeNull();
    expect(classify({ code: null, status: null, text: 'something odd' })).toBeNull();
  });
  it('reads enhanced status codes and reply codes, not pieces of IP addresses', () => {
    expect(enhancedStatus('host [1.2.3.4] said 550 5.1.1 unknown')).toBe('5.1.1');
    expect(enhancedStatus('Client host [192.0.2.5] blocked')).toBeNull();
    expect(enhancedStatus('(#5.1.1)')).toBe('5.1.1');
    expect(replyCode('550-5.1.1 The email account')).toBe(550);
    expect(replyCode('hello 550')).toBeNull();
  });
});
