import { describe, expect, it } from 'vitest';
import { DEFAULT_SUBMISSION_GUARDS, SubmissionGuards } from '../../src/mail/submission/submission.guards.js';

/** The SMTP submission listener's guards (docs/smtp-submission.md, "Logging in", "Limits and replies"), on a clock the test moves. */
describe('SubmissionGuards', () => {
  const make = (over: Partial<typeof DEFAULT_SUBMISSION_GUARDS> = {}) => {
    const clock = { now: Date.UTC(2026, 0, 1, 12, 0, 10) };
    return { clock, guards: new SubmissionGuards({ ...DEFAULT_SUBMISSION_GUARDS, ...over }, () => clock.now) };
  };

  it('admits at most maxConnectionsPerIp connections at once from one address', () => {
    const { guards } = make({ maxConnectionsPerIp: 2 });
    expect(guards.admit('10.0.0.1', 'a')).toBe('ok');
    expect(guards.admit('10.0.0.1', 'b')).toBe('ok');
    expect(guards.admit('10.0.0.1', 'c')).toBe('too_many');
    expect(guards.admit('10.0.0.2', 'd')).toBe('ok');
    guards.closed('10.0.0.1', 'a');
    expect(guards.admit('10.0.0.1', 'e')).toBe('ok');
  });

  it('locks an address out after maxAuthFailures within the window, for lockoutMs', () => {
    const { guards, clock } = make({ maxAuthFailures: 3, authFailureWindowMs: 60_000, lockoutMs: 600_000 });
    expect(guards.authFailed('10.0.0.1')).toBe(false);
    clock.now += 61_000; // the first failure's window is over
    expect(guards.authFailed('10.0.0.1')).toBe(false);
    expect(guards.authFailed('10.0.0.1')).toBe(false);
    expect(guards.lockedOut('10.0.0.1')).toBe(false);
    expect(guards.authFailed('10.0.0.1')).toBe(true);
    expect(guards.lockedOut('10.0.0.1')).toBe(true);
    expect(guards.admit('10.0.0.1', 'a')).toBe('locked');
    expect(guards.lockedOut('10.0.0.2')).toBe(false);
    clock.now += 600_001;
    expect(guards.lockedOut('10.0.0.1')).toBe(false);
    expect(guards.admit('10.0.0.1', 'a')).toBe('ok');
  });

  it('a successful AUTH forgets the failures (not a lock-out under way)', () => {
    const { guards } = make({ maxAuthFailures: 2 });
    guards.authFailed('10.0.0.1');
    guards.authSucceeded('10.0.0.1');
    expect(guards.authFailed('10.0.0.1')).toBe(false);
  });

  it('counts messages per key in minutes, and says how long to wait', () => {
    const { guards, clock } = make({ messagesPerMinute: 2 });
    expect(guards.message('key_a')).toBe(0);
    expect(guards.message('key_a')).toBe(0);
    expect(guards.message('key_a')).toBe(50);
    expect(guards.message('key_b')).toBe(0);
    clock.now += 50_000;
    expect(guards.message('key_a')).toBe(0);
    expect(make({ messagesPerMinute: 0 }).guards.message('key_a')).toBe(0);
  });
});
