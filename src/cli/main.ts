import { applyLeanHeap, leanWhileStarting } from '../lib/lean-heap.js';

/**
 * The command line's entry (bin/formcast; the program itself is program.ts). V8's heap is set lean here
 * (lib/lean-heap.ts, by default for `formcast worker` only), before the program is loaded: loading it grows the
 * young generation that the setting keeps at its first size. In the build the program is a chunk of its own, loaded by
 * the dynamic import below, so nothing of it runs before.
 */
applyLeanHeap(process.env, process.argv[2] === 'worker');
// `serve` without it: lean while it starts only (serve.ts ends it once it serves).
if (process.argv[2] === 'serve') leanWhileStarting();
await import('./program.js');
