// The embed runtime (src/forms/hosted/embed.runtime.ts) compiled for the browsers of the sites that include embed.js:
// `buildEmbed(rootDir)` writes dist/embed/runtime.js (scripts/build.mjs calls it, so `npm install` does;
// `node scripts/build-embed.mjs` runs it alone). The server only reads that file (src/forms/hosted/embed.ts): esbuild
// is a build tool, a dev dependency, never loaded at run time. The test runner builds it again when it is missing or
// older than its inputs (`buildEmbedIfStale`, test/global-setup.ts), so tests running from the sources never see a
// stale build.
//
// The output is a script that calls `runEmbed(cfg)`, inside an arrow IIFE so that it declares nothing global; `cfg` is
// left unbound: the server serves it as `(function (cfg) { 'use strict'; <this> })(<the form's configuration>)`.
// Target ES2018 (every browser with Shadow DOM v1 and fetch; tsconfig.embed.json keeps the built-ins to ES2018 as
// well). Minified: the script is fetched by every visitor of every page that carries a form, and minifying takes the
// runtime from 19.2 kB to 10.3 kB (5.2 kB to 4.0 kB gzipped, 4.6 kB to 3.6 kB with brotli); the readable source is
// src/forms/hosted/embed.runtime.ts, and the minifier keeps its strings and its logic as they are.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The runtime's source, relative to the package root. */
export const EMBED_SOURCE = 'src/forms/hosted/embed.runtime.ts';
/** Where the build puts it, relative to the package root. */
export const EMBED_OUTPUT = 'dist/embed/runtime.js';
/** What the output depends on (the runtime is one file, and these options): the build is stale when one is newer. */
export const EMBED_INPUTS = [EMBED_SOURCE, 'scripts/build-embed.mjs'];

function options(rootDir) {
  return {
    stdin: {
      contents: `import { runEmbed } from ${JSON.stringify(`./${EMBED_SOURCE}`)};\nrunEmbed(cfg);\n`,
      resolveDir: rootDir,
      sourcefile: 'embed-entry.ts',
      loader: 'ts',
    },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2018',
    minify: true,
    legalComments: 'none',
    charset: 'ascii',
    logLevel: 'silent',
    write: false,
  };
}

/** The compiled runtime as text. */
export async function compileEmbed(rootDir) {
  const { build } = await import('esbuild');
  const result = await build(options(rootDir));
  return result.outputFiles[0].text;
}

/** Compiles the runtime into `dist/embed/runtime.js` under `rootDir` (says so and skips it without esbuild). */
export async function buildEmbed(rootDir) {
  try {
    await import('esbuild');
  } catch {
    console.warn(
      `build: esbuild is not installed; the embed runtime (${EMBED_OUTPUT}) was not built, and embed.js answers 503 until it is`,
    );
    return;
  }
  const started = Date.now();
  const text = await compileEmbed(rootDir);
  const out = path.join(rootDir, EMBED_OUTPUT);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, text);
  console.warn(
    `build: embed runtime built into ${EMBED_OUTPUT} (${text.length} bytes) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}

/** Builds the runtime under `rootDir` when its build is missing or older than one of its inputs; true when it did. */
export async function buildEmbedIfStale(rootDir) {
  const mtime = (file) => fs.statSync(path.join(rootDir, file), { throwIfNoEntry: false })?.mtimeMs;
  const built = mtime(EMBED_OUTPUT);
  if (built !== undefined && EMBED_INPUTS.every((file) => (mtime(file) ?? 0) <= built)) return false;
  await buildEmbed(rootDir);
  return true;
}

// Run directly (`node scripts/build-embed.mjs`), not imported by scripts/build.mjs or bundled into the server (where
// this code lives in dist/server/…, under another name).
function runDirectly() {
  const self = fileURLToPath(import.meta.url);
  try {
    return path.basename(self) === 'build-embed.mjs' && !!process.argv[1] && fs.realpathSync(process.argv[1]) === self;
  } catch {
    return false;
  }
}

if (runDirectly()) {
  buildEmbed(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')).catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
