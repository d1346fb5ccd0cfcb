import type { FastifyBaseLogger } from 'fastify';

/**
 * One loop for all periodic work of a process (jobs.ts lists the jobs). Each job runs at most every
 * `everyMs`; a job that did something runs again at once (a queue being drained), and the loop sleeps only
 * when no job had anything to do, until the next one is due (at most `pollMs`; after a while with nothing to do, at
 * least the idle poll: IdlePolling). A failing job is logged and the others go on. stop() lets the running job finish
 * (a delivery batch records its claims).
 */
export interface Job {
  name: string;
  everyMs: number;
  /** Does one round of work; returns how much it did (0: nothing was due). */
  run(): Promise<number>;
}

/**
 * A loop that found nothing to do for `afterMs` (nor was woken) sleeps at least `pollMs` between rounds, a job due
 * sooner waiting for it: an idle server ran ~160 SQL statements a second on its polls, ~4.7 % of a core, for nothing
 * (2026-11-30; docs/sending.md, "Idle"). Any work found, or a wake, brings the loop back to its own pace at once.
 */
export interface IdlePolling {
  afterMs: number;
  pollMs: number;
}

export class JobRunner {
  private running = false;
  /** When a round last did something, or the loop was woken (Date.now()). */
  private lastWorkAt = Date.now();
  private loop: Promise<void> | null = null;
  private endSleep: (() => void) | null = null;
  /** Set by wake(): the next round runs every job, due or not. */
  private woken = false;
  private readonly nextAt = new Map<string, number>();

  constructor(
    private readonly jobs: readonly Job[],
    private readonly log: FastifyBaseLogger,
    private readonly pollMs: number,
    private readonly idle: IdlePolling | null = null,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (this.running) {
      const forced = this.woken;
      this.woken = false;
      if (forced) this.lastWorkAt = Date.now();
      let busy = false;
      for (const job of this.jobs) {
        if (!this.running) break;
        if (!forced && Date.now() < (this.nextAt.get(job.name) ?? 0)) continue;
        let did = 0;
        try {
          did = await job.run();
        } catch (err) {
          this.log.error({ err, job: job.name }, 'job failed; it runs again later');
        }
        busy ||= did > 0;
        this.nextAt.set(job.name, did > 0 ? 0 : Date.now() + job.everyMs);
      }
      if (!this.running) continue;
      // Woken during the round: the work it was told of may have come after the job looked.
      if (busy) this.lastWorkAt = Date.now();
      if (busy || this.woken) {
        // Busy: round again at once, but after the event loop's other work (HTTP requests, other loops). The SQLite
        // driver answers synchronously, so a loop draining a queue never otherwise yields: with 20,000 automation runs
        // due, the server answered nothing for 12-14 s (bench:automations).
        await new Promise<void>((resolve) => setImmediate(resolve));
        continue;
      }
      const now = Date.now();
      const due = Math.min(...this.jobs.map((j) => this.nextAt.get(j.name) ?? 0));
      let sleep = Math.max(1, Math.min(this.pollMs, due - now));
      if (this.idle && now - this.lastWorkAt >= this.idle.afterMs) sleep = Math.max(sleep, this.idle.pollMs);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, sleep);
        this.endSleep = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.endSleep = null;
    }
  }

  /**
   * Runs every job now, due or not (a queue that has work, told by the code that gave it): ends the loop's sleep, or,
   * in the middle of a round, makes it go round again at once after it.
   */
  wake(): void {
    this.woken = true;
    this.endSleep?.();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.endSleep?.();
    await this.loop;
  }
}
