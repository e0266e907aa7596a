import type { TestProject } from 'vitest/node';
import { startTempPostgres } from './postgres.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The throwaway cluster's URL (its `postgres` database); each test app creates its own database there. */
    postgresUrl: string;
  }
}

/** The `postgres` test project: one throwaway PostgreSQL cluster for the whole run. */
export default async function setup(project: TestProject): Promise<() => void> {
  const pg = await startTempPostgres();
  project.provide('postgresUrl', pg.url);
  return () => pg.stop();
}
