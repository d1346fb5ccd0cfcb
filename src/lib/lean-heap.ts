import { setFlagsFromString } from 'node:v8';

/**
 * V8's heap kept lean (LEAN_HEAP; docs/sending.md, "Memory"). V8 sizes its heap for speed, and a process that sends
 * let it grow ~90 MB beyond what it held. Two of its heuristics, which it reads at each collection, are set instead of
 * its defaults: the young generation keeps its first size (1 MB semi-spaces, where V8 grows them to 16 MB), and the old
 * one grows by 15 % of what survived the last full collection. Neither is a limit: a process that holds more still
 * gets the memory. The trade, measured (bench/README.md): a send of 20,000 messages peaked at ~180 MB instead of
 * ~250–320 MB at the same rate, but a spike of sign-ups, whose requests leave much short-lived garbage, took ~40 % more CPU
 * per request. So it is the default of `formcast worker` (sending, no HTTP) only; LEAN_HEAP=true or false decides.
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
