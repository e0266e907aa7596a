import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freshTestDatabase, testBackend } from '../../test/support/test-database.ts';
import { appendAuditEvent, verifyStoredChain } from '../audit/events.ts';
import { ToolgateDatabase, describeDatabase, isPostgresUrl } from './database.ts';

const row = (name: string) => ({ name, body: '{}', version: 1, created_at: 'now', updated_at: 'now' });

// Runs on SQLite in the `sqlite` project and on PostgreSQL in the `postgres` one (vitest.config.ts).
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** `n` wrappers on one fresh database: on PostgreSQL each has its own pool, as replicas would. */
async function open(n = 1): Promise<ToolgateDatabase[]> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-db-'));
  const fresh = await freshTestDatabase(dir);
  const first = new ToolgateDatabase(fresh.target);
  await first.migrateToLatest();
  const all = [first, ...Array.from({ length: n - 1 }, () => new ToolgateDatabase(fresh.target))];
  cleanups.push(async () => {
    for (const d of all) await d.close();
    await fresh.drop();
    rmSync(dir, { recursive: true, force: true });
  });
  expect(first.engine).toBe(testBackend);
  return all;
}

describe(`the database wrapper on ${testBackend}`, () => {
  it('commits concurrent changes together and rolls back only the one that failed', async () => {
    const [d] = await open();
    const results = await Promise.allSettled([
      d.change(async (tx) => tx.insertInto('states').values(row('a')).execute()),
      d.change(async (tx) => {
        await tx.insertInto('states').values(row('b')).execute();
        throw new Error('refused');
      }),
      d.change(async (tx) => tx.insertInto('states').values(row('c')).execute()),
      d.change(async (tx) => tx.insertInto('states').values(row('a')).execute()), // duplicate key
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    const names = (await d.db.selectFrom('states').select('name').orderBy('name').execute()).map((r) => r.name);
    expect(names).toEqual(['a', 'c']);
  });

  it('lets a later change see what an earlier one in the same batch wrote', async () => {
    const [d] = await open();
    const [, count] = await Promise.all([
      d.change(async (tx) => tx.insertInto('states').values(row('x')).execute()),
      d.change(async (tx) => (await tx.selectFrom('states').selectAll().execute()).length),
    ]);
    expect(count).toBe(1);
  });

  it('answers counts and sums as numbers on either engine', async () => {
    const [d] = await open();
    await d.change(async (tx) =>
      tx
        .insertInto('states')
        .values([row('p'), row('q')])
        .execute(),
    );
    const r = await d.db
      .selectFrom('states')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.sum<number>('version').as('v')])
      .executeTakeFirstOrThrow();
    expect(r).toEqual({ n: 2, v: 2 });
  });

  // On PostgreSQL two wrappers stand for two replicas: two pools whose write transactions
  // interleave unless the write lock serializes them. SQLite is one process's file: one wrapper,
  // its group commits and plain transactions racing.
  const openers = testBackend === 'postgres' ? 2 : 1;
  it(`never forks the audit chain when ${openers} opener(s) of one database append at once`, async () => {
    const all = await open(openers);
    const [a, b] = [all[0], all[all.length - 1]];
    const writes = Array.from({ length: 120 }, (_, i) =>
      (i % 2 ? a : b)[i % 3 ? 'change' : 'transaction'](async (tx) =>
        appendAuditEvent(tx, { actor: 'system', action: 'create', entityType: 'group', entityId: `g${i}` }),
      ),
    );
    const events = await Promise.all(writes);
    expect(new Set(events.map((e) => e.seq)).size).toBe(120);
    const chain = (await verifyStoredChain(a.db)).result();
    expect(chain).toMatchObject({ ok: true, count: 120 });
  });
});

describe('database targets', () => {
  it('tells PostgreSQL URLs from SQLite paths', () => {
    expect(isPostgresUrl('postgres://u:p@h:5432/db')).toBe(true);
    expect(isPostgresUrl('postgresql://h/db')).toBe(true);
    expect(isPostgresUrl('./data/postgres.db')).toBe(false);
    expect(isPostgresUrl('/var/lib/toolgate/toolgate.db')).toBe(false);
  });

  it('never puts a password in what it logs', () => {
    expect(describeDatabase('postgres://toolgate:s3cret-pass@db.internal:5432/toolgate')).toBe('postgres://toolgate:***@db.internal:5432/toolgate');
    expect(describeDatabase('/srv/toolgate.db')).toBe('/srv/toolgate.db');
  });
});
