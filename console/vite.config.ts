/**
 * The console's build (`npm run build:console`) and dev server (`npm run dev`). The app is served by Formcast
 * under /app/ (src/console/console.routes.ts): assets get hashed names and are cached for a year; index.html
 * is never cached. No asset comes from anywhere but Formcast.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));
const api = process.env.FORMCAST_API ?? 'http://127.0.0.1:3000';

export default defineConfig({
  root: here,
  base: '/app/',
  plugins: [react()],
  build: {
    outDir: path.resolve(here, '../dist/console'),
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
    proxy: Object.fromEntries(['/v1', '/app/login', '/app/logout', '/app/invite', '/app/reset', '/f', '/openapi.json', '/docs']
      .map((prefix) => [prefix, { target: api, changeOrigin: false }])),
  },
});
