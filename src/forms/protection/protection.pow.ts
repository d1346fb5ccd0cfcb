/**
 * The proof-of-work challenge of a form (docs/bot-protection.md): ALTCHA challenges (altcha-lib, PBKDF2/SHA-256,
 * deterministic mode) signed with keys derived from the server secret, solved in the visitor's browser by the ALTCHA
 * widget served from this origin (protection.assets.ts), and verified here when the public submission arrives. A
 * challenge names the form group it was issued for and expires; a solution is spent once (spent_tokens, kept until
 * the challenge expires), so a bot cannot solve one challenge and post it a thousand times.
 */
import crypto from 'node:crypto';
import { createChallenge, randomInt, verifySolution, type Challenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2';

export const POW_ALGORITHM = 'PBKDF2/SHA-256';
/** The form field the widget puts its payload in (the service's own prefix, like the honeypot `_fc_hp`). */
export const POW_FIELD = '_fc_pow';
/** A challenge is good for this long: a person may read the page a while before sending it. */
export const POW_CHALLENGE_TTL_MS = 60 * 60 * 1000;

export interface PowTuning {
  /** PBKDF2 iterations per attempt. */
  cost: number;
  /** The attempts a solver needs lie between these (the counter is drawn at random). */
  minCounter: number;
  maxCounter: number;
}

/** Some 2.5 million PBKDF2 iterations on average: well under a second in a browser with its workers, about a second for a script on one core;
 * the server derives one key per challenge and verifies with one HMAC. */
export const DEFAULT_POW_TUNING: PowTuning = { cost: 1_000, minCounter: 1_000, maxCounter: 4_000 };

export type PowFailure = 'missing' | 'malformed' | 'invalid' | 'expired' | 'wrong_form' | 'replayed';

export interface PowCheck {
  ok: true;
  /** What makes the solution single-use: its challenge's signature. */
  token: string;
  expiresAt: string;
}

interface Payload {
  challenge: Challenge;
  solution: { counter: number; derivedKey: string; time?: number };
}

const MAX_PAYLOAD_CHARS = 4096;

export class ProofOfWork {
  private readonly signatureSecret: string;
  private readonly keySecret: string;

  constructor(
    secret: Buffer,
    private readonly tuning: PowTuning = DEFAULT_POW_TUNING,
  ) {
    this.signatureSecret = crypto.createHmac('sha256', secret).update('formcast altcha challenge').digest('hex');
    this.keySecret = crypto.createHmac('sha256', secret).update('formcast altcha key').digest('hex');
  }

  /** A new challenge for a form group (what `GET /f/{slug}/challenge` answers). */
  async challenge(formGroupId: string, now = Date.now()): Promise<Challenge> {
    return createChallenge({
      algorithm: POW_ALGORITHM,
      cost: this.tuning.cost,
      counter: randomInt(this.tuning.maxCounter, this.tuning.minCounter),
      deriveKey,
      data: { f: formGroupId },
      expiresAt: new Date(now + POW_CHALLENGE_TTL_MS),
      hmacSignatureSecret: this.signatureSecret,
      hmacKeySignatureSecret: this.keySecret,
    });
  }

  /** Checks the widget's payload (base64 JSON) against the form group; spending it is the caller's (store-backed). */
  async check(formGroupId: string, raw: unknown): Promise<PowCheck | { ok: false; reason: PowFailure }> {
    const text = Array.isArray(raw) ? raw[0] : raw;
    if (text === undefined || text === null || text === '') return { ok: false, reason: 'missing' };
    const payload = parse(text);
    if (!payload) return { ok: false, reason: 'malformed' };
    const { challenge, solution } = payload;
    if (challenge.parameters.algorithm !== POW_ALGORITHM) return { ok: false, reason: 'invalid' };
    let result;
    try {
      result = await verifySolution({
        challenge,
        solution,
        deriveKey,
        hmacSignatureSecret: this.signatureSecret,
        hmacKeySignatureSecret: this.keySecret,
      });
    } catch {
      return { ok: false, reason: 'malformed' };
    }
    if (result.expired) return { ok: false, reason: 'expired' };
    if (!result.verified) return { ok: false, reason: 'invalid' };
    // Signed, so the form group is the one it was issued for.
    if (challenge.parameters.data?.f !== formGroupId) return { ok: false, reason: 'wrong_form' };
    const expiresAt = new Date(
      (challenge.parameters.expiresAt ?? Math.ceil(Date.now() / 1000) + POW_CHALLENGE_TTL_MS / 1000) * 1000,
    ).toISOString();
    return { ok: true, token: challenge.signature!, expiresAt };
  }
}

function parse(text: unknown): Payload | null {
  if (typeof text !== 'string' || text.length > MAX_PAYLOAD_CHARS) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64').toString('utf8'));
  } catch {
    return null;
  }
  if (!value || typeof value !== 'object') return null;
  const { challenge, solution } = value as Partial<Payload>;
  if (!challenge || typeof challenge !== 'object' || !challenge.parameters || typeof challenge.parameters !== 'object')
    return null;
  if (typeof challenge.signature !== 'string' || !/^[0-9a-f]{64}$/.test(challenge.signature)) return null;
  if (
    !solution ||
    typeof solution !== 'object' ||
    typeof solution.counter !== 'number' ||
    typeof solution.derivedKey !== 'string'
  )
    return null;
  const p = challenge.parameters as unknown as Record<string, unknown>;
  for (const k of ['algorithm', 'nonce', 'salt', 'keyPrefix']) if (typeof p[k] !== 'string') return null;
  for (const k of ['cost', 'keyLength']) if (typeof p[k] !== 'number') return null;
  return {
    challenge: { parameters: challenge.parameters, signature: challenge.signature },
    solution: { counter: solution.counter, derivedKey: solution.derivedKey },
  };
}
