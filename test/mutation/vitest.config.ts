import { defineConfig } from 'vitest/config';

// Stryker's vitest runner: the bundle vectors are the only tests.
export default defineConfig({
  test: {
    include: ['test/mutation/vectors.test.ts'],
    environment: 'node',
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 60_000,
  },
});
