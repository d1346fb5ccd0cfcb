// The SDK's build (packages/sdk/dist), run by scripts/build.mjs, so `npm install` / `npm ci` leave both
// `import { Formcast } from '@formcast/sdk'` and `require('@formcast/sdk')` working from plain Node. The JavaScript is
// bundled by esbuild twice: ESM (dist/index.js) and CommonJS (dist/cjs/index.js, beside a package.json that says
// "commonjs"), each one file, its one dependency, standardwebhooks, left outside; package.json's `exports` sends
// `import` to the first and `require` to the second. The declarations come from tsc (dist/*.d.ts), with the generated
// API types (src/generated/openapi.d.ts, `npm run sdk:types`) beside them, and a copy of the lot in dist/cjs, so that
// TypeScript reads them as CommonJS there. Where dev dependencies were left out (no TypeScript), only the JavaScript
// is built. `outdir` (tests) builds elsewhere than packages/sdk/dist.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** Copies the declaration files of `from` (not its cjs folder) into `to`, keeping their folders. */
function copyDeclarations(from, to) {
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const src = path.join(from, entry.name);
    if (entry.isDirectory()) {
      if (entry.name === 'cjs') continue;
      copyDeclarations(src, path.join(to, entry.name));
    } else if (entry.name.endsWith('.d.ts')) {
      fs.mkdirSync(to, { recursive: true });
      fs.copyFileSync(src, path.join(to, entry.name));
    }
  }
}

export async function buildSdk(root, { outdir: givenOutdir } = {}) {
  const started = Date.now();
  const pkg = path.join(root, 'packages/sdk');
  const outdir = givenOutdir ?? path.join(pkg, 'dist');
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    console.warn('build: esbuild is not installed; the SDK (packages/sdk/dist) was not built');
    return;
  }
  fs.rmSync(outdir, { recursive: true, force: true });
  const common = {
    entryPoints: [path.join(pkg, 'src/index.ts')],
    bundle: true,
    platform: 'neutral',
    target: 'es2022',
    sourcemap: true,
    logLevel: 'warning',
    external: ['standardwebhooks'],
  };
  await esbuild.build({ ...common, outfile: path.join(outdir, 'index.js'), format: 'esm' });
  await esbuild.build({ ...common, outfile: path.join(outdir, 'cjs/index.js'), format: 'cjs' });
  fs.writeFileSync(path.join(outdir, 'cjs/package.json'), '{ "type": "commonjs" }\n');
  let tsc;
  try {
    tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    console.warn(
      'build: TypeScript is not installed (dev dependencies omitted); the SDK was built without declarations',
    );
    return;
  }
  const result = spawnSync(process.execPath, [tsc, '-p', path.join(pkg, 'tsconfig.json'), '--outDir', outdir], {
    stdio: 'inherit',
  });
  if (result.status !== 0) throw new Error('build: the SDK declarations (tsc -p packages/sdk) failed');
  fs.mkdirSync(path.join(outdir, 'generated'), { recursive: true });
  fs.copyFileSync(path.join(pkg, 'src/generated/openapi.d.ts'), path.join(outdir, 'generated/openapi.d.ts'));
  copyDeclarations(outdir, path.join(outdir, 'cjs'));
  console.warn(`build: SDK built into packages/sdk/dist in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
