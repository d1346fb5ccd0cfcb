import type { Challenge } from 'altcha-lib';
import type { Db, Executor } from '../../db/connection.js';
import { notFound } from '../../errors/errors.js';
import type { Form } from '../forms/forms.schemas.js';
import { DEFAULT_BURST_RULES, signalKey, signalsOf, type BurstRules, type SignalKind } from './protection.bursts.js';
import { DEFAULT_POW_TUNING, ProofOfWork, type PowFailure, type PowTuning } from './protection.pow.js';
import * as repo from './protection.repository.js';

export interface ProtectionOptions {
  /** The server secret (db/secrets.ts): signs challenges, keys the stored signals. */
  secret: Buffer;
  bursts?: Partial<BurstRules>;
  pow?: PowTuning;
}

/** What a visitor reads when the proof of work is missing or refused (the page is shown again with a fresh one). */
const POW_MESSAGES: Record<PowFailure, string> = {
  missing: 'Please wait a moment until the automatic spam check has finished, then send the form again.',
  malformed: 'The automatic spam check did not work. Please send the form again.',
  invalid: 'The automatic spam check did not work. Please send the form again.',
  wrong_form: 'The automatic spam check did not work. Please send the form again.',
  expired: 'The automatic spam check has expired. Please send the form again.',
  replayed: 'This form was already sent with this spam check. Please send it again.',
};

export type PowOutcome =
  { ok: true; token: string; expiresAt: string } | { ok: false; reason: PowFailure; message: string };

/**
 * Sign-up protection without a third party (docs/bot-protection.md): the proof-of-work challenge of a
 * form, its single-use solutions, and the burst rules that hold a submission for review.
 */
export class ProtectionService {
  readonly pow: ProofOfWork;
  readonly rules: BurstRules;

  constructor(
    private readonly db: Db,
    private readonly opts: ProtectionOptions,
  ) {
    this.pow = new ProofOfWork(opts.secret, opts.pow ?? DEFAULT_POW_TUNING);
    this.rules = { ...DEFAULT_BURST_RULES, ...opts.bursts };
  }

  /** Spent tokens past their expiry, and signals older than the window (a job). */
  purge(now = Date.now()): Promise<number> {
    // Signals are kept a day at least, so a longer window set later still finds the recent ones.
    const keep = Math.max(this.rules.windowSeconds * 1000, 24 * 3_600_000);
    return repo.purgeProtection(this.db.kysely, new Date(now).toISOString(), new Date(now - keep).toISOString());
  }

  /** A challenge for a form whose proof of work is on; 404 otherwise (nothing to solve). */
  async challenge(form: Pick<Form, 'formGroupId' | 'settings'>): Promise<Challenge> {
    if (!form.settings.protection?.proofOfWork) throw notFound('challenge');
    return this.pow.challenge(form.formGroupId);
  }

  /**
   * Checks a submission's solution (signature, form, expiry). A good one is then spent with `spendSolution`, in the
   * transaction that stores the submission: a solution is good for one submission, and one whose submission
   * could not be written is not used up.
   */
  async checkProofOfWork(formGroupId: string, raw: unknown): Promise<PowOutcome> {
    const check = await this.pow.check(formGroupId, raw);
    if (!check.ok) return { ok: false, reason: check.reason, message: POW_MESSAGES[check.reason] };
    return { ok: true, token: check.token, expiresAt: check.expiresAt };
  }

  /** Spends a checked solution in `trx`; false (refused as `replayed`) when another submission spent it first. */
  spendSolution(trx: Executor, workspaceId: string, solution: { token: string; expiresAt: string }): Promise<boolean> {
    return repo.spendToken(trx, workspaceId, 'pow', solution.token, solution.expiresAt);
  }

  /** What a refused solution is told. */
  refusal(reason: PowFailure): { ok: false; reason: PowFailure; message: string } {
    return { ok: false, reason, message: POW_MESSAGES[reason] };
  }

  /**
   * Records the signals of a public submission (in its transaction) and says which burst rules it trips: those
   * whose signal the workspace saw `limit` times or more within the window before it. Empty: not a burst.
   */
  async burst(
    trx: Executor,
    workspaceId: string,
    submissionId: string,
    ip: string | null | undefined,
    email: string,
    now: string,
  ): Promise<SignalKind[]> {
    const since = new Date(Date.parse(now) - this.rules.windowSeconds * 1000).toISOString();
    // Only the signals a rule counts are kept: a rule that is off (0) reads none, and storing them cost ~100 µs, a sixth of a
    // sign-up's SQLite work for nothing (bench:submit, bench/README.md). A rule turned on counts from then.
    const signals = signalsOf(ip, email)
      .filter((s) => this.rules[ruleOf(s.kind)] > 0)
      .map((s) => ({ kind: s.kind, key: signalKey(this.opts.secret, s.kind, s.value) }));
    if (this.db.dialect === 'postgres')
      await repo.lockSignals(
        trx,
        workspaceId,
        signals.map((s) => `${s.kind}:${s.key}`),
      );
    const tripped: SignalKind[] = [];
    for (const s of signals) {
      if ((await repo.countSignal(trx, workspaceId, s.kind, s.key, since)) >= this.rules[ruleOf(s.kind)])
        tripped.push(s.kind);
    }
    await repo.insertSignals(trx, workspaceId, submissionId, signals, now);
    return tripped;
  }
}

function ruleOf(kind: SignalKind): keyof Omit<BurstRules, 'windowSeconds'> {
  return kind === 'ip_range' ? 'ipRange' : kind;
}
