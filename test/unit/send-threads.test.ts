import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { RenderResult, RenderTask } from '../../src/deliveries/render.worker.js';
import { createRenderer } from '../../src/deliveries/send-threads.js';

// The send threads and the pipeline's share (send-threads.ts): chunks wait in order; a free thread takes the next one,
// and while every thread is busy the pipeline's thread makes one at a time itself, of those a lane waits for (`want`).
const workerFile = fileURLToPath(new URL('../fixtures/send-thread-tags.mjs', import.meta.url));

function task(id: string): RenderTask {
  return { sending: { broadcast: { id: 'b1' } }, items: [{ d: { id } }] } as unknown as RenderTask;
}
const where = (r: RenderResult[]) => (r[0] as { error: string }).error;

describe('send threads with the pipeline thread sharing', () => {
  it('gives each chunk its own messages, made by the thread or, while it is busy and a lane waits, by the pipeline thread', async () => {
    let here = 0;
    let hereAtOnce = 0;
    let hereMost = 0;
    const renderer = createRenderer(1, undefined, {
      workerFile,
      local: async (t) => {
        here++;
        hereMost = Math.max(hereMost, ++hereAtOnce);
        await new Promise((resolve) => setTimeout(resolve, 5));
        hereAtOnce--;
        return t.items.map((item) => ({ ok: false as const, error: `here:${item.d.id}` }));
      },
    });
    try {
      const ids = Array.from({ length: 12 }, (_, i) => `d${i}`);
      const chunks = ids.map((id) => renderer.render(task(id)));
      // Lanes wait for every chunk.
      for (const chunk of chunks) renderer.want(chunk);
      const results = await Promise.all(chunks);
      // Every chunk answered with its own message, in its place.
      expect(results.map((r) => where(r).split(':')[1])).toEqual(ids);
      const byThread = results.filter((r) => where(r).startsWith('thread:')).length;
      expect(byThread).toBeGreaterThanOrEqual(1);
      expect(here).toBe(12 - byThread);
      expect(here).toBeGreaterThanOrEqual(1);
      // The pipeline thread never makes two chunks at once.
      expect(hereMost).toBe(1);
    } finally {
      await renderer.close();
    }
  });

  it('leaves to the threads the chunks no lane waits for', async () => {
    let here = 0;
    const renderer = createRenderer(1, undefined, { workerFile, local: async (t) => (here++, t.items.map((item) => ({ ok: false as const, error: `here:${item.d.id}` }))) });
    try {
      const ids = ['d0', 'd1', 'd2', 'd3'];
      const chunks = ids.map((id) => renderer.render(task(id)));
      // A lane waits for the last chunk only: the share makes it, the thread the others, one after the other.
      renderer.want(chunks[3]!);
      const results = await Promise.all(chunks);
      expect(results.map(where)).toEqual(['thread:d0', 'thread:d1', 'thread:d2', 'here:d3']);
      expect(here).toBe(1);
    } finally {
      await renderer.close();
    }
  });

  it("makes a chunk a thread failed on in the pipeline's thread, before the chunks that wait", async () => {
    const failing = fileURLToPath(new URL('../fixtures/send-thread-fails.mjs', import.meta.url));
    const warned: string[] = [];
    const log = { warn: (_: object, msg: string) => warned.push(msg), error: () => {} };
    const made: string[] = [];
    const renderer = createRenderer(1, log, { workerFile: failing, local: async (t) => t.items.map((item) => (made.push(item.d.id), { ok: false as const, error: `here:${item.d.id}` })) });
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
    renderer.want(pending[1]!);
    // Handled from the start: the chunk in the thread is rejected while the pool is being stopped.
    const outcomes = pending.map((p, i) => (i === 1 ? Promise.resolve(null) : p.then(() => 'made', (err: unknown) => String(err))));
    // Let the first chunk reach the thread and the second the pipeline's thread (which never finishes here).
    await new Promise((resolve) => setImmediate(resolve));
    const closed = renderer.close();
    await closed;
    // The chunk that was in the thread is stopped with it (retried later, not made again here); the waiting ones are
    // refused; the one the pipeline's thread was making is its own (it never ends in this test).
    const [inThread, , third, fourth] = await Promise.all(outcomes);
    expect(inThread).toMatch(/Terminating worker thread|stopped/);
    expect(third).toMatch(/send threads were stopped/);
    expect(fourth).toMatch(/send threads were stopped/);
    await expect(renderer.render(task('late'))).rejects.toThrow(/send threads were stopped/);
  });

  it('makes everything in the pipeline thread when there are no threads (SEND_THREADS=0)', async () => {
    const renderer = createRenderer(0, undefined, { workerFile, local: async (t) => t.items.map((item) => ({ ok: false as const, error: `here:${item.d.id}` })) });
    expect(renderer.threads).toBe(0);
    const chunk = renderer.render(task('d1'));
    renderer.want(chunk);
    expect(where(await chunk)).toBe('here:d1');
    await renderer.close();
  });
});
