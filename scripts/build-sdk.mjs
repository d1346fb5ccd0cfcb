// The SDK's build (packages/sdk/dist), run by scripts/build.mjs, so `npm install` / `npm ci` leave
// `import { Formcast } from '@formcast/sdk'` working from plain Node: the JavaScript bundled by esbuild (one ESM file;
// its one dependency, standardwebhooks, stays outside), the declarations by tsc, and the generated API types
// (src/generated/openapi.d.ts, `npm run sdk:types`) copied beside them. Where dev dependencies were left out (no TypeScript),
// only the JavaScript is built.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export async function buildSdk(root) {
  const started = Date.now();
  const pkg = path.join(root, 'packages/sdk');
  const outdir = path.join(pkg, 'dist');
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    console.warn('build: esbuild is not installed; the SDK (packages/sdk/dist) was not built');
    return;
  }
  fs.rmSync(outdir, { recursive: true, force: true });
  await esbuild.build({
    entryPoints: [path.join(pkg, 'src/index.ts')],
    outfile: path.join(outdir, 'index.js'),
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    sourcemap: true,
    logLevel: 'warning',
    external: ['standardwebhooks'],
  });
  let tsc;
  try {
    tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    console.warn(
      'build: TypeScript is not installed (dev dependencies omitted); the SDK was built without declarations',
    );
    return;
  }
  const result = spawnSync(process.execPath, [tsc, '-p', path.join(pkg, 'tsconfig.json')], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error('build: the SDK declarations (tsc -p packages/sdk) failed');
  fs.mkdirSync(path.join(outdir, 'generated'), { recursive: true });
  fs.copyFileSync(path.join(pkg, 'src/generated/openapi.d.ts'), path.join(outdir, 'generated/openapi.d.ts'));
  console.warn(`build: SDK built into packages/sdk/dist in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
