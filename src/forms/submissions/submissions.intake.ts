import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import type { Db, Executor } from '../../db/connection.js';
import type { GroupCommit } from '../../db/group-commit.js';
import { Precompiled } from '../../db/precompiled.js';
import { fromJsonColumn, toJsonColumn } from '../../lib/json.js';
import { toIso } from '../../lib/time.js';

/**
 * The intake of a spike (submissions/CONTEXT.md, docs/forms.md "A spike of submissions"): when a public submission is
 * taken in rather than made in its request, the queue (`submission_intake`), and the job that makes its entries. What
 * an entry is made into is the submissions service's (`store`); this module only decides when, and keeps the queue.
 */

/** SUBMISSION_INTAKE (docs/forms.md): when a submission is queued for the intake rather than written in the request. */
export type SubmissionIntake = 'auto' | 'always' | 'off';

/** SUBMISSION_INTAKE=auto: a public submission goes to the intake when this many sign-ups are being written already. */
export const INTAKE_AFTER = 8;
/** Entries made per round of the intake job. */
export const INTAKE_ROUND = 200;
/** A spike: entries taken in within this long of each other, the last within this long of now. */
export const SPIKE_MS = 200;
/** During a spike nothing is made until the oldest entry has waited this long: answering comes first. */
export const INTAKE_MAX_LAG_MS = 5000;
/** The intake job's pause between its rounds during a spike (it looks at the oldest entry's age, or makes a round). */
export const INTAKE_SPIKE_PAUSE_MS = 50;

/** A public submission taken in and not yet made: its checked answers, where it came from and when. */
export interface IntakeEntry {
  id: number;
  submissionId: string;
  workspaceId: string;
  formId: string;
  source: 'HOSTED' | 'EMBED';
  values: Record<string, string | number | boolean | string[]>;
  consented: boolean;
  ip: string | null;
  userAgent: string | null;
  receivedAt: string;
  attempts: number;
}

/**
 * The intake of one process: whether a public submission goes to the queue now, the spikes it sees, and the job's
 * rounds. `writes` is the submissions' group commit (an entry is taken in, and made, in a transaction of it).
 */
export class IntakeQueue {
  // Sign-ups being written in this process; entries this process took in, and how many of them it had taken in when
  // its intake job last found the queue empty; the time of the last one and of the one before.
  private inFlight = 0;
  private intakeWrites = 0;
  private intakeSeenEmpty = 0;
  private lastIntakeAt = -Infinity;
  private previousIntakeAt = -Infinity;
  /** Wakes this process's intake job (`attach`); undefined when it runs none, and then cannot know when its entries are made. */
  private onIntake: (() => void) | undefined;
  private log: FastifyBaseLogger | undefined;

  constructor(
    private readonly db: Db,
    private readonly writes: GroupCommit,
    private readonly mode: SubmissionIntake,
    private readonly clock: () => number,
  ) {}

  /**
   * The intake job of this process runs `process` (jobs.ts): `wake` starts its next round at once, called when an
   * entry is taken in, so that a quiet server makes it within a turn of the event loop.
   */
  attach(wake: () => void, log: FastifyBaseLogger): void {
    this.onIntake = wake;
    this.log = log;
  }

  /**
   * Whether a public submission goes to the intake (SUBMISSION_INTAKE): `always`, `off`, or `auto`: in a process that
   * runs the intake job, when INTAKE_AFTER sign-ups are being written already, or entries it took in still wait (so
   * that a visitor's later submission is not made before an earlier one).
   */
  takesNow(): boolean {
    if (this.mode === 'always') return true;
    if (this.mode === 'off') return false;
    // Only where an intake job runs: a process without one (SERVE_WORKER=false, tests) writes each sign-up itself.
    return this.onIntake !== undefined && (this.inFlight >= INTAKE_AFTER || this.waiting());
  }

  private waiting(): boolean {
    return this.intakeWrites !== this.intakeSeenEmpty;
  }

  /** Runs a sign-up written by its request, counted as being written meanwhile (INTAKE_AFTER). */
  async writing<T>(write: () => Promise<T>): Promise<T> {
    this.inFlight++;
    try {
      return await write();
    } finally {
      this.inFlight--;
    }
  }

