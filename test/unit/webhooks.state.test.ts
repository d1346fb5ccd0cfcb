import { describe, expect, it } from 'vitest';
import { expectRefused } from '../helpers/transitions.js';
import {
  MAX_ATTEMPTS,
  RETRY_DELAYS_MS,
  WEBHOOK_DELIVERY_OPERATIONS,
  WEBHOOK_DELIVERY_STATUSES,
  nextAttemptDelay,
  webhookStatusesFor,
  webhookTransition,
} from '../../src/integrations/webhooks/webhooks.state.js';

/** Every status against every operation, spelled out independently of the table in the source. */
const I = 'invalid_state';
const expected: Record<string, Record<string, string>> = {
  PENDING: { claim: 'SENDING', succeed: I, retry: I, fail: I, resend: I, abandon: 'FAILED', release: I },
  SENDING: {
    claim: 'SENDING',
    succeed: 'SUCCEEDED',
    retry: 'PENDING',
    fail: 'FAILED',
    resend: I,
    abandon: I,
    release: 'PENDING',
  },
  SUCCEEDED: { claim: I, succeed: I, retry: I, fail: I, resend: 'PENDING', abandon: I, release: I },
  FAILED: { claim: I, succeed: I, retry: I, fail: I, resend: 'PENDING', abandon: I, release: I },
};

describe('webhook delivery state machine', () => {
  for (const status of WEBHOOK_DELIVERY_STATUSES) {
    for (const op of WEBHOOK_DELIVERY_OPERATIONS) {
      const want = expected[status]![op]!;
      it(`${status} × ${op} → ${want}`, () => {
        if (want === I) expectRefused(() => webhookTransition(status, op), I);
        else expect(webhookTransition(status, op)).toBe(want);
      });
    }
  }

  it('statusesFor lists the statuses each operation starts from', () => {
    expect(webhookStatusesFor('claim')).toEqual(['PENDING', 'SENDING']);
    expect(webhookStatusesFor('resend')).toEqual(['SUCCEEDED', 'FAILED']);
    expect(webhookStatusesFor('abandon')).toEqual(['PENDING']);
    expect(webhookStatusesFor('release')).toEqual(['SENDING']);
  });
});

describe('webhook retry schedule', () => {
  it('waits 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: 8 attempts in all', () => {
    const s = 1000,
      m = 60 * s,
      h = 60 * m;
    expect(RETRY_DELAYS_MS).toEqual([5 * s, 5 * m, 30 * m, 2 * h, 5 * h, 10 * h, 10 * h]);
    expect(MAX_ATTEMPTS).toBe(8);
    expect([1, 2, 3, 4, 5, 6, 7].map(nextAttemptDelay)).toEqual([...RETRY_DELAYS_MS]);
    expect(nextAttemptDelay(8)).toBeNull();
    expect(nextAttemptDelay(9)).toBeNull();
  });
});
