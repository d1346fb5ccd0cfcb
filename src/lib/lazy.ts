import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

/**
 * A CommonJS package loaded on its first use instead of when the process starts. Every command loads the whole
 * program, and most of it never needs the heavy packages (a MIME parser, a DKIM library, an HTML sanitiser, the
 * PostgreSQL driver on SQLite): loaded eagerly they cost `formcast serve` ~0.5 s of CPU and ~40 MB at each start
 * (bench/README.md, "Start-up"). The type is the package's own: `import type * as Pkg from 'pkg'`, then `lazyRequire<typeof Pkg>('pkg')`.
 */
export function lazyRequire<T>(id: string): () => T {
  let mod: T | undefined;
  return () => (mod ??= load(id) as T);
}