  /**
   * Takes an entry in, in a transaction of the group commit, after `before` (the proof-of-work solution spent: false
   * refuses the entry, and nothing is stored). True when it is taken in; the job is woken.
   */
  async takeIn(
    workspaceId: string,
    entry: Omit<IntakeEntry, 'id' | 'workspaceId' | 'attempts' | 'receivedAt'>,
    before: (trx: Executor) => Promise<boolean>,
  ): Promise<boolean> {
    const taken = await this.writes.run(async (trx) => {
      if (!(await before(trx))) return false;
      await insertIntake(trx, workspaceId, { ...entry, receivedAt: new Date(this.clock()).toISOString() });
      return true;
    });
    if (!taken) return false;
    this.intakeWrites++;
    this.previousIntakeAt = this.lastIntakeAt;
    this.lastIntakeAt = this.clock();
    this.onIntake?.();
    return true;
  }

  /**
   * A spike: the last two entries were taken in within SPIKE_MS of each other, the last within SPIKE_MS of now. The
   * intake job then lets them wait (`process`); a lone submission taken in (SUBMISSION_INTAKE=always on a quiet
   * server) is made at once.
   */
  spiking(): boolean {
    return this.clock() - this.lastIntakeAt < SPIKE_MS && this.lastIntakeAt - this.previousIntakeAt < SPIKE_MS;
  }

  /** How long the intake job waits before its next round: INTAKE_SPIKE_PAUSE_MS during a spike, else nothing. */
  pauseMs(): number {
    return this.spiking() ? INTAKE_SPIKE_PAUSE_MS : 0;
  }

  /** How many public submissions wait in the intake (every workspace), and since when: `formcast doctor`. */
  backlog(): Promise<{ waiting: number; oldest: string | null }> {
    return intakeBacklog(this.db.kysely);
  }

  /**
   * The intake job: makes up to `limit` waiting entries, oldest first, each by `make` in the transaction that removes
   * it (on SQLite one transaction for the round, each in a savepoint: db/group-commit.ts); `make` is not called for an
   * entry whose form is gone (`formOf` undefined: a form deleted meanwhile took its entries with it, on delete
   * cascade). An entry whose making fails is tried again later (1 s, 2 s, 4 s, … at most an hour), its error logged.
   * Returns how many entries it took up (made or put off). During a spike (`spiking`) answering comes first: nothing
   * is made until the oldest entry has waited INTAKE_MAX_LAG_MS, and the job pauses between its rounds (`pauseMs`);
   * so a short spike is made once it is over, and a long one within about that lag.
   */
  async process<F>(
    formOf: (entry: IntakeEntry) => Promise<F | undefined>,
    make: (trx: Executor, entry: IntakeEntry, form: F) => Promise<void>,
    limit = INTAKE_ROUND,
  ): Promise<number> {
    const seen = this.intakeWrites;
    const now = this.clock();
    if (this.spiking()) {
      const oldest = await oldestIntake(this.db.kysely);
      if (oldest === null || now - Date.parse(oldest) < INTAKE_MAX_LAG_MS) return 0;
    }
    const entries = await dueIntake(this.db.kysely, new Date(now).toISOString(), limit);
    if (!entries.length) {
      this.intakeSeenEmpty = seen;
      return 0;
    }
    let made = 0;
    await Promise.all(
      entries.map(async (e) => {
        try {
          const form = await formOf(e);
          if (!form) return;
          const done = await this.writes.run(async (trx) => {
            if (!(await takeIntake(trx, e.workspaceId, e))) return false;
            await make(trx, e, form);
            return true;
          });
          if (done) made++;
        } catch (err) {
          const retryAt = new Date(
            this.clock() + Math.min(3_600_000, 1000 * 2 ** Math.min(e.attempts, 12)),
          ).toISOString();
          this.log?.error(
            { err, intake: e.id, submission: e.submissionId, attempts: e.attempts + 1 },
            'a submission taken in could not be made; tried again later',
          );
          await deferIntake(
            this.db.kysely,
            e.workspaceId,
            e.id,
            retryAt,
            err instanceof Error ? err.message : String(err),
          ).catch(() => {});
        }
      }),
    );
    // A round shorter than asked found the end of the queue: nothing of this process waits any more, unless it took
    // some in meanwhile.
    if (entries.length < limit && made === entries.length) this.intakeSeenEmpty = seen;
    return entries.length;
  }
}

// ---- the queue's statements ------------------------------------------------------------------------

