import { isMainThread } from 'node:worker_threads';
import type * as PiscinaModule from 'piscina';
import { lazyRequire } from '../../lib/lazy.js';
import { applyLeanHeap } from '../../lib/lean-heap.js';
import { isRenderLimit } from '../../lib/liquid.js';
import type { RelayProfileName } from '../../mail/relay-profiles.js';
import { buildRawAsync } from '../../mail/transport.js';
import { composeMessage, prepareBroadcast, type MessageRecipient, type PreparedBroadcast } from './message.js';
import type { ClaimedDelivery, SendingBroadcast } from './store.js';

/**
 * Renders, composes and DKIM-signs messages (deliveries/CONTEXT.md, "Send threads"): the CPU of a send, run in the
 * send threads (send-threads.ts) so that the pipeline's thread keeps only the database and SMTP. The same function
 * runs in-thread when SEND_THREADS=0.
 */

/** One chunk of deliveries of one broadcast. Everything in it crosses threads by structured clone. */
export interface RenderTask {
  publicUrl: string;
  secret: Uint8Array;
  relayProfile: RelayProfileName;
  /** The broadcast as the pipeline read it; `broadcast.updatedAt` tells a new version from the one prepared. */
  sending: SendingBroadcast;
  /**
   * `message`: this item's own broadcast and parts, with the rest of `sending` (workspace, topic, signing key): a chunk
   * of transactional emails, each a hidden broadcast of its own, goes to a thread as one task (a task per email cost
   * a thread message each: bench:emails, e2e).
   */
  items: {
    d: ClaimedDelivery;
    contact: MessageRecipient;
    message?: Pick<SendingBroadcast, 'broadcast' | 'transactional'>;
  }[];
  /**
   * Set by the send threads (send-threads.ts), not by the pipeline: a buffer of an earlier chunk, moved to the thread,
   * into which the thread writes this chunk's messages (packResults).
   */
  slab?: ArrayBuffer;
}

/** Per item, in the task's order: the signed message with its envelope, or why it could not be made. */
export type RenderResult =
  | { ok: true; raw: Uint8Array; from: string; to: string; messageId: string }
  /** `retry`: the failure says nothing about the message (the thread failed), so it is made again later. */
  | { ok: false; error: string; retry?: boolean };

/**
 * What a broadcast's version fixes (its templates parsed, its From and Reply-To read), per thread. The rest of the task
 * (the signing key, the workspace's footer settings, the topic) is taken from each task as the pipeline read it: a key
 * rotated or a postal address changed during a send is used from the next batch on.
 */
const prepared = new Map<string, PreparedBroadcast>();

function preparedFor(sending: SendingBroadcast): PreparedBroadcast {
  // A transactional email is made once (a few recipients) and may carry 10 MB of attachments: not kept.
  if (sending.transactional) return prepareBroadcast(sending);
  const key = `${sending.broadcast.id}\u0000${sending.broadcast.updatedAt}`;
  let p = prepared.get(key);
  if (!p) {
    if (prepared.size >= 100) prepared.clear();
    p = prepareBroadcast(sending);
    prepared.set(key, p);
  }
  return {
    ...p,
    workspace: sending.workspace,
    topic: sending.topic,
    dkim: sending.dkim,
    trackingHost: sending.trackingHost ?? null,
  };
}

// A thread's start set V8's process-wide flags back to Node's: the lean heap is set again (lib/lean-heap.ts). Only in
// a send thread: in the process's main thread (where this module is loaded too) cli/main.ts decided.
if (!isMainThread) applyLeanHeap();

export async function renderMessages(task: RenderTask): Promise<RenderResult[]> {
  const shared = task.items.some((item) => !item.message) ? preparedFor(task.sending) : null;
  const ctx = {
    publicUrl: task.publicUrl,
    secret: Buffer.from(task.secret.buffer, task.secret.byteOffset, task.secret.byteLength),
    relayProfile: task.relayProfile,
  };
  // Each message composed here, its signature computed in libuv's thread pool while the next one is composed.
  const out: Promise<RenderResult>[] = [];
  for (const { d, contact, message: own } of task.items) {
    // Outside the item's try, as for a task's shared broadcast: a failure here fails the task, whose messages are then
    // made again later (retried), not this item for good.
    const p = own ? preparedFor({ ...task.sending, ...own }) : shared!;
    let message: ReturnType<typeof composeMessage>;
    try {
      message = composeMessage(ctx, d, p, contact);
    } catch (err) {
      // Over the render limit (wall-clock time: a loaded machine can pass it with an ordinary template): made again
      // later, up to the attempts allowed; a template that is really too slow fails at once each time (the latch).
      out.push(
        Promise.resolve({
          ok: false,
          error: `the content could not be rendered: ${(err as Error).message.split('\n')[0]}`,
          ...(isRenderLimit(err) ? { retry: true } : {}),
        }),
      );
      continue;
    }
    out.push(
      buildRawAsync(message).then(
        (raw): RenderResult => ({
          ok: true,
          raw,
          from: message.returnPath,
          to: message.to,
          messageId: message.messageId,
        }),
        (err: unknown): RenderResult => ({
          ok: false,
          error: `the message could not be built: ${(err as Error).message.split('\n')[0]}`,
        }),
      ),
    );
  }
  return Promise.all(out);
}

/** The size of a slab: a chunk of ten messages of ~5 KB fits (a chunk that does not gets a buffer of its own). */
export const SLAB_BYTES = 64 * 1024;

/** What a send thread answers: the chunk's results, whose messages are views into one buffer. */
export interface PackedResults {
  results: RenderResult[];
  buffer: ArrayBuffer;
}

/**
 * The chunk's messages copied into one buffer, `slab` when they fit (else a new one), each result's `raw` a view into
 * it: the buffer is then moved to the pipeline's thread, not copied, and the pipeline's thread gives it to the next
 * chunk once its messages are sent (send-threads.ts, "slabs"). Copied one by one, the messages of a send left ~4.7 KB
 * of malloc'd memory each in the pipeline's thread, freed only by V8's next full collection (bench/README.md,
 * "bench:send").
 */
export function packResults(out: RenderResult[], slab?: ArrayBuffer): PackedResults {
  let total = 0;
  for (const r of out) if (r.ok) total += r.raw.byteLength;
  const buffer =
    slab && slab.byteLength >= total ? slab : new ArrayBuffer(Math.ceil(Math.max(total, 1) / SLAB_BYTES) * SLAB_BYTES);
  const all = new Uint8Array(buffer);
  let at = 0;
  for (const r of out) {
    if (!r.ok) continue;
    const n = r.raw.byteLength;
    all.set(r.raw, at);
    r.raw = all.subarray(at, at + n);
    at += n;
  }
  return { results: out, buffer };
}

const piscina = lazyRequire<typeof PiscinaModule>('piscina');

/** In a send thread: the chunk made, its messages packed into the slab the task brought, and that buffer moved back. */
async function renderInThread(task: RenderTask) {
  const packed = packResults(await renderMessages(task), task.slab);
  const { move, transferableSymbol, valueSymbol } = piscina();
  return move({ [transferableSymbol]: [packed.buffer], [valueSymbol]: packed } as unknown as ArrayBuffer);
}

export default isMainThread ? renderMessages : renderInThread;
