import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The directory of Formcast's package.json. The code runs from its sources (src/…, under tsx or vitest) and from
 * the build (dist/server/…, bundled), at different depths: files the package ships beside the code (dist/console,
 * dist/embed) are found from here, never by counting `..` from a module.
 */
export const PACKAGE_ROOT = findRoot(path.dirname(fileURLToPath(import.meta.url)));

function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return from;
  }
}

/** True when this code runs from the build (dist/server), false when it runs from the sources. */
export const FROM_BUILD = fileURLToPath(import.meta.url).includes(`${path.sep}dist${path.sep}server${path.sep}`);

/**
 * A module that runs in a thread or process of its own (a worker), as the file to start: `dist/server/<name>.js` from
 * the build (scripts/build.mjs makes every `src/**\/*.worker.ts` an entry point), `src/<name>.ts` from the sources
 * (which then need tsx's loader: `execArgv: ['--import', 'tsx']`). `name` is relative to src/, without extension.
 */
export function programFile(name: string): string {
  return FROM_BUILD
    ? path.join(PACKAGE_ROOT, 'dist/server', `${name}.js`)
    : path.join(PACKAGE_ROOT, 'src', `${name}.ts`);
}
