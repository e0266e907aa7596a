import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';

/** Which engine this test run uses: the `postgres` project sets TOOLGATE_TEST_BACKEND (vitest.config.ts). */
export const testBackend: 'sqlite' | 'postgres' = process.env.TOOLGATE_TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite';

/**
 * A fresh, empty database for one test app: a SQLite file in `dir`, or, in the `postgres`
 * project, a new database in the run's throwaway cluster. `drop()` removes it after the app closed.
 */
export async function freshTestDatabase(dir: string): Promise<{ target: string; drop: () => Promise<void> }> {
  if (testBackend === 'sqlite') return { target: join(dir, 'toolgate.db'), drop: async () => undefined };
  const admin = new URL(inject('postgresUrl'));
  const name = `toolgate_${randomBytes(6).toString('hex')}`;
  await onAdmin(admin.toString(), `CREATE DATABASE ${name}`);
  const target = new URL(admin);
  target.pathname = `/${name}`;
  return {
    target: target.toString(),
    drop: () => onAdmin(admin.toString(), `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

async function onAdmin(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
