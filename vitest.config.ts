import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Model loading and SQLite builds are CPU-heavy; two cores, two forks.
    pool: 'forks',
    maxWorkers: 2,
  },
});
