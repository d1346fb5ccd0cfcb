import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: files run two at a time; PostgreSQL suites each get their own schema.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
