import { pathToFileURL } from 'node:url';
import type { Piscina as PiscinaType } from 'piscina';
import { lazyRequire } from '../lib/lazy.js';
import { FROM_BUILD, programFile } from '../lib/paths.js';
import { renderMessages, type RenderResult, type RenderTask } from './render.worker.js';

const piscina = lazyRequire<{ Piscina: typeof PiscinaType }>('piscina');

/**
 * Where the CPU of a send runs (deliveries/CONTEXT.md, "Send threads"): rendering, MIME and the DKIM signature of each
 * message, in a pool of threads (piscina) started on the first message, or in the pipeline's own thread when
 * `threads` is 0. The database and SMTP stay in the pipeline's thread.
 */
export interface MessageRenderer {
  readonly threads: number;
  render(task: RenderTask): Promise<RenderResult[]>;
  close(): Promise<void>;
}

export function createRenderer(threads: number): MessageRenderer {
  if (threads <= 0) return { threads: 0, render: renderMessages, close: async () => {} };
  let pool: PiscinaType | null = null;
  const start = () => pool ??= new (piscina().Piscina)({
    filename: pathToFileURL(programFile('deliveries/render.worker')).href,
    minThreads: threads,
    maxThreads: threads,
    // Started on the first send, kept while the process runs: a broadcast's next batch finds its templates parsed.
    idleTimeout: Infinity,
    // The process's own flags (--cpu-prof, say); from the sources, the thread loads TypeScript through tsx as the process does.
    execArgv: FROM_BUILD || process.execArgv.some((a) => a.includes('tsx')) ? process.execArgv : [...process.execArgv, '--import', 'tsx'],
    // Two chunks at a time per thread: one is made while the other's result crosses back.
    concurrentTasksPerWorker: 2,
    atomics: 'disabled',
    // A thread holds a chunk of messages at a time; left to itself V8 lets a busy thread's heap grow to ~100 MB
    // (bench:send). These limits keep a thread at ~60-80 MB for ~2 % more CPU; a chunk that would not fit fails
    // the thread's task, and its deliveries are retried (pipeline.ts).
    resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 },
  });
  return {
    threads,
    render: (task) => start().run(task) as Promise<RenderResult[]>,
    async close() {
      const p = pool;
      pool = null;
      await p?.destroy();
    },
  };
}
