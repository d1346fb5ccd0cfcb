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

/** V8's own growth factor of the young generation (`node --v8-options`), given back by startupDone(). */
const V8_SEMI_SPACE_GROWTH_FACTOR = 2;
let leanForStartup = false;

/**
 * `formcast serve` without LEAN_HEAP: the young generation kept at its first size while the process starts (the
 * program's modules compiled, the database migrated), then V8's own growth once it serves (startupDone). Start-up
 * leaves much that survives a scavenge, from which V8 grows the young generation to its largest (16 MB semi-spaces), and
 * an idle server kept it until V8's memory reducer shrank it, seconds later: bench:startup's idle RSS was 97-101 MB,
 * 90 MB with this (start-up 30 ms more CPU). Under load V8 grows it again as it would.
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

