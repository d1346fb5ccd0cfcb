import { applyLeanHeap } from '../lib/lean-heap.js';

// Imported first by main.ts, so that V8's heap is set lean (lib/lean-heap.ts) before the program loads: its young
// generation would otherwise have grown while the modules were read. The default of `formcast worker`, which only sends.
applyLeanHeap(process.env, process.argv[2] === 'worker');
