/**
 * The console's build (`npm run build:console`) and dev server (`npm run dev`). The app is served by Formcast
 * under /app/ (src/access/console/console.routes.ts): assets get hashed names and are cached for a year; index.html
 * is never cached. No asset comes from anywhere but Formcast. Every text asset of 1 KB or more gets a
 * Brotli (.br, quality 11) and a gzip (.gz, level 9) twin beside it, which the server sends to browsers that
 * accept them (precompress below).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));
const api = process.env.FORMCAST_API ?? 'http://127.0.0.1:3000';
const outDir = path.resolve(here, '../dist/console');

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/** After the build: `<asset>.br` and `<asset>.gz` for every compressible asset worth it (src/access/console/console.routes.ts serves them). */
function precompress(): Plugin {
  return {
    name: 'formcast-precompress',
    apply: 'build',
    async closeBundle() {
      const dir = path.join(outDir, 'assets');
      const names = fs.existsSync(dir)
        ? fs.readdirSync(dir).filter((n) => /\.(js|mjs|css|svg|json|txt|wasm)$/.test(n))
        : [];
      await Promise.all(
        names.map(async (name) => {
          const file = path.join(dir, name);
          const raw = await fs.promises.readFile(file);
          if (raw.length < 1024) return;
          const [br, gz] = await Promise.all([
            brotli(raw, {
              params: {
                [zlib.constants.BROTLI_PARAM_QUALITY]: 11,
                [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
              },
            }),
            gzip(raw, { level: 9 }),
          ]);
          if (br.length < raw.length) await fs.promises.writeFile(`${file}.br`, br);
          if (gz.length < raw.length) await fs.promises.writeFile(`${file}.gz`, gz);
        }),
      );
    },
  };
}

export default defineConfig({
  root: here,
  base: '/app/',
  plugins: [react(), precompress()],
  build: {
    outDir,
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    // Every asset is a file (no data: URLs for fonts or images inlined into CSS).
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1200,
    rollupOptions: {
      output: {
        entryFileNames: 'assets/[name]-[hash].js',
        chunkFileNames: 'assets/[name]-[hash].js',
        assetFileNames: 'assets/[name]-[hash][extname]',
      },
    },
  },
  server: {
    port: 5173,
    strictPort: false,
    // Everything the console does not serve itself goes to the API (start it with `npm start`).
    proxy: Object.fromEntries(
      ['/v1', '/app/login', '/app/logout', '/app/invite', '/app/reset', '/f', '/openapi.json', '/docs'].map(
        (prefix) => [prefix, { target: api, changeOrigin: false }],
      ),
    ),
  },
});
