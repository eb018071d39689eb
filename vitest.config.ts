import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A shared PostgreSQL cluster, started by the first test that needs one (test/support/postgres.ts).
    globalSetup: ['test/support/postgres-global.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Model loading and SQLite builds are CPU-heavy; two cores, two forks.
    pool: 'forks',
    maxWorkers: 2,
  },
});
