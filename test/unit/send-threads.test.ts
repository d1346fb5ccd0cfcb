import fs from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  packResults,
  SLAB_BYTES,
  type RenderResult,
  type RenderTask,
} from '../../src/sending/deliveries/render.worker.js';
import { createRenderer } from '../../src/sending/deliveries/send-threads.js';

// The send threads (send-threads.ts): chunks wait in order and a free thread takes the next one; the pipeline's thread
// makes only a chunk a thread failed on, one at a time, before the chunks that wait.
const workerFile = fileURLToPath(new URL('../fixtures/send-thread-tags.mjs', import.meta.url));

function task(id: string): RenderTask {
  return { sending: { broadcast: { id: 'b1' } }, items: [{ d: { id } }] } as unknown as RenderTask;
}
const where = (r: RenderResult[]) => (r[0] as { error: string }).error;

describe('send threads', () => {
  it('gives each chunk its own messages, all made by the thread while it works', async () => {
    let here = 0;
    const renderer = createRenderer(1, undefined, {
      workerFile,
      local: async (t) => (here++, t.items.map((item) => ({ ok: false as const, error: `here:${item.d.id}` }))),
    });
    try {
      const ids = Array.from({ length: 8 }, (_, i) => `d${i}`);
      const results = await Promise.all(ids.map((id) => renderer.render(task(id))));
      // Every chunk answered with its own message, in its place, by the thread.
      expect(results.map(where)).toEqual(ids.map((id) => `thread:${id}`));
      expect(here).toBe(0);
    } finally {
      await renderer.close();
    }
  });

  it("makes a chunk a thread failed on in the pipeline's thread, before the chunks that wait", async () => {
    const failing = fileURLToPath(new URL('../fixtures/send-thread-fails.mjs', import.meta.url));
    const warned: string[] = [];
    const log = { warn: (_: object, msg: string) => warned.push(msg), error: () => {} };
    const made: string[] = [];
    const renderer = createRenderer(1, log, {
      workerFile: failing,
      local: async (t) =>
        t.items.map((item) => (made.push(item.d.id), { ok: false as const, error: `here:${item.d.id}` })),
    });
    try {
      const results = await Promise.all(['d0', 'd1', 'd2'].map((id) => renderer.render(task(id))));
      expect(results.map(where)).toEqual(['here:d0', 'here:d1', 'here:d2']);
      expect(made.sort()).toEqual(['d0', 'd1', 'd2']);
      expect(warned.length).toBeGreaterThanOrEqual(1);
      expect(warned[0]).toMatch(/a send thread failed on a chunk/);
    } finally {
      await renderer.close();
    }
  });

  it('settles every chunk when it is closed with chunks still waiting, and takes none after', async () => {
    const renderer = createRenderer(1, undefined, { workerFile, local: () => new Promise<RenderResult[]>(() => {}) });
    const pending = Array.from({ length: 4 }, (_, i) => renderer.render(task(`d${i}`)));
    // Handled from the start: the chunk in the thread is rejected while the pool is being stopped.
    const outcomes = pending.map((p) =>
      p.then(
        () => 'made',
        (err: unknown) => String(err),
      ),
    );
    // Let the first two chunks reach the thread (it takes two at a time: one composed while the other is signed); the
    // others wait.
    await new Promise((resolve) => setImmediate(resolve));
    await renderer.close();
    // The chunks that were in the thread are stopped with it (retried later, not made again here); the waiting ones
    // are refused, and the pipeline's thread made none of them.
    const [inThread, second, third, fourth] = await Promise.all(outcomes);
    expect(inThread).toMatch(/Terminating worker thread|stopped/);
    expect(second).toMatch(/Terminating worker thread|stopped/);
    expect(third).toMatch(/send threads were stopped/);
    expect(fourth).toMatch(/send threads were stopped/);
    await expect(renderer.render(task('late'))).rejects.toThrow(/send threads were stopped/);
  });

  it("gives a chunk's buffer to a later chunk once every message in it is done with, and only after a clean send", async () => {
    const renderer = createRenderer(1, undefined, {
      workerFile: fileURLToPath(new URL('../fixtures/send-thread-slabs.mjs', import.meta.url)),
    });
    const made = (r: RenderResult[]) => r.map((m) => (m as { messageId: string }).messageId);
    const chunk = (...ids: string[]) =>
      ({ ...task(ids[0]!), items: ids.map((id) => ({ d: { id } })) }) as unknown as RenderTask;
    try {
      const first = await renderer.render(chunk('a1', 'a2'));
      expect(made(first)).toEqual(['a1:new', 'a2:new']);
      // The messages are views into the chunk's one buffer.
      const raw = first.map((m) => (m as { raw: Uint8Array }).raw);
      expect(raw[0]!.buffer).toBe(raw[1]!.buffer);
      // One message of two done with: the buffer is still in use.
      renderer.done!(first[0]!, true);
      renderer.done!(first[0]!, true); // twice counts once
      expect(made(await renderer.render(chunk('b1')))).toEqual(['b1:new']);
      // Both done with (sent, or never handed to SMTP): the next chunk is written into it.
      renderer.done!(first[1]!, true);
      const third = await renderer.render(chunk('c1'));
      expect(made(third)).toEqual(['c1:reused']);
      // A message whose SMTP transaction failed: its buffer is never written again.
      renderer.done!(third[0]!, false);
      const fourth = await renderer.render(chunk('d1'));
      expect(made(fourth)).toEqual(['d1:new']);
    } finally {
      await renderer.close();
    }
  });

  it("packs a chunk's messages into the slab it brought, or into a buffer of its own when they do not fit", () => {
    const ok = (text: string): RenderResult => ({
      ok: true,
      raw: new TextEncoder().encode(text),
      from: 'a@acme.test',
      to: 'b@example.com',
      messageId: `<${text}@acme.test>`,
    });
    const slab = new ArrayBuffer(SLAB_BYTES);
    const packed = packResults([ok('first'), { ok: false, error: 'no' }, ok('second')], slab);
    expect(packed.buffer).toBe(slab);
    const texts = packed.results.map((r) => (r.ok ? Buffer.from(r.raw).toString() : r.error));
    expect(texts).toEqual(['first', 'no', 'second']);
    expect(packed.results.filter((r) => r.ok).every((r) => r.ok && r.raw.buffer === slab)).toBe(true);
    // Larger than the slab: a buffer of whole slabs, the slab not used.
    const big = packResults([ok('x'.repeat(SLAB_BYTES)), ok('y')], slab);
    expect(big.buffer).not.toBe(slab);
    expect(big.buffer.byteLength).toBe(2 * SLAB_BYTES);
    expect(big.results.map((r) => (r.ok ? r.raw.byteLength : 0))).toEqual([SLAB_BYTES, 1]);
  });

  it('makes everything in the pipeline thread when there are no threads (SEND_THREADS=0)', async () => {
    const renderer = createRenderer(0, undefined, {
      workerFile,
      local: async (t) => t.items.map((item) => ({ ok: false as const, error: `here:${item.d.id}` })),
    });
    expect(renderer.threads).toBe(0);
    expect(where(await renderer.render(task('d1')))).toBe('here:d1');
    await renderer.close();
  });

  // SEND_THREADS_NICE: piscina's niceIncrement, Linux only (a thread's own priority, read through /proc/thread-self).
  const threadPriority = () => os.getPriority(Number(fs.readlinkSync('/proc/thread-self').split('/').pop()));
  const linux = process.platform === 'linux' && fs.existsSync('/proc/thread-self');
  const base = linux ? threadPriority() : null;
  it.skipIf(base === null || base > 12)(
    "runs its threads below the pipeline's thread by SEND_THREADS_NICE, and leaves that thread as it was",
    async () => {
      const priorityFile = fileURLToPath(new URL('../fixtures/send-thread-priority.ts', import.meta.url));
      const lowered = createRenderer(2, undefined, { workerFile: priorityFile, nice: 7 });
      const same = createRenderer(1, undefined, { workerFile: priorityFile, nice: 0 });
      try {
        expect([lowered.nice, same.nice]).toEqual([7, 0]);
        const results = await Promise.all([
          lowered.render(task('d1')),
          lowered.render(task('d2')),
          same.render(task('d3')),
        ]);
        expect(results.map(where)).toEqual([`nice:${base! + 7}`, `nice:${base! + 7}`, `nice:${base}`]);
        expect(threadPriority()).toBe(base);
      } finally {
        await Promise.all([lowered.close(), same.close()]);
      }
    },
  );

  it.skipIf(base === null || base > 12)('lowers the thread piscina starts in place of one that died', async () => {
    const priorityFile = fileURLToPath(new URL('../fixtures/send-thread-priority.ts', import.meta.url));
    const renderer = createRenderer(1, undefined, {
      workerFile: priorityFile,
      nice: 5,
      local: async (t) => t.items.map((item) => ({ ok: false as const, error: `here:${item.d.id}` })),
    });
    try {
      expect(where(await renderer.render(task('d1')))).toBe(`nice:${base! + 5}`);
      // The thread dies on this chunk: made in the pipeline's thread instead, and the next goes to a new thread.
      expect(where(await renderer.render(task('die')))).toBe('here:die');
      expect(where(await renderer.render(task('d2')))).toBe(`nice:${base! + 5}`);
    } finally {
      await renderer.close();
    }
  });
});
