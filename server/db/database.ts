import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, type Transaction, sql } from 'kysely';
import type pg from 'pg';
import { migrations } from '../../migrations/index.ts';
import type { Database } from './schema.ts';

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;
/** Repositories take either, so they compose inside a caller's transaction. */
export type DbOrTx = Db | Tx;

type Job = { fn: (tx: Tx) => Promise<unknown>; resolve: (v: unknown) => void; reject: (e: unknown) => void };
const MAX_BATCH = 256;

/** `TOOLGATE_DB` values naming a PostgreSQL server; anything else is a SQLite file path. */
export function isPostgresUrl(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target);
}

/** A database target fit for logs: a PostgreSQL URL without its password. */
export function describeDatabase(target: string): string {
  if (!isPostgresUrl(target)) return target;
  try {
    const u = new URL(target);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}

/**
 * Every write transaction on PostgreSQL first takes this transaction-scoped advisory lock, so
 * writes are serialized across every replica sharing the database exactly as SQLite serializes
 * them within its one file: audit appends never fork the chain, bundle versions stay contiguous,
 * and an If-Match check and the write it guards cannot interleave with another replica's. Reads
 * never take it. (The number is arbitrary but fixed: every replica must use the same one.)
 */
export const WRITE_LOCK_KEY = 7_406_531_001;

/**
 * The one database wrapper: SQLite (embedded default, pragmas set once) or PostgreSQL (a `pg`
 * pool), chosen by the `TOOLGATE_DB` value. Repositories see the same Kysely API on both; the
 * places where the engines differ are kept here and commented. Owns migrations; closed with close().
 */
export class ToolgateDatabase {
  readonly db: Db;
  readonly engine: 'sqlite' | 'postgres';
  /** The SQLite handle (for its prepared-statement fast paths); null on PostgreSQL. */
  readonly sqlite: SqliteDatabase.Database | null;
  /**
   * The PostgreSQL pool, opened on first use; null on SQLite. `pg` is loaded only then: a SQLite
   * server never pays for it at start.
   */
  private pgPool: Promise<pg.Pool> | null = null;
  /** The PostgreSQL URL (cluster features open their own connections with it); null on SQLite. */
  readonly url: string | null;

  constructor(target: string) {
    if (isPostgresUrl(target)) {
      this.engine = 'postgres';
      this.url = target;
      this.sqlite = null;
      this.db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: () => this.pool() }) });
      return;
    }
    this.engine = 'sqlite';
    this.url = null;
    const file = target;
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

  /** The PostgreSQL connection pool (opened on first use); throws on SQLite. */
  pool(): Promise<pg.Pool> {
    if (!this.url) throw new Error('a SQLite database has no connection pool');
    const url = this.url;
    this.pgPool ??= import('pg').then(({ default: pgModule }) => {
      const pool = new pgModule.Pool({ connectionString: url, max: poolSize(), types: pgTypes(pgModule) });
      // An idle client that loses its server (restart, failover) must not crash the process; the
      // pool drops it and the next query opens a new one.
      pool.on('error', () => undefined);
      return pool;
    });
    return this.pgPool;
  }

  /** Runs `fn` in one write transaction: all of it commits, or none of it. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(async (tx) => {
      await this.lockWrites(tx);
      return fn(tx);
    });
  }

  /**
   * SQLite lets one writer in at a time by itself (the first write of a transaction takes the
   * file's lock, and Kysely's SQLite driver runs one transaction at a time). PostgreSQL lets
   * writers interleave, so its write transactions queue on one advisory lock, held until commit.
   */
  private async lockWrites(tx: Tx): Promise<void> {
    if (this.engine === 'postgres') await sql`SELECT pg_advisory_xact_lock(${WRITE_LOCK_KEY})`.execute(tx);
  }

  /** Group-commit counters: changes committed and the transactions they took. */
  readonly commitStats = { changes: 0, commits: 0 };
  private queue: Job[] = [];
  private draining = false;

  /**
   * Group commit: like `transaction`, but changes that arrive while another commit is under way
   * share the next transaction, each inside its own savepoint. A change that throws is rolled
   * back alone; the others commit together with one fsync. Each promise settles only after the
   * COMMIT, so an acknowledged change is durable (SQLite: synchronous = FULL; PostgreSQL: its
   * default synchronous_commit = on, the WAL flushed before COMMIT returns). On PostgreSQL the
   * batch is per replica; replicas' batches queue on the write lock.
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
            await this.lockWrites(tx);
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

  /**
   * Kysely's migrator holds a lock for the whole run (on PostgreSQL a session advisory lock, and
   * the migrations run in one transaction), so replicas or `toolgate migrate` runs starting
   * together migrate once: the others wait, then find nothing left to do.
   */
  private migrator(): Migrator {
    return new Migrator({ db: this.db, provider: { getMigrations: async () => migrations } });
  }

  private closed = false;

  /** Closes the database; closing twice is harmless (a test may close before its harness does). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.db.destroy();
  }
}

/**
 * Whether an error means the database could not be reached or was too busy, not that the
 * request was wrong: the caller may try again. PostgreSQL: connection failures (class 08),
 * shutdowns (57P01-57P03), too many connections (53300); the pool's own timeouts and refused
 * sockets. SQLite: a lock held longer than busy_timeout.
 */
export function databaseUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return err instanceof Error && /timeout exceeded when trying to connect|Connection terminated/i.test(err.message);
  return (
    /^08/.test(code) ||
    ['57P01', '57P02', '57P03', '53300', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'SQLITE_BUSY'].includes(code)
  );
}

/** Connections per replica (`TOOLGATE_DB_POOL`, default 10): PostgreSQL's own limit is shared by every replica. */
function poolSize(): number {
  const n = Number(process.env.TOOLGATE_DB_POOL ?? 10);
  return Number.isInteger(n) && n > 0 ? n : 10;
}

/**
 * PostgreSQL returns 64-bit integers (count(*), sum(), bigserial ids) and numerics as strings,
 * because they may exceed a JavaScript number; SQLite returns numbers. Counts, sums and row ids
 * here stay far below 2^53, so both engines answer numbers. Per pool: the global parsers of
 * `pg` are left alone.
 */
function pgTypes(pgModule: typeof pg) {
  const { builtins, getTypeParser } = pgModule.types;
  return {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      if (oid === builtins.INT8 || oid === builtins.NUMERIC) return (v: string) => Number(v);
      return getTypeParser(oid, format);
    },
  };
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
