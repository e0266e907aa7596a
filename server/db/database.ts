import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, type Transaction, sql } from 'kysely';
import { migrations } from '../../migrations/index.ts';
import type { Database } from './schema.ts';

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;
/** Repositories take either, so they compose inside a caller's transaction. */
export type DbOrTx = Db | Tx;

type Job = { fn: (tx: Tx) => Promise<unknown>; resolve: (v: unknown) => void; reject: (e: unknown) => void };
const MAX_BATCH = 256;

/** The one database wrapper: opens SQLite with the pragmas set once, owns migrations, closed with close(). */
export class ToolgateDatabase {
  readonly db: Db;
  readonly sqlite: SqliteDatabase.Database;

  constructor(file: string) {
    if (file !== ':memory:') createPrivately(file);
    this.sqlite = new SqliteDatabase(file);
    this.sqlite.pragma('journal_mode = WAL');
    // FULL: an acknowledged change survives a crash or power loss, not just a process exit.
    this.sqlite.pragma('synchronous = FULL');
    this.sqlite.pragma('foreign_keys = ON');
    this.sqlite.pragma('busy_timeout = 5000');
    // SQLite gives the WAL and shared-memory files the database file's mode; ones left by an
    // older version are narrowed too.
    if (file !== ':memory:') for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) narrow(f);
    this.db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(this.sqlite) }) });
  }

  /** Runs `fn` in one transaction: all of it commits, or none of it. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(fn);
  }

  /** Group-commit counters: changes committed and the transactions they took. */
  readonly commitStats = { changes: 0, commits: 0 };
  private queue: Job[] = [];
  private draining = false;

  /**
   * Group commit: like `transaction`, but changes that arrive while another commit is under way
   * share the next transaction, each inside its own savepoint. A change that throws is rolled
   * back alone; the others commit together with one fsync. Each promise settles only after the
   * COMMIT, so an acknowledged change is durable (synchronous = FULL).
   */
  change<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn: fn as Job['fn'], resolve: resolve as Job['resolve'], reject });
      if (!this.draining) {
        this.draining = true;
        // Start on the next turn, so every change that arrived in this turn joins the same commit.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0, MAX_BATCH);
        const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
        try {
          await this.db.transaction().execute(async (tx) => {
            for (const job of batch) {
              await sql`SAVEPOINT change`.execute(tx);
              try {
                const value = await job.fn(tx);
                await sql`RELEASE change`.execute(tx);
                outcomes.push({ ok: true, value });
              } catch (error) {
                await sql`ROLLBACK TO change`.execute(tx);
                await sql`RELEASE change`.execute(tx);
                outcomes.push({ ok: false, error });
              }
            }
          });
        } catch (error) {
          // The COMMIT itself failed: nothing of the batch is durable.
          for (const job of batch) job.reject(error);
          continue;
        }
        this.commitStats.commits++;
        this.commitStats.changes += outcomes.filter((o) => o.ok).length;
        batch.forEach((job, i) => {
          const o = outcomes[i];
          if (o.ok) job.resolve(o.value);
          else job.reject(o.error);
        });
      }
    } finally {
      this.draining = false;
    }
  }

  /** Migrates to the latest version; throws with the failing migration's name. */
  async migrateToLatest(): Promise<string[]> {
    const { error, results } = await this.migrator().migrateToLatest();
    if (error) throw new Error(`migration failed: ${error instanceof Error ? error.message : String(error)}`);
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  }

  /** Migrates all the way down (used by the migration round-trip test and `migrate --down`). */
  async migrateDown(): Promise<string[]> {
    const done: string[] = [];
    for (;;) {
      const { error, results } = await this.migrator().migrateDown();
      if (error) throw new Error(`migration down failed: ${error instanceof Error ? error.message : String(error)}`);
      const ran = (results ?? []).filter((r) => r.status === 'Success');
      if (ran.length === 0) return done;
      done.push(...ran.map((r) => r.migrationName));
    }
  }

  private migrator(): Migrator {
    return new Migrator({ db: this.db, provider: { getMigrations: async () => migrations } });
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }
}

function narrow(f: string): void {
  try {
    chmodSync(f, 0o600);
  } catch {
    // Not ours to change (another owner): left as the operator set it.
  }
}

/** Creates the database file (and a missing directory) readable by this user alone: it holds policy, hashes and history. */
function createPrivately(file: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  // 'a' creates without truncating; the mode applies only when the file is new.
  closeSync(openSync(file, 'a', 0o600));
}

/**
 * Kysely prepares every query afresh; preparing is a large share of a small query's cost. Queries
 * are parameterised, so a few hundred distinct SQL texts cover the app; the cache is cleared if
 * `IN (…)` lists of many lengths ever grow it past its bound.
 */
function withStatementCache(sqlite: SqliteDatabase.Database): SqliteDatabase.Database {
  const cache = new Map<string, SqliteDatabase.Statement>();
  const prepare = (source: string) => {
    let stmt = cache.get(source);
    if (!stmt) {
      if (cache.size >= 1000) cache.clear();
      stmt = sqlite.prepare(source);
      cache.set(source, stmt);
    }
    return stmt;
  };
  return new Proxy(sqlite, {
    get(target, prop) {
      if (prop === 'prepare') return prepare;
      const v = Reflect.get(target, prop, target);
      // Native methods must run with the real database as `this`, not the proxy.
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}
