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

describe('JobRunner idle polling', () => {
  it('after `afterMs` with nothing to do it looks only every idle poll; a wake or work found brings its pace back', async () => {
    let runs = 0;
    let work = 0;
    const runner = new JobRunner(
      [{ name: 'queue', everyMs: 5, run: async () => (runs++, work > 0 ? (work--, 1) : 0) }],
      log,
      5,
      { afterMs: 60, pollMs: 60_000 },
    );
    runner.start();
    // At its own pace (every 5 ms) for the first 60 ms, then asleep for a minute.
    await until('a few rounds at its pace', () => runs >= 3);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const idle = runs;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(runs).toBe(idle);
    // Woken (work given by this process): a round at once, and its pace again.
    work = 2;
    runner.wake();
    await until('the work done', () => work === 0);
    const after = runs;
    await until('rounds at its pace after the work', () => runs >= after + 3);
    await runner.stop();
  });

  it('without idle polling a loop keeps its pace however long it finds nothing', async () => {
    let runs = 0;
    const runner = new JobRunner([{ name: 'queue', everyMs: 5, run: async () => (runs++, 0) }], log, 5);
    runner.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const before = runs;
    await until('more rounds', () => runs >= before + 3);
    await runner.stop();
  });
});
