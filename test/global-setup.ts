/**
 * Once before the suites: the embed runtime (dist/embed/runtime.js) built again when it is missing or older than its
 * source, as `npm run build` would. The server only reads that file (src/forms/hosted/embed.ts), and the tests run
 * from the sources, perhaps right after an edit of src/forms/hosted/embed.runtime.ts: they must not test a stale build.
 */
import { buildEmbedIfStale } from '../scripts/build-embed.mjs';
import { PACKAGE_ROOT } from '../src/lib/paths.js';

export async function setup(): Promise<void> {
  await buildEmbedIfStale(PACKAGE_ROOT);
}
