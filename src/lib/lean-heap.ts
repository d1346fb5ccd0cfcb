import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * V8's heap kept lean (LEAN_HEAP; docs/sending.md, "Memory"). V8 sizes its heap for speed, and a process that sends
 * let it grow far beyond what it held. Two of its heuristics, which it reads at each collection, are set instead of
 * its defaults: the young generation keeps its first size (1 MB semi-spaces, where V8 grows them to 16 MB), and the old
 * one grows by 15 % of what survived the last full collection. Neither is a limit: a process that holds more still
 * gets the memory. The trade (bench/README.md, bench:send, "LEAN_HEAP"): a send peaked far lower at the same rate, but
 * a spike of sign-ups, whose requests leave much short-lived garbage, took ~40 % more CPU per request. So it is the
 * default of `formcast worker` (sending, no HTTP) only; LEAN_HEAP=true or false decides.
 *
 * Node sets V8's process-wide flags again from its own options when a thread starts, so each send thread applies
 * these again once it runs (render.worker.ts).
 */
export const LEAN_HEAP_FLAGS = ['--semi-space-growth-factor=1', '--heap-growing-percent=15'] as const;

/** LEAN_HEAP as set, or `fallback` (the command's default) when it is not; a value other than true or false: not lean. */
export function leanHeapWanted(env: NodeJS.ProcessEnv, fallback: boolean): boolean {
  const raw = env.LEAN_HEAP;
  return raw === 'true' || ((raw === undefined || raw === '') && fallback);
}

/**
 * Called first thing in a process (cli/main.ts) and in each send thread. A wrong value is left as it is, for the
 * configuration to refuse (config.ts).
 */
export function applyLeanHeap(env: NodeJS.ProcessEnv = process.env, fallback = false): boolean {
  if (!leanHeapWanted(env, fallback)) return false;
  // Said for the send threads too: a thread gets a copy of the process's environment.
  env.LEAN_HEAP = 'true';
  for (const flag of LEAN_HEAP_FLAGS) setFlagsFromString(flag);
  return true;
}

/** V8's own growth factor of the young generation (`node --v8-options`), given back by startupDone(). */
const V8_SEMI_SPACE_GROWTH_FACTOR = 2;
let leanForStartup = false;

/**
 * `formcast serve` without LEAN_HEAP: the young generation kept at its first size while the process starts (the
 * program's modules compiled, the database migrated), then V8's own growth once it serves (startupDone). Start-up
 * leaves much that survives a scavenge, from which V8 grows the young generation to its largest (16 MB semi-spaces), and
 * an idle server kept it until V8's memory reducer shrank it, seconds later: ~10 MB more idle RSS (bench/README.md,
 * bench:startup, with what it costs the start). Under load V8 grows it again as it would.
 */
export function leanWhileStarting(env: NodeJS.ProcessEnv = process.env): void {
  if (leanHeapWanted(env, false)) return;
  setFlagsFromString('--semi-space-growth-factor=1');
  leanForStartup = true;
}

/** The end of start-up: V8's own growth of the young generation again (after leanWhileStarting; otherwise nothing). */
export function startupDone(): void {
  if (!leanForStartup) return;
  leanForStartup = false;
  setFlagsFromString(`--semi-space-growth-factor=${V8_SEMI_SPACE_GROWTH_FACTOR}`);
}

/** The young generation's size (both semi-spaces) at which sending stops growing it: 4 MB semi-spaces, V8's go to 16 MB. */
const SENDING_YOUNG_BYTES = 8 * 1024 * 1024;
/**
 * How long after the last batch the heap is given V8's own growth again. Long enough that a send whose batches wait for
 * a slow destination stays one send (each start costs a full collection), short enough that serve's heap is its own soon
 * after.
 */
const SENDING_IDLE_MS = 30_000;

export interface SendingHeap {
  /** A batch of deliveries was taken: the heap is kept lean from now until SENDING_IDLE_MS after the last one. */
  sending(): void;
  close(): void;
}

/**
 * The heap while the process sends, when it is not lean anyway (LEAN_HEAP false: `formcast serve`). A send holds little
 * (a batch of messages at a time) but makes much short-lived garbage, and with V8's defaults serve's peak RSS while
 * sending was 260-330 MB at 20,000 recipients (bench/README.md, "bench:send"): the young generation grown to its
 * largest (16 MB semi-spaces, 32 MB) and the old one let grow well beyond what survives. So from the first batch until
 * `idleMs` (30 s) after the last one, the old generation grows by 15 % of what survived (as LEAN_HEAP), and the young one stops
 * growing once it has 4 MB semi-spaces (LEAN_HEAP keeps 1 MB, which cost most of its CPU). Afterwards V8's own growth
 * again, so that a spike of sign-ups when nothing is sent gets the heap it is fastest with. The flags are process-wide
 * (the send threads' heaps too) and V8 reads them at each collection; a thread that starts sets them back to Node's
 * (lean-heap's note above), so they are set again at each batch.
 */
export function createSendingHeap(
  env: NodeJS.ProcessEnv = process.env,
  { idleMs = SENDING_IDLE_MS, youngBytes = SENDING_YOUNG_BYTES } = {},
): SendingHeap {
  if (leanHeapWanted(env, false)) return { sending() {}, close() {} };
  let timer: NodeJS.Timeout | null = null;
  let observer: PerformanceObserver | null = null;
  const youngSize = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
  /** After each collection while sending: the young generation stops growing once it has reached its size. */
  const capYoung = () =>
    setFlagsFromString(`--semi-space-growth-factor=${youngSize() >= youngBytes ? 1 : V8_SEMI_SPACE_GROWTH_FACTOR}`);
  const lean = () => {
    setFlagsFromString('--heap-growing-percent=15');
    capYoung();
  };
  const idle = () => {
    timer = null;
    observer?.disconnect();
    observer = null;
    setFlagsFromString('--heap-growing-percent=0');
    setFlagsFromString(`--semi-space-growth-factor=${V8_SEMI_SPACE_GROWTH_FACTOR}`);
  };
  return {
    sending() {
      if (timer) {
        timer.refresh();
        // Set again at each batch: a send thread that started meanwhile set them back.
        lean();
        return;
      }
      timer = setTimeout(idle, idleMs).unref();
      lean();
      observer = new PerformanceObserver(capYoung);
      observer.observe({ entryTypes: ['gc'] });
      // V8 computes the old generation's limit at each full collection: without one now, the limit set while the
      // process served (V8's own growth) holds until the old generation reaches it, ~30 MB more than it keeps.
      fullCollection();
    },
    close() {
      // V8's own growth again (a process that stops its jobs may go on, as the tests do).
      if (timer) {
        clearTimeout(timer);
        idle();
      }
    },
  };
}

let collect: (() => void) | null = null;
/** One full collection (V8's `gc()`, which Node exposes only with --expose-gc: the flag set, then the function taken from a new context). */
function fullCollection(): void {
  if (!collect) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  }
  collect();
}
