import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { JobRunner } from '../../src/jobs/runner.js';

/**
 * JobRunner.wake (src/jobs/runner.ts): the code that gives a loop work tells it, and the loop's jobs run now instead of
 * at their next poll (the submission intake: submissions/CONTEXT.md). The jobs here poll once a minute, so any second
 * round within the test's time comes from a wake.
 */
const log = pino({ level: 'silent' });
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));
async function until(what: string, probe: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !probe(); i++) await tick();
  if (!probe()) throw new Error(`never: ${what}`);
}

describe('JobRunner.wake', () => {
  it('ends the sleep of a loop whose job found nothing: the job runs again at once, not at its next poll', async () => {
    let runs = 0;
    const runner = new JobRunner([{ name: 'queue', everyMs: 60_000, run: async () => (runs++, 0) }], log, 60_000);
    runner.start();
    await until('the first round', () => runs === 1);
    runner.wake();
    await until('a round after the wake', () => runs === 2);
    await runner.stop();
  });

  it('a wake while the job runs (its work may have come after it looked) makes the loop go round again', async () => {
    let runs = 0;
    let release: (() => void) | null = null;
    const runner = new JobRunner(
      [
        {
          name: 'queue',
          everyMs: 60_000,
          run: async () => {
            runs++;
            if (runs === 1) await new Promise<void>((resolve) => (release = resolve));
            return 0;
          },
        },
      ],
      log,
      60_000,
    );
    runner.start();
    await until('the first round to start', () => release !== null);
    runner.wake();
    release!();
    await until('a round after the one that was woken', () => runs === 2);
    await runner.stop();
  });

  it('without a wake, a job that found nothing waits for its next poll', async () => {
    let runs = 0;
    const runner = new JobRunner([{ name: 'queue', everyMs: 60_000, run: async () => (runs++, 0) }], log, 60_000);
    runner.start();
    await until('the first round', () => runs === 1);
    for (let i = 0; i < 10; i++) await tick();
    expect(runs).toBe(1);
    await runner.stop();
  });
});
