import fs from 'node:fs';
import os from 'node:os';

/**
 * Lowers the scheduling priority of the calling thread only (its nice value raised by `by`, at most 19), for threads
 * whose work is throughput and never latency: the send threads (deliveries/send-threads.ts, SEND_THREADS_NICE). The
 * kernel then runs them on whatever CPU the process's own thread (the database, SMTP, HTTP) and the machine's other
 * work leave idle, instead of sharing a core with them turn by turn.
 *
 * Linux only: a thread is addressed by its id there (setpriority(2) with a thread id changes that thread alone), read
 * from /proc/thread-self. Elsewhere, or when the kernel refuses, nothing changes. Returns the nice value set, or null.
 */
export function lowerThreadPriority(by: number): number | null {
  if (!(by > 0)) return null;
  let tid: number;
  try {
    tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
  } catch {
    return null;
  }
  if (!Number.isInteger(tid) || tid <= 0) return null;
  try {
    // Relative to what the thread inherited (a process started with `nice` keeps its own offset).
    const nice = Math.min(19, os.getPriority(tid) + Math.round(by));
    os.setPriority(tid, nice);
    return os.getPriority(tid);
  } catch {
    return null;
  }
}

/** The calling thread's nice value, or null where threads cannot be addressed (tests read it). */
export function threadPriority(): number | null {
  try {
    return os.getPriority(Number(fs.readlinkSync('/proc/thread-self').split('/').pop()));
  } catch {
    return null;
  }
}
