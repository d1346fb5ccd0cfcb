import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * `npm run test:fast`: the quick tier for the edit-test loop. SQLite only (TEST_DATABASE_URL is cleared, so the
 * PostgreSQL suites say skipped), no browser suites, no multi-process worker suite. `npm test` runs everything.
 */
export default mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: ['test/e2e/**', 'test/reliability/**', 'node_modules/**'],
      env: { TEST_DATABASE_URL: '' },
    },
  }),
);
