// `npm run build:console`, and `prepare` (so `npm install` / `npm ci` build the console). Where dev
// dependencies were left out (npm ci --omit=dev), Vite is absent: say so and carry on; the server then
// answers /app with a 503 page that says to run `npm run build:console`.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let vite;
try {
  vite = await import('vite');
} catch {
  console.warn('console: vite is not installed (dev dependencies omitted); the console was not built');
  process.exit(0);
}
const configFile = path.join(path.dirname(fileURLToPath(import.meta.url)), 'vite.config.ts');
const started = Date.now();
await vite.build({ configFile, logLevel: 'warn' });
console.warn(`console: built into dist/console in ${((Date.now() - started) / 1000).toFixed(1)} s`);
