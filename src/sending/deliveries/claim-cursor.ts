/**
 * Where the broadcasts' lane of one pipeline claims due deliveries from (deliveries.repository.ts claimDeliveries,
 * `from`): the latest due time its last claim took from the due range, so that a claim does not walk the dead index
 * entries of every delivery claimed before it (PostgreSQL keeps them until VACUUM). From the range's start when there
 * is no such time yet, and every `wholeEveryMs`: a delivery written due before `from` (by a clock behind this one, or a
 * write that committed late) waits about that long at most. (When nothing is due past `from`, the claim itself looks
 * from the start at once.)
 *
 * Two loops of one pipeline claim side by side (WORKER_BATCHES), each a `begin` … `note` pair around its claim. Times
 * are the caller's clock in ms (performance.now in the pipeline; the tests' own).
 */

/** How often the broadcasts' lane claims from the start of the due range (the pipeline's default). */
export const RANGE_EVERY_MS = 5_000;

/** What one claim asks for, given back to `note` with what it took. */
export interface ClaimTicket {
  /** Look from this due time on; undefined: from the range's start. */
  from: string | undefined;
  /** A look from the range's start that the timer asked for (or the first). */
  whole: boolean;
  /** How many times `from` had gone back when the claim began. */
  stepsBack: number;
}

export class ClaimCursor {
  private from: string | undefined;
  private lastWholeLook = Number.NEGATIVE_INFINITY;
  private stepsBack = 0;

  constructor(private readonly wholeEveryMs: number) {}

  /** Where the next claim looks from. */
  begin(now: number): ClaimTicket {
    const whole = this.from === undefined || now - this.lastWholeLook >= this.wholeEveryMs;
    return { from: whole ? undefined : this.from, whole, stepsBack: this.stepsBack };
  }

  /**
   * After the claim: `claimed` its deliveries, those taken from the due range carrying `dueAt` (ISO text of one format,
   * which compares as the times do). The next claim looks from the latest of them. One that went back (it looked from
   * the start and found deliveries written due before `from`) always counts, so that a claim of the other loop that
   * began before it, from the later time, cannot undo it: any other counts only if no claim went back while it ran. A
   * look from the start counts as done only if the claim reached the due range: it took from it, or did not fill its
   * batch of `limit` (expired leases and the transactional lane's deliveries are taken first and can fill it).
   */
  note(ticket: ClaimTicket, claimed: readonly { dueAt?: string }[], limit: number, now: number): void {
    let latest: string | undefined;
    for (const d of claimed) if (d.dueAt !== undefined && (latest === undefined || d.dueAt > latest)) latest = d.dueAt;
    if (ticket.whole && (latest !== undefined || claimed.length < limit)) this.lastWholeLook = now;
    if (latest === undefined) return;
    if (this.from !== undefined && latest < this.from) {
      this.from = latest;
      this.stepsBack++;
    } else if (ticket.stepsBack === this.stepsBack) this.from = latest;
  }

  /** Where the next claim that is not a look from the start will look from (tests, logs). */
  get position(): string | undefined {
    return this.from;
  }
}
