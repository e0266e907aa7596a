import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'policy-schemas/**/*.test.ts',
      'migrations/**/*.test.ts',
      'server/**/*.test.ts',
      'runtime/**/*.test.ts',
      'gateway/**/*.test.ts',
      'test/**/*.test.ts',
      'web/**/*.test.ts',
    ],
    exclude: ['node_modules/**', 'dist/**'],
    environment: 'node',
    pool: 'forks',
    // Two cores: more workers only thrash. Browser and multi-process tests need generous limits.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
