// `npm run build`, and `prepare` (so `npm install` / `npm ci` build everything): the server into dist/server, the
// console into dist/console (console/prepare.mjs), the embed runtime into dist/embed when its builder exists, and the
// SDK into packages/sdk/dist (scripts/build-sdk.mjs).
//
// The server is bundled by esbuild (a dev dependency, as the other build tools; tsx, a dependency, brings it along, so
// it is there with `npm ci --omit=dev` too; without it the sources run through tsx). One ESM file with the
// pure-JavaScript packages inside it starts in ~0.35 s of CPU and idles at ~90 MB, where the same code loaded
// module by module from src/ through tsx took ~3 s and ~200 MB (bench/README.md, "Start-up"). Packages stay outside
// the bundle when they are native (better-sqlite3, argon2), ship files they read at run time (the Swagger UI), run
// threads from files of their own (piscina), or are loaded lazily on first use (src/lib/lazy.ts): bundling those
// would load them at start again. @formcast/form-appearance (packages/form-appearance, TypeScript sources shared with
// the console) is bundled like src/. bin/formcast runs the build when it is newer than every source file, and the
// sources through tsx otherwise, so an edit is never shadowed by a stale build.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const started = Date.now();

/** Packages left to Node at run time (see above); every other import is bundled. */
const EXTERNAL = new Set([
  'better-sqlite3',
  '@node-rs/argon2',
  'pg',
  'pg-native',
  '@fastify/swagger',
  'mailparser',
  'mailauth',
  'sanitize-html',
  'html-to-text',
  'mjml',
  'smtp-server',
  'piscina',
  'sharp',
  'tsx',
  'esbuild',
  'vite',
]);

function sources(dir, match) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sources(p, match));
    else if (match(entry.name)) out.push(p);
  }
  return out;
}

async function buildServer() {
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    console.warn('build: esbuild is not installed; bin/formcast will run the sources through tsx');
    return;
  }
  const outdir = path.join(root, 'dist/server');
  fs.rmSync(outdir, { recursive: true, force: true });
  const src = path.join(root, 'src');
  await esbuild.build({
    entryPoints: [path.join(src, 'cli/main.ts'), ...sources(src, (n) => n.endsWith('.worker.ts'))],
    outdir,
    outbase: src,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    logLevel: 'warning',
    chunkNames: 'chunks/[name]-[hash]',
    // CommonJS packages inside an ESM bundle still call require() for Node's modules and the external packages.
    banner: {
      js: "import { createRequire as __formcastCreateRequire } from 'node:module'; const require = __formcastCreateRequire(import.meta.url);",
    },
    plugins: [
      {
        name: 'formcast-externals',
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (args) => {
            const name = args.path.startsWith('@')
              ? args.path.split('/').slice(0, 2).join('/')
              : args.path.split('/')[0];
            return args.path.startsWith('node:') || EXTERNAL.has(name) ? { external: true } : undefined;
          });
        },
      },
    ],
  });
}

// The SDK (packages/sdk/dist, scripts/build-sdk.mjs); `--sdk-only` builds just that (`npm run build -w @formcast/sdk`).
const { buildSdk } = await import('./build-sdk.mjs');
if (process.argv.includes('--sdk-only')) {
  await buildSdk(root);
  process.exit(0);
}
await buildServer();
await buildSdk(root);
const embedBuilder = path.join(root, 'scripts/build-embed.mjs');
if (fs.existsSync(embedBuilder)) await (await import(embedBuilder)).buildEmbed(root);
console.warn(`build: server built into dist/server in ${((Date.now() - started) / 1000).toFixed(1)} s`);
await import('../console/prepare.mjs');
