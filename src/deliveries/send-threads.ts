import { pathToFileURL } from 'node:url';
import type { Piscina as PiscinaType } from 'piscina';
import { lazyRequire } from '../lib/lazy.js';
import { FROM_BUILD, programFile } from '../lib/paths.js';
import { renderMessages, type RenderResult, type RenderTask } from './render.worker.js';

const piscina = lazyRequire<{ Piscina: typeof PiscinaType }>('piscina');

/**
 * Where the CPU of a send runs (deliveries/CONTEXT.md, "Send threads"): rendering, MIME and the DKIM signature of each
 * message, in a pool of threads (piscina) started on the first message, or in the pipeline's own thread when
 * `threads` is 0. The database and SMTP stay in the pipeline's thread, which also makes a chunk itself, one at a time,
 * while every send thread is busy and chunks wait: on two cores one thread and the pipeline's share made more messages
 * a second than two threads, with ~45 MB less memory (bench/README.md, "bench:send"). A chunk whose thread failed (it
 * crashed, or the chunk did not fit its heap) says nothing about the messages: it is made again in this thread; so is
 * everything when the pool cannot start.
 */
export interface MessageRenderer {
  readonly threads: number;
  render(task: RenderTask): Promise<RenderResult[]>;
  close(): Promise<void>;
}

type Log = { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };

/**
 * `workerFile`: the module the threads run (render.worker's build or source by default; a test gives another);
 * `local`: how the pipeline's thread makes a chunk (renderMessages; a test gives another).
 */
export function createRenderer(threads: number, log?: Log, { workerFile = programFile('deliveries/render.worker'), local = renderMessages } = {}): MessageRenderer {
  if (threads <= 0) return { threads: 0, render: local, close: async () => {} };
  let pool: PiscinaType | null = null;
  /** The pool could not start (an unusable flag, no threads left): messages are made in this thread instead. */
  let unavailable = false;
  const start = (): PiscinaType | null => {
    if (pool || unavailable) return pool;
    try {
      pool = new (piscina().Piscina)({
        filename: pathToFileURL(workerFile).href,
        minThreads: threads,
        maxThreads: threads,
        // Started on the first send, kept while the process runs: a broadcast's next batch finds its templates parsed.
        idleTimeout: Infinity,
        // The process's flags are inherited (Node drops those a thread cannot take, where an explicit list would make
        // it refuse to start). From the sources under a runner that did not load tsx (vitest), the thread loads it.
        ...(FROM_BUILD || process.execArgv.some((a) => a.includes('tsx')) ? {} : { execArgv: ['--import', 'tsx'] }),
        // One chunk at a time per thread: a thread that fails takes one chunk with it.
        concurrentTasksPerWorker: 1,
        atomics: 'disabled',
        // A thread holds a chunk of messages at a time; left to itself V8 lets a busy thread's heap grow to ~100 MB
        // (bench:send). These limits keep a thread at ~60-80 MB for ~2 % more CPU; a chunk that does not fit fails the
        // thread's task, and is made again in the pipeline's thread (below).
        resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 },
      });
      // A thread that dies between tasks: piscina replaces it; said, never thrown (an 'error' without a listener would be).
      pool.on('error', (err: unknown) => log?.error({ err }, 'a send thread failed'));
    } catch (err) {
      unavailable = true;
      log?.warn({ err }, `the send threads could not start (${(err as Error).message}); messages are made in the worker's own thread`);
    }
    return pool;
  };
  const runInPool = async (p: PiscinaType, task: RenderTask): Promise<RenderResult[]> => {
    try {
      return (await p.run(task)) as RenderResult[];
    } catch (err) {
      log?.warn({ err, broadcastId: task.sending.broadcast.id }, 'a send thread failed on a chunk of messages; making them in the worker\'s thread');
      return local(task);
    }
  };
  /** Chunks no one has taken yet, in order: a free thread takes the next, and so does the pipeline's thread. */
  const waiting: { task: RenderTask; resolve: (r: RenderResult[]) => void; reject: (err: unknown) => void }[] = [];
  let inThreads = 0;
  let here = false;
  const take = (p: PiscinaType): void => {
    while (inThreads < threads && waiting.length) {
      const job = waiting.shift()!;
      inThreads++;
      void runInPool(p, job.task).then(job.resolve, job.reject).finally(() => {
        inThreads--;
        take(p);
      });
    }
    // Every thread is busy and chunks wait: this thread makes the next one, after the I/O already due (the SMTP
    // replies, the database's answers), and one chunk at a time, so that its own work is never long held up.
    if (!here && waiting.length) {
      here = true;
      setImmediate(() => {
        const job = waiting.shift();
        if (!job) {
          here = false;
          return;
        }
        void local(job.task).then(job.resolve, job.reject).finally(() => {
          here = false;
          take(p);
        });
      });
    }
  };
  return {
    threads,
    render: (task) => {
      const p = start();
      if (!p) return local(task);
      return new Promise<RenderResult[]>((resolve, reject) => {
        waiting.push({ task, resolve, reject });
        take(p);
      });
    },
    async close() {
      const p = pool;
      pool = null;
      // Chunks still waiting (none after the last batch): their messages are retried later, as after a thread's failure.
      for (const job of waiting.splice(0)) job.reject(new Error('the send threads were stopped'));
      await p?.destroy();
    },
  };
}
