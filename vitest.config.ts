import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The embed runtime built when it is missing or stale (the server never compiles it).
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Two cores: files run two at a time; PostgreSQL suites each get their own schema.
    maxWorkers: 2,
    // A worker keeps the modules it imported for the next file (most files import the whole service): importing
    // them again for every file was ~2 s a file, a fifth of the suite (24 API files: 74 s → 43 s). Files share no
    // state through them: each builds its own app, database and servers.
    isolate: false,
    // expect.poll waits on a browser and a server round trip; its 1 s default is too short on a loaded machine.
    expect: { poll: { timeout: 10_000 } },
    reporters: ['default'],
  },
});
