import { pathToFileURL } from 'node:url';
import type { Piscina as PiscinaType } from 'piscina';
import { lazyRequire } from '../../lib/lazy.js';
import { FROM_BUILD, programFile } from '../../lib/paths.js';
import { renderMessages, SLAB_BYTES, type PackedResults, type RenderResult, type RenderTask } from './render.worker.js';

const piscina = lazyRequire<{ Piscina: typeof PiscinaType }>('piscina');
/** What lowers a thread's priority for piscina (its optional native module; a dependency of Formcast's own). */
const niceModule = lazyRequire<unknown>('@napi-rs/nice');

/**
 * Where the CPU of a send runs (deliveries/CONTEXT.md, "Send threads"): rendering, MIME and the DKIM signature of each
 * message, in a pool of threads (piscina) started on the first message, or in the pipeline's own thread when
 * `threads` is 0; the RSA signatures themselves in libuv's thread pool, while the thread composes (render.worker). The database and SMTP stay in the pipeline's thread, which is the one that limits a send once
 * messages are cheap to make (mail/mime.ts, mail/dkim.ts): it makes no message itself while there are threads. It
 * used to make a chunk whenever every thread was busy (its **share**), then only when a lane waited for one; without
 * the share it sent faster (bench/README.md, "bench:send"). A chunk whose thread failed (it crashed, or the chunk did not fit its
 * heap) says nothing about the messages: it is made again in the pipeline's thread, one at a time and one message per
 * turn of its event loop, before the chunks that wait; everything is made in this thread when the pool cannot start.
 */
export interface MessageRenderer {
  readonly threads: number;
  /**
   * How much lower than the pipeline's thread the threads run (their nice value raised by it); 0: the same. As
   * configured until the threads start; 0 from then on if they could not be lowered (@napi-rs/nice did not load).
   */
  readonly nice: number;
  render(task: RenderTask): Promise<RenderResult[]>;
  /**
   * The pipeline is done with a message this renderer made: sent, or never handed to SMTP (`reusable`), or its sending
   * failed (not reusable: a connection that failed may not have let go of the bytes). A slab whose messages are all
   * done, and reusable, carries the next chunk's messages (below); one that is not is left to the garbage collector.
   */
  done?(result: RenderResult, reusable: boolean): void;
  close(): Promise<void>;
}

/** Chunks a thread has at once: one being composed while the signatures of the other are computed. */
const CHUNKS_PER_THREAD = 2;
/** Free slabs kept for later chunks: more than a batch's chunks in flight (WORKER_BATCH_SIZE 100, chunks of 10). */
const MAX_FREE_SLABS = 64;
/** The free slabs' bytes, at most: a send of large messages (slabs of ~1 MB) keeps a few, not 64. */
const MAX_FREE_BYTES = 4 * 1024 * 1024;

type Log = { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };

/**
 * `workerFile`: the module the threads run (render.worker's build or source by default; a test gives another);
 * `local`: how the pipeline's thread makes messages (renderMessages; a test gives another); `nice`: how much lower
 * than the pipeline's thread the threads run (SEND_THREADS_NICE; 0: the same). The send waits on the pipeline's thread
 * (its database and SMTP work), so the threads mostly take the CPU it leaves idle rather than its turns on a core (a
 * scheduler weight, not a strict priority): piscina's `niceIncrement` raises each thread's nice value, on Linux only,
 * where a thread's nice value is its own (on macOS and the BSDs nice(2) would lower the whole process; on Windows a
 * thread's priority is not a nice value).
 */
