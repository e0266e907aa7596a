import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    exclude: ['node_modules/**', 'dist/**'],
    environment: 'node',
    pool: 'forks',
    // Two cores: more workers only thrash. Browser and multi-process tests need generous limits.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: [
            'policy-schemas/**/*.test.ts',
            'migrations/**/*.test.ts',
            'server/**/*.test.ts',
            'runtime/**/*.test.ts',
            'gateway/**/*.test.ts',
            'test/**/*.test.ts',
            'web/**/*.test.ts',
          ],
        },
      },
      {
        // The same API suite again, every test app on its own database in one throwaway
        // PostgreSQL cluster: the server must behave the same on both engines.
        extends: true,
        test: {
          name: 'postgres',
          include: ['test/api/**/*.test.ts', 'server/db/**/*.test.ts'],
          env: { TOOLGATE_TEST_BACKEND: 'postgres' },
          globalSetup: ['test/support/postgres-global-setup.ts'],
        },
      },
    ],
  },
});