// A spike's answers wait on this statement, so it is built once (db/precompiled.ts) rather than for every request.
const intakeInsert = new Precompiled((db, param) =>
  db.insertInto('submission_intake').values({
    submission_id: param('submissionId'),
    workspace_id: param('workspaceId'),
    form_id: param('formId'),
    source: param<IntakeEntry['source']>('source'),
    data: param('data'),
    consented: param<number>('consented'),
    ip: param<string | null>('ip'),
    user_agent: param<string | null>('userAgent'),
    received_at: param('receivedAt'),
    next_attempt_at: null,
    last_error: null,
  }),
);

export async function insertIntake(
  db: Executor,
  workspaceId: string,
  e: Omit<IntakeEntry, 'id' | 'workspaceId' | 'attempts'>,
): Promise<void> {
  await intakeInsert.execute(db, {
    submissionId: e.submissionId,
    workspaceId,
    formId: e.formId,
    source: e.source,
    data: toJsonColumn(e.values)!,
    consented: e.consented ? 1 : 0,
    ip: e.ip,
    userAgent: e.userAgent,
    receivedAt: e.receivedAt,
  });
}

/**
 * The entries due, oldest first (arrival order): never tried, or whose retry time has come. Every workspace: a
 * worker job. Nothing is claimed here: `takeIntake`, in the transaction that makes the submission, decides who does it.
 */
export async function dueIntake(db: Executor, now: string, limit: number): Promise<IntakeEntry[]> {
  const rows = await db
    .selectFrom('submission_intake')
    .select([
      'id',
      'submission_id',
      'workspace_id',
      'form_id',
      'source',
      'data',
      'consented',
      'ip',
      'user_agent',
      'received_at',
      'attempts',
    ])
    .where((eb) => eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', now)]))
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    id: Number(r.id),
    submissionId: r.submission_id,
    workspaceId: r.workspace_id,
    formId: r.form_id,
    source: r.source,
    values: fromJsonColumn<IntakeEntry['values']>(r.data) ?? {},
    consented: Number(r.consented) === 1,
    ip: r.ip,
    userAgent: r.user_agent,
    receivedAt: toIso(r.received_at),
    attempts: Number(r.attempts),
  }));
}

/** When the oldest entry never tried was received (a spike's lag), or null when none waits. Every workspace. */
export async function oldestIntake(db: Executor): Promise<string | null> {
  const r = await db
    .selectFrom('submission_intake')
    .select('received_at')
    .where('next_attempt_at', 'is', null)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return r ? toIso(r.received_at) : null;
}

/**
 * Removes the entry in the transaction that makes its submission; false when it is gone already (another process
 * made it: on PostgreSQL the second waits for the first's row lock, then finds nothing). By its submission's id too:
 * SQLite may give a deleted entry's key to a new one, which must not be taken for the entry read before.
 */
export async function takeIntake(
  db: Executor,
  workspaceId: string,
  entry: { id: number; submissionId: string },
): Promise<boolean> {
  const rows = await db
    .deleteFrom('submission_intake')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', entry.id)
    .where('submission_id', '=', entry.submissionId)
    .returning('id')
    .execute();
  return rows.length > 0;
}

/** An entry whose making failed: tried again at `retryAt`, the error kept for the operator. */
export async function deferIntake(
  db: Executor,
  workspaceId: string,
  id: number,
  retryAt: string,
  error: string,
): Promise<void> {
  await db
    .updateTable('submission_intake')
    .set({ attempts: sql`attempts + 1`, next_attempt_at: retryAt, last_error: error.slice(0, 500) })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .execute();
}

/** How many entries wait, and since when (the oldest): `formcast doctor`. Every workspace. */
export async function intakeBacklog(db: Executor): Promise<{ waiting: number; oldest: string | null }> {
  const r = await db
    .selectFrom('submission_intake')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('received_at').as('oldest')])
    .executeTakeFirst();
  return { waiting: Number(r?.n ?? 0), oldest: r?.oldest ? toIso(r.oldest as string) : null };
}

/**
 * Clears the address and user agent of entries received before `before` and not made yet, up to `limit` of them;
 * returns how many (an entry whose making keeps failing is tried again for as long as it takes: it must not keep the
 * address and user agent longer than a submission would). The submission made from it later has none.
 */
export async function purgeIntakeNetworkData(db: Executor, before: string, limit: number): Promise<number> {
  const due = db
    .selectFrom('submission_intake')
    .select('id')
    .where((eb) => eb.or([eb('ip', 'is not', null), eb('user_agent', 'is not', null)]))
    .where('received_at', '<', before)
    .orderBy('id')
    .limit(limit);
  const res = await db
    .updateTable('submission_intake')
    .set({ ip: null, user_agent: null })
    .where('id', 'in', due)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}