export function createRenderer(
  threads: number,
  log?: Log,
  { workerFile = programFile('sending/deliveries/render.worker'), local = renderMessages, nice = 0 } = {},
): MessageRenderer {
  if (threads <= 0) return { threads: 0, nice: 0, render: local, close: async () => {} };
  let pool: PiscinaType | null = null;
  let lowerBy = process.platform === 'linux' ? Math.max(0, Math.round(nice)) : 0;
  /** The pool could not start (an unusable flag, no threads left): messages are made in this thread instead. */
  let unavailable = false;
  let closed = false;
  const start = (): PiscinaType | null => {
    if (pool || unavailable) return pool;
    if (lowerBy) {
      // piscina loads it in each thread and says nothing when it cannot: said here, once.
      try {
        niceModule();
      } catch (err) {
        lowerBy = 0;
        log?.warn(
          { err },
          "SEND_THREADS_NICE has no effect: @napi-rs/nice cannot be loaded; the send threads run at the worker's priority",
        );
      }
    }
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
        // A thread composes a chunk while the signatures of the one before are computed in libuv's pool (render.worker):
        // CHUNKS_PER_THREAD chunks at a time; a thread that fails takes those with it.
        concurrentTasksPerWorker: CHUNKS_PER_THREAD,
        atomics: 'disabled',
        // A thread holds a chunk of messages at a time; left to itself V8 lets a busy thread's heap grow to ~100 MB.
        // These limits keep it lower for a little more CPU (bench/README.md, "bench:send"); a chunk that does not fit fails the
        // thread's task, and is made again in the pipeline's thread (below).
        resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 3 },
        niceIncrement: lowerBy,
      });
      // A thread that dies between tasks: piscina replaces it; said, never thrown (an 'error' without a listener would be).
      pool.on('error', (err: unknown) => log?.error({ err }, 'a send thread failed'));
    } catch (err) {
      unavailable = true;
      log?.warn(
        { err },
        `the send threads could not start (${(err as Error).message}); messages are made in the worker's own thread`,
      );
    }
    return pool;
  };

  // Slabs: each chunk's messages come back from its thread in one buffer, moved rather than copied (render.worker.ts,
  // packResults), and the buffer goes back to a thread with a later chunk once the pipeline is done with all of them.
  // A send then allocates a few dozen buffers in all rather than one per message in this thread, where the messages
  // waited for V8's next full collection to give their memory back. A buffer is reused only when every message in it is
  // done with (done(), counted by `left`) and none was in a failed SMTP transaction; any other is left to the collector.
  type Slab = { buffer: ArrayBuffer; left: number; reusable: boolean };
  const free: ArrayBuffer[] = [];
  const slabOf = new WeakMap<RenderResult, Slab>();
  const recycle = (buffer: ArrayBuffer): void => {
    if (
      closed ||
      free.length >= MAX_FREE_SLABS ||
      free.reduce((n, b) => n + b.byteLength, buffer.byteLength) > MAX_FREE_BYTES
    )
      return;
    free.push(buffer);
  };
  const unpack = (answer: RenderResult[] | PackedResults): RenderResult[] => {
    // A thread module that answers with the results alone (tests) keeps its messages' buffers.
    if (Array.isArray(answer)) return answer;
    const slab: Slab = { buffer: answer.buffer, left: 0, reusable: true };
    for (const r of answer.results) {
      if (!r.ok) continue;
      slab.left++;
      slabOf.set(r, slab);
    }
    if (!slab.left) recycle(slab.buffer);
    return answer.results;
  };

  /** A chunk no one has taken yet. `here`: its thread failed on it, so only the pipeline's thread takes it. */
  type Job = { task: RenderTask; here: boolean; resolve: (r: RenderResult[]) => void; reject: (err: unknown) => void };
  /** In order: a free thread takes the first it may, the pipeline's thread the first one failed on. */
  const waiting: Job[] = [];
  let inThreads = 0;
  let remaking = false;

  /** A chunk made in this thread one message per turn of the event loop, so that its I/O waits one message at most. */
  const makeHere = async (task: RenderTask): Promise<RenderResult[]> => {
    const out: RenderResult[] = [];
    for (const item of task.items) {
      await new Promise((resolve) => setImmediate(resolve));
      out.push(...(await local({ ...task, items: [item] })));
    }
    return out;
  };

  const take = (p: PiscinaType): void => {
    while (!closed && inThreads < threads * CHUNKS_PER_THREAD) {
      const i = waiting.findIndex((job) => !job.here);
      if (i < 0) break;
      const job = waiting.splice(i, 1)[0]!;
      inThreads++;
      const slab = free.pop() ?? new ArrayBuffer(SLAB_BYTES);
      p.run({ ...job.task, slab }, { transferList: [slab] })
        .then(
          (answer: RenderResult[] | PackedResults) => job.resolve(unpack(answer)),
          (err: unknown) => {
            // Stopped with the pool: the messages are retried later (the pipeline records a retry, as for a failed thread).
            if (closed) return job.reject(err);
            // A chunk of transactional emails names each (each item carries its own hidden broadcast).
            const emails = job.task.items.flatMap((i) => (i.message ? [i.message.broadcast.id] : []));
            log?.warn(
              { err, ...(emails.length ? { emailIds: emails } : { broadcastId: job.task.sending.broadcast.id }) },
              "a send thread failed on a chunk of messages; making them in the worker's thread",
            );
            job.here = true;
            waiting.unshift(job);
          },
        )
        .finally(() => {
          inThreads--;
          take(p);
        });
    }
    // A chunk a thread failed on: the pipeline's thread makes it, one chunk at a time.
    const first = !closed && !remaking ? waiting.findIndex((job) => job.here) : -1;
    if (first >= 0) {
      remaking = true;
      const job = waiting.splice(first, 1)[0]!;
      makeHere(job.task)
        .then(job.resolve, job.reject)
        .finally(() => {
          remaking = false;
          take(p);
        });
    }
  };
  return {
    threads,
    get nice() {
      return lowerBy;
    },
    render: (task) => {
      if (closed) return Promise.reject(new Error('the send threads were stopped'));
      const p = start();
      if (!p) return local(task);
      return new Promise<RenderResult[]>((resolve, reject) => {
        waiting.push({ task, here: false, resolve, reject });
        take(p);
      });
    },
    done(result, reusable) {
      const slab = slabOf.get(result);
      if (!slab) return;
      // Once per message: a second call must not give the buffer back while another of its messages is in use.
      slabOf.delete(result);
      if (!reusable) slab.reusable = false;
      if (--slab.left === 0 && slab.reusable) recycle(slab.buffer);
    },
    async close() {
      closed = true;
      free.length = 0;
      const p = pool;
      pool = null;
      // Chunks still waiting (those of deliveries the pacer deferred, whose batch returned without them): their
      // messages are retried later, as after a thread's failure; the chunk being made here is finished.
      for (const job of waiting.splice(0)) job.reject(new Error('the send threads were stopped'));
      await p?.destroy();
    },
  };
}
