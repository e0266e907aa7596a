import { sql } from 'kysely';
import type { DbOrTx } from '../db/database.ts';

/** A stored entity as the API shows it: the document plus its version and timestamps. */
export type Stored<T> = T & { version: number; createdAt: string; updatedAt: string };

/**
 * What the document routes need of a repository. `scope` is the tenant of a tenant-scoped entity
 * (grants); repositories of global entities ignore it.
 */
export type DocumentRepository<T extends object> = {
  /** The field that names a document, also its key column. */
  readonly key: string;
  list(db: DbOrTx, scope?: string): Promise<Stored<T>[]>;
  get(db: DbOrTx, key: string, scope?: string): Promise<Stored<T> | undefined>;
  insert(db: DbOrTx, key: string, doc: T, now: string, scope?: string): Promise<Stored<T>>;
  /** Replaces the document if it is still at `version`; undefined when it is not. */
  update(db: DbOrTx, key: string, doc: T, version: number, createdAt: string, now: string, scope?: string): Promise<Stored<T> | undefined>;
  /** Deletes the document if it is still at `version`. */
  remove(db: DbOrTx, key: string, version: number, scope?: string): Promise<boolean>;
};

type DocTable = 'tools' | 'groups' | 'states' | 'mcp_servers' | 'sso_mappings';
type Row = { body: string; version: number; created_at: string; updated_at: string } & Record<string, unknown>;

/**
 * Repository for the entities kept as one JSON document per row (tools, groups, states, MCP
 * servers). Writes check the version in the WHERE clause too, so a lost race can never overwrite.
 */
export function documentStore<T extends object>(
  table: DocTable,
  key: 'id' | 'name',
  columns: (doc: T) => Record<string, string> = () => ({}),
): DocumentRepository<T> & { key: 'id' | 'name' } {
  // Kysely cannot type a table chosen at run time; the casts stay inside this function.
  const from = (db: DbOrTx) => db.selectFrom(table as 'tools');
  const toStored = (r: Row): Stored<T> => ({ ...(JSON.parse(r.body) as T), version: r.version, createdAt: r.created_at, updatedAt: r.updated_at });

  return {
    /** The field that names a document (`id` or `name`), also its key column. */
    key,
    async list(db: DbOrTx): Promise<Stored<T>[]> {
      const rows = (await from(db)
        .selectAll()
        .orderBy(key as 'id')
        .execute()) as unknown as Row[];
      return rows.map(toStored);
    },
    async get(db: DbOrTx, k: string): Promise<Stored<T> | undefined> {
      const row = (await from(db)
        .selectAll()
        .where(key as 'id', '=', k)
        .executeTakeFirst()) as unknown as Row | undefined;
      return row ? toStored(row) : undefined;
    },
    async insert(db: DbOrTx, k: string, doc: T, now: string): Promise<Stored<T>> {
      const values = { [key]: k, body: JSON.stringify(doc), version: 1, created_at: now, updated_at: now, ...columns(doc) };
      await db
        .insertInto(table as 'tools')
        .values(values as never)
        .execute();
      await raiseGeneration(db, table);
      return { ...doc, version: 1, createdAt: now, updatedAt: now };
    },
    /** Replaces the document if it is still at `version`; returns undefined when it is not. */
    async update(db: DbOrTx, k: string, doc: T, version: number, createdAt: string, now: string): Promise<Stored<T> | undefined> {
      const res = await db
        .updateTable(table as 'tools')
        .set({ body: JSON.stringify(doc), version: version + 1, updated_at: now, ...columns(doc) } as never)
        .where(key as 'id', '=', k)
        .where('version', '=', version)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) return undefined;
      await raiseGeneration(db, table);
      return { ...doc, version: version + 1, createdAt, updatedAt: now };
    },
    async remove(db: DbOrTx, k: string, version: number): Promise<boolean> {
      const res = await db
        .deleteFrom(table as 'tools')
        .where(key as 'id', '=', k)
        .where('version', '=', version)
        .executeTakeFirst();
      if (Number(res.numDeletedRows) !== 1) return false;
      await raiseGeneration(db, table);
      return true;
    },
  };
}

/**
 * Raises the table's write counter (table_generations), in the caller's transaction: a cache of
 * the parsed table compares it, since a document deleted and made again can leave every other
 * aggregate of the table as it was.
 */
async function raiseGeneration(db: DbOrTx, table: DocTable): Promise<void> {
  // Only tables something fingerprints: every other write would raise a counter no one reads, on
  // one row that concurrent writers then queue for.
  if (!FINGERPRINTED.has(table)) return;
  await db
    .insertInto('table_generations')
    .values({ name: table, generation: 1 })
    .onConflict((oc) => oc.column('name').doUpdateSet({ generation: sql`table_generations.generation + 1` }))
    .execute();
}

/** The tables whose writes are counted: the inventory a draft is made of (the parsed-inventory cache, the overview). */
export type FingerprintedTable = 'tools' | 'groups' | 'states';
const FINGERPRINTED: ReadonlySet<DocTable> = new Set<FingerprintedTable>(['tools', 'groups', 'states']);

/** The table's write counter as a subquery (0 before any write). */
function generationOf(table: FingerprintedTable) {
  return sql<number>`coalesce((select generation from table_generations where name = ${table}), 0)`;
}

/**
 * A text that changes whenever a document of the table is inserted, updated or deleted: the
 * table's write counter, raised by every write through the store in the same transaction on any
 * replica or process, and beside it count, newest stamp, sum of versions and bytes, which catch a
 * row written around the store. (Those alone miss a document deleted and made again at version 1
 * with a body of the same length under a stamp no newer than the newest, as when a replica's clock
 * is behind.) Caches of a parsed table compare it.
 */
export async function tableFingerprint(db: DbOrTx, table: FingerprintedTable): Promise<string> {
  const f = await db
    .selectFrom(table as 'tools')
    .select([
      generationOf(table).as('g'),
      sql<number>`count(*)`.as('n'),
      sql<string | null>`max(updated_at)`.as('at'),
      sql<number | null>`sum(version)`.as('v'),
      sql<number | null>`sum(octet_length(body))`.as('bytes'),
    ])
    .executeTakeFirstOrThrow();
  return `${f.g}:${f.n}:${f.at}:${f.v}:${f.bytes}`;
}

/** The document without the fields the store adds. */
export function stripStored<T extends object>(s: Stored<T>): T {
  const { version: _v, createdAt: _c, updatedAt: _u, ...doc } = s;
  return doc as unknown as T;
}
